"""A Client's check that its daemon still lives, against real processes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from editjournal.client.library.recovery import daemon_alive
from tests.conftest import wait_until


def _state_of(pid: int) -> str:
    with open(f"/proc/{pid}/stat", "rb") as stat:
        return stat.read().rsplit(b")", 1)[1].split()[0].decode()


def test_a_process_that_exited_but_was_not_reaped_is_dead(tmp_path: Path) -> None:
    """A zombie still answers signal 0; the quick check must not take it for alive."""
    nobody_listens = f"ipc://{tmp_path}/daemon.sock"
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        assert daemon_alive(child.pid, nobody_listens)
        child.kill()
        wait_until(lambda: _state_of(child.pid) == "Z", what="an unreaped child")
        assert not daemon_alive(child.pid, nobody_listens)
    finally:
        child.kill()
        child.wait(timeout=10)
