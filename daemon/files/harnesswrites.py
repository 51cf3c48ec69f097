"""Writes an agent's own harness announced: its built-in tool is about to write a file.

A harness hook asks the daemon before the harness's own Edit or Write tool runs
(`check_write`); when the daemon allows it, it notes here, by path and agent, the
content it checked and the content the checked edits produce from it (`Announced`).
That is all an announcement is worth, to the watcher and to the claim:

- the watcher leaves a changed file alone only while the file holds the announced
  change (exactly the expected content, or it with someone else's lines around the
  change: `daemon.text.toolwrite.without_change`), because the claim will journal it
  a moment later, split between the session and whoever else wrote. Anything else —
  a person's save before the tool ran, an announcement that changes nothing
  (`edits: []`), a tool that never ran — is an outside change at once, as if nothing
  had been announced. So no flood of announcements blinds the watcher;
- `claim_write` (daemon/handlers/harness.py) takes the announcement of the agent
  that made it, and only of that agent (and of a request holding the credential the
  announcement was made with, when it was made with one).

An announcement lasts ANNOUNCED_S (a re-announcement starts it again), at most
PER_AGENT of one agent's are outstanding (the next is refused `invalid_params`), and
the contents held for all of them are bounded (HELD_CHARS, then the oldest are
forgotten). A forgotten or expired announcement costs the session its credit (its
write is an outside change), never a wrong event. Nothing here is state: the daemon
thread's memory only. The shell commands a harness brackets with its hooks are
announced too, as windows of time rather than contents (`windows`,
daemon/files/shellwindows.py).
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from editjournal.daemon.files.shellwindows import ShellWindows
from editjournal.daemon.text.lines import Document, parse
from editjournal.daemon.text.toolwrite import Split, change_of, without_change
from editjournal.schemas.errors import ErrorCode, ToolError

ANNOUNCED_S = 60.0  # how long an announced write waits for its claim
PER_AGENT = 64  # announcements of one agent outstanding at once
_MAX_ANNOUNCED = 10_000  # of all agents: past this, the oldest are forgotten
HELD_CHARS = 64 * 1024 * 1024  # checked and expected contents held: past this, likewise


@dataclass(frozen=True, slots=True)
class Announced:
    """One allowed write, before its claim: the content checked (`checked_sha` None: no
    file) and the content its edits produce from it (`wanted`)."""

    path: str
    agent: str
    deadline: float  # time.monotonic()
    checked: str
    checked_sha: str | None
    wanted: str
    wanted_sha: str
    # the announcing request's identity (schemas/wire.py `identity_of`): only a request
    # holding the same credential may claim it; None: the announcement came without one
    identity: str | None = None
    # derived once, on first need: the change as line changes, and the last content told
    # apart (the watcher's look and the claim look at the same content, one after the other)
    _memo: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def held(self) -> int:
        return len(self.checked) + len(self.wanted)

    def split(self, sha: str, now: Document) -> Split | None:
        """Content `now` (hash `sha`) told apart into this write's change and the rest;
        None when it does not hold the change, or not so that it can be told apart."""
        found = self._memo.get("split")
        if found is not None and found[0] == sha:
            return found[1]  # type: ignore[no-any-return]
        checked, wanted = parse(self.checked), parse(self.wanted)
        if "change" not in self._memo:
            self._memo["change"] = change_of(checked, wanted)
        split = without_change(checked, wanted, now, self._memo["change"])
        self._memo["split"] = (sha, split)
        return split

    def holds_change(self, sha: str, text: str | None) -> bool:
        """Whether content `text` (hash `sha`; None: not text) holds this write's change."""
        if sha == self.wanted_sha:
            return True
        return text is not None and self.split(sha, parse(text)) is not None


class HarnessWrites:
    """Announced writes by workspace-relative path and agent; daemon thread only."""

    def __init__(self) -> None:
        # (path, agent) -> announcement, oldest first: every one lasts ANNOUNCED_S from
        # when it was made, so this is also the order in which they expire
        self._announced: dict[tuple[str, str], Announced] = {}
        self._by_path: dict[str, dict[str, Announced]] = {}  # what the watcher asks
        self._per_agent: Counter[str] = Counter()
        self._held = 0
        self._deferred: set[str] = set()  # paths the watcher left alone meanwhile
        # the harness's shell commands, bracketed by its hooks (daemon/files/shellwindows.py)
        self.windows = ShellWindows()

    def room_for(self, path: str, agent: str) -> ToolError | None:
        """`invalid_params` when `agent` has PER_AGENT writes announced and not claimed
        (a re-announcement of one of them replaces it: there is room for that)."""
        self._forget_expired()
        if (path, agent) in self._announced or self._per_agent[agent] < PER_AGENT:
            return None
        return ToolError(
            ErrorCode.INVALID_PARAMS,
            f"agent {agent!r} has {PER_AGENT} writes announced by check_write and not yet"
            f" claimed, the most one agent may have; claim them (claim_write) or let them"
            f" expire ({ANNOUNCED_S:g} s) before announcing another",
            {"agent": agent, "announced": PER_AGENT, "limit": PER_AGENT},
        )

    def announce(self, announced: Announced) -> None:
        key = (announced.path, announced.agent)
        self._drop(key)
        self._announced[key] = announced
        self._by_path.setdefault(announced.path, {})[announced.agent] = announced
        self._per_agent[announced.agent] += 1
        self._held += announced.held
        while len(self._announced) > _MAX_ANNOUNCED or self._held > HELD_CHARS:
            self._drop(next(iter(self._announced)))

    def of(self, path: str, agent: str) -> Announced | None:
        """`agent`'s live announcement of `path`."""
        return next((a for a in self._live(path) if a.agent == agent), None)

    def by_others(self, path: str, agent: str) -> list[Announced]:
        """Live announcements of `path` by agents other than `agent`."""
        return [a for a in self._live(path) if a.agent != agent]

    def defers(self, path: str, sha: str, text: str | None) -> bool:
        """Whether the watcher leaves `path`, now holding `sha` (`text`: None when it is
        not text), to a claim: only while it holds a live announced change."""
        if any(a.holds_change(sha, text) for a in self._live(path)):
            self._deferred.add(path)
            return True
        return False

    def settle(self, path: str, agent: str) -> None:
        """`agent`'s write was claimed: its announcement is done."""
        self._drop((path, agent))
        if path not in self._by_path:
            self._deferred.discard(path)

    def expired(self) -> list[str]:
        """Deferred paths no live announcement holds any more: the watcher looks again."""
        if not self._deferred:
            return []
        self._forget_expired()
        done = [p for p in self._deferred if p not in self._by_path]
        self._deferred.difference_update(done)
        return done

    def _live(self, path: str) -> list[Announced]:
        now = time.monotonic()
        return [a for a in self._by_path.get(path, {}).values() if now < a.deadline]

    def _forget_expired(self) -> None:
        now = time.monotonic()
        while self._announced:
            key, oldest = next(iter(self._announced.items()))
            if now < oldest.deadline:
                return
            self._drop(key)

    def _drop(self, key: tuple[str, str]) -> None:
        found = self._announced.pop(key, None)
        if found is None:
            return
        on_path = self._by_path[found.path]
        del on_path[found.agent]
        if not on_path:
            del self._by_path[found.path]
        self._per_agent[found.agent] -= 1
        if not self._per_agent[found.agent]:
            del self._per_agent[found.agent]
        self._held -= found.held


def announced(
    path: str,
    agent: str,
    checked: str,
    checked_sha: str | None,
    wanted: str,
    wanted_sha: str,
    identity: str | None = None,
) -> Announced:
    """An announcement lasting ANNOUNCED_S from now."""
    deadline = time.monotonic() + ANNOUNCED_S
    return Announced(path, agent, deadline, checked, checked_sha, wanted, wanted_sha, identity)
