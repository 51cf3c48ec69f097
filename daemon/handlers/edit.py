"""`edit`: hash-anchored line operations, atomic per batch, checked before written.

The file is re-read and re-hashed for every request, the batch planned by the
pure engine against that content, the result sanity-checked, and only then
handed to the server as a write. Applied and rejected edits are both
journaled: rejections are what one debugs afterwards.
"""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass

import msgspec

from editjournal.daemon.handlers import Context, Outcome, Write, handles
from editjournal.daemon.handlers.observe import outside_change
from editjournal.daemon.handlers.read import anchored, chosen_path
from editjournal.daemon.handlers.seen import after_own_write, after_showing, unseen_now
from editjournal.daemon.handlers.staleness import (
    Base,
    agent_base,
    explain_from,
    last_read_base,
    plan_rebased,
    stale_error,
    unseen_conflict,
    with_delta,
)
from editjournal.daemon.text.anchors import AnchorIndex, LineAnchor
from editjournal.daemon.text.diff import anchored_diff, changed_region
from editjournal.daemon.text.edit import EditPlan, apply_plan, plan_edit
from editjournal.daemon.text.lines import Document, render
from editjournal.daemon.text.rebase import exact_map
from editjournal.daemon.text.safety import SafetyWarning, brackets_matter, check_edit
from editjournal.daemon.workspace import FileSnapshot
from editjournal.schemas.errors import ErrorCode, ToolError
from editjournal.schemas.events import AnyEvent, EditApplied, EditRejected, OutsideChangeRecorded
from editjournal.schemas.tools import AutoCorrection, EditDetails, EditParams, EditResult

WRITER = "edit"


@dataclass(frozen=True)
class _Request:
    """What every step of one edit needs to know."""

    ctx: Context
    params: EditParams
    snap: FileSnapshot
    doc: Document
    noticed: list[OutsideChangeRecorded]
    warnings: list[str]

    @property
    def operations(self) -> list[dict[str, object]]:
        return [msgspec.to_builtins(op) for op in self.params.operations]


_NEWLINE_ADDED = (
    "final_newline_added",
    "The last line is now empty, which a file without a final newline cannot hold:"
    " the file now ends with a newline.",
)


@handles("edit")
def edit(ctx: Context, params: EditParams) -> Outcome:
    path, warnings = chosen_path(params.path, params.file_path)
    _refuse_binary_content(params)
    snap = ctx.workspace.read(path)
    parsed = ctx.cache.parsed(snap.sha256, snap.text)
    doc = parsed.doc
    req = _Request(
        ctx, params, snap, doc, outside_change(ctx.state, snap, doc.line_count), warnings
    )
    index, old_anchors = parsed.index, parsed.anchors
    base = agent_base(ctx, snap, list(req.noticed))
    try:
        plan = _plan(req, base, index, old_anchors)
    except ToolError as e:
        return _rejected(req, _explain(req, e, base, old_anchors))
    version = _current_version(req)
    unseen = unseen_conflict(
        ctx, snap, list(req.noticed), parsed, base, params.operations, plan, version
    )
    if unseen is not None:
        return _rejected(req, unseen)
    new_doc = apply_plan(doc, plan)
    if new_doc.final_newline and not doc.final_newline:
        plan = dataclasses.replace(plan, auto_corrections=(*plan.auto_corrections, _NEWLINE_ADDED))
    findings = check_edit(doc.lines, plan.splices, brackets_matter(snap.path))
    if findings and not params.skip_safety_check:
        return _rejected(req, _unsafe(findings))
    return _applied(req, plan, new_doc, old_anchors, findings, base)


def _plan(
    req: _Request, base: Base | None, index: AnchorIndex, anchors: list[LineAnchor]
) -> EditPlan:
    """In the current content when the agent saw it (or never saw the file); otherwise
    in the agent's snapshot, carried forward — or stale, naming who changed what."""
    if base is None:
        return plan_edit(req.doc.lines, req.params.operations, index, anchors)
    plan, broken = plan_rebased(base, req.doc, req.params.operations)
    if broken:
        raise stale_error(req.ctx, base, req.doc, anchors, broken, _current_version(req))
    return plan


def _explain(
    req: _Request, error: ToolError, base: Base | None, anchors: list[LineAnchor]
) -> ToolError:
    """Make an `anchor_stale` as useful as the journal allows: name who changed the
    lines (through the agent's last read if need be) and hand over the delta."""
    if error.code is not ErrorCode.ANCHOR_STALE or "conflicts" in error.details:
        return error
    version = _current_version(req)
    last_read = last_read_base(req.ctx, req.snap, list(req.noticed), base)
    if last_read is not None:
        ops = req.params.operations
        explained = explain_from(req.ctx, last_read, req.doc, anchors, ops, version)
        if explained is not None:
            return explained
    if base is not None:
        return with_delta(error, base, req.doc, anchors, version)
    return _explain_stale(req, error)


def _current_version(req: _Request) -> int:
    """The version of the content on disk: a just-noticed change gets the next seq."""
    known = req.ctx.state.files.get(req.snap.path)
    if req.noticed or known is None:
        return req.ctx.next_seq
    return known.version


def _refuse_binary_content(params: EditParams) -> None:
    for i, op in enumerate(params.operations):
        if "\x00" in getattr(op, "content", ""):
            raise ToolError(
                ErrorCode.INVALID_PARAMS,
                f"content contains a NUL character - at `$.params.operations[{i}].content`",
            )


def _applied(
    req: _Request,
    plan: EditPlan,
    new_doc: Document,
    old_anchors: list[LineAnchor],
    findings: list[SafetyWarning],
    base: Base | None,
) -> Outcome:
    data = render(new_doc).encode("utf-8", "surrogatepass")
    after_sha = hashlib.sha256(data).hexdigest()
    new_anchors = req.ctx.cache.put(after_sha, new_doc).anchors
    diff, added = anchored_diff(req.doc.lines, new_doc.lines, new_anchors)
    valid_through = _anchors_valid_through(req.doc, new_doc, old_anchors, new_anchors)
    safety = "overridden" if findings else ("skipped" if req.params.skip_safety_check else "clean")
    line_changes = [(s.start, s.end, len(s.new_lines)) for s in plan.splices]
    unseen = unseen_now(req.ctx, req.snap, list(req.noticed), req.doc, base)
    event = EditApplied(
        path=req.snap.path,
        writer=WRITER,
        before_sha256=req.snap.sha256,
        after_sha256=after_sha,
        size=len(data),
        lines_before=req.doc.line_count,
        line_count=new_doc.line_count,
        operations=req.operations,
        line_changes=line_changes,
        unseen=after_own_write(unseen, exact_map(req.doc.line_count, line_changes)),
        auto_corrections=[detail for _, detail in plan.auto_corrections],
        safety_check=safety,
        safety_warnings=[f.message for f in findings],
    )
    n = len(req.params.operations)
    result = EditResult(
        message=f"{n} operation{'s' * (n != 1)} applied",
        file_path=req.snap.path,
        version=req.ctx.next_seq + len(req.noticed),
        sha256=after_sha,
        lines_before=req.doc.line_count,
        lines_after=new_doc.line_count,
        net_change=new_doc.line_count - req.doc.line_count,
        anchors_valid_through=valid_through,
        must_refresh_from_line=valid_through + 1,
        diff=diff,
        changed_lines=[anchored(new_anchors[n - 1], new_doc.lines[n - 1]) for n in added],
        auto_corrections=[AutoCorrection(type=t, detail=d) for t, d in plan.auto_corrections],
        safety_check=safety,
        details=EditDetails(
            writer_type=WRITER,
            baseline_continuity=_continuity(req),
            anchors_valid_through=valid_through,
            must_refresh_from_line=valid_through + 1,
        ),
        rebased_from_version=base.version if base else None,
        rebased_over=[c.describe() for c in base.changes] if base else [],
    )
    warnings = [*req.warnings, *plan.warnings]
    if findings:
        warnings.append("safety check overridden (skip_safety_check): " + _joined(findings))
    return Outcome(
        result,
        events=[*req.noticed, event],
        blobs=_blobs(req, data, after_sha),
        writes=[Write(req.snap.path, data, based_on=req.snap.sha256)],
        warnings=warnings,
    )


def _anchors_valid_through(
    old: Document, new: Document, old_anchors: list[LineAnchor], new_anchors: list[LineAnchor]
) -> int:
    """The last line up to which every old anchor still names the same line.

    Usually the line before the first change; earlier when the edit made an old
    anchor ambiguous (say, by inserting a twin of a line above it).
    """
    first_change = changed_region(old.lines, new.lines).start
    for i in range(first_change):
        if old_anchors[i].anchor != new_anchors[i].anchor:
            return i
    return first_change


def _continuity(req: _Request) -> str:
    """ "mixed" once anything but `edit` wrote the file (this request's noticed change too)."""
    known = req.ctx.state.files.get(req.snap.path)
    writers = set(known.writers if known else ()) | ({"outside"} if req.noticed else set())
    return "clean" if writers <= {WRITER} else "mixed"


def _blobs(req: _Request, after: bytes, after_sha: str) -> dict[str, bytes]:
    """Before and after contents, each stored once, so the edit can be replayed."""
    blobs = {after_sha: after}
    if not req.ctx.journal.has_blob(req.snap.sha256):
        blobs[req.snap.sha256] = req.snap.data
    return blobs


def _explain_stale(req: _Request, error: ToolError) -> ToolError:
    """Say so when a stale anchor is explained by the file having changed since the read."""
    if error.code is not ErrorCode.ANCHOR_STALE:
        return error
    seen = req.ctx.state.snapshots.get((req.ctx.agent, req.snap.path))
    if seen is None or seen.sha256 == req.snap.sha256:
        return error
    error.message += (
        f"; the file has changed since you read it (you saw version {seen.version}, "
        f"sha256 {seen.sha256[:12]}; it is now {req.snap.sha256[:12]})"
    )
    error.details.update(
        {"file_changed": True, "your_version": seen.version, "current_sha256": req.snap.sha256}
    )
    return error


def _unsafe(findings: list[SafetyWarning]) -> ToolError:
    return ToolError(
        ErrorCode.SAFETY_CHECK_FAILED,
        f"the edit was not written: {_joined(findings)}",
        {
            "safety_warnings": [
                {"kind": f.kind, "operation": f.operation, "message": f.message} for f in findings
            ]
        },
    )


def _joined(findings: list[SafetyWarning]) -> str:
    return "; ".join(f.message for f in findings)


def _rejected(req: _Request, error: ToolError) -> Outcome:
    """An error reply, journaled with the content it was checked against. A delta in
    it showed the agent the current content: what the delta left out stays unseen."""
    delta = error.details.get("delta")
    unseen: list[tuple[int, int]] = []
    if delta is not None:
        shown = [row["line"] for row in delta["changed_lines"]]
        before = unseen_now(req.ctx, req.snap, list(req.noticed), req.doc)
        unseen = after_showing(before, shown, req.doc.line_count)
    event = EditRejected(
        path=req.snap.path,
        writer=WRITER,
        sha256=req.snap.sha256,
        code=error.code.value,
        message=error.message,
        details=error.details,
        operations=req.operations,
        shown_sha256=req.snap.sha256 if delta is not None else None,
        unseen=unseen,
    )
    events: list[AnyEvent] = [*req.noticed, event]
    blobs = {} if req.ctx.journal.has_blob(req.snap.sha256) else {req.snap.sha256: req.snap.data}
    return Outcome(events=events, blobs=blobs, warnings=req.warnings, error=error)
