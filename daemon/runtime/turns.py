"""How long each turn of the loop held the daemon's thread, and what it did.

The promise is that no request holds the thread for more than ~100 ms at a time
(docs/guarantees.md): every other agent waits for the turn in progress. A turn over
that is logged with what it did, and `status` shows the longest turn of the run and
how many went over, so a stall can be named without a profiler (and `make bench`
reads the same figures).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any

SLOW_TURN_S = 0.1
MAX_LABELS = 8  # what a turn did, as told in the log: the first few are enough

log = logging.getLogger("editjournal")


@dataclass
class TurnClock:
    """Times the loop's turns; `label` names what the turn in progress is doing."""

    turns: int = 0
    slow: int = 0
    longest_s: float = 0.0
    longest_did: tuple[str, ...] = ()
    _started: float = 0.0
    _did: list[str] = field(default_factory=list)

    def start(self) -> None:
        self._started = time.perf_counter()
        self._did.clear()

    def label(self, what: str) -> None:
        if len(self._did) < MAX_LABELS:
            self._did.append(what)

    def elapsed(self) -> float:
        """Seconds since the turn in progress began."""
        return time.perf_counter() - self._started

    def stop(self) -> None:
        took = time.perf_counter() - self._started
        self.turns += 1
        if took > self.longest_s:
            self.longest_s, self.longest_did = took, tuple(self._did)
        if took > SLOW_TURN_S:
            self.slow += 1
            log.info("a turn held the thread %.0f ms: %s", took * 1e3, ", ".join(self._did))

    def stats(self) -> dict[str, Any]:
        return {
            "turns": self.turns,
            "over_100ms": self.slow,
            "longest_ms": round(self.longest_s * 1e3, 1),
            "longest_did": list(self.longest_did),
        }
