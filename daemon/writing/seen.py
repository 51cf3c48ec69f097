"""Which lines of its snapshot an agent has been shown, carried from event to event.

An agent's snapshot is a whole version of the file, but it may not have been
shown all of it: a ranged read shows some lines; its own edit, carried over
other agents' changes, leaves their lines in its snapshot unseen; a delta shows
only what changed. Anchors must never rely on a line the agent was not shown,
so each read, edit and delta-bearing rejection records the lines still unseen
(`unseen` on the event), and the state folds them into the snapshot. This module
computes them, as ranges (`daemon.text.ranges`) from end to end, so the
bookkeeping costs O(ranges + changes), never O(unseen lines); it changes nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from editjournal.daemon.contract.context import Context
from editjournal.daemon.files.filesnapshot import FileSnapshot
from editjournal.daemon.text.lines import Document
from editjournal.daemon.text.ranges import (
    LineRanges,
    carried_unseen,
    kept_by_changes,
    moved,
    normalized,
    subtract,
    to_ranges,
    whole,
)
from editjournal.daemon.text.rebase import LineChange
from editjournal.daemon.writing.history import Base, base_at
from editjournal.schemas.events import AnyEvent


def unseen_now(
    ctx: Context,
    snap: FileSnapshot,
    noticed: list[AnyEvent],
    current: Document,
    base: Base | None = None,
) -> LineRanges | None:
    """The lines of the current content the agent has not been shown (1-based ranges).

    None: it never saw the file. `base` saves the work when the caller already
    holds the agent's snapshot as a Base.
    """
    snapshot = ctx.state.snapshots.get((ctx.agent, snap.path))
    if snapshot is None:
        return None
    if snapshot.sha256 == snap.sha256:
        return normalized(snapshot.unseen)
    if base is None or base.version != snapshot.version:
        base = base_at(ctx, snap, noticed, snapshot.version, snapshot.sha256)
    if base is None:  # its content was never stored: nothing can be vouched for
        return whole(current.line_count)
    return carried_unseen(snapshot.unseen, base.line_map(current), current.line_count)


def after_showing(unseen: LineRanges | None, shown: Iterable[int], line_count: int) -> LineRanges:
    """What stays unseen once `shown` lines were shown (an agent new to the file saw
    only those); a `range` of shown lines costs nothing to convert."""
    before = whole(line_count) if unseen is None else unseen
    return subtract(before, to_ranges(shown))


def after_own_write(
    unseen: LineRanges | None, line_changes: Sequence[LineChange], line_count: int
) -> LineRanges:
    """What the agent has not been shown of the content its own write leaves: the lines
    it had not seen that survive the write (`line_changes` on a file of `line_count`
    lines). The lines it wrote, it knows."""
    if unseen is None:  # never read the file: the plain behaviour, nothing to hold against it
        return []
    return moved(unseen, kept_by_changes(line_count, line_changes))
