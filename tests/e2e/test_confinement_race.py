"""Confinement under a symlink-swap race: a separate process flips a workspace file
between a regular file and a symlink to an outside file every ~1 ms while an agent
writes and reads it. Zero escapes: the outside file is never changed and its content
is never returned, in a fixed budget of attempts (short here, long under `stress`).
Refusals are fine (the link was seen); the daemon must answer every request."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from editjournal.client import RequestError
from editjournal.client.library.errors import DaemonUnavailable, RequestTimeout
from tests.conftest import RunningDaemon, wait_until

SECRET = b"SECRET outside the workspace\n"
REPO = Path(__file__).resolve().parents[2]


def race(daemon: RunningDaemon, tmp_path: Path, attempts: int) -> Counter[str]:
    outside = tmp_path / "outside" / "secret.txt"
    outside.parent.mkdir()
    outside.write_bytes(SECRET)
    before = outside.stat()
    target = daemon.root / "target.txt"
    target.write_bytes(b"inside\n")
    stop = tmp_path / "stop"
    flipper = subprocess.Popen(
        [sys.executable, "-m", "tests.e2e.swap_worker", str(target), str(outside), str(stop)],
        cwd=REPO,
    )
    client = daemon.client("racer", timeout=20)  # a dead daemon fails the test, not hangs it
    outcomes: Counter[str] = Counter()
    try:
        wait_until(target.is_symlink, what="the flipper to swap the link in")
        i = 0
        # at least `attempts`; on a busy machine more, until both sides of the race were met
        while i < attempts or (
            not (outcomes["write:ok"] and outcomes["read:ok"]) and i < 10 * attempts
        ):
            i += 1
            for kind, call in (
                ("write", lambda i=i: client.write_file("target.txt", f"inside {i}\n")),
                ("read", lambda: client.read_file("target.txt")),
            ):
                try:
                    result = call()
                except (DaemonUnavailable, RequestTimeout):
                    raise
                except RequestError as e:
                    outcomes[f"{kind}:{e.code}"] += 1
                    continue
                outcomes[f"{kind}:ok"] += 1
                assert "SECRET" not in getattr(result, "content", ""), "read escaped"
    finally:
        stop.touch()
        flipper.wait(30)
    after = outside.stat()
    assert outside.read_bytes() == SECRET, "a write escaped the workspace"
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert client.ping()  # the daemon survived every swap
    assert int(Path(f"{stop}.count").read_text()) > 0
    return outcomes


def test_symlink_swap_race_never_escapes(daemon: RunningDaemon, tmp_path: Path) -> None:
    outcomes = race(daemon, tmp_path, attempts=150)
    # The race was real: some requests met the link (refused), some the file (served).
    assert outcomes["write:ok"] and outcomes["read:ok"], outcomes
    assert sum(n for k, n in outcomes.items() if not k.endswith(":ok")), outcomes


@pytest.mark.stress
def test_symlink_swap_race_never_escapes_long(daemon: RunningDaemon, tmp_path: Path) -> None:
    outcomes = race(daemon, tmp_path, attempts=10_000)
    assert outcomes["write:ok"] and outcomes["read:ok"], outcomes
