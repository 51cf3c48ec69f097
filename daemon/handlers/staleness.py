"""Resolving an agent's anchors in the snapshot it saw, and explaining when they are stale.

The state says which content each agent last saw. An edit's anchors are
planned against that content, then carried to the current content through
`daemon.text.rebase`. When lines an operation relies on changed since, the
error names the events that changed them (`details.conflicts`) and carries
the changes with fresh anchors (`details.delta`), so the agent can retry
without re-reading the whole file; having been shown the delta, the agent's
snapshot advances to the current content.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import msgspec

from daemon.handlers import Context
from daemon.handlers.history import ContentChange, changes_since, document
from daemon.handlers.read import anchored
from daemon.text.anchors import LineAnchor
from daemon.text.diff import anchored_diff
from daemon.text.edit import EditPlan, Splice, plan_edit
from daemon.text.lines import Document
from daemon.text.rebase import BrokenSpan, LineMap, Step, chain_map, first_breaks, map_plan
from daemon.textcache import Parsed
from daemon.workspace import FileSnapshot
from schemas.errors import ErrorCode, ToolError
from schemas.events import AnyEvent
from schemas.tools import Operation


@dataclass(frozen=True)
class Base:
    """The older content an agent's anchors refer to, and what changed it since."""

    version: int
    sha256: str
    parsed: Parsed
    changes: list[ContentChange]  # the ones whose content is stored, each with its step
    steps: list[Step]
    current: dict[str, bytes]  # the content on disk now, which may not be stored yet

    @property
    def doc(self) -> Document:
        return self.parsed.doc


def agent_base(ctx: Context, snap: FileSnapshot, noticed: list[AnyEvent]) -> Base | None:
    """The agent's snapshot when it differs from the current content (and is stored)."""
    seen = ctx.state.snapshots.get((ctx.agent, snap.path))
    if seen is None or seen.sha256 == snap.sha256:
        return None
    return _base(ctx, snap, noticed, seen.version, seen.sha256)


def last_read_base(
    ctx: Context, snap: FileSnapshot, noticed: list[AnyEvent], snapshot: Base | None
) -> Base | None:
    """The content of the agent's last *read*, when it is older than its snapshot.

    After an agent's own write its snapshot is the written content, which may
    already hold other agents' changes it never saw. An anchor it still holds
    from its last read is then unknown in the snapshot; resolving it in that
    read explains the staleness (who changed the line) instead of a bare
    "not found". Used to explain refusals only, never to apply an edit.
    """
    reads = ctx.journal.records(
        path=snap.path, agent=ctx.agent, kind="file_read", newest_first=True, limit=1
    )
    read = next(iter(reads), None)
    if read is None or read.event.content_sha256 in (snap.sha256, snapshot and snapshot.sha256):
        return None
    return _base(ctx, snap, noticed, read.seq, read.event.content_sha256)


def _base(
    ctx: Context, snap: FileSnapshot, noticed: list[AnyEvent], version: int, sha256: str | None
) -> Base | None:
    parsed = document(ctx, sha256)
    if parsed is None or sha256 is None:
        return None
    current = {snap.sha256: snap.data}
    changes: list[ContentChange] = []
    steps: list[Step] = []
    for change in changes_since(ctx, snap.path, version, noticed):
        content = document(ctx, change.sha256, current)
        if content is not None:  # a deletion, or content never stored: diffed across
            changes.append(change)
            steps.append(
                Step(content.doc.lines, change.before_sha256, change.sha256, change.line_changes)
            )
    return Base(version, sha256, parsed, changes, steps, current)


def plan_rebased(
    base: Base, current: Document, operations: Sequence[Operation]
) -> tuple[EditPlan, list[BrokenSpan]]:
    """Plan in the snapshot, then carry the plan to the current content."""
    plan = plan_edit(base.doc.lines, operations, base.parsed.index, base.parsed.anchors)
    return map_plan(plan, chain_map(base.doc.lines, base.sha256, base.steps, current.lines))


def earlier_view_conflict(
    ctx: Context,
    snap: FileSnapshot,
    noticed: list[AnyEvent],
    current: Document,
    operations: Sequence[Operation],
    plan: EditPlan,
) -> ToolError | None:
    """An operation whose anchor names one line in a view the agent was shown earlier
    and another in its latest one.

    After its own write (or a partial or delta read) an agent's snapshot holds
    other agents' lines it never saw, and a context anchor it kept from its
    read can match one of those instead: the agent meant the line it saw. Each
    operation is resolved in every earlier view too and carried forward; where
    the two disagree, or the earlier line is gone, the edit is refused — never
    applied to a line the agent did not mean. Only the anchor lines are compared:
    what lies between a range's endpoints may have changed since the earlier view
    by changes the latest one shows (the agent's own insert inside the range).
    """
    seen = ctx.state.snapshots.get((ctx.agent, snap.path))
    if seen is None or not seen.earlier:
        return None
    chosen = {splice.index: splice for splice in plan.splices}
    for version, sha256 in seen.earlier:
        view = _base(ctx, snap, noticed, version, sha256)
        if view is None:
            continue  # its content was never stored
        mapping = chain_map(view.doc.lines, view.sha256, view.steps, current.lines)
        for i, op in enumerate(operations):
            try:
                alone = plan_edit(view.doc.lines, [op], view.parsed.index, view.parsed.anchors)
            except ToolError:
                continue  # not an anchor of that view
            mine = chosen.get(i)
            if mine is not None and _anchor_lines(alone.splices[0], mapping) != _now(mine):
                return _views_disagree(i, mine.op, version, alone, seen.version, mine)
    return None


def _anchor_lines(earlier: Splice, mapping: LineMap) -> tuple[int | None, int | None]:
    """The current 0-based positions of the lines an earlier view's anchors named."""
    return mapping[earlier.targets[0] - 1], mapping[earlier.targets[-1] - 1]


def _now(splice: Splice) -> tuple[int, int]:
    """The current 0-based positions of a planned splice's anchor lines."""
    if splice.end > splice.start:
        return splice.start, splice.end - 1
    line = splice.start - 1 if splice.op == "insert_after" else splice.start
    return line, line


def _views_disagree(
    i: int, op: str, version: int, earlier: EditPlan, latest_version: int, latest: Splice
) -> ToolError:
    was = ", ".join(map(str, earlier.splices[0].targets))
    now = latest.start + 1
    message = (
        f"operation {i + 1} ({op}): its anchor named line(s) {was} in what you were shown at"
        f" version {version}, but line {now} of the current file through your latest view"
        f" (version {latest_version}), which holds changes by others you have not read."
        " Re-read those lines and use a fresh anchor"
    )
    details = {
        "operation": i + 1,
        "earlier_version": version,
        "earlier_lines": list(earlier.splices[0].targets),
        "latest_version": latest_version,
        "current_line": now,
    }
    return ToolError(ErrorCode.ANCHOR_STALE, message, details)


def stale_error(
    ctx: Context,
    base: Base,
    current: Document,
    anchors: Sequence[LineAnchor],
    broken: Sequence[BrokenSpan],
    current_version: int,
) -> ToolError:
    """`anchor_stale` naming every event that changed a line the edit relied on."""
    conflicts = _conflicts(ctx, base, broken)
    first = broken[0]
    who = ", ".join(
        f"{c['agent'] or 'an outside writer'} ({c['kind']}, seq {c['seq']})" for c in conflicts
    )
    lines = ", ".join(map(str, first.lines[:5])) + ("…" if len(first.lines) > 5 else "")
    message = (
        f"the file has changed since you read it (version {base.version}): "
        f"operation {first.operation} ({first.op}) relies on line(s) {lines}, which changed"
        + (f" — by {who}" if who else "")
        + "; details.delta has the changes with fresh anchors"
    )
    details = {
        "stale": [{"operation": b.operation, "op": b.op, "lines": list(b.lines)} for b in broken],
        "conflicts": conflicts,
        "delta": delta(base, current, anchors, current_version),
    }
    return ToolError(ErrorCode.ANCHOR_STALE, message, details)


def explain_from(
    ctx: Context,
    base: Base,
    current: Document,
    anchors: Sequence[LineAnchor],
    operations: Sequence[Operation],
    current_version: int,
) -> ToolError | None:
    """An `anchor_stale` with conflicts and delta, if `base` explains the stale anchors."""
    try:
        _plan, broken = plan_rebased(base, current, operations)
    except ToolError:
        return None
    if not broken:
        return None
    return stale_error(ctx, base, current, anchors, broken, current_version)


def with_delta(
    error: ToolError,
    base: Base,
    current: Document,
    anchors: Sequence[LineAnchor],
    current_version: int,
) -> ToolError:
    """An anchor unknown even in the agent's snapshot: still hand over what changed."""
    if error.code is ErrorCode.ANCHOR_STALE and "delta" not in error.details:
        error.details["delta"] = delta(base, current, anchors, current_version)
        error.message += (
            f"; the file changed since you read version {base.version}: see details.delta"
        )
    return error


def delta(
    base: Base, current: Document, anchors: Sequence[LineAnchor], current_version: int
) -> dict[str, object]:
    """The changed hunks from the agent's snapshot to now, with fresh anchors."""
    diff, added = anchored_diff(base.doc.lines, current.lines, anchors)
    return {
        "from_version": base.version,
        "to_version": current_version,
        "diff": diff,
        "changed_lines": [
            msgspec.to_builtins(anchored(anchors[n - 1], current.lines[n - 1])) for n in added
        ],
        "line_count": current.line_count,
    }


def _conflicts(ctx: Context, base: Base, broken: Sequence[BrokenSpan]) -> list[dict[str, object]]:
    """Which recorded change broke each span (all changes, when no single one did)."""
    breaks = first_breaks(base.doc.lines, base.sha256, base.steps, [b.lines for b in broken])
    named: dict[int, dict[str, object]] = {}
    for span, k in zip(broken, breaks, strict=True):
        culprits = [base.changes[k]] if k is not None else base.changes
        for change in culprits:
            entry = named.setdefault(change.seq, {**change.describe(), "lines": []})
            entry["lines"] = sorted({*entry["lines"], *span.lines})  # type: ignore[misc]
    return [named[seq] for seq in sorted(named)]
