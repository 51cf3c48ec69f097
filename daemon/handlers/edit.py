"""`edit`: hash-anchored line operations, atomic per batch, checked before written.

The planner of the anchored operations on the shared writing path
(`daemon.writing.path`, which reads, checks, writes and journals): the
batch is resolved by the pure engine against the agent's snapshot of the file
(or, when it never saw it or saw exactly this content, against the current
content) and carried forward; an anchor that relies on a line someone changed
since is refused `anchor_stale`, naming who changed it and handing over the
delta. An anchor that names identical lines (blank runs, closing braces) is
resolved by the line number given with it, read in the agent's own numbering
(its read, with its own edits) and followed to the version planned in.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import msgspec

from editjournal.daemon.contract.context import Context
from editjournal.daemon.contract.outcome import Outcome
from editjournal.daemon.files.textcache import Parsed
from editjournal.daemon.handlers import handles
from editjournal.daemon.handlers.aheadjob import planned_in_slices
from editjournal.daemon.handlers.read import chosen_path
from editjournal.daemon.text.deferral import Deferred, too_big
from editjournal.daemon.text.edit import EditPlan, Pick, plan_edit, planning_edit, relied_lines
from editjournal.daemon.text.ranges import covered
from editjournal.daemon.writing.history import Base
from editjournal.daemon.writing.numbers import LineNumbers
from editjournal.daemon.writing.path import ANCHOR_STALE, Planned, Stale, Written, write
from editjournal.daemon.writing.stale import (
    explain_from,
    given_bases,
    mark_unknown,
    unseen_conflict,
    with_delta,
)
from editjournal.daemon.writing.target import Target, open_target
from editjournal.schemas.errors import ErrorCode, ToolError
from editjournal.schemas.tools import EditParams, EditResult, Operation

WRITER = "edit"


@handles("edit")
@planned_in_slices
def edit(ctx: Context, params: EditParams) -> Outcome:
    path, warnings = chosen_path(params.path, params.file_path)
    return write(open_target(ctx, path), _Edit(params), warnings)


# an anchor the snapshot does not hold, or holds twice: the version it came from may
_ANCHOR_PROBLEMS = {
    ErrorCode.ANCHOR_STALE,
    ErrorCode.ANCHOR_AMBIGUOUS,
    ErrorCode.ANCHOR_CONTEXT_AMBIGUOUS,
}


@dataclass(frozen=True)
class _Edit:
    """The anchored operations of one `edit` request, as a planner."""

    params: EditParams
    name: str = WRITER
    stale: Stale = ANCHOR_STALE
    plans_ahead = True  # a big file's write is planned in a job (daemon.writing.ahead)

    @property
    def skip_safety_check(self) -> bool:
        return self.params.skip_safety_check

    @property
    def operations(self) -> list[dict[str, Any]]:
        return [msgspec.to_builtins(op) for op in self.params.operations]

    @property
    def weight(self) -> int:
        """Its operations: a heavy write is parked at once (daemon/handlers/aheadjob.py)."""
        return len(self.params.operations)

    def plan(self, target: Target) -> Planned:
        """In the current content when the agent saw it (or never saw the file); otherwise
        in the agent's snapshot, which the writing path carries forward. An operation
        relying on a line the agent was never shown is refused."""
        base, ops = target.agent_base, self.params.operations
        planned_in = base.parsed if base is not None else target.parsed
        numbers = LineNumbers(target)
        try:
            plan = _resolved(planned_in, ops, numbers.pick(base), base)
        except ToolError as e:
            given = self._in_given(target, e, numbers)
            if given is None:
                raise
            return given
        unseen = unseen_conflict(
            target.ctx, target.snap, target.noticed, target.parsed, base, ops, plan, target.version
        )
        if unseen is not None:
            raise unseen
        return Planned(plan, against=base)

    def _in_given(self, target: Target, error: ToolError, numbers: LineNumbers) -> Planned | None:
        """Anchors the snapshot does not hold, planned in the version they came from (a
        read, its own write's reply, a delta: agents edit on from what they were given,
        and a context anchor changes when a neighbour does), which the writing path
        carries over what changed since like any stale edit: landing when nobody changed
        the lines they rely on. None: no version it was given holds them all."""
        if error.code not in _ANCHOR_PROBLEMS:
            return None
        base, ops = target.agent_base, self.params.operations
        skip = {target.snap.sha256} | ({base.sha256} if base is not None else set())
        for given in given_bases(target.ctx, target.snap, target.noticed, skip):
            parsed = given.parsed
            try:
                pick = numbers.pick(given)
                plan = plan_edit(parsed.doc.lines, ops, parsed.index, parsed.anchors, pick)
            except ToolError:
                continue
            if _relies_on_unseen(plan, ops, parsed, given.unseen):
                continue  # lines of that version it was never shown: not its to name
            return Planned(plan, against=given)
        return None

    def explain(self, target: Target, error: ToolError) -> ToolError:
        """Make an `anchor_stale` as useful as the journal allows: name who changed the
        lines (through the agent's last read if need be) and hand over the delta."""
        if error.code is not ErrorCode.ANCHOR_STALE:
            return error
        explained = self._explained(target, error)
        # the file's path lets the code's suggestion name the read to make, or none
        explained.details.setdefault("path", target.path)
        explained.hint = None
        return explained

    def _explained(self, target: Target, error: ToolError) -> ToolError:
        if "conflicts" in error.details or "unseen_lines" in error.details:
            return error
        base = target.agent_base
        ctx, snap, doc, anchors = target.ctx, target.snap, target.doc, target.anchors
        skip = {snap.sha256} | ({base.sha256} if base is not None else set())
        tried = [base] if base is not None else []
        for given in given_bases(ctx, snap, target.noticed, skip):
            ops = self.params.operations
            explained = explain_from(ctx, given, doc, anchors, ops, target.version)
            if explained is not None:
                return explained
            tried.append(given)
        mark_unknown(error, [target.parsed.index, *(b.parsed.index for b in tried)])
        if base is not None:
            return with_delta(error, base, doc, anchors, target.version)
        return _explain_stale(target, error)

    def result(self, written: Written) -> EditResult:
        n, base = len(self.params.operations), written.planned.against
        return EditResult(
            message=f"{n} operation{'s' * (n != 1)} applied",
            file_path=written.target.path,
            version=written.version,
            sha256=written.sha256,
            **written.reply_fields(WRITER),
            rebased_from_version=base.version if base else None,
            rebased_over=[c.describe() for c in base.changes] if base else [],
        )


# the last batch resolved a step at a time in a job, or its refusal: (content, operations,
# version planned in, plan): the phase that asked runs again and finds it (by identity: the
# same request's planner, on the same target)
_KEPT: list[tuple[Parsed, Sequence[Operation], Base | None, EditPlan | ToolError]] = []
STEPPED_FROM = 250  # operations: a batch of fewer on a big file is resolved at once


def _resolved(
    parsed: Parsed, ops: Sequence[Operation], pick: Pick | None, base: Base | None
) -> EditPlan:
    """`plan_edit` of `ops` in `parsed`; a big batch on a big file, where deferring is
    on, resolved in a job a few hundred operations a step (`Deferred`), then kept."""
    lines, index, anchors = parsed.doc.lines, parsed.index, parsed.anchors
    if _KEPT and _KEPT[0][0] is parsed and _KEPT[0][1] is ops and _KEPT[0][2] is base:
        kept = _KEPT[0][3]
        if isinstance(kept, ToolError):
            raise ToolError(kept.code, kept.message, copy.deepcopy(kept.details), kept.hint)
        return kept
    if len(ops) >= STEPPED_FROM and too_big(parsed.doc.line_count):
        index.position_all()  # the steps cannot defer: what they look up is built first
        raise Deferred(work=_resolving(parsed, ops, pick, base))
    return plan_edit(lines, ops, index, anchors, pick)


def _resolving(
    parsed: Parsed, ops: Sequence[Operation], pick: Pick | None, base: Base | None
) -> Iterator[None]:
    lines, index, anchors = parsed.doc.lines, parsed.index, parsed.anchors
    try:
        plan: EditPlan | ToolError = yield from planning_edit(lines, ops, index, anchors, pick)
    except ToolError as e:
        plan = e
    _KEPT[:] = [(parsed, ops, base, plan)]


def _relies_on_unseen(
    plan: EditPlan, ops: Sequence[Operation], parsed: Parsed, unseen: Sequence[tuple[int, int]]
) -> bool:
    """Whether a splice relies on a line of the planned-in version the agent was not
    shown when it was given that version (a range over lines a delta left out, say)."""
    if not unseen:
        return False
    lines, anchors = parsed.doc.lines, parsed.anchors
    return any(covered(relied_lines(s, ops[s.index], lines, anchors), unseen) for s in plan.splices)


def _explain_stale(target: Target, error: ToolError) -> ToolError:
    """Say so when a stale anchor is explained by the file having changed since the read."""
    seen = target.ctx.state.snapshots.get((target.ctx.agent, target.path))
    if seen is None or seen.sha256 == target.snap.sha256:
        return error
    error.message += (
        f"; the file has changed since you read it (you saw version {seen.version}, "
        f"sha256 {seen.sha256[:12]}; it is now {target.snap.sha256[:12]})"
    )
    error.details.update(
        {"file_changed": True, "your_version": seen.version, "current_sha256": target.snap.sha256}
    )
    return error
