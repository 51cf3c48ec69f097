"""`apply_file_modification` and `overwrite_entire_file`: planners on the shared writing path.

Applying a prepared hunk: it must exist, not have expired, be the caller's and
not be applied yet (`daemon.handlers.hunk_tools`); then the shared path
(`daemon.writing.path`) checks write access, writes and journals. The
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

from editjournal.daemon.contract.context import Context
from editjournal.daemon.contract.outcome import Link, Outcome
from editjournal.daemon.handlers import handles
from editjournal.daemon.handlers.aheadjob import planned_in_slices
from editjournal.daemon.handlers.hunk_tools import HunkRefused, now_ms, owned_hunk
from editjournal.daemon.model.hunkbook import Hunk
from editjournal.daemon.text.edit import EditPlan, Splice
from editjournal.daemon.text.hunks import content_lines, looks_like_diff, unified
from editjournal.daemon.text.replace import normalized
from editjournal.daemon.writing.ahead import WholeContent
from editjournal.daemon.writing.history import base_at
from editjournal.daemon.writing.path import Planned, Stale, Written, write
from editjournal.daemon.writing.target import Target, open_target
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
STALE = Stale(ErrorCode.APPLY_REJECTED, "hunk")
OVERWRITE = "overwrite_entire_file"


@handles(APPLY)
@planned_in_slices
def apply_file_modification(ctx: Context, params: ApplyFileModificationParams) -> Outcome:
    try:
        hunk = owned_hunk(ctx, params.hunk_id, APPLY, now_ms())
    except HunkRefused as refused:
        return refused.outcome()
    target = open_target(ctx, hunk.path, missing_ok=hunk.kind == "append")
    outcome = write(target, _Apply(hunk), [])
    if outcome.error is None:
        rebased = outcome.result.rebased_from_version
        written = len(outcome.events) - 1  # the write's edit_applied: the path's last event
        outcome.events.append(
            HunkApplied(
                path=hunk.path, hunk_id=hunk.hunk_id, edit_seq=0, rebased_from_version=rebased
            )
        )
        outcome.links.append(Link(len(outcome.events) - 1, "edit_seq", written))
    return outcome


@dataclass(frozen=True)
class _Apply:
    """One prepared hunk, as a planner."""

    hunk: Hunk
    name: str = APPLY
    stale: Stale = STALE
    plans_ahead = True  # a big file's write is planned in a job (daemon.writing.ahead)

    @property
    def skip_safety_check(self) -> bool:
        return True  # the agent reviewed exactly this diff when it prepared the hunk

    @property
    def operations(self) -> list[dict[str, Any]]:
        h = self.hunk
        return [{"op": APPLY, "hunk_id": h.hunk_id, "kind": h.kind, "base_version": h.base_version}]

    def plan(self, target: Target) -> Planned:
        """As prepared while the file holds that content; otherwise in that content, for
        the writing path to carry over the changes since."""
        h = self.hunk
        splice = Splice(0, h.kind, h.start, h.end, h.new_lines, h.targets)
        if h.kind == "append":  # relies on no line: the end of the file as it is now
            at = target.doc.line_count
            return Planned(EditPlan((Splice(0, h.kind, at, at, h.new_lines, ()),)), None, (), True)
        base = None
        if target.snap.sha256 != h.base_sha256:
            base = base_at(target.ctx, target.snap, target.noticed, h.base_version, h.base_sha256)
            if base is None:
                raise ToolError(
                    ErrorCode.APPLY_REJECTED,
                    f"{h.path} changed since hunk {h.hunk_id} was prepared, and the content it"
                    " was prepared against is not in the journal; prepare it again",
                    {"hunk_id": h.hunk_id, "planned_version": h.base_version},
                )
        return Planned(EditPlan((splice,)), base, final_newline=True)

    def explain(self, target: Target, error: ToolError) -> ToolError:
        """The stale refusal names the hunk, which must be prepared again."""
        h = self.hunk
        if error.code is ErrorCode.APPLY_REJECTED and "stale" in error.details:
            error.message = f"hunk {h.hunk_id} was not applied: {error.message}: prepare it again"
            error.details.update({"hunk_id": h.hunk_id, "planned_version": h.base_version})
        return error

    def result(self, written: Written) -> ApplyResult:
        target, h, base = written.target, self.hunk, written.planned.against
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
                rebased=base is not None,
                rebased_over=[c.describe() for c in base.changes] if base else [],
            ),
            applied_diff=unified(target.path, target.doc.lines, written.doc.lines),
            normalized=HunkNormalized(
                file_eof_newline_added=file_added,
                content_eof_newline_added=h.content_eof_newline_added,
            ),
            rebased_from_version=base.version if base else None,
        )


# --- overwrite_entire_file ------------------------------------------------------------------


@handles(OVERWRITE)
@planned_in_slices
def overwrite_entire_file(ctx: Context, params: OverwriteEntireFileParams) -> Outcome:
    return write(open_target(ctx, params.path, missing_ok=True), _Overwrite(params), [])


@dataclass(frozen=True)
class _Overwrite(WholeContent):
    params: OverwriteEntireFileParams
    name: str = OVERWRITE
    stale: Stale = STALE  # planned in the current content: never carried

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
        return Planned(EditPlan((splice,)), final_newline=final)

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
            f"content looks like a diff or patch ({reason}); nothing was written",
            {"reason": reason},
        )
