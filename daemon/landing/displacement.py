"""Journaling what a write met as it landed: outside changes, then the carry or refusal.

A write that met an outside change as it landed (daemon/landing/exchange.py) has already
put that change back in place, and either carried its own change over it or given
way to it. The journal must say so, in the order it happened:

1. one `outside_change` per content met, stored as a blob, `displaced_by` naming
   the write's event (as if the watcher had seen it just before the write);
2. a carry `edit_applied` by the writing agent (writer `carry`) when the merged
   content is in place: the lines it was not shown are `unseen`;
3. for the replies: a warning where the change was carried, `write_displaced`
   where it was not.

And a late change to a file a write displaced (daemon/files/latewrites.py) that is not an
append: a `created` `outside_change` of the file it is kept in, beside its own.

Pure decisions over a `Met`: no state, no journal, no file is touched here.
"""

from __future__ import annotations

from collections.abc import Iterator

import msgspec

from editjournal.daemon.files.encoding import utf8_text
from editjournal.daemon.files.latewrites import Late
from editjournal.daemon.landing.exchange import MAX_LANDINGS, Observed
from editjournal.daemon.landing.pendingwrites import ABSENT
from editjournal.daemon.landing.writeround import Met
from editjournal.daemon.settings.limits import count_lines
from editjournal.daemon.text.rebase import line_map
from editjournal.schemas.errors import ErrorCode, ToolError
from editjournal.schemas.events import EditApplied, OutsideChangeRecorded
from editjournal.schemas.wire import Response

CARRY_WRITER = "carry"  # the writer of a change carried over an outside change it met
Reply = tuple[list[bytes], Response]


def outside_events(met: Met) -> Iterator[tuple[OutsideChangeRecorded, dict[str, bytes]]]:
    """One event per content met, each changing the file from the one before it."""
    previous = met.ours.sha256 if met.ours is not None else ABSENT
    for found in met.landed.observed:
        yield _outside(met, found, previous), _blob(found)
        previous = found.sha256


def _outside(met: Met, found: Observed, previous: str) -> OutsideChangeRecorded:
    text = utf8_text(found.data) if found.data is not None else None
    absent = found.sha256 == ABSENT
    return OutsideChangeRecorded(
        path=met.key,
        change="deleted" if absent else ("created" if previous == ABSENT else "modified"),
        old_sha256=None if previous == ABSENT else previous,
        new_sha256=None if absent else found.sha256,
        size=None if absent else found.size,
        line_count=count_lines(text) if text is not None else None,
        content_stored=found.data is not None,
        displaced_by=met.seq,
    )


def _blob(found: Observed) -> dict[str, bytes]:
    return {found.sha256: found.data} if found.data is not None else {}


def carry_event(met: Met) -> tuple[EditApplied, dict[str, bytes]] | None:
    """The carried content, as a write by the agent whose change it carries."""
    carried = met.landed.carried
    if carried is None or not met.landed.observed:
        return None
    before = met.landed.observed[-1]
    data, sha = carried.snapshot.data, carried.snapshot.sha256
    event = EditApplied(
        path=met.key,
        writer=CARRY_WRITER,
        before_sha256=before.sha256,
        after_sha256=sha,
        size=len(data),
        lines_before=count_lines((before.data or b"").decode("utf-8", "replace")),
        line_count=count_lines(carried.snapshot.text),
        unseen=_not_in(met.ours.text if met.ours is not None else "", carried.snapshot.text),
    )
    return event, {sha: data}


def _not_in(seen: str, now: str) -> list[tuple[int, int]]:
    """The lines of `now` (1-based, inclusive ranges) that are not lines of `seen`:
    what the writing agent was not shown (the common prefix and suffix cost nothing)."""
    kept = {i for i in line_map(seen.splitlines(), now.splitlines()) if i is not None}
    ranges: list[tuple[int, int]] = []
    for line in range(1, len(now.splitlines()) + 1):
        if line - 1 in kept:
            continue
        if ranges and ranges[-1][1] == line - 1:
            ranges[-1] = (ranges[-1][0], line)
        else:
            ranges.append((line, line))
    return ranges


def late_appended(late: Late) -> bytes | None:
    """The whole lines written late at the end of a displaced file, when that is all."""
    grown = len(late.data) > len(late.base) and late.data.startswith(late.base)
    whole = not late.base or late.base.endswith((b"\n", b"\r"))
    return late.data[len(late.base) :] if grown and whole else None


def kept_path(late: Late) -> str:
    """Where a late change that is not an append is kept: beside its file."""
    return f"{late.key}.editjournal-late-{late.seq}"


def late_event(path: str, data: bytes, sha: str, seq: int) -> OutsideChangeRecorded:
    text = utf8_text(data)
    return OutsideChangeRecorded(
        path=path,
        change="created",
        old_sha256=None,
        new_sha256=sha,
        size=len(data),
        line_count=count_lines(text) if text is not None else None,
        displaced_by=seq,
    )


def _kept_changing(met: Met, outside_seq: int) -> ToolError:
    return ToolError(
        ErrorCode.FILE_CHANGING,
        f"{met.key} kept changing on disk while this write (seq {met.seq}) was landing"
        f" ({MAX_LANDINGS} attempts); every outside change was kept and journaled (the last"
        f" at seq {outside_seq}) and this write is not in the file",
        {"path": met.key, "seq": met.seq, "outside_seq": outside_seq, "attempts": MAX_LANDINGS},
    )


class Carries:
    """How the batch's replies change: a warning where a write's change was carried over
    an outside one it met, a `write_displaced` refusal where it gave way."""

    def __init__(self) -> None:
        self._warnings: dict[int, list[str]] = {}
        self._refusals: dict[int, ToolError] = {}

    def carried(self, met: Met, outside_seq: int, carry_seq: int) -> None:
        warning = (
            f"{met.key}: an outside writer changed the file while this write was landing"
            f" (seq {outside_seq}); this change was carried over it (seq {carry_seq}):"
            " both are in the file"
        )
        for owner in met.owners:
            self._warnings.setdefault(owner, []).append(warning)

    def refused(self, met: Met, outside_seq: int) -> None:
        error = (
            _kept_changing(met, outside_seq)
            if met.landed.kept_changing
            else ToolError(
                ErrorCode.WRITE_DISPLACED,
                f"{met.key}: an outside writer changed the file while this write (seq {met.seq})"
                " was landing, on lines this write changed (or it created or removed the file);"
                f" the outside content was kept (seq {outside_seq}) and this write is not in"
                " the file",
                {"path": met.key, "seq": met.seq, "outside_seq": outside_seq},
                f"read_file {met.key} with since_version {met.seq} shows the outside change;"
                " redo the change over it",
            )
        )
        for owner in met.owners:
            self._refusals[owner] = error

    def amend(self, replies: list[Reply]) -> list[Reply]:
        return [(route, self._amended(i, response)) for i, (route, response) in enumerate(replies)]

    def _amended(self, owner: int, response: Response) -> Response:
        refusal = self._refusals.get(owner)
        if refusal is not None and response.ok:
            return Response(id=response.id, ok=False, error=refusal.to_wire(), seq=response.seq)
        warnings = self._warnings.get(owner)
        if not warnings:
            return response
        return msgspec.structs.replace(response, warnings=[*response.warnings, *warnings])
