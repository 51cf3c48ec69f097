"""Handlers: one function per method, `(Context, Params) -> Outcome`.

A handler never mutates state and never writes the journal. It reads what it
needs (state, workspace files, journal history) and returns an `Outcome`: the
events that describe what happened, the blobs they refer to, the file writes
to perform and the result. The server commits the events, applies them to
state, performs the writes and replies — in that order. Adding a tool means
adding its Params/Result to `schemas.tools`, a function here decorated with
`@handles(name)`, and its tests.

A handler whose work is too long for one turn of the loop (a checkpoint of a
100,000-file tree) returns an `Outcome` with a `Job`: the server parks the request,
runs `job.step` in slices between other requests (committing the blobs each slice
hands back), and when the job is done handles the request again with the job as
`ctx.finished` — so the final decision, its events and its writes take the one
ordinary path, at one moment.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

import msgspec

from editjournal.daemon.files.textcache import TextCache
from editjournal.daemon.files.workspace import Workspace
from editjournal.daemon.model.state import State
from editjournal.daemon.store.journal import Journal
from editjournal.schemas.errors import ToolError
from editjournal.schemas.events import AnyEvent
from editjournal.schemas.tools import TOOL_PARAMS, Params


@dataclass(frozen=True)
class DaemonInfo:
    """Facts about the running daemon process that `status` reports."""

    pid: int
    version: str
    socket: str
    events_socket: str
    log_path: str
    started_monotonic: float
    watch_health: Callable[[], dict[str, Any]] = lambda: {"state": "disabled"}
    commit_stats: Callable[[], dict[str, Any]] = dict
    parked: Callable[[], int] = lambda: 0  # requests waiting for their jobs
    workspace_id: str = ""


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
    job: Job | None = None  # not done yet: park the request and run this (see above)

    def __post_init__(self) -> None:
        if self.error is not None:  # kept past the request: never with its frames
            self.error.detached()


def linked(event: AnyEvent, links: Sequence[Link], seqs: Sequence[int]) -> AnyEvent:
    """`event` with the fields its links name set to the seqs of their targets
    (`seqs`: the seqs the outcome's earlier events were staged at, in order)."""
    for link in links:
        value: Any = seqs[link.target]
        if link.key is not None:
            value = {**getattr(event, link.name), link.key: value}
        event = msgspec.structs.replace(event, **{link.name: value})
    return event


@dataclass
class Progress:
    """What one slice of a job hands back: contents for the journal to keep (blob
    sha256 -> bytes, and which file each is a version of, for line deltas)."""

    blobs: dict[str, bytes] = field(default_factory=dict)
    paths: dict[str, str] = field(default_factory=dict)


class Job(Protocol):
    """Long work a handler hands to the server, done a slice at a time."""

    @property
    def done(self) -> bool: ...

    def step(self, ctx: Context, deadline: float) -> Progress:
        """Work until `deadline` (time.monotonic) or the end; read-only, like a handler."""
        ...


@dataclass(frozen=True)
class Context:
    """Everything a handler may look at, read-only by contract."""

    agent: str
    state: State
    workspace: Workspace
    journal: Journal
    info: DaemonInfo
    cache: TextCache  # parsed contents by hash: derived data, never a source of truth
    ignore_patterns: tuple[str, ...] = ()  # the watcher's extra patterns (--ignore)
    finished: Job | None = None  # the request's job, done: handle it for good

    @property
    def next_seq(self) -> int:
        """The seq this request's first event will get (one thread stages in order)."""
        return self.journal.last_seq + 1


P = TypeVar("P", bound=Params)
Handler = Callable[[Context, Any], Outcome]
TypedHandler = Callable[[Context, P], Outcome]
HANDLERS: dict[str, Handler] = {}


def handles(method: str) -> Callable[[TypedHandler[P]], TypedHandler[P]]:
    """Register a handler for a method that `schemas.tools.TOOL_PARAMS` declares."""
    if method not in TOOL_PARAMS:
        raise KeyError(f"{method} has no params schema in schemas.tools.TOOL_PARAMS")

    def register(fn: TypedHandler[P]) -> TypedHandler[P]:
        HANDLERS[method] = fn
        return fn

    return register


def registry() -> dict[str, Handler]:
    """Every handler, importing the modules that register them."""
    from editjournal.daemon.handlers import (  # noqa: F401 - imported for their registration
        agents,
        apply,
        apply_patch,
        atomic,
        audit,
        checkpoints,
        edit,
        harness,
        hunk_tools,
        meta,
        patch,
        prepare,
        read,
        restore,
        undo,
    )

    return HANDLERS
