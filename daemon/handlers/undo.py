"""`undo`: revert one recorded write, rebased over what happened since, or refuse.

The write to revert is an agent's latest `edit_applied` on the file (the
caller's by default), or the one at `seq` (a `checkpoint_restored` seq names its
write to that file). The default is what a name alone would buy: a plain undo
(no `seq`, no other agent named) takes back the caller's latest write only when that write
was made with the caller's credential (`ctx.identity`); a write another client made
under the same name is refused `write_identity_mismatch`. Naming the write (`seq`,
`agent`, or `by`) stays possible for anyone, as for any other agent's write, and is
journaled as the caller's. Its before and after contents are blobs in the journal and
its `line_changes` say which lines it replaced. Those lines are carried from the
write's result to the current content through the journal's changes since
(`daemon.writing.history.base_at`), and found again by content where a change was
taken back (`daemon.text.revert.content_map`): a later write that was undone, or two
that cancel out, do not stand in the way. When every line is still what the write
left, the revert is planned where they are now and written through the shared
writing path with writer `undo`. Otherwise it is refused `undo_conflict`, naming
the writes whose changes are still there (`culprits`): undoing those, then this one
again, is advice that ends. An undo is an `edit_applied` like any other, so undoing
it puts the undone write back.

What it must never do: write anything but through the writing path.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from editjournal.daemon.audit.timeline import versions
from editjournal.daemon.contract.context import Context
from editjournal.daemon.contract.outcome import Outcome
from editjournal.daemon.files.textcache import Parsed
from editjournal.daemon.handlers import handles
from editjournal.daemon.text.edit import apply_plan
from editjournal.daemon.text.rebase import BrokenSpan
from editjournal.daemon.text.revert import (
    Revert,
    content_map,
    content_maps,
    culprits,
    refined,
    revert_plan,
)
from editjournal.daemon.writing.history import Base, base_at, document
from editjournal.daemon.writing.path import Planned, Stale, Written, write, write_all
from editjournal.daemon.writing.stale import named, shown_lines, stale_error
from editjournal.daemon.writing.target import Target, open_target
from editjournal.schemas.errors import ErrorCode, ToolError
from editjournal.schemas.events import CheckpointRestored, EditApplied, Record
from editjournal.schemas.tools import UndoParams, UndoResult

WRITER = "undo"


@handles("undo")
def undo(ctx: Context, params: UndoParams) -> Outcome:
    if params.by is not None:
        # every write of one agent: daemon/handlers/undoby.py, built on this module's
        # pieces (so imported here, when asked for, not at the top: no import cycle)
        from editjournal.daemon.handlers.undoby import undo_by

        _refuse_mixed(params)
        return undo_by(ctx, params)
    if params.path is None or params.since is not None or params.dry_run:
        raise _invalid(
            "path is required (or by, to undo every write of an agent); since and dry_run"
            " go with by",
            "path",
        )
    path = ctx.workspace.relative(params.path)
    record = _undone(ctx, path, params)
    other = _other_half(ctx, record, path)
    if other is not None:
        return _undo_move(ctx, record, other)
    return write(open_target(ctx, path, missing_ok=True), _Undo(record), [])


def _refuse_mixed(params: UndoParams) -> None:
    """`by` undoes every write of an agent: a path, an agent or a seq would narrow it in
    ways it does not take (yet), so they are refused rather than ignored."""
    for name in ("path", "agent", "seq"):
        if getattr(params, name) is not None:
            raise _invalid(f"{name} does not go with by (every write of that agent)", name)


def _invalid(message: str, field: str) -> ToolError:
    return ToolError(
        ErrorCode.INVALID_PARAMS, f"{message} - at `$.params.{field}`", {"field": field}
    )


def _other_half(ctx: Context, record: Record, path: str) -> Record | None:
    """A move (apply_patch) is two writes of one request: the old path's removal
    (`moved_to`) and the new path's creation (`moved_from`). Undoing either half
    undoes both, so the file is back where it was, all or nothing."""
    event = record.event
    if not isinstance(event, EditApplied) or event.path != path:
        return None
    journal = ctx.journal
    if event.moved_from is not None:
        found = journal.records(
            path=event.moved_from, kind="edit_applied", until_seq=record.seq - 1,
            newest_first=True, limit=1,
        )  # fmt: skip
        return next((r for r in found if getattr(r.event, "moved_to", None) == path), None)
    if event.moved_to is not None:
        found = journal.records(
            path=event.moved_to, kind="edit_applied", after_seq=record.seq, limit=1
        )
        return next((r for r in found if getattr(r.event, "moved_from", None) == path), None)
    return None


def _undo_move(ctx: Context, record: Record, other: Record) -> Outcome:
    """Both halves of a move reverted through `write_all`: the new path's content taken
    back (removed, when the move created it) and the old path's recreated."""
    jobs = [
        (open_target(ctx, r.event.path or "", missing_ok=True), _Undo(r, as_move=True))
        for r in (record, other)
    ]
    outcome = write_all(jobs, [])
    if outcome.error is not None:
        return outcome
    seq_of = {
        e.path: ctx.next_seq + i for i, e in enumerate(outcome.events) if isinstance(e, EditApplied)
    }
    mine, partner = outcome.result
    mine.version = seq_of[mine.file_path]
    action = "recreated" if partner.created else "removed"
    mine.move_undone = {
        "path": partner.file_path,
        "version": seq_of[partner.file_path],
        "action": action,
    }
    mine.message += f"; the move is undone with it: {partner.file_path} {action}"
    outcome.result = mine
    return outcome


def _undone(ctx: Context, path: str, params: UndoParams) -> Record:
    """The write to revert: at `seq`, or the agent's latest to `path`."""
    if params.seq is None:
        agent = params.agent or ctx.agent
        found = ctx.journal.records(
            path=path, agent=agent, kind="edit_applied", newest_first=True, limit=1
        )
        record = next(iter(found), None)
        if record is None:
            raise _nothing(ctx, f"{agent} has no applied write to {path} to undo", path)
        if agent == ctx.agent:  # "my latest write": what a name alone must not buy
            _check_mine(ctx, record, path)
        return record
    record = next(iter(ctx.journal.records(after_seq=params.seq - 1, limit=1)), None)
    if record is not None and isinstance(record.event, CheckpointRestored):
        written = record.event.files.get(path)
        if written is None:
            raise _nothing(ctx, f"the restore at seq {params.seq} did not write {path}", path)
        record = next(iter(ctx.journal.records(after_seq=written - 1, limit=1)), None)
    if record is None:
        raise _nothing(ctx, f"there is no event {params.seq} in the journal", path)
    if not isinstance(record.event, EditApplied) or record.event.path not in _names(ctx, path):
        what = f"{record.kind} of {record.path}" if record.path else record.kind
        raise _nothing(ctx, f"seq {record.seq} is a {what}, not an applied write to {path}", path)
    return record


def _check_mine(ctx: Context, record: Record, path: str) -> None:
    """A plain undo takes back the caller's own write: one made without a credential
    (a name was all there was), or with the caller's."""
    made_by = getattr(record.event, "identity", None)
    if made_by is None or made_by == ctx.identity:
        return
    raise ToolError(
        ErrorCode.WRITE_IDENTITY_MISMATCH,
        f"the latest write to {path} named {ctx.agent!r} (seq {record.seq}) was made by"
        " another client of that name (it held another credential): a plain undo takes"
        " back only your own; nothing was written",
        {"path": path, "seq": record.seq, "agent": ctx.agent},
    )


def _names(ctx: Context, path: str) -> set[str]:
    """`path` and the earlier paths of the file now there (it may have been moved):
    a write made under an earlier name is undone in the file as it is now."""
    return {path} | {v.path for v in versions(ctx.journal, path)}


def _nothing(ctx: Context, message: str, path: str) -> ToolError:
    """The refusal; its suggestion names the file's writes only when the journal has any
    event about the file (the history of a file it never saw is an error too)."""
    known = next(iter(ctx.journal.records(path=path, limit=1)), None) is not None
    unknown = "check the path (workspace-relative): the journal has no event about it"
    return ToolError(ErrorCode.NOTHING_TO_UNDO, message, {"path": path}, None if known else unknown)


STALE = Stale(ErrorCode.UNDO_CONFLICT, "change")


@dataclass(frozen=True)
class _Undo:
    """The planner: the undone write's changes put back where their lines are now."""

    record: Record
    as_move: bool = False  # undone with the other half of its move (`_undo_move`)
    name: str = WRITER
    skip_safety_check: bool = True  # content the file held before: nothing to second-guess
    stale: Stale = STALE

    @property
    def write(self) -> EditApplied:
        assert isinstance(self.record.event, EditApplied)
        return self.record.event

    @property
    def operations(self) -> list[dict[str, Any]]:
        r = self.record
        return [{"op": WRITER, "seq": r.seq, "writer": self.write.writer, "agent": r.agent}]

    def plan(self, target: Target) -> Planned:
        """The revert; of half a move (undone with its other half), itself half a move
        back: the new path removed names the old one, the old path recreated names the new
        one (so undoing it moves the file again, as any undo of an undo redoes)."""
        planned, w = self._reverted(target), self.write
        if self.as_move and w.moved_from is not None and planned.delete:
            return replace(planned, moved_to=w.moved_from)
        if self.as_move and w.moved_to is not None and not target.exists:
            return replace(planned, moved_from=w.moved_to)
        return planned

    def _reverted(self, target: Target) -> Planned:
        ctx, w = target.ctx, self.write
        before, after = stored(ctx, w.before_sha256), stored(ctx, w.after_sha256)
        base = base_at(ctx, target.snap, target.noticed, self.record.seq, w.after_sha256)
        assert base is not None  # `after` is stored: _stored said so
        changes = refined(before.doc.lines, after.doc.lines, w.line_changes)
        mapping = content_map(base.doc.lines, base.sha256, base.steps, target.doc.lines)
        revert = revert_plan(
            before.doc.lines, after.doc.line_count, changes, mapping, target.doc.line_count
        )
        if revert.broken:
            raise conflict_error(target, base, revert.broken)
        rebased_over = [c.describe() for c in base.changes]
        return self._planned(target, before, revert, rebased_over)

    def _planned(
        self, target: Target, before: Parsed, revert: Revert, rebased_over: list[dict[str, Any]]
    ) -> Planned:
        """Byte for byte the content before the write when that is what comes back; no
        file at all when the write created it."""
        lines = apply_plan(target.doc, revert.plan).lines
        if not lines and not existed_before(target.ctx, target.path, self.record.seq):
            reply = {"rebased_over": rebased_over, "deleted": target.exists}
            return Planned(revert.plan, delete=target.exists, reply=reply)
        exact = before.doc if lines == before.doc.lines else None
        reply = {"rebased_over": rebased_over, "deleted": False}
        return Planned(revert.plan, document=exact, reply=reply)

    def explain(self, target: Target, error: ToolError) -> ToolError:
        """Say which write could not be undone, which of its lines differ now, and whose
        changes are still in them (`details.undone_seq` lets the advice name this write
        again, so following it ends in this undo)."""
        if error.code is ErrorCode.UNDO_CONFLICT and "stale" in error.details:
            r = self.record
            lines = sorted({n for b in error.details["stale"] for n in b["lines"]})
            who, by = r.agent or "an outside writer", named(error.details["conflicts"])
            error.message = (
                f"cannot undo seq {r.seq} ({self.write.writer} by {who}) on {target.path}:"
                f" line(s) {shown_lines(lines)} it wrote changed since"
                + (f", by {by}" if by else "")
                + "; details.delta has the changes with fresh anchors"
            )
            error.details.update({"path": target.path, "undone_seq": r.seq, "lines": lines})
        return error

    def result(self, written: Written) -> UndoResult:
        r, w = self.record, self.write
        who = r.agent or "an outside writer"
        return UndoResult(
            message=f"Undid seq {r.seq} ({w.writer} by {who}) on {written.target.path}",
            file_path=written.target.path,
            version=written.version,
            sha256=written.sha256,
            **written.reply_fields(WRITER),
            undone={"seq": r.seq, "agent": r.agent, "writer": w.writer, "ts": r.ts},
            created=not written.target.exists,
            **written.planned.reply,
        )


def conflict_error(target: Target, base: Base, spans: list[tuple[int, ...]]) -> ToolError:
    """The refusal: the one stale refusal's delta, naming as conflicts the writes whose
    changes are still in those lines now, not every event that touched them (a write
    since undone, or cancelled by another, is not in the way)."""
    broken = [BrokenSpan(k + 1, WRITER, span) for k, span in enumerate(spans)]
    ctx, doc, anchors, version = target.ctx, target.doc, target.anchors, target.version
    error = stale_error(ctx, base, doc, anchors, broken, version, STALE.code, STALE.part)
    maps = content_maps(base.doc.lines, base.sha256, base.steps, doc.lines)
    error.details["conflicts"] = _blamed(base, culprits(maps, spans))
    return error


def _blamed(base: Base, blamed: dict[int, set[int]]) -> list[dict[str, Any]]:
    """Conflicts as `stale_error` gives them (seq, agent, kind, ts, lines of the undone
    write's result), in seq order; a loss no recorded change explains alone (the file
    differs from the last one stored) names every change since."""
    named_by: dict[int, dict[str, Any]] = {}
    for index, lines in blamed.items():
        known = index < len(base.changes)
        for change in [base.changes[index]] if known else base.changes:
            entry = named_by.setdefault(change.seq, {**change.describe(), "lines": []})
            entry["lines"] = sorted({*entry["lines"], *lines})
    return [named_by[seq] for seq in sorted(named_by)]


def stored(ctx: Context, sha256: str) -> Parsed:
    parsed = document(ctx, sha256)
    if parsed is None:
        raise ToolError(
            ErrorCode.JOURNAL_CORRUPT,
            f"the journal lacks blob {sha256} of the write to undo",
            {"blob": sha256},
        )
    return parsed


def existed_before(ctx: Context, path: str, seq: int) -> bool:
    """Whether `path` existed just before event `seq`, as the journal saw it."""
    for record in ctx.journal.records(path=path, until_seq=seq - 1, newest_first=True):
        event = record.event
        if event.changes_content or event.content_sha256 is not None:
            return event.content_sha256 is not None
    return False
