"""Where an agent's writes are now: `undo --by` follows the renames the journal recorded.

An agent writes `a.py`; later someone renames it `b.py` (a shell `mv`, seen by the
watcher as an `outside_change` "moved"; another agent's `apply_patch` `*** Move to:`,
an `edit_applied` with `moved_to`). Undoing the agent's work must revert its lines in
`b.py`, where they are, not refuse because `a.py` is gone. So each write is filed
under the path its file has now: from the write's path, the first event after it that
took the file away is looked at; a move by anyone but the agent being undone is
followed to its destination (and from there on, move by move), a deletion or the
agent's own move stops the walk. The agent's own moves are its writes: undone as
they are (the new path removed, the old one recreated), never followed.

The revert in the new path then maps the agent's lines through that path's history,
which starts with the move's content: the lines are found again by content, as for
any change since (daemon.text.revert), so the rename itself changes no line and a
line someone changed before or after it still refuses `undo_conflict`.

What it must never do: guess. Only renames the journal recorded are followed; a file
that merely has the same content elsewhere is not the agent's file.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Mapping, Sequence

from editjournal.daemon.contract.context import Context
from editjournal.schemas.events import EditApplied, OutsideChangeRecorded, Record

MAX_HOPS = 64  # renames followed per file at most (a cycle a -> b -> a is followed anyway)


def filed_where_now(
    ctx: Context, by: str, writes: Mapping[str, Sequence[Record]]
) -> dict[str, list[Record]]:
    """`writes` (the agent's writes per path, oldest first) filed under the path each
    file has now, merged in seq order when two paths' files became one path. A path's
    events are read once for all the agent's writes to it (a hot file's thousands)."""
    moved: dict[str, list[Record]] = {}
    for path, records in writes.items():
        removals = _removals(ctx, path, records[0].seq)
        seqs = [r.seq for r in removals]
        for record in records:
            at = bisect_right(seqs, record.seq)
            first = removals[at] if at < len(removals) else None
            moved.setdefault(_followed(ctx, by, path, first), []).append(record)
    return {path: sorted(records, key=lambda r: r.seq) for path, records in moved.items()}


def where_now(ctx: Context, by: str, path: str, after_seq: int) -> str:
    """The path the file `path` held after `after_seq` has now, by the renames since."""
    return _followed(ctx, by, path, _taken_away(ctx, path, after_seq))


def _followed(ctx: Context, by: str, path: str, hop: Record | None) -> str:
    """From `path`, taken away by `hop` (None: never since), move by move to where the
    file is now."""
    for _ in range(MAX_HOPS):
        if hop is None or hop.agent == by:
            return path
        dest = _moved_to(hop)
        if dest is None:
            return path  # deleted: the revert finds out what to do with that
        path, hop = dest, _taken_away(ctx, dest, hop.seq)
    return path


def _removals(ctx: Context, path: str, after_seq: int) -> list[Record]:
    """Every event from `after_seq` on that removed or moved `path` away, in seq order."""
    return [r for r in ctx.journal.records(path=path, after_seq=after_seq) if removes(r)]


def _taken_away(ctx: Context, path: str, after_seq: int) -> Record | None:
    """The first event after `after_seq` that removed or moved `path` away."""
    return next(
        (r for r in ctx.journal.records(path=path, after_seq=after_seq) if removes(r)), None
    )


def removes(record: Record) -> bool:
    event = record.event
    if isinstance(event, EditApplied):
        return event.deleted or event.moved_to is not None
    return isinstance(event, OutsideChangeRecorded) and event.change in ("deleted", "moved")


def _moved_to(record: Record) -> str | None:
    event = record.event
    if isinstance(event, (EditApplied, OutsideChangeRecorded)):
        return event.moved_to
    return None
