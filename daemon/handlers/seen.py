"""Which lines of its snapshot an agent has been shown, carried from event to event.

An agent's snapshot is a whole version of the file, but it may not have been
shown all of it: a ranged read shows some lines; its own edit, carried over
other agents' changes, leaves their lines in its snapshot unseen; a delta shows
only what changed. Anchors must never rely on a line the agent was not shown,
so each read, edit and delta-bearing rejection records the lines still unseen
(`unseen` on the event), and the state folds them into the snapshot. This module
computes them; it changes nothing.
"""

from __future__ import annotations

from collections.abc import Iterable

from editjournal.daemon.handlers import Context
from editjournal.daemon.handlers.history import Base, base_at
from editjournal.daemon.text.lines import Document
from editjournal.daemon.text.rebase import (
    LineMap,
    LineRanges,
    carried_unseen,
    from_ranges,
    moved_lines,
    to_ranges,
)
from editjournal.daemon.workspace import FileSnapshot
from editjournal.schemas.events import AnyEvent


def unseen_now(
    ctx: Context,
    snap: FileSnapshot,
    noticed: list[AnyEvent],
    current: Document,
    base: Base | None = None,
) -> set[int] | None:
    """The lines of the current content the agent has not been shown (1-based).

    None: it never saw the file. `base` saves the work when the caller already
    holds the agent's snapshot as a Base.
    """
    snapshot = ctx.state.snapshots.get((ctx.agent, snap.path))
    if snapshot is None:
        return None
    unseen = from_ranges(snapshot.unseen)
    if snapshot.sha256 == snap.sha256:
        return unseen
    if base is None or base.version != snapshot.version:
        base = base_at(ctx, snap, noticed, snapshot.version, snapshot.sha256)
    if base is None:  # its content was never stored: nothing can be vouched for
        return set(range(1, current.line_count + 1))
    return carried_unseen(unseen, base.line_map(current), current.line_count)


def after_showing(unseen: set[int] | None, shown: Iterable[int], line_count: int) -> LineRanges:
    """What stays unseen once `shown` lines were shown (an agent new to the file saw
    only those)."""
    before = set(range(1, line_count + 1)) if unseen is None else unseen
    return to_ranges(before - set(shown))


def after_own_write(unseen: set[int] | None, own: LineMap) -> LineRanges:
    """What the agent has not been shown of the content its own write leaves: the lines
    it had not seen that survive the write. The lines it wrote, it knows."""
    if unseen is None:  # never read the file: the plain behaviour, nothing to hold against it
        return []
    return to_ranges(moved_lines(unseen, own))
