"""`check_write` and `claim_write`: a harness's own Edit and Write tools, journal-aware.

Most agents edit with their harness's built-in tools, which the daemon would see
only as anonymous outside changes. A hook around those tools (`editjournal hook
HARNESS`, client/harness/hook.py) asks `check_write` before the tool runs: the change is
judged by the same planners as `edit_file` and `write_file`, as the agent whose
tool it is, against what that agent has seen — refused (`anchor_stale`, journaled,
with who changed the lines and the delta) when it would land on lines someone
changed since, else allowed and announced: the daemon notes the content it checked
and the content the edits produce from it (`daemon/files/harnesswrites.py`). After
the tool wrote, `claim_write` journals as that agent's `edit_applied` (writer: the
harness's tool) only that change: the file exactly as announced is all the agent's;
a file that holds more (a person saved it between the two hooks, the tool did
something else) is split — the rest first, as an `outside_change`, then the agent's
change on top — where the change can be told apart from the rest
(`daemon/text/toolwrite.py`), and is all an outside change where it cannot (the reply
says so). Only the agent that announced a write may claim it (another's claim is
`wrong_owner`, nothing journaled; so is a claim naming the agent without the
credential its announcement was made with, and such a client cannot announce the path
again over it either: it would take the claim from the agent); a claim with no
announcement of the claimer's credits nothing; an agent that may not write (`[access]`)
is refused as its write is.

What it must never do: write a file (the harness's tool does), credit an agent with a
line its checked edits did not write, or deny a change for anything but the
journal's reasons — a string the harness will not find, a safety finding, are the
harness's own business.
"""

from __future__ import annotations

import hashlib
from typing import Any, NamedTuple

from editjournal.daemon.contract.context import Context
from editjournal.daemon.contract.outcome import Outcome
from editjournal.daemon.files.filesnapshot import FileSnapshot
from editjournal.daemon.files.harnesswrites import Announced, announced
from editjournal.daemon.handlers import handles
from editjournal.daemon.handlers.atomic import edit_file_planner, write_file_planner
from editjournal.daemon.handlers.checkjob import UNKNOWN, Unknown, is_big, judged_in_slices
from editjournal.daemon.model.state import Snapshot
from editjournal.daemon.settings.config import write_access_denied
from editjournal.daemon.text.lines import Document, parse, render
from editjournal.daemon.text.ranges import (
    LineRanges,
    covered,
    normalized,
    subtract,
    to_ranges,
    whole,
)
from editjournal.daemon.text.replace import Joined, find_all
from editjournal.daemon.text.replace import normalized as normalized_text
from editjournal.daemon.text.toolwrite import Split, expected
from editjournal.daemon.writing.guards import overwrite_refusal, overwritten_unseen
from editjournal.daemon.writing.history import base_at
from editjournal.daemon.writing.path import Writer, carried, rejected, write
from editjournal.daemon.writing.stale import brought_by, delta, named, shown_lines
from editjournal.daemon.writing.target import EMPTY_SHA256, Target, open_target
from editjournal.schemas.errors import ErrorCode, ToolError
from editjournal.schemas.events import EditApplied, FileRead, OutsideChangeRecorded
from editjournal.schemas.tools import (
    CheckWriteParams,
    CheckWriteResult,
    ClaimWriteParams,
    ClaimWriteResult,
    EditFileParams,
    HarnessEdit,
    WriteFileParams,
)

# The refusals a hook turns into a denial: the journal's own reasons. Anything else
# (a string not found, a safety finding) the harness's tool judges for itself.
DENIED = frozenset({ErrorCode.ANCHOR_STALE, ErrorCode.WRITE_ACCESS_DENIED})


@handles("check_write")
def check_write(ctx: Context, params: CheckWriteParams) -> Outcome:
    path = ctx.workspace.file_relative(params.path)
    full = ctx.workspace.harness_writes.room_for(path, ctx.agent)
    if full is not None:  # before any work: an agent's flood costs the thread nothing
        raise full
    held = ctx.workspace.harness_writes.of(path, ctx.agent)
    if held is not None and held.identity not in (None, ctx.identity):
        raise _held_by_another_client(ctx, path)
    target = open_target(ctx, path, missing_ok=True)
    wanted: Document | Unknown | None = UNKNOWN
    if params.content is not None:
        refused, checked = _whole_refused(target, params), 1
    elif is_big(target, params):  # judged a slice of edits at a time
        judged = judged_in_slices(ctx, target, params, _edit_refused)
        if isinstance(judged, Outcome):
            return judged
        refused, checked, wanted = judged
    else:
        refused, checked = _edits_refused(target, params)
    if refused is not None:
        return refused
    _announce(target, params, wanted)
    result = CheckWriteResult(
        path=path, version=target.version, exists=target.exists, checked=checked
    )
    return Outcome(result, events=list(target.noticed))


def _held_by_another_client(ctx: Context, path: str) -> ToolError:
    """The agent's name has a live announcement of `path` made with another credential:
    replacing it would leave the agent that made it unable to claim its own write (its
    claim would be `wrong_owner`), so a client that only shares the name is refused, and
    the announcement stands until it is claimed or expires."""
    return ToolError(
        ErrorCode.WRONG_OWNER,
        f"a write of {path} is announced (check_write) by another client named"
        f" {ctx.agent!r} (it held another credential) and not yet claimed: only that client"
        " may announce it again or claim it; nothing was announced",
        {"path": path, "announced_by": [ctx.agent], "tool": "check_write"},
    )


def _announce(
    target: Target, params: CheckWriteParams, known: Document | Unknown | None = UNKNOWN
) -> None:
    """Note the content checked and what the tool will make of it, for the watcher and
    the claim. Nothing when the tool's result cannot be foreseen (an edit whose text is
    not there: the tool fails) or changes nothing (`edits: []`): such an announcement
    would hold no change, and so credits none and hides none. `known`: that content,
    when a job foresaw it already."""
    wanted: Document | None
    if params.content is not None:
        wanted = parse(params.content)
    elif not isinstance(known, Unknown):
        wanted = known
    else:
        edits = [(e.old_string, e.new_string, e.replace_all) for e in params.edits or ()]
        wanted = expected(target.doc, edits)
    if wanted is None:
        return
    text = render(wanted)
    if text == target.snap.text:
        return
    sha = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    checked_sha = target.snap.sha256 if target.exists else None
    ctx = target.ctx
    note = announced(target.path, ctx.agent, target.snap.text, checked_sha, text, sha, ctx.identity)
    ctx.workspace.harness_writes.announce(note)


def _edits_refused(target: Target, params: CheckWriteParams) -> tuple[Outcome | None, int]:
    """The first edit the journal refuses, each planned on the file as it is (as
    `edit_file` plans it); an edit whose text is not there is left to the harness."""
    checked = 0
    denied = write_access_denied(target.ctx.workspace.state_dir, target.ctx.agent)
    for index, edit in enumerate(params.edits or (), start=1):
        outcome, counted = _edit_refused(target, params.tool, index, edit, denied)
        checked += counted
        if outcome is not None:
            return outcome, checked
    return None, checked


def _edit_refused(
    target: Target, tool: str, index: int, edit: HarnessEdit, denied: ToolError | None
) -> tuple[Outcome | None, int]:
    """The journal's refusal of the `index`th edit (1-based), if it refuses it, and
    whether it was checked (an empty old_string is not)."""
    old = normalized_text(edit.old_string)
    if not old:
        return None, 0
    count = len(find_all(Joined.of(target.doc), old)) if edit.replace_all else None
    asked = EditFileParams(
        path=target.path,
        old_string=edit.old_string,
        new_string=edit.new_string,
        expected_replacements=count or None,
    )
    outcome = _refusal(target, edit_file_planner(asked, tool), denied)
    if outcome is not None and outcome.error is not None and outcome.error.code in DENIED:
        outcome.error.details["edit"] = index  # which of a MultiEdit's, for the reply
        return outcome, 1
    return None, 1


def _refusal(target: Target, writer: Writer, denied: ToolError | None) -> Outcome | None:
    """The journal's refusal of one edit, or None: the writing path's own steps up to
    the carry (write access, then the plan carried to the current content, where a
    stale edit is refused), the only ones a denial comes from. The new content is never
    rendered, hashed or indexed: a whole `write` per edit held the thread 41 s for 1,000
    edits of a 20,000-line file (issue 40)."""
    if denied is not None:
        return rejected(target, writer, denied, [])
    try:
        carried(target, writer.stale, writer.plan(target))
    except ToolError as e:
        return rejected(target, writer, writer.explain(target, e), [])
    return None


def _whole_refused(target: Target, params: CheckWriteParams) -> Outcome | None:
    """A whole new content over lines the agent has not seen (never read, or changed
    since its read) is refused, naming whose changes it would overwrite. After a ranged
    re-read (Claude Code pages large files) the refusal is explained from the agent's
    last full view (`_ranged_refusal`), and a file unchanged since that view is no
    refusal at all: every line it replaces was shown."""
    writer = write_file_planner(
        WriteFileParams(path=target.path, content=params.content or ""), params.tool
    )
    ranged = _ranged(target)
    overwritten = overwritten_unseen(target)
    if ranged is not None and ranged.full_view and ranged.full_view[1] == target.snap.sha256:
        overwritten = None  # its last full view is the file as it is: every line was shown
    if overwritten is None:
        outcome = write(target, writer, [])  # write access, and nothing else
        return outcome if outcome.error is not None and outcome.error.code in DENIED else None
    if ranged is not None:
        error = _ranged_refusal(target, params.tool, ranged, overwritten)
    else:
        error = overwrite_refusal(target, params.tool, overwritten)
    return rejected(target, writer, error, [])


def _ranged(target: Target) -> Snapshot | None:
    """The agent's snapshot of the file when it holds lines the agent was not shown (a
    ranged read, a delta that left some out), else None."""
    ctx = target.ctx
    seen = ctx.state.snapshots.get((ctx.agent, target.path))
    return seen if seen is not None and seen.unseen and target.exists else None


def _ranged_refusal(
    target: Target, tool: str, seen: Snapshot, overwritten: list[dict[str, Any]]
) -> ToolError:
    """`anchor_stale` for a whole write by an agent whose latest read showed part of the
    file: who changed which lines since it last saw all of it, and the changes (a delta
    from that view). Its latest read is not the version to explain from: nothing may
    have changed since it, and it showed only part. Without a stored full view, the
    changes since its latest read (`overwritten`), and no delta."""
    ctx, doc = target.ctx, target.doc
    view = seen.full_view
    full = base_at(ctx, target.snap, target.noticed, *view) if view is not None else None
    unseen = normalized(target.unseen(target.agent_base) or [])
    shown = f"lines {seen.lines[0]}-{seen.lines[1]}" if seen.lines else "part"
    details: dict[str, Any] = {
        "conflicts": overwritten,
        "latest_version": seen.version,
        "unseen": [list(span) for span in unseen],
        "read_lines": list(seen.lines) if seen.lines else None,
        "whole_file": "replace",  # the hint: redo the write, not "retry with fresh anchors"
    }
    message = (
        f"{tool} would replace all {doc.line_count} lines of {target.path}; your latest read"
        f" (version {seen.version}) showed {shown} of it"
    )
    if full is None:
        who = named(overwritten)
        message += ", and you have not been shown all of it" + (f" — by {who}" if who else "")
        return ToolError(ErrorCode.ANCHOR_STALE, message, details)
    kept = {n + 1 for n in full.line_map(doc) if n is not None}
    changed = [n for n in range(1, doc.line_count + 1) if n not in kept]
    lines = covered(changed, unseen) or changed
    conflicts = brought_by(full, doc.lines, lines)
    details["conflicts"], details["base_version"] = conflicts, full.version
    details["delta"] = delta(full, doc, target.anchors, target.version)  # a write: every hunk
    message += (
        f", and since you last saw all of it (version {full.version}) line(s)"
        f" {shown_lines(lines)} changed — by {named(conflicts)}; details.delta has the"
        " changes with fresh anchors"
    )
    return ToolError(ErrorCode.ANCHOR_STALE, message, details)


@handles("claim_write")
def claim_write(ctx: Context, params: ClaimWriteParams) -> Outcome:
    path = ctx.workspace.file_relative(params.path)
    writes = ctx.workspace.harness_writes
    mine = writes.of(path, ctx.agent)
    if mine is None and (others := writes.by_others(path, ctx.agent)):
        raise _not_yours(ctx, path, others)
    if mine is not None and mine.identity not in (None, ctx.identity):
        raise _not_yours(ctx, path, [mine])
    if mine is not None:
        writes.settle(path, ctx.agent)
    now = _on_disk(ctx, path)
    if now is None:
        gone = ClaimWriteResult(path=path, version=ctx.state.last_seq, sha256=None, recorded=False)
        return Outcome(gone)
    denied = write_access_denied(ctx.workspace.state_dir, ctx.agent)
    if denied is not None:  # refused as its write would be: the change is nobody's
        return Outcome(error=denied, **_outside_whole(ctx, now, mine))
    known = ctx.state.files.get(path)
    if known is not None and known.sha256 == now.snap.sha256:
        return _known_now(now, known.version, mine)  # the journal holds it: the agent knows it
    session = _without_change(mine, now)
    if mine is None or session is None:
        return _all_outside(ctx, now, mine)
    return _split(ctx, params, now, mine, session)


class _Now(NamedTuple):
    """The file as the claim found it."""

    snap: FileSnapshot
    doc: Document

    @property
    def read(self) -> FileRead:
        snap = self.snap
        return FileRead(
            path=snap.path, sha256=snap.sha256, size=snap.size, line_count=self.doc.line_count
        )


def _on_disk(ctx: Context, path: str) -> _Now | None:
    try:
        snap = ctx.workspace.read(path)
    except ToolError as e:
        if e.code is not ErrorCode.FILE_NOT_FOUND:
            raise
        return None
    return _Now(snap, ctx.cache.parsed(snap.sha256, snap.text, snap.path).doc)


def _not_yours(ctx: Context, path: str, others: list[Announced]) -> ToolError:
    """Another agent announced this write: crediting it to the claimer would be false."""
    who = sorted({a.agent for a in others})
    by = ", ".join(map(repr, who))
    if who == [ctx.agent]:  # the name, without the credential it was announced with
        by = f"another client named {ctx.agent!r} (it held another credential)"
    return ToolError(
        ErrorCode.WRONG_OWNER,
        f"the write of {path} was announced (check_write) by {by}, not by you:"
        " only the agent that announced a write may claim it; nothing was journaled",
        {"path": path, "announced_by": who},
    )


def _without_change(mine: Announced | None, now: _Now) -> Split | None:
    """The file told apart into the change this agent's checked edits make and the rest:
    None when there is no announcement, or the change cannot be told apart."""
    return None if mine is None else mine.split(now.snap.sha256, now.doc)


def _known_now(now: _Now, version: int, mine: Announced | None) -> Outcome:
    count = now.doc.line_count
    result = ClaimWriteResult(
        path=now.snap.path, version=version, sha256=now.snap.sha256, recorded=False,
        lines_before=count, lines_after=count,
    )  # fmt: skip
    outcome = Outcome(result, events=[now.read], blobs={now.snap.sha256: now.snap.data})
    if mine is None:
        outcome.warnings.append(_UNANNOUNCED.format(path=now.snap.path))
    elif now.snap.sha256 != mine.checked_sha:  # another request's look journaled it first
        outcome.warnings.append(
            f"{now.snap.path} changed since check_write and was journaled before this claim"
            " (as an outside change, by another request that read it): nothing is credited"
            " to you"
        )
    return outcome


_UNANNOUNCED = (
    "no write of {path} by this agent was announced (check_write), or the announcement"
    " expired: its content is journaled as an outside change, not as yours"
)


def _all_outside(ctx: Context, now: _Now, mine: Announced | None) -> Outcome:
    """The whole change is an outside change: nothing of it is the claimer's to be
    credited with. With no announcement (never made, expired, forgotten) the claimer's
    tool still left this content, which it now knows; when its change cannot be told
    apart from someone else's, it has not seen theirs (its next edit there is judged
    against what it read)."""
    known = ctx.state.files.get(now.snap.path)
    result = ClaimWriteResult(
        path=now.snap.path, version=ctx.next_seq, sha256=now.snap.sha256, recorded=False,
        lines_before=known.line_count if known is not None else 0,
        lines_after=now.doc.line_count,
    )  # fmt: skip
    outcome = Outcome(result, **_outside_whole(ctx, now, mine))
    if mine is None:
        outcome.events.append(now.read)
        outcome.warnings.append(_UNANNOUNCED.format(path=now.snap.path))
    else:
        outcome.warnings.append(
            f"{now.snap.path} holds changes besides the edits check_write allowed, and which"
            " lines are yours cannot be told apart: the whole change is journaled as an"
            " outside change, not as yours"
        )
    return outcome


def _outside_whole(ctx: Context, now: _Now, mine: Announced | None) -> dict[str, Any]:
    """The events (and blobs) journaling the file as it is now as an outside change."""
    known = ctx.state.files.get(now.snap.path)
    if known is not None and known.sha256 == now.snap.sha256:
        return {}
    existed = known is not None and known.sha256 is not None
    existed = existed or (mine is not None and mine.checked_sha is not None)
    change = _outside(ctx, now.snap.path, now.snap.sha256, now.doc, now.snap.size, existed)
    return {"events": [change], "blobs": {now.snap.sha256: now.snap.data}}


def _outside(
    ctx: Context, path: str, sha: str, doc: Document, size: int, existed: bool
) -> OutsideChangeRecorded:
    known = ctx.state.files.get(path)
    return OutsideChangeRecorded(
        path=path, change="modified" if existed else "created",
        old_sha256=known.sha256 if known is not None else None, new_sha256=sha,
        size=size, line_count=doc.line_count,
    )  # fmt: skip


def _split(
    ctx: Context, params: ClaimWriteParams, now: _Now, mine: Announced, split: Split
) -> Outcome:
    """Someone else's part first, as an outside change to `base` (the file without this
    agent's change), when the journal's content is not that already; then this agent's
    change, `base` -> the file now, as its `edit_applied` (writer: the harness's tool)."""
    path, known, base = now.snap.path, ctx.state.files.get(now.snap.path), split.base
    data = render(base).encode("utf-8", "surrogatepass")
    sha = hashlib.sha256(data).hexdigest()
    events: list[Any] = []
    blobs = {now.snap.sha256: now.snap.data}
    if not ctx.journal.has_blob(sha):
        blobs[sha] = data  # the write's before content: every edit_applied's is held
    journal_sha = known.sha256 if known is not None else None
    if sha != (journal_sha or EMPTY_SHA256):  # someone else's lines, or a file found
        existed = (known is not None and known.sha256 is not None) or mine.checked_sha is not None
        events.append(_outside(ctx, path, sha, base, len(data), existed))
    line_changes = split.changes
    count = now.doc.line_count
    events.append(
        EditApplied(
            path=path,
            writer=params.tool,
            before_sha256=sha,
            after_sha256=now.snap.sha256,
            size=now.snap.size,
            lines_before=base.line_count,
            line_count=count,
            operations=[{"op": params.tool}],
            line_changes=line_changes,
            unseen=_unseen_after(ctx, path, sha, line_changes, count),
        )
    )
    result = ClaimWriteResult(
        path=path, version=ctx.next_seq + len(events) - 1, sha256=now.snap.sha256,
        recorded=True, lines_before=base.line_count, lines_after=count,
    )  # fmt: skip
    outcome = Outcome(result, events=events, blobs=blobs)
    if len(events) > 1 and sha != mine.checked_sha:  # not merely a file the journal lacked
        outcome.warnings.append(
            f"{path} holds changes besides the edits check_write allowed: they are journaled"
            f" as an outside change (version {ctx.next_seq}), and only your edits as yours"
        )
    return outcome


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
