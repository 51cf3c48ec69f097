"""What a finished job leaves behind, freed a few items a turn.

A job that planned many files holds every plan until it is dropped, and dropping it
frees them all at once: a 1,000-file restore's plans (each file's documents and anchor
indexes, about 2 M objects) took 48 ms to free, in the turn that had just run its
final run and commit. So the server hands a finished job's big containers here
(`Job.leftovers`, when the job has it) and empties them a few items at a time, at
most `STEP_S` a turn, the loop not sleeping while some are left. The memory is back
within a few turns of the reply, none of them held for it.
"""

from __future__ import annotations

import time
from collections import deque
from typing import Any, Protocol, runtime_checkable

STEP_S = 0.005  # the longest one turn spends freeing
FREED_PER_LOOK = 16  # items freed between looks at the clock


@runtime_checkable
class HasLeftovers(Protocol):
    """A job whose big containers are emptied after it finishes, a few items a turn."""

    def leftovers(self) -> list[dict[Any, Any] | list[Any]]: ...


class Leftovers:
    """Containers finished jobs left, emptied in order; owned by the daemon's thread."""

    def __init__(self) -> None:
        self._held: deque[dict[Any, Any] | list[Any]] = deque()

    def __bool__(self) -> bool:
        return bool(self._held)

    def keep(self, job: object) -> None:
        """Take `job`'s containers (before the job is dropped: they outlive it here)."""
        if isinstance(job, HasLeftovers):
            self._held.extend(found for found in job.leftovers() if found)

    def free_some(self, seconds: float = STEP_S) -> None:
        """Empty the containers for up to `seconds`, at least a few items."""
        deadline = time.perf_counter() + seconds
        while self._held:
            held = self._held[0]
            for _ in range(FREED_PER_LOOK):
                if not held:
                    break
                if isinstance(held, dict):
                    held.popitem()
                else:
                    held.pop()
            if not held:
                self._held.popleft()
            if time.perf_counter() >= deadline:
                return
