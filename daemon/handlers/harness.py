"""`check_write` and `claim_write`: a harness's own Edit and Write tools, journal-aware.

Most agents edit with their harness's built-in tools, which the daemon would see
only as anonymous outside changes. A hook around those tools (`editjournal hook
HARNESS`, client/harness/hook.py) asks `check_write` before the tool runs: the change is
judged by the same planners as `edit_file` and `write_file`, as the agent whose
tool it is, against what that agent has seen — refused (`anchor_stale`, journaled,
with who changed the lines and the delta) when it would land on lines someone
changed since, else allowed, and the watcher then leaves the path to the hook
(`daemon/files/harnesswrites.py`). After the tool wrote, `claim_write` journals
the content on disk as that agent's `edit_applied` (writer: the harness's tool), so
its snapshot moves on and other agents' stale checks know who changed what.

What it must never do: write a file (the harness's tool does), or deny a change for
anything but the journal's reasons — a string the harness will not find, a safety
finding, are the harness's own business.
"""

from __future__ import annotations

from editjournal.daemon.audit.diffs import changes
from editjournal.daemon.contract.context import Context
from editjournal.daemon.contract.outcome import Outcome
from editjournal.daemon.handlers import handles
from editjournal.daemon.handlers.atomic import edit_file_planner, write_file_planner
from editjournal.daemon.text.ranges import LineRanges, normalized, subtract, to_ranges, whole
from editjournal.daemon.text.replace import Joined, find_all
from editjournal.daemon.text.replace import normalized as normalized_text
from editjournal.daemon.writing.guards import overwrite_refusal, overwritten_unseen
from editjournal.daemon.writing.history import document
from editjournal.daemon.writing.path import rejected, write
from editjournal.daemon.writing.target import EMPTY_SHA256, Target, open_target
from editjournal.schemas.errors import ErrorCode, ToolError
from editjournal.schemas.events import EditApplied, FileRead, OutsideChangeRecorded
from editjournal.schemas.tools import (
    CheckWriteParams,
    CheckWriteResult,
    ClaimWriteParams,
    ClaimWriteResult,
    EditFileParams,
    WriteFileParams,
)

# The refusals a hook turns into a denial: the journal's own reasons. Anything else
# (a string not found, a safety finding) the harness's tool judges for itself.
DENIED = frozenset({ErrorCode.ANCHOR_STALE, ErrorCode.WRITE_ACCESS_DENIED})


@handles("check_write")
def check_write(ctx: Context, params: CheckWriteParams) -> Outcome:
    path = ctx.workspace.file_relative(params.path)
    target = open_target(ctx, path, missing_ok=True)
    if params.content is not None:
        refused, checked = _whole_refused(target, params), 1
    else:
        refused, checked = _edits_refused(target, params)
    if refused is not None:
        return refused
    ctx.workspace.harness_writes.announce(path, ctx.agent)
    result = CheckWriteResult(
        path=path, version=target.version, exists=target.exists, checked=checked
    )
    return Outcome(result, events=list(target.noticed))


def _edits_refused(target: Target, params: CheckWriteParams) -> tuple[Outcome | None, int]:
    """The first edit the journal refuses, each planned on the file as it is (as
    `edit_file` plans it); an edit whose text is not there is left to the harness."""
    checked = 0
    for edit in params.edits or ():
        old = normalized_text(edit.old_string)
        if not old:
            continue
        count = len(find_all(Joined.of(target.doc), old)) if edit.replace_all else None
        asked = EditFileParams(
            path=target.path,
            old_string=edit.old_string,
            new_string=edit.new_string,
            expected_replacements=count or None,
        )
        outcome = write(target, edit_file_planner(asked, params.tool), [])
        checked += 1
        if outcome.error is not None and outcome.error.code in DENIED:
            return outcome, checked
    return None, checked


def _whole_refused(target: Target, params: CheckWriteParams) -> Outcome | None:
    """A whole new content over lines the agent has not seen (never read, or changed
    since its read) is refused, naming whose changes it would overwrite."""
    writer = write_file_planner(
        WriteFileParams(path=target.path, content=params.content or ""), params.tool
    )
    overwritten = overwritten_unseen(target)
    if overwritten is None:
        outcome = write(target, writer, [])  # write access, and nothing else
        return outcome if outcome.error is not None and outcome.error.code in DENIED else None
    return rejected(target, writer, overwrite_refusal(target, params.tool, overwritten), [])


@handles("claim_write")
def claim_write(ctx: Context, params: ClaimWriteParams) -> Outcome:
    path = ctx.workspace.file_relative(params.path)
    ctx.workspace.harness_writes.settle(path)
    known = ctx.state.files.get(path)
    before_sha = known.sha256 if known is not None else None
    try:
        snap = ctx.workspace.read(path)
    except ToolError as e:
        if e.code is not ErrorCode.FILE_NOT_FOUND:
            raise
        gone = ClaimWriteResult(path=path, version=ctx.state.last_seq, sha256=None, recorded=False)
        return Outcome(gone)
    parsed = ctx.cache.parsed(snap.sha256, snap.text, snap.path)
    count = parsed.doc.line_count
    blobs = {snap.sha256: snap.data}  # every event below names it: the journal holds it
    seen = FileRead(path=path, sha256=snap.sha256, size=len(snap.data), line_count=count)
    if before_sha == snap.sha256:  # the journal holds this content: the agent now knows it
        assert known is not None
        result = ClaimWriteResult(
            path=path, version=known.version, sha256=snap.sha256, recorded=False,
            lines_before=count, lines_after=count,
        )  # fmt: skip
        return Outcome(result, events=[seen], blobs=blobs)
    if before_sha is not None and not ctx.journal.has_blob(before_sha):
        # what it replaced was never stored (a file no agent had read): a write needs
        # its before content, so this is journaled as the change it is, then seen
        change = OutsideChangeRecorded(
            path=path, change="modified", old_sha256=before_sha, new_sha256=snap.sha256,
            size=len(snap.data), line_count=count,
        )  # fmt: skip
        result = ClaimWriteResult(
            path=path, version=ctx.next_seq, sha256=snap.sha256, recorded=False,
            lines_before=known.line_count if known is not None else 0, lines_after=count,
        )  # fmt: skip
        return Outcome(result, events=[change, seen], blobs=blobs)
    if before_sha is None and not ctx.journal.has_blob(EMPTY_SHA256):
        blobs[EMPTY_SHA256] = b""
    before = document(ctx, before_sha)
    line_changes = changes(before.doc.lines, parsed.doc.lines) if before is not None else []
    event = EditApplied(
        path=path,
        writer=params.tool,
        before_sha256=before_sha or EMPTY_SHA256,
        after_sha256=snap.sha256,
        size=len(snap.data),
        lines_before=known.line_count if known is not None else 0,
        line_count=count,
        operations=[{"op": params.tool}],
        line_changes=line_changes,
        unseen=_unseen_after(ctx, path, before_sha, line_changes, count),
    )
    result = ClaimWriteResult(
        path=path, version=ctx.next_seq, sha256=snap.sha256, recorded=True,
        lines_before=event.lines_before, lines_after=count,
    )  # fmt: skip
    return Outcome(result, events=[event], blobs=blobs)


def _unseen_after(
    ctx: Context,
    path: str,
    before_sha: str | None,
    line_changes: list[tuple[int, int, int]],
    line_count: int,
) -> LineRanges:
    """What the agent has not been shown of the content its tool left: nothing when it
    had seen all it replaced (or never read the file: nothing to hold against it), else
    every line but those its tool wrote."""
    seen = ctx.state.snapshots.get((ctx.agent, path))
    if seen is None or (seen.sha256 == before_sha and not seen.unseen):
        return []
    written: list[int] = []
    at = shift = 0
    for start, end, inserted in sorted(line_changes):
        at = start + shift
        written.extend(range(at + 1, at + inserted + 1))
        shift += inserted - (end - start)
    return normalized(subtract(whole(line_count), to_ranges(written)))
