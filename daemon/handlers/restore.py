"""`checkpoint_restore`: the workspace back as a checkpoint found it, all or nothing.

A restore looks at the tree as it is (a `TreeJob`, in slices for a big workspace)
and compares it with the checkpoint's manifest (daemon/tree/compare.py): every
covered file changed since — by any agent through any tool, by an outside writer,
or deleted — is written back, and with `remove_new` every file created since is
removed. Each file is a planner on the shared writing path whose plan is "the
checkpoint's content, byte for byte" (splices only where the lines differ), planned a
slice at a time between other requests (daemon/handlers/slicedwrites.py: a restore of
5,000 files held the thread 22 s in one run) and merged as `write_all` merges them, so
one file refused means nothing is written; the writes share one commit (then land a
slice at a time, daemon/landing/writeround.py). Each file's
write is an `edit_applied` with writer `restore` (so `undo` takes it back like any
write) and one `checkpoint_restored` event after them groups them. Files the
checkpoint lists but does not hold (binary, not UTF-8, too large) are left alone,
and the reply says so. A restore writes at most `MAX_RESTORE_FILES` files: past it
(the one commit held every other agent 0.5 s at 5,000) it is refused before anything
is planned, with the parts by directory that restores of `paths` can take.

What it must never do: write a file itself, or change state but by its events.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from editjournal.daemon.contract.context import Context, Progress
from editjournal.daemon.contract.outcome import Link, Outcome
from editjournal.daemon.files.textcache import Parsed
from editjournal.daemon.handlers import handles
from editjournal.daemon.handlers.checkpoints import info, look
from editjournal.daemon.handlers.slicedwrites import FilePlan, PlanJob, merged
from editjournal.daemon.handlers.treejob import LookJob, run_inline
from editjournal.daemon.model.checkpointbook import Checkpoint
from editjournal.daemon.text.edit import EditPlan, Splice
from editjournal.daemon.text.revert import diff_plan
from editjournal.daemon.tree.compare import Comparison
from editjournal.daemon.tree.parts import parts
from editjournal.daemon.writing.history import changes_since, document
from editjournal.daemon.writing.path import ANCHOR_STALE, Planned, Stale, Writer, Written
from editjournal.daemon.writing.stale import named
from editjournal.daemon.writing.target import Target, open_target
from editjournal.schemas.errors import ErrorCode, ToolError
from editjournal.schemas.events import AnyEvent, CheckpointRestored, EditApplied, Record
from editjournal.schemas.suggestions import call
from editjournal.schemas.tools import (
    MAX_LISTED_FILES,
    MAX_RESTORE_FILES,
    CheckpointRestoreParams,
    CheckpointRestoreResult,
    RestoredFile,
)

WRITER = "restore"
SHOWN_CHANGES = 3  # newest changes a restored file's line names (the reply has them all)
# the journal since the checkpoint is read in one pass when it holds fewer events than
# this many per restored file; else a query per file (a query costs about that many
# events decoded: 5,000 queries were a third of a 5,000-file restore's final run)
EVENTS_PER_FILE_SCANNED = 10
SCAN_CHUNK = 2000  # events read at a time by a slice scanning the journal since
MAX_LISTED_CHARS = 2000  # a refusal over the cap lists every part's call up to this long


@handles("checkpoint_restore")
def checkpoint_restore(ctx: Context, params: CheckpointRestoreParams) -> Outcome:
    job = ctx.finished
    if not isinstance(job, RestoreJob):
        job = RestoreJob(look(ctx, params.id_or_name, params.paths), params)
    if ctx.finished is None and not job.try_inline(ctx):
        return Outcome(job=job)
    found, checkpoint = job.look.finish(ctx), job.look.checkpoint
    check_size(found, params)  # files changed meanwhile may have taken it over the cap
    if job.planning(ctx).again(ctx, [*found.modified, *found.deleted, *found.created]):
        job.drafts = None  # drafted again from the new plans
        return Outcome(job=job)  # many files recorded since their plans: sliced again
    plan = _RestorePlan(ctx, checkpoint, params, unchanged=found.unchanged, since=job.since)
    plan.drafts, job.drafts = job.drafts or {}, {}  # once: the report is filled in place
    plan.left_alone = [{"path": p, "why": why} for p, why in found.left_alone]
    for file in job.planning(ctx).plans(ctx, [*found.modified, *found.deleted, *found.created]):
        plan.take(file, job.wanted(file.target.path))
    outcome = merged(plan.files)
    outcome.events[:0] = plan.noticed  # files left alone: their outside changes still count
    if outcome.error is not None:
        return outcome
    return plan.finish(outcome)


class RestoreJob:
    """A restore's long parts, a slice at a time: the tree against the checkpoint (a
    `LookJob`), then every file it would write planned on the writing path (a
    `PlanJob`, daemon/handlers/slicedwrites.py). The final run judges again only the
    files changed meanwhile and plans again only those: a restore of 5,000 files held
    the thread 22 s in that one run."""

    def __init__(self, look: LookJob, params: CheckpointRestoreParams) -> None:
        self.look = look
        self.params = params
        self.remove_new = params.remove_new
        self._plans: PlanJob | None = None
        self.since: SinceScan | None = None  # the journal since the checkpoint, scanned
        self.drafts: dict[str, Drafted] | None = None  # each planned file's report, drafted

    @property
    def done(self) -> bool:
        return self.look.done and self._plans is not None and self._plans.done

    def try_inline(self, ctx: Context) -> bool:
        return run_inline(self, ctx)

    def leftovers(self) -> list[dict[str, Any]]:
        """Every plan, freed a few a turn once the restore is answered (48 ms at once for
        1,000 files: runtime/leftovers.py)."""
        return [self.drafts or {}, *(self._plans.leftovers() if self._plans else [])]

    def step(self, ctx: Context, deadline: float) -> Progress:
        """The tree, then the plans, then the journal since the checkpoint (the report's
        changes of each file), then the plans' settling step."""
        if not self.look.done:
            return self.look.step(ctx, deadline)
        planning = self.planning(ctx)
        if not planning.planned_all:
            return planning.step(ctx, deadline)
        if self.since is None:
            self.since = SinceScan(ctx, planning.paths, self.look.checkpoint.id)
        if not self.since.done:
            self.since.step(ctx, deadline)
            return Progress()
        if self.drafts is None:  # a step of its own: the settling step after it is empty
            self.drafts = drafts(planning.planned.values())
            return Progress()
        return planning.step(ctx, deadline)

    def planning(self, ctx: Context) -> PlanJob:
        """The plans, begun on the comparison as judged so far (the final run judges
        the files changed meanwhile again, and plans those again)."""
        if self._plans is None:
            found = self.look.comparison
            check_size(found, self.params)  # before planning any: refused, it costs nothing
            paths = [*found.modified, *found.deleted, *found.created]
            self._plans = PlanJob(ctx, paths, self.consider)
        return self._plans

    def wanted(self, path: str) -> str | None:
        """The checkpoint's content of `path` (None: it had no such file)."""
        entry = self.look.before.get(path)
        return entry.sha256 if entry is not None else None

    def consider(self, ctx: Context, path: str) -> tuple[Target, Writer | None]:
        """`path` as the checkpoint has it: its planner, or None (nothing to write:
        the same content, or a file new since that the restore keeps)."""
        target = open_target(ctx, path, missing_ok=True)
        wanted = self.wanted(target.path)
        if wanted == _present(target) or (wanted is None and not self.remove_new):
            return target, None
        return target, _Restore(self.look.checkpoint, wanted)


@dataclass
class _RestorePlan:
    """What one restore does to each file, gathered before anything is written."""

    ctx: Context
    checkpoint: Checkpoint
    params: CheckpointRestoreParams
    files: list[FilePlan] = field(default_factory=list)  # the files to write
    noticed: list[AnyEvent] = field(default_factory=list)  # of the files left alone
    kept_new: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    left_alone: list[dict[str, Any]] = field(default_factory=list)
    since: SinceScan | None = None  # the journal since the checkpoint, scanned in slices
    drafts: dict[str, Drafted] = field(default_factory=dict)  # reports drafted in a slice

    def take(self, file: FilePlan, wanted: str | None) -> None:
        """A file as planned: to write, or the same as the checkpoint's content `wanted`
        (None == None: new since, and gone again), or new since and kept."""
        target = file.target
        if file.writer is not None:
            self.files.append(file)
            return
        if wanted == _present(target):
            self.unchanged.append(target.path)
        else:
            self.kept_new.append(target.path)
        self.noticed.extend(target.noticed)

    def finish(self, outcome: Outcome) -> Outcome:
        """The grouping event, and the report: each file's write at its seq."""
        at = {e.path: i for i, e in enumerate(outcome.events) if isinstance(e, EditApplied)}
        written: list[Written] = outcome.result
        noticed = _noticed_by_path(self.ctx.next_seq, outcome.events)
        paths = [w.target.path for w in written]
        scanned = self.since.changes(self.ctx, paths) if self.since is not None else None
        if scanned is None:
            scanned = _changes_since(self.ctx, paths, self.checkpoint.id)
        for path, changes in scanned.items():
            noticed[path] = changes + noticed.get(path, [])
        # the reply's versions (the seqs these events will get: one thread stages in order)
        files = [self._report(w, self.ctx.next_seq + at[w.target.path], noticed) for w in written]
        removed = [f.path for f in files if f.action == "removed"]
        kept_new, unchanged = self.kept_new[:MAX_LISTED_FILES], self.unchanged[:MAX_LISTED_FILES]
        event = CheckpointRestored(
            checkpoint=self.checkpoint.id, name=self.checkpoint.name, files=dict.fromkeys(at, 0),
            removed=removed, kept_new=kept_new, unchanged=unchanged,
            kept_new_count=len(self.kept_new), unchanged_count=len(self.unchanged),
            left_alone=[a["path"] for a in self.left_alone[:MAX_LISTED_FILES]],
        )  # fmt: skip
        outcome.events.append(event)
        grouping = len(outcome.events) - 1
        outcome.links.extend(Link(grouping, "files", i, key=path) for path, i in at.items())
        outcome.result = CheckpointRestoreResult(
            message=self._message(files),
            checkpoint=info(self.checkpoint),
            version=self.ctx.next_seq + len(outcome.events) - 1,
            files=files,
            kept_new=kept_new,
            unchanged=unchanged,
            unchanged_count=len(self.unchanged),
            left_alone=self.left_alone[:MAX_LISTED_FILES],
        )
        outcome.warnings += self._warnings()
        return outcome

    def _warnings(self) -> list[str]:
        """What the restore did not do, and (for the files new since) how to."""
        warnings = []
        if self.kept_new:
            again = call(
                "checkpoint_restore",
                id_or_name=self.checkpoint.name,
                paths=self.params.paths,
                remove_new=True,
            )
            warnings.append(
                f"kept {len(self.kept_new)} file(s) created since the checkpoint"
                f" ({', '.join(self.kept_new[:5])}); restoring with remove_new removes them:"
                f" {again}"
            )
        if self.left_alone:
            listed = "; ".join(f"{a['path']}: {a['why']}" for a in self.left_alone[:5])
            warnings.append(
                f"left {len(self.left_alone)} changed file(s) alone, not text ({listed})"
            )
        return warnings

    def _report(
        self, written: Written, seq: int, noticed: dict[str, list[dict[str, Any]]]
    ) -> RestoredFile:
        """The file's line of the reply: its draft when drafted from this very plan
        (only its version and changes left to fill in), else made now."""
        since = noticed.get(written.target.path, [])  # the journal's changes, then ours
        drafted = self.drafts.get(written.target.path)
        if drafted is not None and drafted.written is written:
            drafted.report.version, drafted.report.changed_since = seq, since
            return drafted.report
        return _drafted(written, seq, since)

    def _message(self, files: list[RestoredFile]) -> str:
        counts = {
            a: sum(f.action == a for f in files) for a in ("restored", "recreated", "removed")
        }
        parts = [f"{n} {a}" for a, n in counts.items() if n]
        parts += [f"{len(self.unchanged)} unchanged"] if self.unchanged else []
        parts += [f"{len(self.kept_new)} new kept"] if self.kept_new else []
        parts += [f"{len(self.left_alone)} left alone"] if self.left_alone else []
        cp = self.checkpoint
        head = f"Restored checkpoint {cp.name!r} (id {cp.id}): {', '.join(parts) or 'no files'}"
        return "\n".join([head, *map(_file_line, files)])


class Drafted(NamedTuple):
    """A file's report drafted in a slice, and the plan's `Written` it was drafted from."""

    written: Written
    report: RestoredFile


def drafts(plans: Iterable[FilePlan]) -> dict[str, Drafted]:
    """The report of each file the plans write, but its version and its changes since
    the checkpoint (known in the final run): a slice's work, not the final run's (0.08 s
    of a 5,000-file restore's final run)."""
    found = {}
    for plan in plans:
        outcome = plan.outcome
        if plan.writer is not None and outcome is not None and outcome.error is None:
            written: Written = outcome.result
            found[plan.target.path] = Drafted(written, _drafted(written, 0, []))
    return found


def _drafted(written: Written, seq: int, since: list[dict[str, Any]]) -> RestoredFile:
    target = written.target
    removed, created = written.planned.delete, not target.exists
    return RestoredFile(
        path=target.path,
        action="removed" if removed else ("recreated" if created else "restored"),
        version=seq,
        sha256=None if removed else written.sha256,
        overwrote_sha256=target.snap.sha256 if target.exists else None,
        changed_since=since,
        lines_before=target.doc.line_count,
        lines_after=written.doc.line_count,
        diff=written.diff,
    )


class SinceScan:
    """The journal's content changes of the paths a restore writes, since its checkpoint,
    read a slice at a time before the final run (read there, they were 0.10 s of a
    5,000-file restore's one long step, after the watcher journaled each file's change):
    up to the seq the scan began at, in chunks of the journal in order, or, when the
    journal since is long for so few paths, a query per path. The final run adds what
    was recorded after that seq (`changes`)."""

    def __init__(self, ctx: Context, paths: list[str], seq: int) -> None:
        self.upto = ctx.journal.last_seq
        self.at = seq  # scanned up to here (one pass), or the checkpoint's seq
        self.wanted = set(paths)
        self.found: dict[str, list[dict[str, Any]]] = {}
        per_path = self.upto - seq > EVENTS_PER_FILE_SCANNED * len(paths)
        self.queries = sorted(paths) if per_path else None  # left to query, one per path
        self.done = not self.queries if per_path else self.at >= self.upto

    def step(self, ctx: Context, deadline: float) -> None:
        """Scan until `deadline`, at least a chunk or a path."""
        while not self.done:
            if self.queries is not None:
                self._query(ctx, self.queries.pop())
                self.done = not self.queries
            else:
                self._chunk(ctx)
            if time.monotonic() >= deadline:
                return

    def _query(self, ctx: Context, path: str) -> None:
        changes = ctx.journal.records(path=path, after_seq=self.at, until_seq=self.upto)
        found = [_described(r) for r in changes if r.event.changes_content]
        if found:
            self.found[path] = found

    def _chunk(self, ctx: Context) -> None:
        read = 0
        for r in ctx.journal.records(after_seq=self.at, until_seq=self.upto, limit=SCAN_CHUNK):
            read += 1
            self.at = r.seq
            if r.event.changes_content and r.event.path in self.wanted:
                self.found.setdefault(r.event.path, []).append(_described(r))
        if read < SCAN_CHUNK:
            self.at, self.done = self.upto, True

    def changes(self, ctx: Context, paths: list[str]) -> dict[str, list[dict[str, Any]]] | None:
        """Each of `paths`' changes since the checkpoint: the scan's and the journal's
        since it began (few: what was recorded during the restore's last slices). None
        when the scan did not finish or covers too few of them (then read them now)."""
        if not self.done or not self.wanted.issuperset(paths):
            return None
        found = {p: list(self.found[p]) for p in paths if p in self.found}
        wanted = set(paths)
        for r in ctx.journal.records(after_seq=self.upto):
            if r.event.changes_content and r.event.path in wanted:
                found.setdefault(r.event.path, []).append(_described(r))
        return found


def check_size(found: Comparison, params: CheckpointRestoreParams) -> None:
    """`invalid_params` when the restore would write more than MAX_RESTORE_FILES files:
    its one commit holds every other agent for all of them (0.5 s at 5,000). The error
    gives the parts, by directory, that restores of at most that many each can take
    (each all or nothing; a restore is idempotent, so one repeated after a failure
    only writes what is still changed)."""
    written = [*found.modified, *found.deleted, *(found.created if params.remove_new else ())]
    if len(written) <= MAX_RESTORE_FILES:
        return
    cut = parts(written, MAX_RESTORE_FILES)
    calls = [
        call(
            "checkpoint_restore", id_or_name=params.id_or_name, paths=part,
            remove_new=params.remove_new or None,
        )
        for part in cut
    ]  # fmt: skip
    listed = "; ".join(calls)
    if len(listed) > MAX_LISTED_CHARS:  # the first, and the rest in the details
        listed = f"{calls[0]}, then the {len(cut) - 1} more parts in the details' `parts`"
    raise ToolError(
        ErrorCode.INVALID_PARAMS,
        f"the restore would write {len(written):,} files, over the {MAX_RESTORE_FILES:,}"
        " one restore may write (its commit holds every other agent's requests for all of"
        f" them); restore it in {len(cut)} parts of at most {MAX_RESTORE_FILES:,} files,"
        f" each all or nothing: {listed}",
        {"files": len(written), "max_files": MAX_RESTORE_FILES, "parts": cut},
    )


def _described(r: Record) -> dict[str, Any]:
    """A change as a restored file's report names it (as `ContentChange.describe`)."""
    return {"seq": r.seq, "agent": r.agent, "kind": r.kind, "ts": r.ts}


def _changes_since(ctx: Context, paths: list[str], seq: int) -> dict[str, list[dict[str, Any]]]:
    """The journal's content changes of each of `paths` after `seq`, described as
    `changes_since` describes them: in one pass when the journal since is short enough."""
    if ctx.journal.last_seq - seq > EVENTS_PER_FILE_SCANNED * len(paths):
        return {p: [c.describe() for c in changes_since(ctx, p, seq)] for p in paths}
    wanted = set(paths)
    found: dict[str, list[dict[str, Any]]] = {}
    for r in ctx.journal.records(after_seq=seq):
        if r.event.changes_content and r.event.path in wanted:
            change = {"seq": r.seq, "agent": r.agent, "kind": r.kind, "ts": r.ts}
            found.setdefault(r.event.path, []).append(change)
    return found


def _noticed_by_path(first_seq: int, events: list[AnyEvent]) -> dict[str, list[dict[str, Any]]]:
    """The outside changes this restore journals first, by path, as a file's report names
    them: grouped once (a scan of every event per restored file was quadratic: 3 of the
    5 s of a 1,000-file restore)."""
    found: dict[str, list[dict[str, Any]]] = {}
    for i, e in enumerate(events):
        if e.path is not None and e.changes_content and not isinstance(e, EditApplied):
            found.setdefault(e.path, []).append(
                {"seq": first_seq + i, "agent": None, "kind": e.kind, "ts": None}
            )
    return found


def _file_line(f: RestoredFile) -> str:
    """`  restored app.py (seq 10), over 2 changes: alice (edit_applied, seq 5), ...`"""
    head = f"  {f.action} {f.path} (seq {f.version})"
    changes = f.changed_since
    if not changes:
        return head
    shown = named(changes[-SHOWN_CHANGES:])
    earlier = len(changes) - SHOWN_CHANGES
    more = f" (and {earlier} earlier)" if earlier > 0 else ""
    return f"{head}, over {len(changes)} change{'s' * (len(changes) != 1)}: {shown}{more}"


def _present(target: Target) -> str | None:
    return target.snap.sha256 if target.exists else None


def _checkpointed(target: Target, sha256: str) -> Parsed:
    """The checkpoint's content of the file, as the journal stored it."""
    parsed = document(target.ctx, sha256)
    if parsed is None:
        raise ToolError(
            ErrorCode.JOURNAL_CORRUPT,
            f"the journal lacks blob {sha256}, the checkpoint's {target.path}",
            {"blob": sha256, "path": target.path},
        )
    return parsed


@dataclass
class _Restore:
    """One file of a restore: the checkpoint's content byte for byte, or no file."""

    checkpoint: Checkpoint
    sha256: str | None  # the checkpoint's content; None: remove the file (new since)
    name: str = WRITER
    skip_safety_check: bool = True  # known content going back: nothing to second-guess
    stale: Stale = ANCHOR_STALE  # planned in the current content: never carried

    @property
    def operations(self) -> list[dict[str, Any]]:
        op = {"op": WRITER, "checkpoint": self.checkpoint.id, "name": self.checkpoint.name}
        return [{**op, "remove": True} if self.sha256 is None else op]

    def plan(self, target: Target) -> Planned:
        if self.sha256 is None:
            everything = Splice(0, WRITER, 0, target.doc.line_count, (), ())
            return Planned(EditPlan((everything,)), delete=True)
        parsed = _checkpointed(target, self.sha256)
        plan = diff_plan(target.doc.lines, parsed.doc.lines, WRITER)
        return Planned(plan, document=parsed.doc)

    def explain(self, target: Target, error: ToolError) -> ToolError:
        return error

    def result(self, written: Written) -> Written:
        return written
