"""Resolving an agent's anchors in the snapshot it saw, and explaining when they are stale.

The state says which content each agent last saw. An edit's anchors are
planned against that content, then carried to the current content through
`daemon.text.rebase`. When lines an operation relies on changed since, the
error names the events that changed them (`details.conflicts`) and carries
the changes with fresh anchors (`details.delta`), so the agent can retry
without re-reading the whole file; having been shown the delta, the agent's
snapshot advances to the current content (what the delta left out and the agent
had not seen stays unseen, see `daemon.writing.seen`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace

import msgspec

from editjournal.daemon.contract.context import Context
from editjournal.daemon.files.filesnapshot import FileSnapshot
from editjournal.daemon.files.textcache import Parsed
from editjournal.daemon.text.anchors import AnchorIndex, LineAnchor, anchored
from editjournal.daemon.text.diff import focused_diff
from editjournal.daemon.text.edit import EditPlan, Splice, plan_edit, relied_lines
from editjournal.daemon.text.lines import Document
from editjournal.daemon.text.ranges import covered
from editjournal.daemon.text.rebase import BrokenSpan, LineMap, chain_map, map_plan
from editjournal.daemon.writing.history import Base, base_at
from editjournal.schemas.errors import ErrorCode, ToolError
from editjournal.schemas.events import AnyEvent, EditApplied, EditRejected, FileRead
from editjournal.schemas.tools import Operation


def agent_base(ctx: Context, snap: FileSnapshot, noticed: list[AnyEvent]) -> Base | None:
    """The agent's snapshot when it differs from the current content (and is stored)."""
    seen = ctx.state.snapshots.get((ctx.agent, snap.path))
    if seen is None or seen.sha256 == snap.sha256:
        return None
    return base_at(ctx, snap, noticed, seen.version, seen.sha256)


GIVEN_SCAN = 32  # the agent's latest events on the file searched for versions it was given


def given_bases(
    ctx: Context, snap: FileSnapshot, noticed: list[AnyEvent], skip: set[str]
) -> Iterator[Base]:
    """The versions of the file the agent was given anchors from, newest first: what it
    read, what its own writes left (their replies carry anchors), what a refusal's
    delta showed it — besides those in `skip` (its snapshot, the current content).

    After an agent's own write was carried over others' changes, its snapshot holds
    lines it never saw, and an anchor it still holds from an earlier reply is unknown
    there; resolving it in the version it came from explains the staleness (who
    changed the line, the delta around it) instead of a bare "not found". Used to
    explain refusals only, never to apply an edit."""
    journal, path, agent = ctx.journal, snap.path, ctx.agent
    latest = list(journal.records(path=path, agent=agent, newest_first=True, limit=GIVEN_SCAN))
    # its last read, however many writes ago: agents edit on from one read for long
    read = journal.records(path=path, agent=agent, kind="file_read", newest_first=True, limit=1)
    tried = set(skip)
    for record in [*latest, *read]:
        sha = _given_sha(record.event)
        if sha is None or sha in tried:
            continue
        tried.add(sha)
        base = base_at(ctx, snap, noticed, record.seq, sha)
        if base is not None:
            unseen = tuple(getattr(record.event, "unseen", ()) or ())
            yield replace(base, unseen=unseen) if unseen else base


def _given_sha(event: AnyEvent) -> str | None:
    if isinstance(event, FileRead):
        return event.content_sha256
    if isinstance(event, EditApplied):
        return event.after_sha256
    if isinstance(event, EditRejected):
        return event.shown_sha256
    return None


def plan_rebased(
    base: Base, current: Document, operations: Sequence[Operation]
) -> tuple[EditPlan, list[BrokenSpan]]:
    """Plan in the snapshot, then carry the plan to the current content."""
    plan = plan_edit(base.doc.lines, operations, base.parsed.index, base.parsed.anchors)
    return map_plan(plan, base.line_map(current))


def unseen_conflict(
    ctx: Context,
    snap: FileSnapshot,
    noticed: list[AnyEvent],
    current: Parsed,
    base: Base | None,
    operations: Sequence[Operation],
    plan: EditPlan,
    current_version: int,
) -> ToolError | None:
    """`anchor_stale` when an operation relies on lines of the agent's snapshot that it
    was never shown (other agents' lines its own write was carried over, lines outside
    a ranged read): a range over them would overwrite what its author never saw, and
    an anchor may name a twin that appeared there. None when every line was shown.

    The plan was resolved in `base` (the agent's snapshot), or, without one, in the
    current content.
    """
    snapshot = ctx.state.snapshots.get((ctx.agent, snap.path))
    planned_sha, planned = (base.sha256, base.parsed) if base else (snap.sha256, current)
    if snapshot is None or not snapshot.unseen or snapshot.sha256 != planned_sha:
        return None
    relied = [
        (s, relied_lines(s, operations[s.index], planned.doc.lines, planned.anchors))
        for s in sorted(plan.splices, key=lambda s: s.index)
    ]
    found = [(s, covered(lines, snapshot.unseen)) for s, lines in relied]
    hits = [(s, lines) for s, lines in found if lines]
    if not hits:
        return None
    full = _full_view(ctx, snap, noticed, snapshot.full_view)
    if full is not None:
        explained = explain_from(
            ctx, full, current.doc, current.anchors, operations, current_version
        )
        if explained is not None:
            return explained
    return _unseen_error(hits, snapshot.version, full, current, current_version)


def _full_view(
    ctx: Context, snap: FileSnapshot, noticed: list[AnyEvent], view: tuple[int, str] | None
) -> Base | None:
    """The agent's last view of the whole file, if it is stored and not the current one."""
    if view is None or view[1] == snap.sha256:
        return None
    return base_at(ctx, snap, noticed, *view)


def _unseen_error(
    hits: list[tuple[Splice, list[int]]],
    latest_version: int,
    full: Base | None,
    current: Parsed,
    current_version: int,
) -> ToolError:
    """Refused for unseen lines that no recorded change explains (a twin's neighbours
    changed, say): the delta from the agent's last full view shows what it missed."""
    splice, lines = hits[0]
    stale = [{"operation": s.index + 1, "op": s.op, "lines": hit} for s, hit in hits]
    found = delta(full, current.doc, current.anchors, current_version) if full else None
    what = f"operation {splice.index + 1} ({splice.op})"
    return unseen_refusal(what, lines, latest_version, [], found, stale)


def unseen_refusal(
    what: str,
    lines: Sequence[int],
    latest_version: int,
    conflicts: list[dict[str, object]],
    found: dict[str, object] | None,
    stale: list[dict[str, object]] | None = None,
) -> ToolError:
    """The one refusal for a write that relies on lines the agent was never shown
    (others' lines its own write was carried over, lines outside a ranged read):
    who brought them (`conflicts`, when the journal knows) and the delta with them."""
    who = named(conflicts)
    message = (
        f"{what} relies on line(s) {shown_lines(lines)} of your latest view (version"
        f" {latest_version}), which you have not been shown"
        + (f": they changed since — by {who}" if who else "")
        + ("; details.delta has them with fresh anchors" if found else "")
    )
    details: dict[str, object] = {
        "unseen_lines": list(lines),
        "latest_version": latest_version,
        "conflicts": conflicts,
    }
    if stale is not None:
        details["stale"] = stale
    if found is not None:
        details["delta"] = found
    return ToolError(ErrorCode.ANCHOR_STALE, message, details)


def stale_error(
    ctx: Context,
    base: Base,
    current: Document,
    anchors: Sequence[LineAnchor],
    broken: Sequence[BrokenSpan],
    current_version: int,
    code: ErrorCode = ErrorCode.ANCHOR_STALE,
    part: str = "operation",
) -> ToolError:
    """The one stale refusal every writer gives: which of its parts relies on which lines
    of the version it was planned on, who changed them since (`details.conflicts`), and
    the changes near them with fresh anchors (`details.delta`). `code` and `part` are
    the writer's words (`state_mismatch` and "hunk" for a diff, say)."""
    conflicts = conflicts_of(ctx, base, broken)
    first = broken[0]
    who, lines = named(conflicts), shown_lines(first.lines)
    what = f"{part} {first.operation}" + (f" ({first.op})" if first.op != part else "")
    message = (
        f"{what} relies on line(s) {lines} of {base.label}, which changed since"
        + (f" — by {who}" if who else "")
        + "; details.delta has the changes with fresh anchors"
    )
    focus = sorted({n for b in broken for n in b.lines})
    details = {
        "stale": [{part: b.operation, "op": b.op, "lines": list(b.lines)} for b in broken],
        "base_version": base.version,
        "conflicts": conflicts,
        "delta": delta(base, current, anchors, current_version, focus),
    }
    return ToolError(code, message, details)


def named(conflicts: Sequence[dict[str, object]]) -> str:
    """Who made the conflicting changes, for a message: "agent-b (edit_applied, seq 7)"."""
    return ", ".join(
        f"{c['agent'] or 'an outside writer'} ({c['kind']}, seq {c['seq']})" for c in conflicts
    )


def shown_lines(lines: Sequence[int]) -> str:
    """The first few line numbers, for a message."""
    return ", ".join(map(str, lines[:5])) + ("…" if len(lines) > 5 else "")


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


UNKNOWN_ANCHOR = "unknown_anchor"  # details.reason of an anchor in no version given


def mark_unknown(error: ToolError, given: Sequence[AnchorIndex]) -> None:
    """Say so when a stale anchor was never an anchor of the file as the agent was given
    it: it matches no line of any version in `given` (the current content, and what the
    agent read, its writes left, a refusal's delta showed, as far as the journal's
    search of its events goes). A made-up or mistyped anchor: no delta can hold it, so
    only a read helps; `details.reason` says so, `details.unknown_anchors` lists every
    such one."""
    if error.code is not ErrorCode.ANCHOR_STALE:
        return
    stale = [error.details, *error.details.get("problems", [])]
    named = [p.get("anchor") for p in stale if p.get("code", "anchor_stale") == "anchor_stale"]
    unknown = [a for a in dict.fromkeys(named) if isinstance(a, str) and _nowhere(a, given)]
    if not unknown:
        return
    error.details["unknown_anchors"] = unknown
    if error.details.get("anchor") in unknown:
        error.details["reason"] = UNKNOWN_ANCHOR
        error.message += (
            "; nor any line of a version of the file you were given: not one of its anchors"
        )


def _nowhere(anchor: str, given: Sequence[AnchorIndex]) -> bool:
    return all(index.match(anchor).level == "none" for index in given)


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
    base: Base,
    current: Document,
    anchors: Sequence[LineAnchor],
    current_version: int,
    focus: Sequence[int] = (),
) -> dict[str, object]:
    """The changes from `base` to now near the 1-based `focus` lines of `base` (the
    lines a refusal is about), with fresh anchors: small whatever else changed. What
    it leaves out is counted in `omitted`; `read_file since_version` shows it all."""
    shown = focused_diff(base.doc.lines, current.lines, anchors, focus)
    found: dict[str, object] = {
        "from_version": base.version,
        "to_version": current_version,
        "diff": shown.text,
        "changed_lines": [_compact(anchors[n - 1], current.lines[n - 1]) for n in shown.added],
        "line_count": current.line_count,
    }
    if shown.hunks_omitted or shown.lines_omitted:
        found["omitted"] = {
            "hunks": shown.hunks_omitted,
            "changed_lines": shown.lines_omitted,
            "see": f"read_file with since_version={base.version} for every change",
        }
    return found


def _compact(anchor: LineAnchor, text: str) -> dict[str, object]:
    """A delta's line as read_file's rows show it, without the fields at their usual
    value (`kind` "line", `unique` true): a refusal stays small."""
    row: dict[str, object] = msgspec.to_builtins(anchored(anchor, text))
    if row.get("kind") == "line":
        del row["kind"]
    if row.get("unique") is True:
        del row["unique"]
    return row


def brought_by(base: Base, current: Sequence[str], lines: list[int]) -> list[dict[str, object]]:
    """The recorded changes since `base` that brought each of the current content's
    1-based `lines` in (all changes, when no single one did): the other direction of
    `conflicts_of`, for lines the agent never saw rather than lines it relied on."""
    before = _image(chain_map(base.doc.lines, base.sha256, base.steps, current))
    named_by: dict[int, dict[str, object]] = {}
    for k, (change, step) in enumerate(zip(base.changes, base.steps, strict=True)):
        image = _image(chain_map(step.lines, step.sha256, base.steps[k + 1 :], current))
        brought = [n for n in lines if n in image and n not in before]
        if brought:
            named_by[change.seq] = {**change.describe(), "lines": brought}
        before = image
    if not named_by:
        return [{**c.describe(), "lines": lines} for c in base.changes]
    return [named_by[seq] for seq in sorted(named_by)]


def _image(mapping: LineMap) -> set[int]:
    return {p + 1 for p in mapping if p is not None}


def conflicts_of(ctx: Context, base: Base, broken: Sequence[BrokenSpan]) -> list[dict[str, object]]:
    """Which recorded change broke each span (all changes, when no single one did)."""
    named: dict[int, dict[str, object]] = {}
    for span, culprits in zip(broken, base.culprits([b.lines for b in broken]), strict=True):
        for change in culprits:
            entry = named.setdefault(change.seq, {**change.describe(), "lines": []})
            entry["lines"] = sorted({*entry["lines"], *span.lines})  # type: ignore[misc]
    return [named[seq] for seq in sorted(named)]
