"""`safe_patch`: a unified diff, locked by the SHA-256 of the content it was made from.

The planner of unified diffs on the shared writing path
(`daemon.writing.path`). The contract is the seed's: the file's SHA-256 must
be `base_content_sha256` (else `state_mismatch`); every hunk is located by its
context and removed lines whatever its stated line numbers (else
`invalid_diff`); the applied result is checked strictly (else `patch_failed`);
every reply carries the latest file state. What the journal adds: a mismatch on
a version the journal stored names who changed the lines the diff relies on and
hands over the delta; with `rebase: true`, a diff whose relied-on lines nobody
changed is carried over the newer content, exactly as `edit` carries anchors.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import msgspec

from editjournal.daemon.contract.context import Context
from editjournal.daemon.contract.outcome import Outcome
from editjournal.daemon.handlers import handles
from editjournal.daemon.handlers.aheadjob import planned_in_slices
from editjournal.daemon.handlers.read import chosen_path
from editjournal.daemon.settings.limits import check_hunks, hunk_headers
from editjournal.daemon.text.edit import EditPlan
from editjournal.daemon.text.lines import Document
from editjournal.daemon.text.patch import (
    FilePatch,
    Placed,
    context_lines,
    final_newline,
    locate,
    parse_patch,
    removes_everything,
    to_plan,
    verify,
)
from editjournal.daemon.text.rebase import map_plan
from editjournal.daemon.writing.history import Base, base_at
from editjournal.daemon.writing.located import located
from editjournal.daemon.writing.path import Planned, Stale, Written, write
from editjournal.daemon.writing.stale import delta, stale_error
from editjournal.daemon.writing.target import Target, open_target
from editjournal.schemas.errors import ErrorCode, ToolError
from editjournal.schemas.tools import (
    HunkPlacement,
    LatestFileState,
    SafePatchParams,
    SafePatchResult,
)

WRITER = "safe_patch"
STATE_MISMATCH_MESSAGE = "State Mismatch: File has changed on disk since it was last read."
APPLIED_MESSAGE = "Patch applied successfully."
BASE_SCAN = 5000  # journal events of the file searched for the base version, newest first


@handles("safe_patch")
@planned_in_slices
def safe_patch(ctx: Context, params: SafePatchParams) -> Outcome:
    check_hunks(hunk_headers(params.unified_diff), "unified_diff")  # before parsing it
    path, warnings = chosen_path(params.path, params.file_path)
    return write(open_target(ctx, path, missing_ok=True), _Patch(params), warnings)


STALE = Stale(ErrorCode.STATE_MISMATCH, "hunk")


@dataclass(frozen=True)
class _Patch:
    """One `safe_patch` request as a planner."""

    params: SafePatchParams
    name: str = WRITER
    stale: Stale = STALE
    plans_ahead = True  # a big file's write is planned in a job (daemon.writing.ahead)

    @property
    def skip_safety_check(self) -> bool:
        return self.params.skip_safety_check

    @property
    def base_sha(self) -> str:
        return self.params.base_content_sha256.lower()

    @property
    def operations(self) -> list[dict[str, Any]]:
        """The whole request, so the journal can show (and replay) what was asked."""
        request = {"unified_diff": self.params.unified_diff, "rebase": self.params.rebase}
        return [{"op": "safe_patch", "base_content_sha256": self.base_sha, **request}]

    @property
    def weight(self) -> int:
        """Its hunks, as counted before it was parsed: a heavy write is parked at once."""
        return hunk_headers(self.params.unified_diff)

    def prepare(self) -> None:
        """The diff parsed (and kept: `plan` finds it), a step of its own when the
        writing path plans a big file's write in a job (1,000 hunks: ~35 ms)."""
        parse_patch(self.params.unified_diff)

    def plan(self, target: Target) -> Planned:
        """Strict when the hash matches; planned in the base version (which the writing
        path carries over the newer content) only with rebase. With rebase, a diff that
        does not fit the content its hash names was made from the agent's memory: it is
        located in the agent's view (its read with its own writes), as is a diff whose
        hash is that view's."""
        if self.base_sha != target.snap.sha256:
            if not self.params.rebase:
                raise _mismatch(target, _parsed_or_none(self.params), self.base_sha)
            return self._rebased(target)
        patch = parse_patch(self.params.unified_diff)
        if not self.params.rebase or patch.deletes:
            return _planned(target, patch, locate(target.doc.lines, patch), None)
        return self._located(target, patch)

    def _located(self, target: Target, patch: FilePatch) -> Planned:
        """With rebase, where the text writers' search finds the hunks
        (`daemon.writing.located`): the current content, the agent's view (a diff made
        from its memory), the text alone; else the stale refusal an older version it was
        given explains, or why the current content does not hold them."""
        missing: list[ToolError] = []

        def plan_in(base: Base | None) -> Planned | None:
            lines = target.doc.lines if base is None else base.doc.lines
            try:
                placed = locate(lines, patch)
            except ToolError as e:
                if base is None:
                    missing.append(e)
                return None
            return _planned(target, patch, placed, base)

        planned = located(target, plan_in)
        if planned is not None:
            return planned
        stale = target.stale_from_given(partial(_found_in, patch), STALE.part, STALE.code)
        raise stale or missing[0]

    def _rebased(self, target: Target) -> Planned:
        """Located in the base version, or refused when the journal never stored it."""
        base = base_for(target, self.base_sha)
        patch = parse_patch(self.params.unified_diff)
        if base is None and not patch.deletes:
            base = next((k for k in target.known if k.sha256 == self.base_sha), None)
        if base is None or patch.deletes:
            raise _mismatch(target, patch, self.base_sha, rebasing=True)
        try:
            placed = locate(base.doc.lines, patch)
        except ToolError as e:
            return self._in_view(target, patch, e, skip=base.sha256)
        return _planned(target, patch, placed, base)

    def _in_view(
        self, target: Target, patch: FilePatch, error: ToolError, skip: str = ""
    ) -> Planned:
        """The diff located in a version the agent knows, other than the one it named;
        else `error`, the diff not fitting the content it named."""
        if not self.params.rebase or patch.deletes:
            raise error
        for known in target.known:
            if known.sha256 == skip:
                continue
            try:
                placed = locate(known.doc.lines, patch)
            except ToolError:
                continue
            return _planned(target, patch, placed, known)
        found_in = partial(_found_in, patch)
        raise target.stale_from_given(found_in, STALE.part, STALE.code) or error

    def explain(self, target: Target, error: ToolError) -> ToolError:
        """Every refusal carries `success: false` and the latest file state (the seed's
        contract: every reply has success, message and latest_file_state)."""
        state = latest_state(target, target.request_version, self.params.include_content)
        said = error.message
        if error.code is ErrorCode.STATE_MISMATCH and not said.startswith(STATE_MISMATCH_MESSAGE):
            error.message = f"{STATE_MISMATCH_MESSAGE} {said[:1].upper()}{said[1:]}"
        error.details["success"] = False
        error.details["latest_file_state"] = msgspec.to_builtins(state)
        return error

    def result(self, written: Written) -> SafePatchResult:
        target, doc, base = written.target, written.doc, written.planned.against
        deleted = written.planned.delete
        content = _text(written.data, doc.bom) if self.params.include_content else None
        return SafePatchResult(
            success=True,
            message=APPLIED_MESSAGE,
            latest_file_state=LatestFileState(
                file_path=target.path,
                version=written.version,
                sha256=written.sha256,
                content=None if deleted else content,
                exists=not deleted,
            ),
            **written.reply_fields(WRITER),
            hunks=_placements(parse_patch(self.params.unified_diff), written),
            created=not target.exists,
            deleted=deleted,
            rebased_from_version=base.version if base else None,
            rebased_over=[c.describe() for c in base.changes] if base else [],
        )


def _found_in(patch: FilePatch, base: Base) -> tuple[EditPlan, tuple[int, ...]] | None:
    """The hunks placed in an older version the agent was given, if they all fit it."""
    try:
        placed = locate(base.doc.lines, patch)
    except ToolError:
        return None
    return to_plan(placed), context_lines(placed)


def _parsed_or_none(params: SafePatchParams) -> FilePatch | None:
    try:
        return parse_patch(params.unified_diff)
    except ToolError:
        return None


def _planned(
    target: Target, patch: FilePatch, placed: Sequence[Placed], base: Base | None
) -> Planned:
    """The hunks' changes as splices of the content they were located in (the current
    one, or `base`), with their context for the path to carry."""
    count = (base.doc if base is not None else target.doc).line_count
    if patch.deletes:
        _check_deletion(target, placed)
    wanted = None if patch.deletes else final_newline(placed, count)
    check = None
    if base is None and not patch.deletes:

        def check(doc: Document) -> None:  # the strict check, where the hunks stand as placed
            verify(placed, doc.lines, wanted, doc.final_newline)

    plan = to_plan(placed, patch.warnings)
    context = context_lines(placed) if base is not None else ()
    return Planned(plan, base, context, wanted, patch.deletes, check, by_text=True)


def _placements(patch: FilePatch, written: Written) -> list[HunkPlacement]:
    """Where each hunk landed: its first change's line in the content it was written to,
    less the change's place in its block (a hunk of additions only: its position)."""
    first: dict[int, int] = {}
    for splice in written.planned.plan.splices:
        first.setdefault(splice.index, splice.start)
    placements = []
    for hunk in patch.hunks:
        run = hunk.runs[0].start if hunk.runs else 0
        applied = first.get(hunk.number - 1, hunk.stated + run) - run + 1
        stated = hunk.stated + 1
        placements.append(
            HunkPlacement(
                hunk=hunk.number,
                header=hunk.header,
                stated_line=stated,
                applied_line=applied,
                offset=applied - stated,
            )
        )
    return placements


def latest_state(target: Target, version: int, include_content: bool) -> LatestFileState:
    """The file as it is now: the state an agent patches next."""
    content = _text(target.snap.data, target.doc.bom) if include_content else None
    return LatestFileState(
        file_path=target.path,
        version=version,
        sha256=target.snap.sha256,
        content=content if target.exists else None,
        exists=target.exists,
    )


def _text(data: bytes, bom: bool) -> str:
    """The content as read_file serves it: without the BOM."""
    text = data.decode("utf-8", "surrogatepass")
    return text[1:] if bom else text


def _check_deletion(target: Target, placed: Sequence[Placed]) -> None:
    if not target.exists:
        raise ToolError(
            ErrorCode.FILE_NOT_FOUND,
            f"{target.path} does not exist: there is nothing to delete",
            {"path": target.path},
        )
    if not removes_everything(placed, target.doc.line_count):
        raise ToolError(
            ErrorCode.INVALID_DIFF,
            "Invalid Diff: a diff to /dev/null deletes the file, so it must remove every line"
            " and add none",
            {"path": target.path, "line_count": target.doc.line_count},
        )


def base_for(target: Target, sha256: str) -> Base | None:
    """The newest version of the file the journal stored with that content, and the
    changes since; None when no stored version has it."""
    ctx = target.ctx
    records = ctx.journal.records(path=target.path, newest_first=True, limit=BASE_SCAN)
    for record in records:
        if record.event.content_sha256 == sha256:
            return base_at(ctx, target.snap, target.noticed, record.seq, sha256)
    return None


def _mismatch(
    target: Target, patch: FilePatch | None, base_sha: str, rebasing: bool = False
) -> ToolError:
    """`state_mismatch`; explained from the journal when it stored the base version."""
    details: dict[str, Any] = {
        "base_content_sha256": base_sha,
        "current_sha256": target.snap.sha256 if target.exists else None,
    }
    base = base_for(target, base_sha)
    if base is None:
        why = "base_content_sha256 is no version of the file the journal stored"
        what = "rebase is impossible; " if rebasing else ""
        return ToolError(
            ErrorCode.STATE_MISMATCH,
            f"{STATE_MISMATCH_MESSAGE} {why}: {what}redo the diff against"
            " details.latest_file_state",
            details,
        )
    if rebasing:  # a deletion: never carried over changes it did not see
        return _explained(target, base, [], details, "a deletion is never rebased; ")
    placed = _located(base, patch)
    if placed is None:  # the diff does not fit its own base: every change may matter
        changes = [c.describe() for c in base.changes]
        return _explained(target, base, changes, details, "")
    broken = map_plan(to_plan(placed), base.line_map(target.doc))[1]
    if broken:
        ctx, doc, anchors, version = target.ctx, target.doc, target.anchors, target.version
        return stale_error(ctx, base, doc, anchors, broken, version, STALE.code, STALE.part)
    hint = (
        f"none of the lines your hunks rely on changed since version {base.version}: pass"
        " rebase: true to apply the diff over the newer content, or use the delta; "
    )
    return _explained(target, base, [], details, hint)


def _located(base: Base, patch: FilePatch | None) -> list[Placed] | None:
    """The hunks placed in the base version; None when the diff does not fit it."""
    if patch is None:
        return None
    try:
        return locate(base.doc.lines, patch)
    except ToolError:
        return None


def _explained(
    target: Target,
    base: Base,
    conflicts: list[dict[str, object]],
    details: dict[str, Any],
    said: str,
) -> ToolError:
    details = {
        **details,
        "base_version": base.version,
        "conflicts": conflicts,
        "delta": delta(base, target.doc, target.anchors, target.version),
    }
    return ToolError(
        ErrorCode.STATE_MISMATCH,
        f"{STATE_MISMATCH_MESSAGE} You based the diff on version {base.version}; {said}"
        "details.delta has the changes since with fresh anchors",
        details,
    )
