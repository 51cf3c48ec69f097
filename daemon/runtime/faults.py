"""Faults the tests inject into a real daemon, in one object (never in production use).

The daemon takes them from hidden options (`--crash-on-method`, `--fail-after-prepare`,
`--kill-after-commit`, `--no-flush`, `--boot-id`, `--hold-after-commit`): the crash
tests need a real process failing at exactly the point they exercise. A daemon started without them
carries `NO_FAULTS`, and every check below is a comparison against None or False.
"""

from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

from editjournal.daemon.runtime.boundary import InjectedCrash, InjectedFailure

HOLD_SECONDS = 60.0


@dataclass(frozen=True)
class Faults:
    crash_on: str | None = None  # a request of this method ends the loop as a crash would
    fail_after_prepare: str | None = None  # ...raises once its writes are prepared
    kill_after_commit: bool = False  # SIGKILL after a batch's commit, before its renames
    # a power cut comes before any landed write is flushed: nothing is ever fsynced after
    # the commit (the files stay as the page cache has them; their rows stay for recovery)
    no_flush: bool = False
    boot_id: str | None = None  # this boot's id as recovery sees it (a reboot, faked)
    # a file: after a batch's commit, before its renames, the daemon creates it and waits
    # until it is gone, so a test can be the outside writer a landing meets
    hold_after_commit: str | None = None

    def on_request(self, method: str, agent: str) -> None:
        if method == self.crash_on:
            raise InjectedCrash(f"crash requested by {agent}")

    def on_prepared(self, method: str, agent: str) -> None:
        """The request's writes are prepared and its events staged (the boundary must
        answer the failure and remove their temp files)."""
        if method == self.fail_after_prepare:
            raise InjectedFailure(f"failure requested by {agent} after staging")

    def on_commit(self, writes: int) -> None:
        """The batch's events are durable, its files not yet renamed into place (the
        crash start-up recovery must finish)."""
        if self.kill_after_commit and writes:
            os.kill(os.getpid(), signal.SIGKILL)
        if self.hold_after_commit and writes:
            _hold(Path(self.hold_after_commit))


def _hold(marker: Path) -> None:
    """Create `marker` and wait (at most `HOLD_SECONDS`) until the test removes it."""
    marker.touch()
    deadline = time.monotonic() + HOLD_SECONDS
    while marker.exists() and time.monotonic() < deadline:
        time.sleep(0.01)  # a fault's wait, never on a production path


NO_FAULTS = Faults()
