"""`checkpoint_create`, `checkpoint_list`, `checkpoint_restore`: contents to come back to.

A checkpoint is one `checkpoint` event: each file's content by the sha256 of a
blob the journal holds, so it costs a blob per content never stored before and
nothing for the rest. A restore is a writing tool like any other: per file, a
planner on the shared writing path (`daemon.writing.path`) whose plan is
"the checkpoint's content, byte for byte" (splices only where the lines differ),
all files through `write_all`, so a file refused means nothing is written. Each
file's write is an `edit_applied` with writer `restore` (so `undo` takes it
back like any write) and one `checkpoint_restored` event after them groups them.

What it must never do: write a file itself, or change state but by its events.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from editjournal.daemon.files.textcache import Parsed
from editjournal.daemon.handlers import Context, Link, Outcome, handles
from editjournal.daemon.model.checkpointbook import Checkpoint
from editjournal.daemon.text.edit import EditPlan, Splice
from editjournal.daemon.text.revert import diff_plan
from editjournal.daemon.writing.history import changes_since, document
from editjournal.daemon.writing.path import ANCHOR_STALE, Planned, Stale, Writer, Written, write_all
from editjournal.daemon.writing.stale import named
from editjournal.daemon.writing.target import EMPTY_SHA256, Target, open_target
from editjournal.schemas.errors import ErrorCode, ToolError
from editjournal.schemas.events import (
    AnyEvent,
    CheckpointCreated,
    CheckpointRestored,
    EditApplied,
    OutsideChangeRecorded,
)
from editjournal.schemas.tools import (
    CheckpointCreateParams,
    CheckpointCreateResult,
    CheckpointFile,
    CheckpointInfo,
    CheckpointListParams,
    CheckpointListResult,
    CheckpointRestoreParams,
    CheckpointRestoreResult,
    RestoredFile,
)

WRITER = "restore"
SHOWN_CHANGES = 3  # newest changes a restored file's line names (the reply has them all)


# --- create and list -------------------------------------------------------------------------


@handles("checkpoint_create")
def checkpoint_create(ctx: Context, params: CheckpointCreateParams) -> Outcome:
    _check_name(ctx, params.name)
    explicit = params.paths is not None
    paths = params.paths if params.paths is not None else _known(ctx)
    targets, skipped = _targets(ctx, paths, explicit)
    noticed = [event for target in targets for event in target.noticed]
    seq = ctx.next_seq + len(noticed)
    name = params.name or _free_name(ctx, f"checkpoint-{seq}")
    kept = [t for t in targets if t.exists]
    files = {t.path: t.snap.sha256 for t in kept}
    absent = [t.path for t in targets if not t.exists] if explicit else []
    event = CheckpointCreated(name=name, files=files, absent=absent, all_files=not explicit)
    blobs = {t.snap.sha256: t.snap.data for t in kept if not ctx.journal.has_blob(t.snap.sha256)}
    n = len(files)
    result = CheckpointCreateResult(
        message=f"Checkpoint {name!r} (id {seq}): {n} file{'s' * (n != 1)}",
        id=seq,
        name=name,
        version=seq,
        files=[CheckpointFile(path=p, sha256=s) for p, s in sorted(files.items())],
        absent=absent,
        skipped=skipped,
    )
    warnings = [f"{s['path']} not in the checkpoint: {s['message']}" for s in skipped]
    return Outcome(result, events=[*noticed, event], blobs=blobs, warnings=warnings)


@handles("checkpoint_list")
def checkpoint_list(ctx: Context, params: CheckpointListParams) -> Outcome:
    checkpoints = ctx.state.checkpoints.canonical()
    lines = [_line(c) for c in checkpoints] or ["no checkpoints yet"]
    return Outcome(CheckpointListResult([info(c) for c in checkpoints], "\n".join(lines)))


def _line(checkpoint: Checkpoint) -> str:
    """`12  before-refactor  by alice  2026-11-23 12:01:02  3 files`"""
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(checkpoint.ts / 1000))
    n = len(checkpoint.files)
    who = checkpoint.agent or "-"
    return f"{checkpoint.id:>6}  {checkpoint.name}  by {who}  {when}  {n} file{'s' * (n != 1)}"


def info(checkpoint: Checkpoint) -> CheckpointInfo:
    return CheckpointInfo(
        id=checkpoint.id,
        name=checkpoint.name,
        ts=checkpoint.ts,
        agent=checkpoint.agent,
        files=[CheckpointFile(path=p, sha256=s) for p, s in checkpoint.files],
        absent=list(checkpoint.absent),
        all_files=checkpoint.all_files,
    )


def _check_name(ctx: Context, name: str | None) -> None:
    if name is None:
        return
    if name.removeprefix("#").isdigit():
        raise ToolError(
            ErrorCode.INVALID_PARAMS,
            f"checkpoint name {name!r} reads as an id (a seq): give a name with a letter in it"
            " - at `$.params.name`",
        )
    taken = ctx.state.checkpoints.by_name.get(name)
    if taken is not None:
        raise ToolError(
            ErrorCode.CHECKPOINT_EXISTS,
            f"a checkpoint named {name!r} exists already (id {taken}); names are unique",
            {"name": name, "id": taken},
        )


def _free_name(ctx: Context, wanted: str) -> str:
    """`wanted`, or with a suffix if someone chose that name for another checkpoint."""
    taken, name, n = ctx.state.checkpoints.by_name, wanted, 1
    while name in taken:
        n += 1
        name = f"{wanted}.{n}"
    return name


def _known(ctx: Context) -> list[str]:
    """Every file the journal knows that exists (as far as it knows)."""
    return sorted(path for path, known in ctx.state.files.items() if known.sha256 is not None)


def _targets(
    ctx: Context, paths: list[str], explicit: bool
) -> tuple[list[Target], list[dict[str, Any]]]:
    """Each file as it is now (an outside change noticed on the way); a known file that
    cannot be taken (binary now, too large, ...) is skipped, a named one is an error."""
    targets: dict[str, Target] = {}
    skipped: list[dict[str, Any]] = []
    for path in paths:
        try:
            target = open_target(ctx, path, missing_ok=True)
        except ToolError as e:
            if explicit:
                raise
            skipped.append({"path": path, "code": e.code.value, "message": e.message})
            continue
        targets.setdefault(target.path, target)
    return list(targets.values()), skipped


# --- restore ---------------------------------------------------------------------------------


@handles("checkpoint_restore")
def checkpoint_restore(ctx: Context, params: CheckpointRestoreParams) -> Outcome:
    checkpoint = find(ctx, params.id_or_name)
    plan = _RestorePlan(ctx, checkpoint, params.remove_new)
    for path in _scope(ctx, checkpoint, params.paths):
        plan.consider(path)
    outcome = write_all(plan.jobs, [])
    outcome.events[:0] = plan.noticed  # files left alone: their outside changes still count
    if outcome.error is not None:
        return outcome
    return plan.finish(outcome)


def find(ctx: Context, id_or_name: str) -> Checkpoint:
    found = ctx.state.checkpoints.find(id_or_name.strip())
    if found is None:
        known = [c.name for c in ctx.state.checkpoints.canonical()][-10:]
        raise ToolError(
            ErrorCode.CHECKPOINT_NOT_FOUND,
            f"no checkpoint has the id or name {id_or_name!r}"
            + (f"; the latest are: {', '.join(known)}" if known else "; there are none yet"),
            {"id_or_name": id_or_name, "checkpoints": known},
        )
    return found


def _scope(ctx: Context, checkpoint: Checkpoint, paths: list[str] | None) -> list[str]:
    """The files a restore considers: the checkpoint's, and those new since it."""
    contents = checkpoint.contents
    new = set(checkpoint.absent)
    if checkpoint.all_files:
        new |= {p for p in _known(ctx) if p not in contents and _new_since(ctx, p, checkpoint.id)}
    if paths is None:
        return sorted(contents.keys() | new)
    chosen = list(dict.fromkeys(ctx.workspace.relative(p) for p in paths))
    for path in chosen:
        if path not in contents and path not in new:
            raise ToolError(
                ErrorCode.INVALID_PARAMS,
                f"checkpoint {checkpoint.name!r} does not cover {path}: it did not take that"
                " file, and the journal does not show it was created since - at"
                " `$.params.paths`",
                {"path": path, "checkpoint": checkpoint.id},
            )
    return chosen


def _new_since(ctx: Context, path: str, seq: int) -> bool:
    """Whether the journal shows `path` did not exist at `seq`: deleted by then, or unknown
    then and created after (a tool's write to no file, an outside creation). A file that
    existed without the journal knowing it is never "new", so never removed."""
    for record in ctx.journal.records(path=path, until_seq=seq, newest_first=True):
        event = record.event
        if event.changes_content or event.content_sha256 is not None:
            return event.content_sha256 is None
    after = (r.event for r in ctx.journal.records(path=path, after_seq=seq))
    first = next((e for e in after if e.changes_content), None)
    if isinstance(first, EditApplied):
        return first.before_sha256 == EMPTY_SHA256 and first.lines_before == 0
    return isinstance(first, OutsideChangeRecorded) and first.change == "created"


@dataclass
class _RestorePlan:
    """What one restore does to each file, gathered before anything is written."""

    ctx: Context
    checkpoint: Checkpoint
    remove_new: bool
    jobs: list[tuple[Target, Writer]] = field(default_factory=list)
    noticed: list[AnyEvent] = field(default_factory=list)  # of the files left alone
    kept_new: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)

    def consider(self, path: str) -> None:
        target = open_target(self.ctx, path, missing_ok=True)
        wanted = self.checkpoint.contents.get(target.path)
        if wanted == _present(target):  # (None == None: new since, and gone again)
            self.unchanged.append(target.path)
        elif wanted is None and not self.remove_new:
            self.kept_new.append(target.path)
        else:
            self.jobs.append((target, _Restore(self.checkpoint, wanted)))
            return
        self.noticed.extend(target.noticed)

    def finish(self, outcome: Outcome) -> Outcome:
        """The grouping event, and the report: each file's write at its seq."""
        at = {e.path: i for i, e in enumerate(outcome.events) if isinstance(e, EditApplied)}
        written: list[Written] = outcome.result
        # the reply's versions (the seqs these events will get: one thread stages in order)
        files = [
            self._report(w, self.ctx.next_seq + at[w.target.path], outcome.events) for w in written
        ]
        removed = [f.path for f in files if f.action == "removed"]
        event = CheckpointRestored(
            checkpoint=self.checkpoint.id, name=self.checkpoint.name, files=dict.fromkeys(at, 0),
            removed=removed, kept_new=self.kept_new, unchanged=self.unchanged,
        )  # fmt: skip
        outcome.events.append(event)
        grouping = len(outcome.events) - 1
        outcome.links.extend(Link(grouping, "files", i, key=path) for path, i in at.items())
        outcome.result = CheckpointRestoreResult(
            message=self._message(files),
            checkpoint=info(self.checkpoint),
            version=self.ctx.next_seq + len(outcome.events) - 1,
            files=files,
            kept_new=self.kept_new,
            unchanged=self.unchanged,
        )
        if self.kept_new:
            outcome.warnings.append(
                f"kept {len(self.kept_new)} file(s) created since the checkpoint"
                f" ({', '.join(self.kept_new[:5])}): pass remove_new to remove them"
            )
        return outcome

    def _report(self, written: Written, seq: int, events: list[AnyEvent]) -> RestoredFile:
        target = written.target
        removed, created = written.planned.delete, not target.exists
        since = [c.describe() for c in changes_since(self.ctx, target.path, self.checkpoint.id)]
        since += [
            {"seq": self.ctx.next_seq + i, "agent": None, "kind": e.kind, "ts": None}
            for i, e in enumerate(events)
            if e.path == target.path and e.changes_content and not isinstance(e, EditApplied)
        ]
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

    def _message(self, files: list[RestoredFile]) -> str:
        counts = {
            a: sum(f.action == a for f in files) for a in ("restored", "recreated", "removed")
        }
        parts = [f"{n} {a}" for a, n in counts.items() if n]
        parts += [f"{len(self.unchanged)} unchanged"] if self.unchanged else []
        parts += [f"{len(self.kept_new)} new kept"] if self.kept_new else []
        cp = self.checkpoint
        head = f"Restored checkpoint {cp.name!r} (id {cp.id}): {', '.join(parts) or 'no files'}"
        return "\n".join([head, *map(_file_line, files)])


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
