"""Detection latency: from a write on disk to the committed `outside_change` event.

The clock starts just before the write and stops when the event arrives on
the daemon's PUB socket — so the figure includes the debounce (20 ms of
quiet per path), the re-read and hash, and the journal commit. Side by side
in the same run, where Watchman is installed: from the same kind of write to
its subscription notification (Watchman settles 20 ms too).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

from bench.stats import percentiles
from editjournal.client import Client


def editjournal_latency(root: Path, n: int) -> tuple[float, float]:
    target = root / "watched.txt"
    target.write_text("start\n")
    client = Client(root, "bench-detect")
    client.read_file("watched.txt")  # known: contents are journaled, the costlier path
    samples: list[float] = []
    try:
        with client.subscribe(["watched.txt"]) as events:
            events.wait_ready(lambda: client.read_file("watched.txt"))
            for i in range(n):
                _drain(events)
                started = time.perf_counter()
                target.write_text(f"write {i}\n")
                while (event := events.next_event(10)) is not None:
                    if event.kind == "outside_change":
                        samples.append((time.perf_counter() - started) * 1e6)
                        break
                else:
                    raise RuntimeError(f"no outside_change for write {i}")
    finally:
        client.close()
        _stop(client.daemon_pid)
    return percentiles(samples)


def _stop(pid: int, timeout: float = 30.0) -> None:
    """SIGTERM the daemon the client started, and wait (bounded) until it is gone."""
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.01)


def _drain(events: object) -> None:
    while events.next_event(0) is not None:  # type: ignore[attr-defined]
        pass


def watchman_latency(root: Path, n: int) -> tuple[float, float] | None:
    """The same measure through Watchman's subscription; None when it is not installed."""
    if shutil.which("watchman") is None:
        return None
    target = root / "watched.txt"
    target.write_text("start\n")
    subprocess.run(["watchman", "watch-project", str(root)], check=True, capture_output=True)
    command = ["subscribe", str(root), "bench", {"expression": ["name", "watched.txt"]}]
    proc = subprocess.Popen(
        ["watchman", "-j", "-p", "--no-pretty"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(json.dumps(command) + "\n")
    proc.stdin.flush()
    proc.stdout.readline()  # the subscribe acknowledgement
    samples: list[float] = []
    try:
        for i in range(n):
            started = time.perf_counter()
            target.write_text(f"write {i}\n")
            while True:
                note = json.loads(proc.stdout.readline())
                if note.get("subscription") == "bench" and not note.get("is_fresh_instance"):
                    break
            samples.append((time.perf_counter() - started) * 1e6)
    finally:
        proc.kill()
        subprocess.run(["watchman", "watch-del", str(root)], capture_output=True)
    return percentiles(samples)
