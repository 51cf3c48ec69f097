"""`undo {"by": AGENT}`: take back everything one agent wrote, across files, all or nothing.

Every `edit_applied` of the agent after `since` (a checkpoint's name or id, a seq, or
`turn-N`: the agent's prompt checkpoint of turn N, so a harness's "rewind this session
to turn N" is `undo --by SESSION --since turn-N`) is reverted, whatever wrote it:
`edit`, `edit_file`, `apply_patch`, a harness hook's claim. Per file, the agent's
writes are reverted newest first, each as a single `undo` reverts one
(`daemon.text.revert`): its lines carried from its result to the content as it stands
by the journal's changes since, and found again by content, so the revert of a later
write of the agent puts back the lines an earlier one left, and other writers' changes
elsewhere in the file stay. A line the agent wrote that someone else changed since
refuses that file `undo_conflict`, naming who and where with the delta; every file is
one planner on the writing path, planned a slice at a time between other requests
(daemon/handlers/slicedwrites.py) and merged as `write_all` merges them, so one refusal
means nothing is written and the writes share one commit (then land a slice at a
time, daemon/landing/writeround.py). A file the
agent created (and nobody else wrote in) is removed; one it deleted comes back.

Each file's write is an `edit_applied` with writer `undo`, journaled as the caller
(who asked), its operation naming `by`, `since` and the seqs it reverted; so `undo
--by CALLER` puts it all back. `dry_run` plans the same and keeps only the facts the
reads noticed (an outside change): no write, no applied event.

What it must never do: write anything but through the writing path, or credit the
undo to the agent whose work it takes back.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from editjournal.daemon.contract.context import Context, Progress
from editjournal.daemon.contract.outcome import Outcome
from editjournal.daemon.handlers.checkpoints import TURN, find, turn_name
from editjournal.daemon.handlers.slicedwrites import FilePlan, PlanJob, merged
from editjournal.daemon.handlers.treejob import run_inline
from editjournal.daemon.handlers.undo import conflict_error, existed_before, stored
from editjournal.daemon.text.edit import EditPlan, Splice, apply_plan
from editjournal.daemon.text.lines import Document
from editjournal.daemon.text.revert import content_map, diff_plan, refined, revert_plan
from editjournal.daemon.writing.history import Base, base_at
from editjournal.daemon.writing.path import Planned, Stale, Writer, Written
from editjournal.daemon.writing.stale import named, shown_lines
from editjournal.daemon.writing.target import Target, open_target
from editjournal.daemon.writing.undo_renames import filed_where_now, removes
from editjournal.schemas.errors import ErrorCode, ToolError
from editjournal.schemas.events import EditApplied, Record
from editjournal.schemas.tools import MAX_UNDO_BY_FILES, UndoneFile, UndoParams, UndoResult

WRITER = "undo"
STALE = Stale(ErrorCode.UNDO_CONFLICT, "change")
SHOWN_FILES = 20  # files the message lists one per line (`files` has them all)


@dataclass(frozen=True)
class Since:
    """Where the undo starts: the agent's writes after `seq` are taken back."""

    seq: int
    label: str  # for a message: "checkpoint 'before' (seq 12)", "seq 40", "the start"


def undo_by(ctx: Context, params: UndoParams) -> Outcome:
    """Every write of `params.by` after `params.since`, reverted in one write: each file
    planned a slice at a time between other requests (an `UndoByJob`), the writes
    landing together."""
    assert params.by is not None
    job = ctx.finished
    if not isinstance(job, UndoByJob):
        job = UndoByJob(params.by, since_ref(ctx, params.since, params.by))
        if not job.try_inline(ctx):
            return Outcome(job=job)
    since = job.since
    job.writes = job.writes_now(ctx)
    if job.planning.again(ctx, sorted(job.writes)):
        return Outcome(job=job)  # many files recorded since their plans: sliced again
    plans = job.planning.plans(ctx, sorted(job.writes))
    jobs = [p for p in plans if p.writer is not None]
    unchanged = [(p.target, job.writer(p.target.path)) for p in plans if p.writer is None]
    outcome = merged(jobs)
    # a file the undo leaves as it is (the agent's writes there cancel out, or were undone
    # already) gets no write: only the outside change its read noticed, a fact
    outcome.events[:0] = [e for target, _ in unchanged for e in target.noticed]
    if params.dry_run:
        outcome = _dry(outcome, [p.target for p in plans])
    if outcome.error is not None:
        return outcome
    return _finish(ctx, params, since, outcome, unchanged)


class UndoByJob:
    """An undo --by's planning, a slice at a time (daemon/handlers/slicedwrites.py): over
    1,000 files it held the thread 4 s in one run. The final run plans again only the
    files the journal recorded anything of meanwhile (a new write of the agent's among
    them), with the agent's writes as they are then."""

    def __init__(self, by: str, since: Since) -> None:
        self.by, self.since = by, since
        self.began = 0  # `writes` are the journal's up to this seq
        self.writes: dict[str, list[Record]] = {}
        self._planning: PlanJob | None = None  # made by the first step, with `writes`

    @property
    def planning(self) -> PlanJob:
        assert self._planning is not None, "the first step finds the writes and plans them"
        return self._planning

    @property
    def done(self) -> bool:
        return self._planning is not None and self._planning.done

    def try_inline(self, ctx: Context) -> bool:
        """Work for up to INLINE_S; whether the job is done (a small undo plans every
        file and settles within it: answered without being parked)."""
        return run_inline(self, ctx)

    def step(self, ctx: Context, deadline: float) -> Progress:
        """The agent's writes, by where each file is now (a step of its own: a query per
        file, ~40 ms at 1,000, which the first run's inline try then ends on), then the
        files planned."""
        if self._planning is None:
            self.began = ctx.journal.last_seq
            self.writes = filed_where_now(ctx, self.by, writes_by_file(ctx, self.by, self.since))
            self._planning = PlanJob(ctx, sorted(self.writes), self.consider)
            return Progress()
        return self._planning.step(ctx, deadline)

    def leftovers(self) -> list[dict[str, FilePlan]]:
        """Every plan, freed a few a turn once the undo is answered (runtime/leftovers.py)."""
        return self._planning.leftovers() if self._planning is not None else []

    def writes_now(self, ctx: Context) -> dict[str, list[Record]]:
        """The agent's writes by the path each file has now, for the final run: found
        again only when the journal since the job began holds a write of the agent's or
        a removal or move (a query per file: 40 of a 1,000-file undo's final 150 ms)."""
        since_began = ctx.journal.records(after_seq=self.began)
        if any(
            (r.agent == self.by and r.kind == "edit_applied") or removes(r) for r in since_began
        ):
            self.writes = filed_where_now(ctx, self.by, writes_by_file(ctx, self.by, self.since))
        self.began = ctx.journal.last_seq
        return self.writes

    def writer(self, path: str) -> _UndoAll:
        return _UndoAll(tuple(self.writes[path]), self.by, self.since)

    def consider(self, ctx: Context, path: str) -> tuple[Target, Writer | None]:
        """The file and its planner; no planner when the revert leaves it as it is."""
        target = open_target(ctx, path, missing_ok=True)
        writer = self.writer(path)
        return target, (None if writer.changes_nothing(target) else writer)


def since_ref(ctx: Context, ref: int | str | None, by: str | None = None) -> Since:
    """`since` as a seq: a checkpoint (by name, or id: its seq), a seq of the journal, or
    `turn-N` of `by` (its prompt checkpoint `<by>/turn-N`, pruned or not: the seq of
    its `checkpoint_created` event is all the undo needs)."""
    if ref is None:
        return Since(0, "the start")
    if isinstance(ref, str):
        found = _checkpoint_since(ctx, ref.strip(), by)
        if found is not None:
            return found
        digits = ref.strip().removeprefix("#")
        if not digits.isdigit():
            find(ctx, ref)  # raises checkpoint_not_found, listing the latest names
        ref = int(digits)
    last = ctx.journal.last_seq
    if ref < 0 or ref > last:
        raise ToolError(
            ErrorCode.INVALID_PARAMS,
            f"since {ref} is no seq of the journal (its latest is {last}) and no checkpoint's"
            " id - at `$.params.since`",
            {"since": ref, "last_seq": last},
        )
    return Since(ref, f"seq {ref}")


def _checkpoint_since(ctx: Context, ref: str, by: str | None) -> Since | None:
    """The checkpoint `ref` names, or None: `turn-N` is `by`'s turn N first (listed, or
    pruned; a subagent `SESSION/SUB` takes its session's turns), then a checkpoint of
    that very name; any other name is looked up as it is (a turn's may be pruned)."""
    found, turn = None, None
    if by and _is_turn(ref):
        for owner in dict.fromkeys((by, by.split("/", 1)[0])):
            turn = turn or turn_name(owner, int(ref[5:]))
            found = found or _named(ctx, turn_name(owner, int(ref[5:])), owner)
    found = found or _named(ctx, ref, by)
    if found is None and turn is not None:
        raise ToolError(
            ErrorCode.CHECKPOINT_NOT_FOUND,
            f"{by} has no prompt checkpoint {turn!r}: its turns are counted from 1, one per"
            " prompt its harness's hook saw - at `$.params.since`",
            {"id_or_name": turn, "by": by},
            "list them: editjournal checkpoint list",
        )
    return found


def _named(ctx: Context, name: str, by: str | None) -> Since | None:
    """The listed checkpoint `name`, or `by`'s prompt checkpoint of that name pruned
    since (its `checkpoint_created` event is still in the journal)."""
    checkpoint = ctx.state.checkpoints.find(name)
    if checkpoint is not None:
        return Since(checkpoint.id, f"checkpoint {checkpoint.name!r} (seq {checkpoint.id})")
    if by is None or not name.startswith(by + TURN):
        return None
    records = ctx.journal.records(agent=by, kind="checkpoint_created", newest_first=True)
    for record in records:
        if getattr(record.event, "name", None) == name:
            return Since(record.seq, f"checkpoint {name!r} (seq {record.seq}, pruned)")
    return None


def _is_turn(ref: str) -> bool:
    return ref.startswith("turn-") and ref[5:].isdigit() and int(ref[5:]) > 0


def writes_by_file(ctx: Context, agent: str, since: Since) -> dict[str, list[Record]]:
    """The agent's applied writes after `since`, per path, oldest first; refused when
    there are none, or more files than one request may write."""
    found: dict[str, list[Record]] = {}
    for record in ctx.journal.records(agent=agent, kind="edit_applied", after_seq=since.seq):
        path = record.event.path
        if path is None:
            continue
        if path not in found and len(found) == MAX_UNDO_BY_FILES:
            raise ToolError(
                ErrorCode.INVALID_PARAMS,
                f"{agent} wrote more than {MAX_UNDO_BY_FILES} files after {since.label}: one"
                " undo takes back at most that many; give a later since - at `$.params.since`",
                {"by": agent, "max_files": MAX_UNDO_BY_FILES, "since": since.seq},
            )
        found.setdefault(path, []).append(record)
    if not found:
        raise ToolError(
            ErrorCode.NOTHING_TO_UNDO,
            f"{agent} has no applied write after {since.label}: nothing to undo",
            {"by": agent, "since": since.seq},
            "see who wrote what: log, or agent_status",
        )
    return found


@dataclass
class _UndoAll:
    """One file's planner: the agent's writes to it reverted, newest first, over the
    content as it stands."""

    records: tuple[Record, ...]  # the agent's writes to the file, oldest first
    by: str
    since: Since
    name: str = WRITER
    skip_safety_check: bool = True  # content the file held before: nothing to second-guess
    stale: Stale = STALE
    _planned: Planned | None = field(default=None, repr=False)  # planned once, by `plan`

    def changes_nothing(self, target: Target) -> bool:
        """The revert leaves the file as it is (a refusal changes something: it is the
        writing path's to report)."""
        try:
            planned = self.plan(target)
        except ToolError:
            return False
        splices = planned.plan.splices
        if not target.exists:  # no file: the revert changes nothing while it adds no line
            return not any(s.new_lines for s in splices)
        return not planned.delete and not any(s.new_lines or s.end > s.start for s in splices)

    @property
    def operations(self) -> list[dict[str, Any]]:
        seqs = [r.seq for r in self.records]
        return [{"op": WRITER, "by": self.by, "since": self.since.seq, "seqs": seqs}]

    def plan(self, target: Target) -> Planned:
        if self._planned is None:
            self._planned = self._plan(target)
        return self._planned

    def _plan(self, target: Target) -> Planned:
        doc, base = target.doc, None
        for record in reversed(self.records):
            doc, base = self._reverted(target, record, doc)
        assert base is not None  # there is at least one write
        first, seqs = self.records[0], [r.seq for r in self.records]
        rebased = [c.describe() for c in base.changes if c.seq not in seqs]
        reply = {"rebased_over": rebased, "seqs": seqs}
        if not doc.lines and not existed_before(target.ctx, _write(first).path, first.seq):
            everything = Splice(0, WRITER, 0, target.doc.line_count, (), ())
            return Planned(EditPlan((everything,)), delete=target.exists, reply=reply)
        before = stored(target.ctx, _write(first).before_sha256)
        exact = before.doc if doc.lines == before.doc.lines else doc
        plan = diff_plan(target.doc.lines, exact.lines, WRITER)
        return Planned(plan, document=exact, reply=reply)

    def _reverted(self, target: Target, record: Record, doc: Document) -> tuple[Document, Base]:
        """`doc` with one write's changes put back where its lines are now in `doc`."""
        ctx, w = target.ctx, _write(record)
        before, after = stored(ctx, w.before_sha256), stored(ctx, w.after_sha256)
        base = base_at(ctx, target.snap, target.noticed, record.seq, w.after_sha256)
        assert base is not None  # `after` is stored: _stored said so
        changes = refined(before.doc.lines, after.doc.lines, w.line_changes)
        mapping = content_map(base.doc.lines, base.sha256, base.steps, doc.lines)
        revert = revert_plan(
            before.doc.lines, after.doc.line_count, changes, mapping, len(doc.lines)
        )
        if revert.broken:
            raise _conflict(target, base, revert.broken, record)
        return apply_plan(doc, revert.plan), base

    def explain(self, target: Target, error: ToolError) -> ToolError:
        """Name who changed which of the agent's lines, and where, for a conflict."""
        if error.code is not ErrorCode.UNDO_CONFLICT or "undone_seq" not in error.details:
            return error
        seq, lines = error.details["undone_seq"], error.details["lines"]
        conflicts = error.details.get("conflicts", [])
        others = [c for c in conflicts if c.get("agent") != self.by] or conflicts
        now = sorted({row["line"] for row in error.details["delta"]["changed_lines"]})
        where = f" (now line(s) {shown_lines(now)})" if now else ""
        error.message = (
            f"cannot undo {self.by}'s writes: in {target.path}, line(s) {shown_lines(lines)}"
            f" its write at seq {seq} left{where} changed since"
            + (f", by {named(others)}" if others else "")
            + "; details.delta has the changes with fresh anchors"
        )
        error.details.update({"path": target.path, "by": self.by})
        return error

    def result(self, written: Written) -> Written:
        return written


def _conflict(
    target: Target, base: Base, spans: list[tuple[int, ...]], record: Record
) -> ToolError:
    """The single undo's refusal (delta, conflicts named by content), for this write."""
    error = conflict_error(target, base, spans)
    lines = sorted({n for span in spans for n in span})
    error.details.update({"undone_seq": record.seq, "lines": lines})
    return error


def _dry(outcome: Outcome, targets: list[Target]) -> Outcome:
    """The outcome with nothing written: only the outside changes the reads noticed are
    journaled (facts, whatever the undo does), with the contents they name."""
    noticed = [e for t in targets for e in t.noticed]
    kept = {t.snap.sha256 for t in targets if t.noticed and t.exists}
    blobs = {sha: data for sha, data in outcome.blobs.items() if sha in kept}
    outcome.events, outcome.blobs, outcome.writes = noticed, blobs, []
    return outcome


def _finish(
    ctx: Context,
    params: UndoParams,
    since: Since,
    outcome: Outcome,
    unchanged: list[tuple[Target, _UndoAll]],
) -> Outcome:
    """The reply: each file's write at the seq it will get (one thread stages in order)."""
    at = {e.path: i for i, e in enumerate(outcome.events) if isinstance(e, EditApplied)}
    written: list[Written] = outcome.result
    files = [
        _file(w, None if params.dry_run else ctx.next_seq + at[w.target.path]) for w in written
    ]
    files += [_unchanged(target, writer) for target, writer in unchanged]
    files.sort(key=lambda f: f.path)
    last = max((f.version for f in files if f.version is not None), default=0)
    assert params.by is not None
    outcome.result = UndoResult(
        message=_message(params.by, since, files, params.dry_run),
        version=last,
        by=params.by,
        since=since.seq,
        dry_run=params.dry_run,
        files=files,
    )
    return outcome


def _file(written: Written, version: int | None) -> UndoneFile:
    target, planned = written.target, written.planned
    removed = planned.delete
    action = "removed" if removed else ("recreated" if not target.exists else "reverted")
    undone = list(planned.reply["seqs"])
    return UndoneFile(
        path=target.path,
        action=action,
        version=version,
        sha256=None if removed else written.sha256,
        undone_seqs=undone,
        rebased_over=list(planned.reply.get("rebased_over", [])),
        lines_before=target.doc.line_count,
        lines_after=0 if removed else written.doc.line_count,
        diff=written.diff,
    )


def _unchanged(target: Target, writer: _UndoAll) -> UndoneFile:
    lines = target.doc.line_count
    return UndoneFile(
        path=target.path,
        action="unchanged",
        version=None,
        sha256=target.snap.sha256 if target.exists else None,
        undone_seqs=[r.seq for r in writer.records],
        lines_before=lines,
        lines_after=lines,
    )


def _message(by: str, since: Since, files: list[UndoneFile], dry_run: bool) -> str:
    actions = ("reverted", "removed", "recreated", "unchanged")
    counts = {a: sum(f.action == a for f in files) for a in actions}
    parts = ", ".join(f"{n} {a}" for a, n in counts.items() if n)
    writes = sum(len(f.undone_seqs) for f in files)
    verb = "Would undo" if dry_run else "Undid"
    head = f"{verb} {writes} write(s) by {by} after {since.label} in {len(files)} file(s): {parts}"
    shown = [_file_line(f) for f in files[:SHOWN_FILES]]
    more = [f"  (and {len(files) - SHOWN_FILES} more)"] if len(files) > SHOWN_FILES else []
    return "\n".join([head, *shown, *more])


def _file_line(f: UndoneFile) -> str:
    """`  reverted app.py (seq 31): seqs 4, 9, kept 2 other changes`"""
    at = f" (seq {f.version})" if f.version is not None else ""
    seqs = ", ".join(map(str, f.undone_seqs))
    kept = f", kept {len(f.rebased_over)} other change(s)" if f.rebased_over else ""
    return f"  {f.action} {f.path}{at}: seq(s) {seqs}{kept}"


def _write(record: Record) -> EditApplied:
    assert isinstance(record.event, EditApplied)
    return record.event
