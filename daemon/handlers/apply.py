"""`apply_file_modification` and `overwrite_entire_file`: planners on the shared writing path.

Applying a prepared hunk: it must exist, not have expired, be the caller's and
not be applied yet (`daemon.handlers.hunks`); then the shared path
(`daemon.handlers.writing`) checks write access, writes and journals. The
planner only says where the hunk's splice goes now: as planned when the file
still holds the content the plan was made against; otherwise carried over the
changes since by the stale-anchor machinery (`daemon.text.rebase`, through the
journal's record of who changed which lines) — and refused `apply_rejected`,
naming the conflicting changes with a delta, when a line it relies on changed.
An append always goes to the end as the file is now. Every written line ends
with a newline, the last one included (the EOF-newline rule).

`overwrite_entire_file` replaces the whole content, refusing content that
looks like a diff or patch unless `content_format: "text"` declares it plain text.

What it must never do: re-implement a step of the writing path, or touch the disk.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from editjournal.daemon.handlers import Context, Outcome, handles
from editjournal.daemon.handlers.history import Base, base_at
from editjournal.daemon.handlers.hunks import HunkRefused, now_ms, owned_hunk
from editjournal.daemon.handlers.staleness import conflicts_of, delta, named, shown_lines
from editjournal.daemon.handlers.writing import Planned, Target, Written, open_target, write
from editjournal.daemon.hunkbook import Hunk
from editjournal.daemon.text.edit import EditPlan, Splice
from editjournal.daemon.text.hunks import content_lines, looks_like_diff, unified
from editjournal.daemon.text.rebase import map_plan
from editjournal.daemon.text.replace import normalized
from editjournal.schemas.errors import ErrorCode, ToolError
from editjournal.schemas.events import HunkApplied
from editjournal.schemas.tools import (
    ApplyEvidence,
    ApplyFileModificationParams,
    ApplyResult,
    HunkNormalized,
    OverwriteEntireFileParams,
    OverwriteResult,
)

APPLY = "apply_file_modification"
OVERWRITE = "overwrite_entire_file"


@handles(APPLY)
def apply_file_modification(ctx: Context, params: ApplyFileModificationParams) -> Outcome:
    try:
        hunk = owned_hunk(ctx, params.hunk_id, APPLY, now_ms())
    except HunkRefused as refused:
        return refused.outcome()
    target = open_target(ctx, hunk.path, missing_ok=hunk.kind == "append")
    writer = _Apply(hunk)
    outcome = write(target, writer, [])
    if outcome.error is None:
        rebased = writer.base.version if writer.base else None
        outcome.events.append(
            HunkApplied(
                path=hunk.path,
                hunk_id=hunk.hunk_id,
                edit_seq=target.request_version,
                rebased_from_version=rebased,
            )
        )
    return outcome


@dataclass
class _Apply:
    """One prepared hunk, as a planner."""

    hunk: Hunk
    name: str = APPLY
    base: Base | None = None  # set when the plan was carried over later changes

    @property
    def skip_safety_check(self) -> bool:
        return True  # the agent reviewed exactly this diff when it prepared the hunk

    @property
    def operations(self) -> list[dict[str, Any]]:
        h = self.hunk
        return [{"op": APPLY, "hunk_id": h.hunk_id, "kind": h.kind, "base_version": h.base_version}]

    def plan(self, target: Target) -> Planned:
        h = self.hunk
        splice = Splice(0, h.kind, h.start, h.end, h.new_lines, h.targets)
        if h.kind == "append":  # relies on no line: the end of the file as it is now
            at = target.doc.line_count
            splice = Splice(0, h.kind, at, at, h.new_lines, ())
        elif target.snap.sha256 != h.base_sha256:
            splice = self._carried(target, splice)
        unseen = target.unseen(target.agent_base)
        return Planned(EditPlan((splice,)), unseen, self.base, final_newline=True)

    def _carried(self, target: Target, splice: Splice) -> Splice:
        """The splice in the current content, or `apply_rejected` when its lines changed."""
        h, ctx = self.hunk, target.ctx
        base = base_at(ctx, target.snap, target.noticed, h.base_version, h.base_sha256)
        if base is None:
            raise ToolError(
                ErrorCode.APPLY_REJECTED,
                f"{h.path} changed since hunk {h.hunk_id} was prepared, and the content it was"
                " prepared against is not in the journal; prepare it again",
                {"hunk_id": h.hunk_id, "planned_version": h.base_version},
            )
        plan, broken = map_plan(EditPlan((splice,)), base.line_map(target.doc))
        if broken:
            raise _conflict(target, h, base, broken[0].lines, conflicts_of(ctx, base, broken))
        self.base = base
        return plan.splices[0]

    def explain(self, target: Target, error: ToolError) -> ToolError:
        return error

    def result(self, written: Written) -> ApplyResult:
        target, h = written.target, self.hunk
        file_added = target.doc.line_count > 0 and not target.doc.final_newline
        return ApplyResult(
            message=f"Applied hunk {h.hunk_id} ({h.kind}) to {target.path}",
            file_path=target.path,
            version=written.version,
            sha256=written.sha256,
            **written.reply_fields(APPLY),
            hunk_id=h.hunk_id,
            apply_evidence=ApplyEvidence(
                hunk_id=h.hunk_id,
                kind=h.kind,
                planned_version=h.base_version,
                planned_sha256=h.base_sha256,
                applied_to_version=target.version,
                applied_to_sha256=target.snap.sha256,
                rebased=self.base is not None,
                rebased_over=[c.describe() for c in self.base.changes] if self.base else [],
            ),
            applied_diff=unified(target.path, target.doc.lines, written.doc.lines),
            normalized=HunkNormalized(
                file_eof_newline_added=file_added,
                content_eof_newline_added=h.content_eof_newline_added,
            ),
            rebased_from_version=self.base.version if self.base else None,
        )


def _conflict(
    target: Target, hunk: Hunk, base: Base, lines: tuple[int, ...], conflicts: list[dict[str, Any]]
) -> ToolError:
    who = named(conflicts)
    message = (
        f"hunk {hunk.hunk_id} was not applied: {hunk.path} changed since it was prepared"
        f" (version {hunk.base_version}), and the line(s) {shown_lines(lines)} it relies on"
        " changed" + (f" — by {who}" if who else "") + "; details.delta has the changes with"
        " fresh anchors: prepare it again"
    )
    details = {
        "hunk_id": hunk.hunk_id,
        "planned_version": hunk.base_version,
        "lines": list(lines),
        "conflicts": conflicts,
        "delta": delta(base, target.doc, target.anchors, target.version),
    }
    return ToolError(ErrorCode.APPLY_REJECTED, message, details)


# --- overwrite_entire_file ------------------------------------------------------------------


@handles(OVERWRITE)
def overwrite_entire_file(ctx: Context, params: OverwriteEntireFileParams) -> Outcome:
    if "\x00" in params.content:
        raise ToolError(
            ErrorCode.INVALID_PARAMS, "content contains a NUL character - at `$.params.content`"
        )
    return write(open_target(ctx, params.path, missing_ok=True), _Overwrite(params), [])


@dataclass
class _Overwrite:
    params: OverwriteEntireFileParams
    name: str = OVERWRITE

    @property
    def skip_safety_check(self) -> bool:
        return True  # the whole content is the agent's: no neighbouring lines to check

    @property
    def operations(self) -> list[dict[str, Any]]:
        """The content itself is the written blob; the record keeps its size."""
        p = self.params
        return [{"op": OVERWRITE, "size": len(p.content), "content_format": p.content_format}]

    def plan(self, target: Target) -> Planned:
        if self.params.content_format is None:
            _refuse_diff(self.params.content)
        lines = content_lines(self.params.content)
        splice = Splice(0, OVERWRITE, 0, target.doc.line_count, lines, ())
        final = True if lines else None
        return Planned(EditPlan((splice,)), target.unseen(target.agent_base), None, final)

    def explain(self, target: Target, error: ToolError) -> ToolError:
        return error

    def result(self, written: Written) -> OverwriteResult:
        target, content = written.target, self.params.content
        verb = "Created" if not target.exists else "Overwrote"
        return OverwriteResult(
            message=f"{verb} {target.path} ({len(written.data):,} bytes)",
            file_path=target.path,
            version=written.version,
            sha256=written.sha256,
            **written.reply_fields(OVERWRITE),
            created=not target.exists,
            normalized=HunkNormalized(
                file_eof_newline_added=False,  # the file's old content is gone
                content_eof_newline_added=content != "" and not normalized(content).endswith("\n"),
            ),
        )


def _refuse_diff(content: str) -> None:
    reason = looks_like_diff(content)
    if reason is not None:
        raise ToolError(
            ErrorCode.CONTENT_LOOKS_LIKE_DIFF,
            f"content looks like a diff or patch ({reason}); nothing was written. To change"
            " part of the file, use prepare_* + apply_file_modification; to store this text"
            ' as it is, pass content_format: "text"',
            {"reason": reason},
        )
