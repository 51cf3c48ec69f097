"""Real daemons for the benchmarks, started exactly as clients start them
(`editjournal.client.library.connection.daemon_command`: isolation flags, "/" as working
directory), in the foreground so the benchmark owns and stops the process."""

from __future__ import annotations

import re
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from editjournal.client import Client
from editjournal.client.library.connection import DAEMON_CWD, daemon_command, live_endpoint

START_TIMEOUT_S = 120.0  # a journal of a million events must be given time to fold


@dataclass
class Daemon:
    root: Path
    proc: subprocess.Popen[bytes]
    errors: IO[bytes]  # its stderr, shown when it fails to start

    def wait_serving(self) -> None:
        """Poll (every millisecond, bounded) until the daemon's endpoint answers."""
        deadline = time.monotonic() + START_TIMEOUT_S
        while live_endpoint(self.root) is None:
            if self.proc.poll() is not None:
                self.errors.seek(0)
                said = self.errors.read().decode(errors="replace")[-2000:]
                raise RuntimeError(
                    f"the daemon of {self.root} exited {self.proc.returncode}: {said}"
                )
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(
                    f"the daemon of {self.root} did not serve in {START_TIMEOUT_S} s"
                )
            time.sleep(0.001)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.errors.close()


def spawn(root: Path, *options: str) -> Daemon:
    errors = tempfile.TemporaryFile()  # noqa: SIM115 - closed by Daemon.stop
    proc = subprocess.Popen(
        daemon_command(root, *options),
        cwd=DAEMON_CWD,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=errors,
    )
    return Daemon(root, proc, errors)


@contextmanager
def serving(root: Path, *options: str) -> Iterator[Daemon]:
    daemon = spawn(root, *options)
    try:
        daemon.wait_serving()
        yield daemon
    finally:
        daemon.stop()


def spawn_to_first_ping(root: Path, *options: str) -> float:
    """Microseconds from spawning the daemon to its first `ping` reply."""
    started = time.perf_counter()
    daemon = spawn(root, *options)
    try:
        daemon.wait_serving()
        with Client(root, "bench-startup", autostart=False) as client:
            client.ping()
        return (time.perf_counter() - started) * 1e6
    finally:
        daemon.stop()


def anchor_of(client: Client, name: str, line: int) -> str:
    """The anchor of line `line` of `name` (a one-line ranged read: files of any size)."""
    found = client.read_file(name, hashes=True, range=f"{line}-{line}").lines or []
    return next(entry.hash for entry in found if entry.line == line)


SLOW_TURN = re.compile(r"a turn held the thread (\d+) ms")


def log_size(root: Path) -> int:
    """Bytes of the daemon's log now: where the turns logged after this begin."""
    log = root / ".editjournal" / "daemon.log"
    return log.stat().st_size if log.exists() else 0


def longest_logged(root: Path, offset: int) -> float:
    """The longest turn the daemon logged after `offset` bytes of its log (ms; it logs
    every turn over 100 ms, daemon/runtime/turns.py): 0 when none went over."""
    with (root / ".editjournal" / "daemon.log").open("rb") as f:
        f.seek(offset)
        text = f.read().decode("utf-8", "replace")
    return max((float(m.group(1)) for m in SLOW_TURN.finditer(text)), default=0.0)
