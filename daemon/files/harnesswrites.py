"""Writes an agent's own harness announced: its built-in tool is about to write a file.

A harness hook asks the daemon before the harness's own Edit or Write tool runs
(`check_write`); when the daemon allows it, it notes the path here, with the
agent and a deadline. The watcher then leaves that path alone (it would record the
harness's write as an anonymous outside change a few milliseconds later) until the
hook says the tool wrote it (`claim_write`, which journals it as the agent's edit)
or the deadline passes: then the watcher looks again, and whatever is there is
judged as any outside change is. Nothing here is state: a lost note costs an
anonymous `outside_change`, never a wrong event.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

ANNOUNCED_S = 60.0  # how long a write announced by check_write keeps the watcher away
_MAX_PATHS = 10_000  # announcements at once: past this, the oldest are forgotten


@dataclass(frozen=True, slots=True)
class Announced:
    agent: str
    deadline: float  # time.monotonic()


class HarnessWrites:
    """Announced writes by workspace-relative path; daemon thread only."""

    def __init__(self) -> None:
        self._announced: dict[str, Announced] = {}
        self._deferred: set[str] = set()  # paths the watcher left alone meanwhile

    def announce(self, path: str, agent: str, ttl_s: float = ANNOUNCED_S) -> None:
        if len(self._announced) >= _MAX_PATHS:
            self._announced.pop(next(iter(self._announced)))
        self._announced.pop(path, None)
        self._announced[path] = Announced(agent, time.monotonic() + ttl_s)

    def defers(self, path: str) -> bool:
        """Whether the watcher leaves `path` alone now (and looks again later)."""
        found = self._announced.get(path)
        if found is None:
            return False
        if time.monotonic() >= found.deadline:
            del self._announced[path]
            return False
        self._deferred.add(path)
        return True

    def settle(self, path: str) -> None:
        """The write was claimed: the watcher may look at the path again."""
        self._announced.pop(path, None)
        self._deferred.discard(path)

    def expired(self) -> list[str]:
        """Deferred paths whose announcement ran out: the watcher looks at them again."""
        now = time.monotonic()
        done = [p for p in self._deferred if self._announced.get(p, _GONE).deadline <= now]
        for path in done:
            self._deferred.discard(path)
            self._announced.pop(path, None)
        return done


_GONE = Announced("", 0.0)
