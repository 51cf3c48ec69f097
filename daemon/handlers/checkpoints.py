"""`checkpoint_create`, `prompt_checkpoint`, `checkpoint_list`, `checkpoint_diff`: the
workspace to come back to.

A checkpoint covers the workspace as it is at that moment: every file that is not
ignored (the watcher's rules), or the files and directories `paths` names, whether
the journal had seen them or not. It is one `checkpoint_created` event naming its
manifest's chunks (daemon/store/manifest.py); each text file's content is a blob,
stored once however many checkpoints hold it. Taking the tree is a `TreeJob`
(daemon/handlers/treejob.py): a big workspace is taken in slices between other
requests, and unchanged files are known by their stat. `checkpoint_restore` is in
daemon/handlers/restore.py.

A harness prompt's checkpoint (`prompt_checkpoint`: its hook on UserPromptSubmit or
BeforeAgent; not an agent's tool) is a whole-workspace checkpoint named
`<agent>/turn-<n>`, n one past the agent's newest turn: the count is the journal's
(the newest prompt checkpoint is never pruned), never a file of the hook's. The
agent's prompt checkpoints beyond the newest `[prompts] keep_checkpoints` of the
config are pruned in the same commit (`checkpoints_pruned`): out of the list, their
events and every blob stay (the journal deletes no blob, so nothing another checkpoint
or event needs is lost). What bounds the journal instead is that a turn costs what
changed: the files read again, and each manifest chunk they fall in as a line delta
on its previous version (daemon/store/manifest.py; ~16 KB for 10 files changed in
100,000). The prompt's text is kept only when the config says `[prompts] store_text
= true`.
"""

from __future__ import annotations

import re
import stat
import time
from typing import Any

import msgspec

from editjournal.daemon.audit.diffs import counts, lines_of, unified
from editjournal.daemon.contract.context import Context, Progress
from editjournal.daemon.contract.outcome import Outcome
from editjournal.daemon.handlers import handles
from editjournal.daemon.handlers.treejob import LookJob, TreeJob, run_inline
from editjournal.daemon.model.checkpointbook import Checkpoint
from editjournal.daemon.settings.config import load
from editjournal.daemon.store.manifest import ManifestEntry
from editjournal.daemon.tree.compare import Comparison, within
from editjournal.daemon.writing.history import changes_since
from editjournal.schemas.errors import ErrorCode, ToolError
from editjournal.schemas.events import AnyEvent, CheckpointCreated, CheckpointsPruned
from editjournal.schemas.tools import (
    MAX_LISTED_FILES,
    CheckpointChange,
    CheckpointCreateParams,
    CheckpointCreateResult,
    CheckpointDiffParams,
    CheckpointDiffResult,
    CheckpointFile,
    CheckpointInfo,
    CheckpointListParams,
    CheckpointListResult,
    PromptCheckpointParams,
)
from editjournal.schemas.units import format_size

DIFF_BUDGET = 256 * 1024  # characters of diffs one checkpoint_diff reply carries
TURN = "/turn-"  # `claude-code:SESSION/turn-3`: the agent, then its turn


# --- create -----------------------------------------------------------------------------


@handles("checkpoint_create")
def checkpoint_create(ctx: Context, params: CheckpointCreateParams) -> Outcome:
    _check_name(ctx, params.name)
    return _create(ctx, scope_of(ctx, params.paths), params.name)


@handles("prompt_checkpoint")
def prompt_checkpoint(ctx: Context, params: PromptCheckpointParams) -> Outcome:
    """The calling session's checkpoint of its next turn (a harness hook's request)."""
    return _create(ctx, [""], None, params)


def _create(
    ctx: Context, tops: list[str], name: str | None, prompt: PromptCheckpointParams | None = None
) -> Outcome:
    """Take the tree under `tops` (in slices when it is big: the job comes back here)
    and record it: a prompt's checkpoint is named by its turn and prunes older ones."""
    job = ctx.finished if isinstance(ctx.finished, TreeJob) else TreeJob(ctx, tops, store=True)
    if ctx.finished is None and not job.try_inline(ctx):
        return Outcome(job=job)
    blobs = job.finish(ctx)
    assert job.sorted is not None
    entries = job.sorted
    absent = [t for t in tops if t and t not in job.entries and not _is_dir(ctx, t)]
    seq = ctx.next_seq
    turn = next_turn(ctx, ctx.agent) if prompt is not None else None
    default = f"checkpoint-{seq}" if turn is None else turn_name(ctx.agent, turn)
    event = CheckpointCreated(
        name=name or _free_name(ctx, default),
        manifest=[digest for digest, _ in job.manifest],
        scope=[t for t in tops if t],
        file_count=len(entries),
        total_bytes=sum(e.size for e in entries),
        not_text=sum(not e.held for e in entries),
        absent=absent,
        prompt=_kept_prompt(ctx, prompt),
    )
    pruned = _pruned(ctx, ctx.agent) if turn is not None else None
    result = _created(seq, event, entries, job, turn, pruned)
    events: list[AnyEvent] = [event] if pruned is None else [event, pruned]
    return Outcome(result, events=events, blobs=blobs)


def _created(
    seq: int,
    event: CheckpointCreated,
    entries: list[ManifestEntry],
    job: TreeJob,
    turn: int | None,
    pruned: CheckpointsPruned | None,
) -> CheckpointCreateResult:
    n, name = len(entries), event.name
    message = (
        f"Checkpoint {name!r} (id {seq}): {n} file{'s' * (n != 1)}, "
        f"{format_size(event.total_bytes)}" + _not_text_note(event.not_text)
    )
    if pruned is not None:
        message += f"; pruned {len(pruned.ids)} older (kept the newest {pruned.keep})"
    return CheckpointCreateResult(
        message=message,
        id=seq,
        name=name,
        version=seq,
        files=_listed(entries),
        absent=event.absent,
        scope=event.scope,
        file_count=n,
        total_bytes=event.total_bytes,
        not_text=event.not_text,
        read_files=job.taker.read,
        stored_bytes=job.taker.stored_bytes,
        turn=turn,
        pruned=pruned.names if pruned is not None else [],
    )


# --- a harness prompt's checkpoint -----------------------------------------------------------


def turn_name(agent: str, turn: int) -> str:
    return f"{agent}{TURN}{turn}"


def turns_of(ctx: Context, agent: str) -> list[tuple[int, Checkpoint]]:
    """The agent's prompt checkpoints still listed, by turn (oldest first)."""
    pattern = re.compile(re.escape(agent + TURN) + r"([1-9][0-9]{0,8})")
    found = []
    for checkpoint in ctx.state.checkpoints.by_id.values():
        matched = pattern.fullmatch(checkpoint.name)
        if matched is not None and checkpoint.agent == agent:
            found.append((int(matched.group(1)), checkpoint))
    return sorted(found, key=lambda pair: pair[0])


def next_turn(ctx: Context, agent: str) -> int:
    """One past the agent's newest turn (the retention always keeps the newest)."""
    turns = turns_of(ctx, agent)
    return turns[-1][0] + 1 if turns else 1


def _kept_prompt(ctx: Context, prompt: PromptCheckpointParams | None) -> str | None:
    """The prompt's text, when there is one and config.toml says to keep it."""
    if prompt is None or prompt.prompt is None:
        return None
    return prompt.prompt if load(ctx.workspace.state_dir).store_prompt_text else None


def _pruned(ctx: Context, agent: str) -> CheckpointsPruned | None:
    """The agent's prompt checkpoints beyond the newest `keep` once the one being taken
    (the newest) is in, or None when there are none."""
    keep = load(ctx.workspace.state_dir).keep_prompt_checkpoints
    older = [c for _, c in turns_of(ctx, agent)]
    doomed = older[: max(0, len(older) + 1 - keep)]
    if not doomed:
        return None
    return CheckpointsPruned(ids=[c.id for c in doomed], names=[c.name for c in doomed], keep=keep)


def scope_of(ctx: Context, paths: list[str] | None) -> list[str]:
    """The workspace-relative tops a request names ([""]: the whole workspace)."""
    if paths is None:
        return [""]
    return list(dict.fromkeys(ctx.workspace.relative(p) for p in paths))


def _is_dir(ctx: Context, rel: str) -> bool:
    info = ctx.workspace.stat(rel)  # through the file-access layer, like every look
    return info is not None and stat.S_ISDIR(info.st_mode)


def _listed(entries: list[ManifestEntry]) -> list[CheckpointFile]:
    """The first MAX_LISTED_FILES of `entries` (sorted by path)."""
    return [
        CheckpointFile(e.path, e.sha256 if e.held else "", e.size)
        for e in entries[:MAX_LISTED_FILES]
    ]


def _not_text_note(n: int) -> str:
    return f" ({n} not text: listed, not held, left alone by a restore)" if n else ""


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


# --- list -----------------------------------------------------------------------------


@handles("checkpoint_list")
def checkpoint_list(ctx: Context, params: CheckpointListParams) -> Outcome:
    checkpoints = ctx.state.checkpoints.canonical()
    lines = [_line(c) for c in checkpoints] or ["no checkpoints yet"]
    return Outcome(CheckpointListResult([info(c) for c in checkpoints], "\n".join(lines)))


def _line(checkpoint: Checkpoint) -> str:
    """`12  before-refactor  by alice  2026-11-23 12:01:02  3 files, 1.2 MB`"""
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(checkpoint.ts / 1000))
    n = checkpoint.file_count
    who = checkpoint.agent or "-"
    size = f", {format_size(checkpoint.total_bytes)}" if not checkpoint.inline else ""
    scope = f"  ({', '.join(checkpoint.scope)})" if checkpoint.scope else ""
    files = f"{n} file{'s' * (n != 1)}{size}{scope}"
    return f"{checkpoint.id:>6}  {checkpoint.name}  by {who}  {when}  {files}"


def info(checkpoint: Checkpoint) -> CheckpointInfo:
    return CheckpointInfo(
        id=checkpoint.id,
        name=checkpoint.name,
        ts=checkpoint.ts,
        agent=checkpoint.agent,
        files=[CheckpointFile(path=p, sha256=s) for p, s in checkpoint.files],
        absent=list(checkpoint.absent),
        all_files=checkpoint.all_files,
        scope=list(checkpoint.scope),
        file_count=checkpoint.file_count,
        total_bytes=checkpoint.total_bytes,
        not_text=checkpoint.not_text,
    )


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


# --- the tree against a checkpoint ----------------------------------------------------------


def checkpoint_tops(checkpoint: Checkpoint) -> list[str]:
    """What a checkpoint covers: its scope, the whole workspace, or (an old journal's)
    the files it named."""
    if checkpoint.inline:
        return sorted({p for p, _ in checkpoint.files} | set(checkpoint.absent))
    return list(checkpoint.scope) or [""]


def chosen_tops(ctx: Context, checkpoint: Checkpoint, paths: list[str] | None) -> list[str]:
    """The part of the checkpoint a restore or a diff looks at: all, or `paths` (each
    within what it covers)."""
    tops = checkpoint_tops(checkpoint)
    if paths is None:
        return tops
    inside = within(tops)
    chosen = scope_of(ctx, paths)
    for path in chosen:
        if not inside(path):
            raise ToolError(
                ErrorCode.INVALID_PARAMS,
                f"checkpoint {checkpoint.name!r} does not cover {path}: it covers "
                f"{', '.join(tops[:5]) if tops != [''] else 'the whole workspace'}"
                " - at `$.params.paths`",
                {"path": path, "checkpoint": checkpoint.id},
            )
    return chosen


def look(ctx: Context, id_or_name: str, paths: list[str] | None) -> LookJob:
    """A checkpoint against the tree: the request's job, when this is its final run
    (`ctx.finished`), else a new one (a restore and a diff start alike)."""
    if isinstance(ctx.finished, LookJob):
        return ctx.finished
    checkpoint = find(ctx, id_or_name)
    return LookJob(ctx, checkpoint, chosen_tops(ctx, checkpoint, paths))


# --- diff ---------------------------------------------------------------------------------


@handles("checkpoint_diff")
def checkpoint_diff(ctx: Context, params: CheckpointDiffParams) -> Outcome:
    job = ctx.finished
    if not isinstance(job, DiffJob):
        job = DiffJob(look(ctx, params.id_or_name, params.paths), params.patch)
        if not job.try_inline(ctx):
            return Outcome(job=job)
    found, checkpoint = job.look.finish(ctx), job.look.checkpoint
    changes, budget = [], DIFF_BUDGET
    for path in found.modified:
        change = msgspec.structs.replace(job.modified(ctx, path))  # the budget edits it
        if change.diff is not None and len(change.diff) > budget:
            change.diff, budget = None, 0
        elif change.diff is not None:
            budget -= len(change.diff)
        changes.append(change)
    changes += [CheckpointChange(p, "created") for p in found.created]
    changes += [CheckpointChange(p, "deleted") for p in found.deleted]
    changes += [CheckpointChange(p, "not_text", diff=why) for p, why in found.left_alone]
    changes.sort(key=lambda c: c.path)
    for change in changes:
        change.changed_by = job.changed_by(ctx, change.path)
    truncated = budget <= 0 and any(c.change == "modified" and c.diff is None for c in changes)
    result = CheckpointDiffResult(
        message=_diff_message(checkpoint, found),
        checkpoint=info(checkpoint),
        changes=changes,
        unchanged=len(found.unchanged),
        truncated=truncated and params.patch,
    )
    return Outcome(result)


class DiffJob:
    """A diff's long parts, a slice at a time: the tree against the checkpoint (a
    `LookJob`), then each changed file's diff and history. The final run makes again
    only those of the files the journal recorded anything of meanwhile: the diffs of
    5,000 changed files were seconds of one run."""

    def __init__(self, look: LookJob, patch: bool) -> None:
        self.look, self.patch = look, patch
        self._paths: list[str] | None = None
        self._to_diff: set[str] = set()  # the modified ones
        self._at = 0
        self._started = 0  # a record after this on a path: its diff and history made again
        self._modified: dict[str, CheckpointChange] = {}
        self._changed_by: dict[str, list[dict[str, Any]]] = {}
        self._moved: set[str] | None = None  # the final run's paths to make again

    @property
    def done(self) -> bool:
        return self._paths is not None and self._at >= len(self._paths)

    def try_inline(self, ctx: Context) -> bool:
        return run_inline(self, ctx)

    def step(self, ctx: Context, deadline: float) -> Progress:
        if not self.look.done:
            return self.look.step(ctx, deadline)
        if self._paths is None:
            found = self.look.comparison
            self._paths = [*found.modified, *found.created, *found.deleted]
            self._paths += [p for p, _ in found.left_alone]
            self._to_diff = set(found.modified)
            self._started = ctx.journal.last_seq
        while self._at < len(self._paths):
            path = self._paths[self._at]
            if path in self._to_diff:
                self._modified[path] = self._diffed(ctx, path)
            self._changed_by[path] = _history(ctx, path, self.look.checkpoint.id)
            self._at += 1
            if time.monotonic() >= deadline:
                break
        return Progress()

    def _stale(self, ctx: Context, path: str) -> bool:
        """Whether the journal recorded anything of `path` since the slices began."""
        if self._moved is None:
            self._moved = {
                record.event.path
                for record in ctx.journal.records(after_seq=self._started)
                if record.event.path is not None
            }
        return path in self._moved

    def _diffed(self, ctx: Context, path: str) -> CheckpointChange:
        return _modified(ctx, path, self.look.before[path].sha256, self.patch)

    def modified(self, ctx: Context, path: str) -> CheckpointChange:
        """A modified file's change: as the slices made it, or made now."""
        change = self._modified.get(path)
        if change is None or self._stale(ctx, path):
            change = self._modified[path] = self._diffed(ctx, path)
        return change

    def changed_by(self, ctx: Context, path: str) -> list[dict[str, Any]]:
        """Who changed `path` since the checkpoint, as the slices found it, or now."""
        found = self._changed_by.get(path)
        if found is None or self._stale(ctx, path):
            found = self._changed_by[path] = _history(ctx, path, self.look.checkpoint.id)
        return found


def _history(ctx: Context, path: str, since: int) -> list[dict[str, Any]]:
    return [c.describe() for c in changes_since(ctx, path, since)]


def _modified(ctx: Context, path: str, then: str, patch: bool) -> CheckpointChange:
    """A modified file's line counts and (with `patch`) its diff, checkpoint -> now."""
    old, new = ctx.journal.blob(then), ctx.workspace.fingerprint(path)
    if old is None or new is None:
        return CheckpointChange(path, "modified")
    added, removed = counts(lines_of(old), lines_of(new.data))
    diff = unified(old, new.data, path) if patch else None
    return CheckpointChange(path, "modified", added, removed, diff)


def _diff_message(checkpoint: Checkpoint, found: Comparison) -> str:
    tally = [
        (len(found.modified), "modified"),
        (len(found.created), "created"),
        (len(found.deleted), "deleted"),
        (len(found.left_alone), "not text, changed"),
        (len(found.unchanged), "unchanged"),
    ]
    parts = ", ".join(f"{n} {what}" for n, what in tally if n) or "no files"
    head = f"Since checkpoint {checkpoint.name!r} (id {checkpoint.id}): {parts}"
    marks = {"modified": "M", "created": "A", "deleted": "D"}
    lines = [f"  {marks[k]} {p}" for k in marks for p in getattr(found, k)]
    lines += [f"  ? {p} ({why.split(':')[0]})" for p, why in found.left_alone]
    return "\n".join([head, *sorted(lines, key=lambda line: line[4:])])
