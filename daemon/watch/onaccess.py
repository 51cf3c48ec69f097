"""Noticing outside changes on access.

Whenever a handler reads a file the state already knows, it compares the
content hash with the state's. A difference means someone other than the
daemon wrote the file since — a person, a formatter, `git checkout` — and is
journaled as `outside_change` before whatever the request itself records.
That keeps versions, writer tracking and stale-anchor checks honest even
before (and between) the watcher's reports. Recognised by content hash, never
by timestamps.
"""

from __future__ import annotations

from editjournal.daemon.files.filesnapshot import FileSnapshot
from editjournal.daemon.model.state import State
from editjournal.schemas.events import OutsideChangeRecorded


def outside_change(
    state: State, snap: FileSnapshot, line_count: int
) -> list[OutsideChangeRecorded]:
    """An `outside_change` event when `snap` differs from what the journal knows."""
    known = state.files.get(snap.path)
    if known is None or known.sha256 == snap.sha256:
        return []
    return [
        OutsideChangeRecorded(
            path=snap.path,
            change="modified" if known.sha256 is not None else "created",
            old_sha256=known.sha256,
            new_sha256=snap.sha256,
            size=snap.size,
            line_count=line_count,
        )
    ]
