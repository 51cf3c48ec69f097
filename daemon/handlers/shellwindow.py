"""`shell_window`: an agent's shell command, bracketed by its harness's hooks.

Agents change most files through the shell (formatters, generators, `sed -i`), which
the daemon would see only as anonymous outside changes. A hook before the command
opens a window (`phase: open`), a hook after it closes it (`phase: close`); each
first brings the watcher up to date (a request parks as a `Settle` job until the
watcher's sync cookie has come through, at most SYNC_TIMEOUT_S), so a change made
before the command is journaled before the window opens and every change the command
made is taken in before it closes. The watcher holds back what it observes while only
this agent's windows are open (daemon/files/shellwindows.py); the close journals each
such file as this agent's `edit_applied` (writer: the harness's tool, the command in
its `operations`), from the content the journal held to the content on disk now: the
blame fold then credits the agent with exactly the lines that differ, and every other
line keeps its author. A created file is all the agent's; a deleted one is removed by
it.

What it must never do: credit a change by timing alone. A change observed while
another agent's window was open too stays an outside change (the reply lists it as
contested, with the other agents); so does one whose content before the command the
journal never stored (no agent had read the file: which lines changed cannot be told),
one that is not text the daemon serves, and one some other request journaled first.
A close with no open window (no Pre, an unknown key, expired) credits nothing and says
so. It writes no file.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from editjournal.daemon.contract.context import Context, Progress
from editjournal.daemon.contract.outcome import Outcome
from editjournal.daemon.files.filesnapshot import EMPTY_SHA256, Fingerprint
from editjournal.daemon.files.shellwindows import SYNC_TIMEOUT_S, ShellWindows, Waiting, Window
from editjournal.daemon.handlers import handles
from editjournal.daemon.handlers.harness import _unseen_after
from editjournal.daemon.text.lines import Document, parse
from editjournal.daemon.text.toolwrite import change_of
from editjournal.schemas.errors import ToolError
from editjournal.schemas.events import EditApplied, OutsideChangeRecorded
from editjournal.schemas.tools import ShellChange, ShellWindowParams, ShellWindowResult

SPIN_S = 0.001  # a parked Settle's pause per turn of the loop


@dataclass
class Settle:
    """A request parked until the watcher has taken in every change made before it
    (its sync cookie came through), or SYNC_TIMEOUT_S passed (`reached` False)."""

    windows: ShellWindows
    token: int | None
    until: float

    @property
    def reached(self) -> bool:
        return self.token is not None and self.windows.synced(self.token)

    @property
    def done(self) -> bool:
        return self.token is None or self.reached or time.monotonic() >= self.until

    def step(self, ctx: Context, deadline: float) -> Progress:
        """The watch tick does the work; this only waits for it. While parked, the loop
        turns without sleeping: a millisecond's sleep here hands the interpreter to the
        watcher's threads, which carry the cookie's event to it."""
        if not self.done:
            time.sleep(SPIN_S)
        return Progress()


@handles("shell_window")
def shell_window(ctx: Context, params: ShellWindowParams) -> Outcome:
    windows = ctx.workspace.harness_writes.windows
    settle = ctx.finished if isinstance(ctx.finished, Settle) else None
    if settle is None:
        if params.phase == "close" and not windows.is_open(ctx.agent, params.window):
            return _no_window(ctx, params)
        if params.phase == "open" and (full := windows.room_for(ctx.agent, params.window)):
            raise full
        token = windows.sync(ctx.workspace.root)
        return Outcome(job=Settle(windows, token, time.monotonic() + SYNC_TIMEOUT_S))
    if params.phase == "open":
        return _opened(ctx, params, windows, settle.reached)
    window = windows.close(ctx.agent, params.window)
    if window is None:  # expired while the watcher caught up
        return _no_window(ctx, params)
    return _closed(ctx, params, window, settle.reached)


def _opened(
    ctx: Context, params: ShellWindowParams, windows: ShellWindows, settled: bool
) -> Outcome:
    now = time.monotonic()
    window = Window(
        params.window, ctx.agent, params.tool, params.command, now, now + params.expires_s,
        settled, before=_kept(ctx, params.paths or []),
    )  # fmt: skip
    windows.open(window)
    outcome = Outcome(ShellWindowResult(window=params.window, phase="open", opened=True))
    outcome.result.settled = settled
    if not settled:
        outcome.warnings.append(
            "the file watcher did not catch up in time (is watching running? see status):"
            " changes during this command cannot be told from earlier ones, and none will"
            " be credited to you"
        )
    return outcome


KEPT_BYTES = 1024 * 1024  # a named file's content kept when a window opens, at most
KEPT_TOTAL = 16 * 1024 * 1024  # of all of one window's


def _kept(ctx: Context, paths: list[str]) -> dict[str, tuple[str, bytes]]:
    """The text files the command line names, as they are when the window opens (the
    watcher is up to date): the content a change of one the journal holds no content
    of is from. Memory only, never journaled unless the command changes the file."""
    kept: dict[str, tuple[str, bytes]] = {}
    total = 0
    for path in paths:
        try:
            found = ctx.workspace.fingerprint(ctx.workspace.file_relative(path))
        except ToolError:
            continue
        if found is None or found.text is None or found.size > KEPT_BYTES:
            continue
        total += found.size
        if total > KEPT_TOTAL:
            break
        kept[found.path] = (found.sha256, found.data)
    return kept


def _no_window(ctx: Context, params: ShellWindowParams) -> Outcome:
    result = ShellWindowResult(window=params.window, phase="close", opened=False)
    return Outcome(
        result,
        warnings=[
            f"no shell window {params.window!r} of {ctx.agent!r} is open (no Pre hook came"
            " for it, or it expired): nothing is credited to you; the watcher journals"
            " what the command changed as outside changes"
        ],
    )


def _closed(ctx: Context, params: ShellWindowParams, window: Window, settled: bool) -> Outcome:
    """Every change that waited in the window, journaled; the contested ones listed."""
    outcome = Outcome(ShellWindowResult(window=params.window, phase="close", opened=True))
    result: ShellWindowResult = outcome.result
    result.settled = settled
    for path, waiting in sorted(window.waiting.items()):
        change = _journal_one(ctx, window, path, waiting, outcome)
        if change is not None:
            result.changes.append(change)
    for path, others in sorted(window.contested.items()):
        if path in window.waiting:
            continue  # credited up to the change before theirs: listed above
        why = f"changed while a shell command of {others} ran too: not credited by timing"
        result.changes.append(ShellChange(path=path, change="modified", credited=False, why=why))
    if not settled:
        outcome.warnings.append(
            "the file watcher did not catch up in time: changes it takes in after this"
            " are journaled as outside changes"
        )
    return outcome


def _journal_one(
    ctx: Context, window: Window, path: str, waiting: Waiting, outcome: Outcome
) -> ShellChange | None:
    known = ctx.state.files.get(path)
    before = known.sha256 if known is not None else None
    found = ctx.workspace.fingerprint(path)
    if waiting.frozen:
        return _journal_frozen(ctx, window, path, waiting, outcome, found)
    now = found.sha256 if found is not None else None
    existed = waiting.first.change != "created"
    if now == before:
        if now is None:
            return None  # created and removed by the command: nothing to journal
        already = "journaled already (another request found it changed first)"
        return ShellChange(path=path, change=_kind(existed, now), credited=False, why=already)
    base = _base(ctx, window, path, before, existed)
    why = _uncreditable(ctx, base, found)
    seq = ctx.next_seq + len(outcome.events)
    if why is not None or base is None:
        outcome.events.append(_outside(path, before, existed, found, known is not None))
        if found is not None and found.text is not None:
            outcome.blobs[found.sha256] = found.data
        return ShellChange(path=path, change=_kind(existed, now), credited=False, seq=seq, why=why)
    outcome.events.append(_edit(ctx, window, path, waiting, base, found, outcome))
    return ShellChange(path=path, change=_kind(existed, now), credited=True, seq=seq)


def _journal_frozen(
    ctx: Context,
    window: Window,
    path: str,
    waiting: Waiting,
    outcome: Outcome,
    found: Fingerprint | None,
) -> ShellChange:
    """A file this agent's command changed, then changed again while another agent's
    window was open too: the agent's edit up to the content observed before that, and
    the rest (whoever made it) as an outside change on top."""
    assert waiting.content is not None and waiting.sha is not None  # frozen: kept
    known = ctx.state.files.get(path)
    before = known.sha256 if known is not None else None
    existed = waiting.first.change != "created"
    theirs = waiting.sha
    kept = _fingerprint(path, waiting.content, theirs)
    base = _base(ctx, window, path, before, existed)
    why = _uncreditable(ctx, base, kept) if before != theirs else "journaled already"
    now = found.sha256 if found is not None else None
    if why is not None or base is None:  # the whole change is outside, another's with it
        seq = ctx.next_seq + len(outcome.events)
        if now != before:
            outcome.events.append(_outside(path, before, existed, found, known is not None))
            if found is not None and found.text is not None:
                outcome.blobs[found.sha256] = found.data
        return ShellChange(path=path, change=_kind(existed, now), credited=False, seq=seq, why=why)
    seq = ctx.next_seq + len(outcome.events)
    outcome.events.append(_edit(ctx, window, path, waiting, base, kept, outcome))
    if now != theirs:
        outcome.events.append(_outside(path, theirs, True, found, True))
        if found is not None and found.text is not None:
            outcome.blobs[found.sha256] = found.data
    others = window.contested.get(path, "another session")
    return ShellChange(
        path=path, change="modified" if existed else "created", credited=True, seq=seq,
        why=f"credited up to where a shell command of {others} began; the rest is outside",
    )  # fmt: skip


def _fingerprint(path: str, data: bytes, sha: str) -> Fingerprint:
    try:
        text: str | None = data.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    return Fingerprint(path, len(data), 0, sha, data, text)


def _kind(existed: bool, now: str | None) -> str:
    return "deleted" if now is None else "modified" if existed else "created"


Base = tuple[str | None, bytes | None]  # the content a shell edit is from: (sha, bytes)


def _base(
    ctx: Context, window: Window, path: str, before: str | None, existed: bool
) -> Base | None:
    """The content the command changed: (None, None) for a file it created; the
    journal's when it stored it; else the content the window kept when it opened (a
    file the command named), when that is what the journal knew there; else None."""
    if before is None and not existed:
        return (None, None)
    if before is not None and ctx.journal.has_blob(before):
        return (before, None)
    kept = window.before.get(path)
    if kept is not None and (kept[0] == before or before is None):
        return kept
    return None


def _uncreditable(ctx: Context, base: Base | None, found: Fingerprint | None) -> str | None:
    """Why the change cannot be credited line by line, or None: it can."""
    if found is not None and found.text is None:
        return "not text the daemon serves (binary, or over the size limit)"
    if base is None:
        return (
            "its content before the command was never stored (no agent had read it, and"
            " the command line did not name it): which lines changed cannot be told"
        )
    if found is not None and _document(ctx, found) is None:
        return "over the line limit the daemon serves"
    return None


def _document(ctx: Context, found: Fingerprint) -> Document | None:
    try:
        return ctx.cache.parsed(found.sha256, found.text or "", found.path).doc
    except ToolError:
        return None


def _outside(
    path: str, before: str | None, existed: bool, found: Fingerprint | None, tracked: bool
) -> OutsideChangeRecorded:
    if found is None:
        return OutsideChangeRecorded(
            path=path, change="deleted", old_sha256=before, new_sha256=None, content_stored=tracked
        )
    text = found.text
    return OutsideChangeRecorded(
        path=path, change="modified" if existed or before else "created", old_sha256=before,
        new_sha256=found.sha256, size=found.size,
        line_count=parse(text).line_count if text is not None else None,
        content_stored=text is not None,
    )  # fmt: skip


def _edit(
    ctx: Context,
    window: Window,
    path: str,
    waiting: Waiting,
    source: Base,
    found: Fingerprint | None,
    outcome: Outcome,
) -> EditApplied:
    """The agent's edit: the content it changed -> the file now (removed: `deleted`)."""
    before, data = source
    old = _old_document(ctx, before, data, path)
    base = before or EMPTY_SHA256
    if not ctx.journal.has_blob(base):  # every edit_applied's before content is held
        outcome.blobs[base] = data or b""
    operations = _operations(ctx, window, waiting)
    if found is None:
        return EditApplied(
            path=path, writer=window.tool, before_sha256=base, after_sha256=EMPTY_SHA256,
            size=0, lines_before=old.line_count, line_count=0, operations=operations,
            line_changes=[(0, old.line_count, 0)] if old.line_count else [], deleted=True,
        )  # fmt: skip
    new = _document(ctx, found)
    assert new is not None  # _uncreditable said so
    outcome.blobs[found.sha256] = found.data
    changes = change_of(old, new)
    count = new.line_count
    return EditApplied(
        path=path, writer=window.tool, before_sha256=base, after_sha256=found.sha256,
        size=found.size, lines_before=old.line_count, line_count=count, operations=operations,
        line_changes=changes, unseen=_unseen_after(ctx, path, base, changes, count),
    )  # fmt: skip


def _old_document(ctx: Context, before: str | None, data: bytes | None, path: str) -> Document:
    if before is None:
        return ctx.cache.parsed(EMPTY_SHA256, "").doc
    held = data if data is not None else ctx.journal.blob(before) or b""
    return ctx.cache.parsed(before, lambda: held.decode("utf-8", "surrogatepass"), path).doc


def _operations(ctx: Context, window: Window, waiting: Waiting) -> list[dict[str, Any]]:
    """The command (and, when the agent had several commands running when the change
    was observed, each of theirs): which of them made it, the journal cannot tell."""
    commands = {window.key: window.command}
    for other in ctx.workspace.harness_writes.windows.open_windows():
        if other.agent == window.agent and other.key in waiting.windows:
            commands[other.key] = other.command
    op = window.tool.rpartition(":")[2] or window.tool
    return [{"op": op, "command": c, "window": k} for k, c in commands.items()]
