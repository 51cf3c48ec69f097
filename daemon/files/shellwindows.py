"""Shell windows: a harness's shell command, bracketed by its hooks, as time on the daemon.

A harness hook opens a window before the agent's shell command runs and closes it
after (`shell_window`, daemon/handlers/shellwindow.py). While windows are open the
watcher (daemon/watch/outside.py) hands each change it observes to `take`: a change
observed while only one agent's windows are open waits in them (nothing is journaled
yet), and their close journals it as that agent's; a change observed while two
agents' windows are open is nobody's to credit (the watcher journals it as an outside
change at once, and the windows remember the path as contested); with no window open,
nothing changes for the watcher. Timing alone never credits a change to one of two
agents.

"Observed" must mean "made": before a window opens and before it closes, the watcher
is brought up to date (`sync`: a cookie file in the workspace root, whose kernel event
comes after every event before it; the debouncer flushes what it holds when it sees
it, and the daemon's thread marks the token done once everything queued before it has
been looked at). So a change made before the Pre is journaled before the window
opens, and every change the command made is taken in before it closes.

A window lasts `expires_s` (the hook's setting, 10 minutes by default): one whose
Post never came (the session died) is closed by `expired`, said in the daemon log,
and what waited in it is journaled as outside changes. At most PER_AGENT windows of
one agent, and MAX_WINDOWS in all, are open at once. Nothing here is state: the daemon
thread's memory only.
"""

from __future__ import annotations

import itertools
import logging
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from editjournal.schemas.errors import ErrorCode, ToolError
from editjournal.schemas.events import OutsideChangeRecorded

log = logging.getLogger("editjournal")
PER_AGENT = 32  # windows of one agent open at once
MAX_WINDOWS = 1024  # of all agents
COOKIE_PREFIX = ".editjournal-sync-"  # the watcher's sync marker files (never journaled)
SYNC_TIMEOUT_S = 3.0  # how long a Pre or Post waits for the watcher to catch up


@dataclass
class Waiting:
    """One path's change, observed in a window: the watcher's event as it would have
    journaled it then (its `change` says whether the file existed before), and the
    windows of the agent open at that moment (their commands go on the journaled edit).
    `content` (hash `sha`) is the last content observed while only this agent's windows
    were open (None: not kept, the file is not one whose contents the journal keeps);
    once another agent's window opened and the file changed again (`frozen`), the
    agent's credit stops there: the close journals its edit up to `content`, and the
    rest as an outside change."""

    first: OutsideChangeRecorded
    windows: tuple[str, ...]
    content: bytes | None = None
    sha: str | None = None
    frozen: bool = False


@dataclass
class Window:
    key: str  # the hook's pairing key (Claude Code: tool_use_id)
    agent: str
    tool: str  # the writer journaled: "claude-code:Bash"
    command: str
    opened: float  # time.monotonic()
    deadline: float
    settled: bool  # the watcher was up to date when it opened
    # the files the command line names, as they were when it opened: path -> (sha, bytes)
    before: dict[str, tuple[str, bytes]] = field(default_factory=dict)
    waiting: dict[str, Waiting] = field(default_factory=dict)
    contested: dict[str, str] = field(default_factory=dict)  # path -> the other agents


class ShellWindows:
    """Open windows by (agent, key), and the watcher's sync tokens; daemon thread only."""

    def __init__(self) -> None:
        self._open: dict[tuple[str, str], Window] = {}
        self._tokens = itertools.count(1)
        self._synced = 0  # every token up to this one is done
        self._expired_paths: list[str] = []

    # --- windows ---------------------------------------------------------------------

    def room_for(self, agent: str, key: str) -> ToolError | None:
        """`invalid_params` when `agent` (or everyone) has as many windows open as allowed."""
        self.expired()
        if (agent, key) in self._open:
            return None
        mine = sum(1 for a, _ in self._open if a == agent)
        if mine < PER_AGENT and len(self._open) < MAX_WINDOWS:
            return None
        return ToolError(
            ErrorCode.INVALID_PARAMS,
            f"agent {agent!r} has {mine} shell windows open ({len(self._open)} in all), the"
            f" most allowed ({PER_AGENT} per agent, {MAX_WINDOWS} in all): close them"
            " (shell_window phase close) or let them expire",
            {"agent": agent, "open": mine, "limit": PER_AGENT},
        )

    def open(self, window: Window) -> None:
        """Open `window` (a second open of the same key starts it again, empty)."""
        self._open[(window.agent, window.key)] = window

    def close(self, agent: str, key: str) -> Window | None:
        """`agent`'s window `key`, removed; None when none is open (never opened,
        closed already, expired)."""
        return self._open.pop((agent, key), None)

    def is_open(self, agent: str, key: str) -> bool:
        self.expired()
        return (agent, key) in self._open

    @property
    def any_open(self) -> bool:
        return bool(self._open)

    def take(self, path: str, event: OutsideChangeRecorded, data: bytes | None = None) -> bool:
        """The watcher observed `event` at `path` (`data`: its content, when the journal
        keeps this file's contents): True when it waits in the open windows (journaled at
        a close), False when it is to be journaled as an outside change now. With one
        agent's windows open it waits in them. With several agents' open the path is
        contested by each; it still waits when one agent's window holds an earlier change
        of it whose content is kept (that agent is credited up to it at its close, the
        rest is outside), else it is an outside change now, that earlier change with it."""
        self.expired()
        if not self._open:
            return False
        agents = {agent for agent, _ in self._open}
        if len(agents) > 1:
            return self._contested(path, agents)
        windows = list(self._open.values())
        if not all(w.settled for w in windows):
            return False  # opened without the watcher up to date: it credits nothing
        keys = tuple(w.key for w in windows)
        for window in windows:
            found = window.waiting.get(path)
            if found is None:
                window.waiting[path] = Waiting(event, keys, data, event.new_sha256)
            elif not found.frozen:
                found.content, found.sha = data, event.new_sha256
        return True

    def _contested(self, path: str, agents: set[str]) -> bool:
        held = False
        for window in self._open.values():
            window.contested[path] = ", ".join(sorted(agents - {window.agent}))
            found = window.waiting.get(path)
            if found is not None and found.content is not None and found.sha is not None:
                found.frozen = held = True
            elif found is not None:
                del window.waiting[path]  # journaled now, as an outside change, with this one
        return held

    def expired(self) -> list[Window]:
        """Close the windows whose Post never came; each is said in the daemon log.
        Their waiting paths are the caller's to journal as outside changes."""
        now = time.monotonic()
        gone = [key for key, w in self._open.items() if now >= w.deadline]
        closed = [self._open.pop(key) for key in gone]
        for window in closed:
            log.warning(
                "shell window %s of %s (%s) was never closed after %.0f s: closed now; the"
                " %d change(s) it saw are journaled as outside changes",
                window.key, window.agent, _short(window.command),
                window.deadline - window.opened, len(window.waiting),
            )  # fmt: skip
        self._expired_paths.extend(p for w in closed for p in w.waiting)
        return closed

    def expired_paths(self) -> list[str]:
        """Paths that waited in windows which expired since the last call (the watcher
        journals them as outside changes)."""
        self.expired()
        paths, self._expired_paths = self._expired_paths, []
        return paths

    def open_windows(self) -> list[Window]:
        return list(self._open.values())

    # --- syncing with the watcher ----------------------------------------------------

    def sync(self, root: Path) -> int | None:
        """Ask the watcher to catch up: a cookie file made (and removed at once) in the
        workspace root; the token its arrival marks, or None when it cannot be made."""
        token = next(self._tokens)
        cookie = root / f"{COOKIE_PREFIX}{os.getpid()}-{token}"
        try:
            fd = os.open(cookie, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            os.close(fd)
            os.unlink(cookie)
        except OSError as e:
            log.warning("cannot sync the watcher (a cookie in %s): %s", root, e)
            return None
        return token

    def synced(self, token: int) -> bool:
        return token <= self._synced

    def mark_synced(self, token: int) -> None:
        """The watcher has taken in everything before cookie `token` (daemon/watch/intake.py)."""
        self._synced = max(self._synced, token)


def cookie_token(name: str) -> int | None:
    """The token of a cookie file's name (a workspace-relative path), or None when the
    name is not one of this daemon's cookies."""
    if not name.startswith(COOKIE_PREFIX) or "/" in name:
        return None
    pid, _, token = name[len(COOKIE_PREFIX) :].partition("-")
    if pid != str(os.getpid()) or not token.isdigit():
        return None
    return int(token)


def is_cookie(name: str) -> bool:
    return name.startswith(COOKIE_PREFIX) and "/" not in name


def _short(command: str, limit: int = 120) -> str:
    line = " ".join(command.split())
    return line if len(line) <= limit else line[:limit] + "..."
