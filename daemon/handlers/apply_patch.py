"""`apply_patch`: OpenAI's patch envelope (Codex's "V4A"), many files, all or nothing.

The text is parsed by the pure engine (`daemon.text.v4a`, or one operation at a
time in the Responses API's shape) and each file operation becomes a planner on
the shared writing path; all of them go through `write_all`, so one refused
operation refuses the whole patch and no file changes. An update is found by its
context and `@@` headers, never by a position (`daemon.text.v4a_apply`): in the
file as it is, or, when its text is no longer there, in the agent's snapshot,
from which the writing path carries it over what others changed since — or
refuses it, naming who changed the lines it relies on and handing over the delta.
A move is the old path removed (`moved_to`) and the new one written
(`moved_from`), two events of one commit, so history and blame follow the file.
An Add File or a move onto a file the agent saw and someone changed since is
refused the same way; onto one it never saw, it overwrites (as Codex does) and
says whose changes it replaced. A whole new content (an Add File over an existing
file) takes that file's line endings and BOM, as every writer here keeps them
(Codex writes the text as given); a move onto its own path is an update in place
(Codex loses the file).

A patch of more than `SLICED_FROM_OPERATIONS` operations is planned a slice at a
time between other requests (a `PatchJob`, daemon/handlers/patchjob.py): its paths
resolved and claimed, then its files read and planned, in the slices; the plans
merged all or nothing by the final run, whose reply is the one the inline path
gives. A patch with a move (`*** Move to:`) is planned at once, as before: its new
path's planner is made from its old path's plan, in the same run.

What it must never do: write a file itself, or plan a file from another
operation's result (but a move's new path, from its old path's).
"""

from __future__ import annotations

import os
import posixpath
import re
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from editjournal.daemon.contract.context import Context
from editjournal.daemon.contract.outcome import Outcome
from editjournal.daemon.handlers import handles
from editjournal.daemon.handlers.aheadjob import planned_in_slices
from editjournal.daemon.handlers.patchjob import PatchJob
from editjournal.daemon.settings.limits import check_hunks, hunk_headers
from editjournal.daemon.text.edit import EditPlan, Splice
from editjournal.daemon.text.lines import Document
from editjournal.daemon.text.rebase import relied
from editjournal.daemon.text.safety import quoting
from editjournal.daemon.text.v4a import (
    AddFile,
    DeleteFile,
    Operation,
    Patch,
    PatchParseError,
    UpdateFile,
    operation_of,
    parse,
    render,
)
from editjournal.daemon.text.v4a_apply import ChunkNotFound, UpdatePlan, plan_update
from editjournal.daemon.writing.guards import (
    overwrite_refusal,
    overwrite_warning,
    overwritten_unseen,
)
from editjournal.daemon.writing.history import Base, changes_since
from editjournal.daemon.writing.located import located
from editjournal.daemon.writing.path import Planned, Stale, Writer, Written, write_all
from editjournal.daemon.writing.target import Target, open_target
from editjournal.schemas.errors import ErrorCode, ToolError
from editjournal.schemas.events import EditApplied
from editjournal.schemas.suggestions import call
from editjournal.schemas.tools import (
    ApplyPatchParams,
    ApplyPatchResult,
    AutoCorrection,
    ChunkLanding,
    PatchedFile,
)

WRITER = "apply_patch"
STALE = Stale(ErrorCode.ANCHOR_STALE, "hunk")
OVERWRITE_HINT = "read a file before you replace it"
LETTERS = {"added": "A", "updated": "M", "moved": "M", "deleted": "D"}  # as Codex reports
Action = Literal["added", "updated", "moved", "deleted"]
# a patch of more operations is planned a slice at a time (daemon/handlers/patchjob.py):
# ~1-2 ms a file, so 64 planned at once are ~100 ms; 1,000 held the thread 1-2 s
SLICED_FROM_OPERATIONS = 64
# a patch of this many is parked without the inline try: it cannot finish within it,
# and its parse has taken part of the turn already (the slices plan every file)
PARKED_FROM_OPERATIONS = 256


@handles("apply_patch")
@planned_in_slices
def apply_patch(ctx: Context, params: ApplyPatchParams) -> Outcome:
    _refuse_read_only(ctx, params)  # before parsing: a refused 7 MB patch costs O(files)
    job = ctx.finished
    if not isinstance(job, PatchJob):
        patch = _patch_of(params)
        job = _sliced(patch, params.workdir, params.skip_safety_check)
        if job is None:
            return _at_once(ctx, params, patch)
        if len(patch.operations) >= PARKED_FROM_OPERATIONS or not job.try_inline(ctx):
            return Outcome(job=job)
    if job.unsliced:  # a path it refused: the refusal is the inline path's, word for word
        return _at_once(ctx, params, Patch(tuple(job.operations)))
    outcome = job.outcome(ctx)
    return outcome if outcome.job is not None else _reported(ctx, outcome)


def _at_once(ctx: Context, params: ApplyPatchParams, patch: Patch) -> Outcome:
    """Every file read and planned in this run, all or nothing."""
    steps = _steps(ctx, patch, params.workdir, params.skip_safety_check)
    return _reported(ctx, write_all(_jobs(steps), []))


def _reported(ctx: Context, outcome: Outcome) -> Outcome:
    if outcome.error is None:
        outcome.result = _report(ctx, outcome)
    return outcome


# --- the request: a patch, its operations, their files ----------------------------------------


def _patch_of(params: ApplyPatchParams) -> Patch:
    """The operations, from the envelope text or the Responses API's list; a parse
    error names the line (and, for the list, the operation)."""
    if (params.patch is None) == (params.operations is None):
        given = "both" if params.patch is not None else "neither"
        raise ToolError(
            ErrorCode.INVALID_PARAMS,
            f"{given} of patch and operations given: pass patch (the text from"
            " '*** Begin Patch' to '*** End Patch') or operations (the Responses API's"
            " create_file / update_file / delete_file list), one of them",
        )
    field = "patch" if params.patch is not None else "operations"
    texts = (
        [params.patch] if params.patch is not None else [op.diff for op in params.operations or ()]
    )
    check_hunks(sum(hunk_headers(text) for text in texts if text), field)  # before parsing
    if params.patch is not None:
        try:
            patch = parse(params.patch)
        except PatchParseError as e:
            raise _invalid(f"line {e.line} of the patch: {e.message}", {"line": e.line}) from e
    else:
        patch = Patch(tuple(_operation(n, op) for n, op in enumerate(params.operations or (), 1)))
    if not patch.operations:
        raise _invalid("the patch has no operation: nothing to apply", {})
    check_hunks(sum(len(op.chunks) for op in patch.operations if isinstance(op, UpdateFile)), field)
    return patch


# an operation's header (and a move's new path) as a line of the envelope text
_NAMED_PATH = re.compile(
    r"^\*\*\*\s*(?:(Add|Delete|Update) File|Move to):[ \t]*(.*?)[ \t\r]*$", re.MULTILINE
)


def _refuse_read_only(ctx: Context, params: ApplyPatchParams) -> None:
    """`read_only_file` for a patch that would change a file without a write bit,
    judged on the paths its headers name before the patch is parsed (one stat each, as
    every writer checks the mode before planning): a refused 7.7 MB patch held the
    thread 1.42 s parsing and planning an Add File it was never going to write. Any
    other problem of a path (outside the workspace, say) is left to the full check,
    which names it in its operation."""
    root = str(ctx.workspace.root)
    for number, kind, path in _named_paths(params):
        if not _maybe_read_only(root, _joined(params.workdir, path)):
            continue
        try:
            ctx.workspace.check_may_replace(_joined(params.workdir, path))
        except ToolError as e:
            if e.code is not ErrorCode.READ_ONLY_FILE:
                continue
            e.message = (
                f"operation {number} (*** {kind} File: {path}): {e.message}"
                " (nothing was written: all files or none)"
            )
            e.details = {"operation": number, "path": path, **e.details}
            raise


def _maybe_read_only(root: str, path: str) -> bool:
    """Whether the mode check may refuse `path`: a regular file without a write bit, by
    one `lstat` of its lexical spelling. Only those pay for the check's confinement
    judgement (~0.1 ms a path: 1,000 paths held the thread 125-220 ms each run of a
    sliced patch); a file this misses (a spelling through a link, say) is still
    refused by the writing path's own check before it is planned."""
    try:
        info = os.lstat(os.path.normpath(os.path.join(root, path)))
    except (FileNotFoundError, NotADirectoryError):
        return False  # no file: nothing to refuse (a new file's, an Add File's)
    except (OSError, ValueError):
        return True  # not judged here: the full check decides
    return not (stat.S_ISREG(info.st_mode) and info.st_mode & 0o222)


def _named_paths(params: ApplyPatchParams) -> Iterator[tuple[int, str, str]]:
    """(operation number, kind, path) of every path the patch would change, its
    operations' and their moves' new paths, read from the headers without parsing."""
    if params.operations is not None:
        kinds = {"create_file": "Add", "update_file": "Update", "delete_file": "Delete"}
        for number, op in enumerate(params.operations, 1):
            kind = kinds.get(op.type, "Update")
            yield from ((number, kind, p) for p in (op.path, op.move_to) if p)
        return
    number, kind = 0, "Update"
    for found in _NAMED_PATH.finditer(params.patch or ""):
        if found.group(1) is not None:
            number, kind = number + 1, found.group(1)
        if found.group(2):
            yield number, kind, found.group(2)


def _operation(number: int, op: Any) -> Operation:
    try:
        return operation_of(op.type, op.path, op.diff, op.move_to)
    except PatchParseError as e:
        where = f"operation {number} ({op.type} {op.path}), line {e.line} of its diff"
        raise _invalid(f"{where}: {e.message}", {"operation": number, "line": e.line}) from e


def _invalid(message: str, details: dict[str, Any]) -> ToolError:
    return ToolError(
        ErrorCode.INVALID_DIFF,
        f"Invalid patch: {message}; nothing was written",
        details,
        "the format: '*** Begin Patch', then '*** Add File: PATH' (+ lines), '*** Delete File:"
        " PATH' or '*** Update File: PATH' (@@ hunks of ' ', '-', '+' lines), then '*** End"
        " Patch'",
    )


@dataclass
class _Move:
    """A move's new path, and the content its old path's update planned (set once that
    planner's write was accepted: the new path is written from it); then what writing
    the new path replaced that the agent never saw (the move is reported as one file,
    under the old path's planner, so the new path's planner leaves it here)."""

    source: str  # the old path, workspace-relative
    target: Target  # the new path as the request found it
    doc: Document | None = None
    overwrote: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class _Step:
    """One operation, its file as the request found it, and its planner."""

    number: int
    operation: Operation
    target: Target
    writer: Writer
    move: _Move | None = None


def _steps(ctx: Context, patch: Patch, workdir: str | None, skip_safety_check: bool) -> list[_Step]:
    """Each operation with its file(s) read, before anything is planned: a path that
    cannot be read refuses the patch at once, naming its operation."""
    touched: dict[str, int] = {}
    steps = []
    for number, op in enumerate(patch.operations, 1):
        target = _opened(ctx, number, op, _joined(workdir, op.path))
        _claim(touched, target.path, number)
        move_to = op.move_to if isinstance(op, UpdateFile) else None
        if move_to is not None:
            move_to = _relative(ctx, number, op, _joined(workdir, move_to))
        if move_to is None or move_to == target.path:
            writer = _writer(number, op, skip_safety_check)
            steps.append(_Step(number, op, target, writer))
            continue
        move = _Move(target.path, _opened(ctx, number, op, move_to))
        _claim(touched, move.target.path, number)
        update = _Update(number, op, skip_safety_check, move=move)
        steps.append(_Step(number, op, target, update, move))
    return steps


def _sliced(patch: Patch, workdir: str | None, skip_safety_check: bool) -> PatchJob | None:
    """A job resolving and planning the patch's files a slice at a time, for a patch
    of more than `SLICED_FROM_OPERATIONS` operations; None: planned at once, by
    `_steps`. A patch with a move is planned at once (its new path's planner is made
    from its old path's plan, in the same run)."""
    operations = patch.operations
    if len(operations) <= SLICED_FROM_OPERATIONS:
        return None
    if any(isinstance(op, UpdateFile) and op.move_to is not None for op in operations):
        return None
    return PatchJob(operations, _SlicedFiles(workdir, skip_safety_check))


@dataclass
class _SlicedFiles:
    """A sliced patch's operations' files, resolved, claimed and opened as `_steps`
    does it (`patchjob.Operations`)."""

    workdir: str | None
    skip_safety_check: bool
    touched: dict[str, int] = field(default_factory=dict)

    def claim(self, ctx: Context, number: int, op: Operation) -> str:
        path = _relative(ctx, number, op, _joined(self.workdir, op.path))
        _claim(self.touched, path, number)
        return path

    def open(self, ctx: Context, number: int, op: Operation, path: str) -> tuple[Target, Writer]:
        """`_opened`'s open, of a path `claim` judged already (~0.1 ms a path)."""
        try:
            target = open_target(ctx, path, missing_ok=True)
        except ToolError as e:
            raise _named(e, number, op) from None
        return target, _writer(number, op, self.skip_safety_check)


def _joined(workdir: str | None, path: str) -> str:
    """A patch's path from its working directory (absolute paths stay as they are: the
    workspace takes one inside it and refuses any other)."""
    return posixpath.join(workdir, path) if workdir else path


def _opened(ctx: Context, number: int, op: Operation, path: str) -> Target:
    relative = _relative(ctx, number, op, path)
    try:
        return open_target(ctx, relative, missing_ok=True)
    except ToolError as e:
        raise _named(e, number, op) from None


def _relative(ctx: Context, number: int, op: Operation, path: str) -> str:
    """The path, workspace-relative; one the workspace refuses (outside it, say) refuses
    the patch naming its operation, a `*** Move to:` path as much as the one it moves."""
    try:
        return ctx.workspace.file_relative(path)
    except ToolError as e:
        raise _named(e, number, op) from None


def _claim(touched: dict[str, int], path: str, number: int) -> None:
    """One operation per file: each is planned against the file as it is, not as an
    earlier operation of the same patch would leave it."""
    first = touched.setdefault(path, number)
    if first != number:
        raise ToolError(
            ErrorCode.INVALID_PARAMS,
            f"operations {first} and {number} both change {path}: put every change to a file"
            " in one operation (a patch is planned against the files as they are); nothing"
            " was written",
            {"operations": [first, number], "path": path},
        )


def _writer(number: int, op: Operation, skip_safety_check: bool) -> Writer:
    if isinstance(op, AddFile):
        return _Add(number, op, skip_safety_check)
    if isinstance(op, DeleteFile):
        return _Delete(number, op, skip_safety_check)
    return _Update(number, op, skip_safety_check)


def _jobs(steps: Sequence[_Step]) -> Iterator[tuple[Target, Writer]]:
    """The planners in order; a move's new path once its old path's update was planned
    (when it was refused, the patch is refused anyway: the new path is not planned)."""
    for step in steps:
        yield step.target, step.writer
        move = step.move
        if move is not None and move.doc is not None:
            yield move.target, _MovedIn(step.number, step.operation, move=move)


# --- the planners ------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Planner:
    """What every operation's planner shares: its journal record, its refusals' words
    (which operation, which file) and its reply (the Written, which the handler reports
    once every file's seq is known)."""

    number: int
    operation: Operation
    skip: bool = False
    name: str = WRITER
    stale: Stale = STALE

    @property
    def skip_safety_check(self) -> bool:
        return self.skip

    @property
    def operations(self) -> list[dict[str, Any]]:
        """The operation as envelope text (an added file's content is its written blob)."""
        op, number = self.operation, self.number
        if isinstance(op, AddFile):
            return [{"op": WRITER, "operation": number, "add": op.path, "size": len(op.content)}]
        return [{"op": WRITER, "operation": number, "patch": render(op)}]

    def explain(self, target: Target, error: ToolError) -> ToolError:
        return _named(error, self.number, self.operation, target.path)

    def result(self, written: Written) -> Any:
        return (self, written)


def _named(error: ToolError, number: int, op: Operation, path: str | None = None) -> ToolError:
    """The refusal, saying which operation of the patch it is about."""
    error.message = f"operation {number} ({_header(op)}): {error.message}"
    error.details = {"operation": number, "path": path or op.path, **error.details}
    return error


def _header(op: Operation) -> str:
    kind = (
        "Add" if isinstance(op, AddFile) else "Delete" if isinstance(op, DeleteFile) else "Update"
    )
    return f"*** {kind} File: {op.path}"


@dataclass(frozen=True)
class _Add(_Planner):
    """A new file (or, as in Codex, a whole new content for an existing one)."""

    @property
    def skip_safety_check(self) -> bool:
        return True  # the whole content is the agent's: no neighbouring lines to check

    def plan(self, target: Target) -> Planned:
        assert isinstance(self.operation, AddFile)
        return _replaced(target, _lines_of(self.operation.content), "Add File")


def _lines_of(content: str) -> tuple[str, ...]:
    return tuple(content.removesuffix("\n").split("\n")) if content else ()


def _replaced(target: Target, lines: tuple[str, ...], what: str) -> Planned:
    """The whole file replaced by `lines`: refused when the agent saw an older content
    (someone changed it since), said when it never saw what it replaces."""
    warnings: tuple[str, ...] = ()
    overwrote: list[dict[str, Any]] = []
    if target.exists and target.doc.line_count:
        _refuse_changed_since_seen(target, what)
        found = overwritten_unseen(target)
        if found is not None:
            overwrote = found
            warnings = (overwrite_warning(target, found, what, OVERWRITE_HINT),)
    splice = Splice(0, "replace", 0, target.doc.line_count, lines, ())
    plan = EditPlan((splice,), warnings=warnings)
    return Planned(plan, final_newline=True, reply={"overwrote_unseen": overwrote})


@dataclass(frozen=True)
class _Delete(_Planner):
    def plan(self, target: Target) -> Planned:
        if not target.exists:
            raise ToolError(
                ErrorCode.FILE_NOT_FOUND,
                f"{target.path} does not exist: there is nothing to delete",
                {"path": target.path},
            )
        _refuse_changed_since_seen(target, "Delete File")
        found = overwritten_unseen(target)
        warnings: tuple[str, ...] = ()
        if found is not None:
            warnings = (overwrite_warning(target, found, "Delete File", OVERWRITE_HINT),)
        splice = Splice(0, "delete", 0, target.doc.line_count, (), ())
        return Planned(EditPlan((splice,), warnings=warnings), delete=True)


@dataclass(frozen=True)
class _Update(_Planner):
    """Hunks found by their context: in the file as it is, or in the agent's snapshot
    (carried by the writing path over what changed since). With `move`, the planned
    content goes to the new path and this one is removed."""

    move: _Move | None = None

    @property
    def plans_ahead(self) -> bool:
        """A big file's update is planned in a job (daemon.writing.ahead); a move's is
        not: its plan hands the new path its content as it is made."""
        return self.move is None

    @property
    def weight(self) -> int:
        """Its chunks: a heavy update is parked at once (daemon/handlers/aheadjob.py)."""
        return len(self.operation.chunks) if isinstance(self.operation, UpdateFile) else 1

    def plan(self, target: Target) -> Planned:
        assert isinstance(self.operation, UpdateFile)
        if not target.exists:
            raise ToolError(
                ErrorCode.FILE_NOT_FOUND,
                f"{target.path} does not exist: Update File changes an existing file (Add"
                " File creates one)",
                {"path": target.path},
            )
        planned = _located(target, self.operation)
        if self.move is not None:
            planned = replace(planned, moved_to=self.move.target.path)
        return planned

    def result(self, written: Written) -> Any:
        """Accepted: a move's new path is planned from this content next."""
        if self.move is not None:
            self.move.doc = written.doc
        return (self, written)


def _located(target: Target, op: UpdateFile) -> Planned:
    """Every hunk found where the text writers' search finds them
    (`daemon.writing.located`: the current content, the agent's view, the text alone);
    else the stale refusal an older version it was given explains, or the first hunk
    not found in the current content. A hunk whose context another agent copied
    elsewhere (or that a looser match finds elsewhere) goes where the agent's view
    has it."""

    missing: list[ChunkNotFound] = []  # why the current content does not hold them

    def plan_in(base: Base | None) -> Planned | None:
        lines = target.doc.lines if base is None else base.doc.lines
        try:
            return _hunks(plan_update(lines, op), lines, base)
        except ChunkNotFound as e:
            if base is None:
                missing.append(e)
            return None

    planned = located(target, plan_in)
    if planned is not None:
        return planned
    stale = target.stale_from_given(lambda given: _found_in(given, op), STALE.part, STALE.code)
    raise stale or _no_match(missing[0], target.path)


def _found_in(base: Base, op: UpdateFile) -> tuple[EditPlan, tuple[int, ...]] | None:
    """The hunks planned in an older version the agent was given, if they are all there."""
    try:
        planned = _hunks(plan_update(base.doc.lines, op), base.doc.lines, base)
    except ChunkNotFound:
        return None
    return planned.plan, planned.context


def _spans(splice: Splice, line_count: int) -> list[tuple[int, int]]:
    """The lines one hunk's change relies on (`text.rebase.relied`), as a span."""
    lines = relied(splice, line_count)
    return [(lines[0], lines[-1])] if lines else []


def _hunks(found: UpdatePlan, lines: Sequence[str], base: Base | None) -> Planned:
    """Each run of removed and added lines as a splice of the content the hunks were
    found in (`lines`); the rest of each block is context (it only found the place, and
    shows the safety check what the agent quoted around each change)."""
    context: list[int] = []
    for land in found.landings:
        changed = {n for c in land.changes for n in range(c.start, c.end)}
        context.extend(n + 1 for n in range(land.start, land.end) if n not in changed)
    quoted = {n - 1 for n in context}
    splices = [
        quoting(
            Splice(
                land.chunk - 1,
                "hunk",
                c.start,
                c.end,
                c.new_lines,
                tuple(range(c.start + 1, c.end + 1)),
            ),
            lines,
            quoted,
        )
        for land in found.landings
        for c in land.changes
    ]
    plan = EditPlan(tuple(sorted(splices, key=lambda s: (s.start, s.end, s.index))))
    hunks = [land.chunk for land in found.landings]
    return Planned(plan, base, tuple(context), True, reply={"hunks": hunks}, by_text=True)


@dataclass(frozen=True)
class _MovedIn(_Planner):
    """A move's new path: the content its old path's update planned, byte for byte."""

    move: _Move | None = None

    @property
    def skip_safety_check(self) -> bool:
        return True  # the old path's write was checked: this is the same content

    def plan(self, target: Target) -> Planned:
        assert self.move is not None and self.move.doc is not None
        doc = self.move.doc
        planned = _replaced(target, doc.lines, "the move")
        return replace(planned, document=doc, final_newline=None, moved_from=self.move.source)

    def result(self, written: Written) -> Any:
        """Reported with the old path's update, which takes what this write replaced."""
        assert self.move is not None
        self.move.overwrote = list(written.planned.reply.get("overwrote_unseen", []))
        return None


def _refuse_changed_since_seen(target: Target, what: str) -> None:
    """`anchor_stale` when the agent saw this file and someone changed it since: a whole
    replacement (or a removal) would lose their lines, which it never saw. (A file it
    never saw is replaced, as Codex replaces it, with a warning.)"""
    ctx = target.ctx
    seen = ctx.state.snapshots.get((ctx.agent, target.path))
    if seen is None or seen.sha256 == target.snap.sha256:
        return
    since = changes_since(ctx, target.path, seen.version, target.noticed)
    raise overwrite_refusal(target, what, [c.describe() for c in since])


def _no_match(missing: ChunkNotFound, path: str) -> ToolError:
    header = f" (@@ {missing.header})" if missing.header else ""
    since = f" from line {missing.after + 1} on" if missing.after else ""
    nearest = [{"line": n, "text": text} for n, text in missing.nearest]
    hint = ""
    if missing.nearest:
        hint = "; most similar: " + ", ".join(f"line {n} {t!r}" for n, t in missing.nearest)
    return ToolError(
        ErrorCode.NO_MATCH,
        f"hunk {missing.hunk}{header}: line {missing.unmatched!r} is not in the file{since}"
        f"{hint}: read the file and make the hunk's context and '-' lines match it exactly",
        {
            "hunk": missing.hunk,
            "header": missing.header,
            "unmatched": missing.unmatched,
            "searched_from_line": missing.after + 1,
            "nearest": nearest,
        },
        f"read the file ({call('read_file', path=path)}) and copy the hunk's context and -"
        " lines from it exactly"
        + (" (details.nearest has the most similar lines)" if nearest else ""),
    )


# --- the reply ---------------------------------------------------------------------------------


def _report(ctx: Context, outcome: Outcome) -> ApplyPatchResult:
    """Each file written, at the seq its event gets (one thread stages in order)."""
    seq_of = {
        e.path: ctx.next_seq + i for i, e in enumerate(outcome.events) if isinstance(e, EditApplied)
    }
    files = [
        _file(planner, w, seq_of) for planner, w in (r for r in outcome.result if r is not None)
    ]
    lines = [f"{LETTERS[f.action]} {f.path}" for f in files]
    message = "Success. Updated the following files:\n" + "\n".join(lines)
    return ApplyPatchResult(message=message, files=files)


def _file(planner: _Planner, written: Written, seq_of: dict[str, int]) -> PatchedFile:
    target, planned = written.target, written.planned
    path, moved_from = target.path, None
    if planned.moved_to is not None:
        path, moved_from = planned.moved_to, target.path
    action = _action(planner, planned)
    base = planned.against
    overwrote = list(planned.reply.get("overwrote_unseen", []))
    if isinstance(planner, _Update) and planner.move is not None:
        overwrote = planner.move.overwrote  # replaced at the new path, not the old one
    removed = action == "deleted"
    return PatchedFile(
        path=path,
        action=action,
        version=seq_of[path],
        sha256=None if removed else written.sha256,
        lines_before=target.doc.line_count,
        lines_after=0 if removed else written.doc.line_count,
        diff="" if removed else written.diff,
        anchors_valid_through=written.valid_through,
        moved_from=moved_from,
        hunks=_landed(written, planner.operation, planned.reply.get("hunks", [])),
        auto_corrections=[AutoCorrection(type=t, detail=d) for t, d in written.auto_corrections],
        safety_check=written.safety,
        overwrote_unseen=overwrote,
        rebased_from_version=base.version if base else None,
        rebased_over=[c.describe() for c in base.changes] if base else [],
    )


def _action(planner: _Planner, planned: Planned) -> Action:
    if planned.moved_to is not None:
        return "moved"
    if planned.delete:
        return "deleted"
    return "added" if isinstance(planner, _Add) else "updated"


def _landed(written: Written, op: Operation, hunks: list[int]) -> list[ChunkLanding]:
    """Where each hunk's first change went, in the content it was written to (1-based;
    0 for a hunk that changes nothing)."""
    first: dict[int, int] = {}
    for splice in written.planned.plan.splices:
        first.setdefault(splice.index + 1, splice.start + 1)
    chunks = op.chunks if isinstance(op, UpdateFile) else ()
    return [
        ChunkLanding(hunk=n, line=first.get(n, 0), header=_last(chunks[n - 1].headers))
        for n in hunks
    ]


def _last(headers: tuple[str, ...]) -> str | None:
    return headers[-1] if headers else None
