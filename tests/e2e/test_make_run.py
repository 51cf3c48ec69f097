"""`make run`: installs only what running needs, and Ctrl-C ends it without a make error.

The recipe runs for real on a pseudo-terminal, with this test environment's venv
as `VENV` and its install stamp taken as done (`make -o`), so nothing is installed;
Ctrl-C is the terminal's ^C, which reaches make, its shell and the daemon alike.
What each target installs is read from `make -n` on a venv that does not exist.
"""

from __future__ import annotations

import os
import pty
import select
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
VENV = Path(sys.executable).parent.parent

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs make")


def dry_run(target: str, tmp_path: Path) -> str:
    venv = tmp_path / "no-venv"
    done = subprocess.run(
        ["make", "-n", "-C", str(REPO), f"VENV={venv}", target],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_make_run_installs_the_mcp_extra_only_and_test_the_development_set(tmp_path: Path):
    run = dry_run("run", tmp_path)
    assert "-e '.[mcp]'" in run and ".[dev]" not in run
    assert ".installed-run" in run
    for target in ("test", "lint"):
        assert "-e '.[dev]'" in dry_run(target, tmp_path)


def _read(fd: int, seen: bytearray, seconds: float) -> bool:
    """Read the terminal for `seconds`; False once it is closed."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:  # EIO: every writer of the terminal has closed it
                return False
            if not chunk:
                return False
            seen += chunk
    return True


def test_ctrl_c_ends_make_run_quietly(tmp_path: Path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    argv = ["make", "-C", str(REPO), f"VENV={VENV}", "-o", f"{VENV}/.installed-run", "run",
            f"WORKSPACE={workspace}"]  # fmt: skip
    pid, fd = pty.fork()
    if pid == 0:  # the child: SIGINT at its default, as a terminal's foreground job has it
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.execvp(argv[0], argv)
    seen = bytearray()
    try:
        deadline = time.monotonic() + 60
        serving = workspace / ".editjournal" / "daemon.json"
        while not serving.exists() and time.monotonic() < deadline:
            assert _read(fd, seen, 0.2), seen.decode(errors="replace")
        assert serving.exists(), seen.decode(errors="replace")
        os.write(fd, b"\x03")
        while _read(fd, seen, 0.5) and time.monotonic() < deadline:
            pass
    finally:
        _, status = os.waitpid(pid, 0)
        os.close(fd)
    text = seen.decode(errors="replace")
    assert "stopped (SIGINT)" in text, text
    assert "make: ***" not in text and "Error 130" not in text, text
    code = os.waitstatus_to_exitcode(status)
    assert code in (0, -signal.SIGINT, 130), text  # make dies by the SIGINT it was sent
