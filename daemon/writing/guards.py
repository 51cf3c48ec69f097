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

from editjournal.daemon.model.state import Snapshot
from editjournal.daemon.text.edit import EditPlan
from editjournal.daemon.text.lines import Document
from editjournal.daemon.text.ranges import covered, from_ranges, intersection, normalized
from editjournal.daemon.text.rebase import relied
from editjournal.daemon.writing.history import base_at, changes_since
from editjournal.daemon.writing.stale import (
    brought_by,
    delta,
    named,
    shown_lines,
    unseen_refusal,
)
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


def refuse_unseen(target: Target, spans: list[tuple[int, int]], what: str, op: str = "") -> None:
    """`anchor_stale` when a span the write relies on holds lines the agent has not seen
    (someone else changed them since its snapshot, or it was never shown them). `op`
    (a tool that finds its place by text, `update_section`) is named in `details.stale`,
    so the refusal's suggestion says what that tool's retry takes (no anchors)."""
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
    stale: list[dict[str, object]] | None = [{"op": op, "lines": hits}] if op else None
    raise unseen_refusal(what, hits, seen.version, conflicts, found, stale)


def overwritten_unseen(target: Target) -> list[dict[str, Any]] | None:
    """The changes a whole-file write overwrites that this agent never saw; None when it
    saw the content (or there is none to lose). After a ranged read they are the changes
    since the agent last saw the whole file (its latest read showed only part, and may
    be newer than every change): none when the file is as that full view showed it."""
    if not target.exists or target.doc.line_count == 0:
        return None
    ctx = target.ctx
    seen = ctx.state.snapshots.get((ctx.agent, target.path))
    if seen is not None and seen.sha256 == target.snap.sha256 and not seen.unseen:
        return None
    since = seen.version if seen is not None else 0
    if seen is not None and seen.unseen and seen.full_view is not None:
        if seen.full_view[1] == target.snap.sha256:
            return None  # its last full view is the file as it is: every line was shown
        since = seen.full_view[0]
    changes = changes_since(ctx, target.path, since, target.noticed)
    return [c.describe() for c in changes[-OVERWRITTEN_SHOWN:]]


def overwrite_warning(target: Target, overwrote: list[dict[str, Any]], what: str, hint: str) -> str:
    """`what` ("write_file", say) replaced the file's lines, naming whose changes it lost.
    After a ranged read, explained from the agent's last full view (`_since_full_view`):
    its latest read is not the version it had not seen the file since."""
    ctx = target.ctx
    seen = ctx.state.snapshots.get((ctx.agent, target.path))
    head = f"{what} replaced all {target.doc.line_count} lines of {target.path}"
    if seen is not None and seen.unseen:
        return f"{head}; {_since_full_view(target, seen, overwrote, past=True)}: {hint}"
    when = "never read" if seen is None else f"had not read since version {seen.version}"
    who = named(overwrote)
    lost = f", overwriting changes by {who}" if who else ""
    return f"{head}, which you {when}{lost}: {hint}"


def _since_full_view(
    target: Target, seen: Snapshot, overwrote: list[dict[str, Any]], past: bool = False
) -> str:
    """Why a whole write after a ranged read loses lines the agent was not shown, as the
    hook's denial explains it (daemon/handlers/harness.py): what its latest read showed,
    and which lines changed since it last saw all of the file, by whom. Without a stored
    full view, the changes since its latest read (`overwrote`)."""
    ctx, doc = target.ctx, target.doc
    shown = f"lines {seen.lines[0]}-{seen.lines[1]}" if seen.lines else "part"
    said = f"your latest read (version {seen.version}) showed {shown} of it"
    view = seen.full_view
    full = base_at(ctx, target.snap, target.noticed, *view) if view is not None else None
    if full is None:
        who = named(overwrote)
        been = "had not been" if past else "have not been"
        return f"{said}, and you {been} shown all of it" + (f" — changed by {who}" if who else "")
    kept = {n + 1 for n in full.line_map(doc) if n is not None}
    changed = [n for n in range(1, doc.line_count + 1) if n not in kept]
    unseen = normalized(target.unseen(target.agent_base) or [])
    lines = covered(changed, unseen) or changed
    if not lines:
        return f"{said}, and lines changed since you last saw all of it (version {full.version})"
    return (
        f"{said}, and since you last saw all of it (version {full.version}) line(s)"
        f" {shown_lines(lines)} changed — by {named(brought_by(full, doc.lines, lines))}"
    )


def overwrite_refusal(target: Target, what: str, conflicts: list[dict[str, Any]]) -> ToolError:
    """`anchor_stale` for a whole replacement (or removal: `what` "Delete File") of
    content the agent has not seen: never read, or changed since its read (by
    `conflicts`), with the delta when its read is stored. `details.whole_file` says
    which ("replace" or "delete"): such a write takes no anchors, so its suggestion
    says what its retry keeps instead."""
    ctx = target.ctx
    seen = ctx.state.snapshots.get((ctx.agent, target.path))
    when = "never read" if seen is None else f"have not read since version {seen.version}"
    deletes = what == "Delete File"
    details: dict[str, Any] = {
        "conflicts": conflicts,
        "whole_file": "delete" if deletes else "replace",
    }
    if seen is not None:
        details["base_version"] = seen.version
    base = target.agent_base
    if base is not None:
        details["delta"] = delta(base, target.doc, target.anchors, target.version)
    who = named(conflicts)
    does = (
        f"would delete {target.path} and its {target.doc.line_count} lines"
        if deletes
        else f"would replace all {target.doc.line_count} lines of {target.path}"
    )
    return ToolError(
        ErrorCode.ANCHOR_STALE,
        f"{what} {does}, which you {when}"
        + (f" — changed since by {who}" if who else "")
        + ("; details.delta has the changes" if base is not None else ""),
        details,
    )
