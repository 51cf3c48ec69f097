"""Guards the content-finding writers share: an agent never overwrites what it was not shown.

A writer that finds its place by text (`edit_file`, `update_section`,
`apply_patch`) rather than by anchors may find it in lines someone else wrote
since the agent's snapshot; a writer that replaces a whole file (`write_file`,
an `apply_patch` Add File or move) may replace changes the agent never saw.
These checks refuse the first (`anchor_stale`, with who and the delta) and name
the second (a warning). They read the state and the journal; they change nothing.
"""

from __future__ import annotations

from typing import Any

from editjournal.daemon.text.edit import EditPlan
from editjournal.daemon.text.lines import Document
from editjournal.daemon.text.ranges import from_ranges, intersection
from editjournal.daemon.text.rebase import relied
from editjournal.daemon.writing.history import changes_since
from editjournal.daemon.writing.stale import brought_by, delta, named, unseen_refusal
from editjournal.daemon.writing.target import Target
from editjournal.schemas.errors import ErrorCode, ToolError

OVERWRITTEN_SHOWN = 5  # changes named in an overwrite warning, newest last


def relied_spans(plan: EditPlan, doc: Document) -> list[tuple[int, int]]:
    """The 1-based line spans the plan's splices rely on, as the carrying sees them
    (`text.rebase.relied`: the lines changed, an insertion's neighbours)."""
    relied_lines = (relied(s, doc.line_count) for s in plan.splices)
    return [(lines[0], lines[-1]) for lines in relied_lines if lines]


def refuse_unseen_in_snapshot(target: Target, spans: list[tuple[int, int]], what: str) -> None:
    """`anchor_stale` when the lines a change planned in the agent's snapshot relies on
    are lines of it the agent was never shown (a ranged read, others' lines its own
    write was carried over): they are not the agent's to overwrite."""
    ctx = target.ctx
    seen = ctx.state.snapshots[(ctx.agent, target.path)]
    hits = sorted(from_ranges(intersection(spans, seen.unseen)))
    if hits:
        raise unseen_refusal(what, hits, seen.version, [], None)


def unseen_hits(target: Target, spans: list[tuple[int, int]]) -> list[int]:
    """The lines of `spans` (1-based, of the current content) the agent was not shown."""
    return sorted(from_ranges(intersection(spans, target.unseen(target.agent_base) or [])))


def refuse_unseen(target: Target, spans: list[tuple[int, int]], what: str) -> None:
    """`anchor_stale` when a span the write relies on holds lines the agent has not seen
    (someone else changed them since its snapshot, or it was never shown them)."""
    base = target.agent_base
    hits = sorted(from_ranges(intersection(spans, target.unseen(base) or [])))
    if not hits:
        return
    ctx = target.ctx
    seen = ctx.state.snapshots[(ctx.agent, target.path)]
    conflicts, found = [], None
    if base is not None:
        conflicts = brought_by(base, target.doc.lines, hits)
        found = delta(base, target.doc, target.anchors, target.version)
    raise unseen_refusal(what, hits, seen.version, conflicts, found)


def overwritten_unseen(target: Target) -> list[dict[str, Any]] | None:
    """The changes a whole-file write overwrites that this agent never saw; None when it
    saw the content (or there is none to lose)."""
    if not target.exists or target.doc.line_count == 0:
        return None
    ctx = target.ctx
    seen = ctx.state.snapshots.get((ctx.agent, target.path))
    if seen is not None and seen.sha256 == target.snap.sha256 and not seen.unseen:
        return None
    since = seen.version if seen is not None else 0
    changes = changes_since(ctx, target.path, since, target.noticed)
    return [c.describe() for c in changes[-OVERWRITTEN_SHOWN:]]


def overwrite_warning(target: Target, overwrote: list[dict[str, Any]], what: str, hint: str) -> str:
    """`what` ("write_file", say) replaced the file's lines, naming whose changes it lost."""
    ctx = target.ctx
    seen = ctx.state.snapshots.get((ctx.agent, target.path))
    when = "never read" if seen is None else f"had not read since version {seen.version}"
    who = named(overwrote)
    lost = f", overwriting changes by {who}" if who else ""
    return (
        f"{what} replaced all {target.doc.line_count} lines of {target.path}, which you"
        f" {when}{lost}: {hint}"
    )


def overwrite_refusal(target: Target, what: str, conflicts: list[dict[str, Any]]) -> ToolError:
    """`anchor_stale` for a whole replacement (or removal) of content the agent has not
    seen: never read, or changed since its read (by `conflicts`), with the delta when
    its read is stored."""
    ctx = target.ctx
    seen = ctx.state.snapshots.get((ctx.agent, target.path))
    when = "never read" if seen is None else f"have not read since version {seen.version}"
    details: dict[str, Any] = {"conflicts": conflicts}
    if seen is not None:
        details["base_version"] = seen.version
    base = target.agent_base
    if base is not None:
        details["delta"] = delta(base, target.doc, target.anchors, target.version)
    who = named(conflicts)
    return ToolError(
        ErrorCode.ANCHOR_STALE,
        f"{what} would replace all {target.doc.line_count} lines of {target.path}, which you"
        f" {when}"
        + (f" — changed since by {who}" if who else "")
        + ("; details.delta has the changes with fresh anchors" if base is not None else ""),
        details,
    )
