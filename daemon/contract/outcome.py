"""What a handler decides: the `Outcome` (events, blobs, writes, the reply) and the
`Write`s and `Link`s it carries, and the shape of a handler, `(Context, Params) -> Outcome`.

A handler never mutates state and never writes the journal. The server commits an
outcome's events, applies them to state, performs its writes and replies — in that
order. The writing path (`writing.path`) builds outcomes for every writing tool, and
`runtime` consumes them: so the shape lives here, below all three, imported by each
and importing none of them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec

from editjournal.daemon.contract.context import Context, Job
from editjournal.schemas.errors import ToolError
from editjournal.schemas.events import AnyEvent

# `Write.based_on` for a file that did not exist when the new content was computed
ABSENT = "absent"


@dataclass(frozen=True)
class Write:
    """A file write to perform once the request's events are committed."""

    path: str
    data: bytes | None  # None: the file is removed
    # the sha256 of the content the new data was computed from (ABSENT: no file): if the
    # file no longer holds it when the write is prepared, the request is planned again
    # (None: no check)
    based_on: str | None = None
    # the sha256 of `data` when the handler already computed it (None: hashed when
    # prepared): one whole-file hash per write, not one per step
    sha256: str | None = None
    # the bytes `based_on` names (None: none, or not known): the base of a carry, should
    # an outside writer change the file while this write is put in place
    based_on_data: bytes | None = None


@dataclass(frozen=True)
class Link:
    """Event `source` of an outcome names event `target` of the same outcome (indexes
    into `Outcome.events`, target first): its int field `name` — or, for a dict field,
    the value at `key` — becomes the target's seq when the server stages them. A
    handler never predicts a seq for the journal to keep."""

    source: int
    name: str
    target: int
    key: str | None = None


@dataclass
class Outcome:
    """What a handler decided. `error` set means an error reply (events still journaled)."""

    result: Any = None
    events: list[AnyEvent] = field(default_factory=list)
    blobs: dict[str, bytes] = field(default_factory=dict)
    writes: list[Write] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    error: ToolError | None = None
    links: list[Link] = field(default_factory=list)
    job: Job | None = None  # not done yet: park the request and run this (contract.context)

    def __post_init__(self) -> None:
        if self.error is not None:  # kept past the request: never with its frames
            self.error.detached()


def linked(event: AnyEvent, links: Sequence[Link], seqs: Sequence[int]) -> AnyEvent:
    """`event` with the fields its links name set to the seqs of their targets
    (`seqs`: the seqs the outcome's earlier events were staged at, in order). A dict
    field is copied once for all its keys: once per key was quadratic (a restore of
    5,000 files links 5,000 keys of one event)."""
    fields: dict[str, Any] = {}
    for link in links:
        value: Any = seqs[link.target]
        if link.key is not None:
            keyed = fields.get(link.name)
            if not isinstance(keyed, dict):
                keyed = fields[link.name] = dict(getattr(event, link.name))
            keyed[link.key] = value
        else:
            fields[link.name] = value
    return msgspec.structs.replace(event, **fields) if fields else event


# a handler as the server calls it: its params already decoded to the method's Struct
Handler = Callable[[Context, Any], Outcome]
