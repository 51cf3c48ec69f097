"""daemon.log through a real daemon: it rotates, keeps request lines only at DEBUG,
and is where every library warning goes — never the terminal of `editjournal serve`.

The library warning is a real one, not a stand-in: watchdog 7.1 keeps the inotify
watch of a directory moved out of the tree, and when the same directory comes back
under another name it registers its callback on that watch again and warns
(`RuntimeWarning: Callback with id ... already exists for watch ...`, with the repr
of its whole watch table: the 70 KB warning that once filled `make run`'s terminal).
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

import pytest

from editjournal.client import Client
from editjournal.daemon.runtime.logs import BACKUPS
from editjournal.schemas.endpoint import LOG_FILE, STATE_DIR_NAME
from tests.conftest import RunningDaemon, start
from tests.e2e.watch_support import settle

CAP = 4096  # the --log-max-bytes the rotation test gives
READ_LINE = "read a.txt (all of 1)"


def log_file(root: Path, backup: int = 0) -> Path:
    name = LOG_FILE if backup == 0 else f"{LOG_FILE}.{backup}"
    return root / STATE_DIR_NAME / name


def log_text(root: Path) -> str:
    return log_file(root).read_text()


def stderr_of(running: RunningDaemon) -> str:
    """Everything the daemon wrote to its stderr (its terminal), once it has stopped."""
    running.stop()
    assert running.proc.stderr is not None
    return running.proc.stderr.read().decode()


def test_the_log_rotates_past_its_cap_and_keeps_a_few_old_files(workspace: Path):
    (workspace / "a.txt").write_text("a\n")
    running = start(workspace, "--log-level", "debug", "--log-max-bytes", "4KiB")
    try:
        client = running.client()
        first = client.read_file("a.txt").version
        for _ in range(300):  # ~100 bytes a line: 30 KB, more than the cap and its backups
            last = client.read_file("a.txt").version
        kept = [log_file(workspace, backup) for backup in range(BACKUPS + 1)]
        assert all(path.stat().st_size <= CAP for path in kept)
        assert not log_file(workspace, BACKUPS + 1).exists()
        assert f": {last} agent-a {READ_LINE}" in log_text(workspace)  # the newest: live file
        assert f": {first} agent-a {READ_LINE}" not in "".join(p.read_text() for p in kept)
    finally:
        running.stop()


@pytest.mark.parametrize(("level", "logged"), [("info", False), ("debug", True)])
def test_request_lines_are_debug(workspace: Path, level: str, logged: bool):
    (workspace / "a.txt").write_text("a\n")
    running = start(workspace, "--log-level", level)
    try:
        version = running.client().read_file("a.txt").version  # logged before the reply
        text = log_text(workspace)
        assert "serving" in text  # INFO: the start
        assert (f"{version} agent-a {READ_LINE}" in text) is logged
    finally:
        running.stop()


def test_serve_shows_event_lines_on_the_terminal_but_not_in_the_file(workspace: Path):
    (workspace / "a.txt").write_text("a\n")
    running = start(workspace, "--log-stderr")
    version = running.client().read_file("a.txt").version
    terminal = stderr_of(running)
    line = next(line for line in terminal.splitlines() if READ_LINE in line)
    sha = hashlib.sha256(b"a\n").hexdigest()[:12]
    assert re.fullmatch(
        rf"\d\d:\d\d:\d\d {version} agent-a {re.escape(READ_LINE)} sha256 {sha}", line
    )
    assert "stopped (SIGTERM)" in terminal
    assert READ_LINE not in log_text(workspace)


def test_a_library_warning_goes_to_the_log_and_never_to_the_terminal(
    workspace: Path, tmp_path: Path
):
    for n in range(20):  # a watch table big enough for a long warning
        (workspace / "src" / f"package_with_a_long_name_{n}").mkdir(parents=True)
    away = tmp_path / "away"
    away.mkdir()
    running = start(workspace, "--log-stderr")
    try:
        client = running.client()
        for attempt in range(5):  # both renames normally land within watchdog's 500 ms
            _out_and_back(workspace, away, client, attempt)
            if "RuntimeWarning" in log_text(workspace):
                break
        text = log_text(workspace)
        assert "RuntimeWarning: Callback with id" in text, text[-2000:]
        assert "py.warnings" in text and "more chars]" in text  # shortened, not 70 KB
        assert max(len(line) for line in text.splitlines()) < 2500
    finally:
        terminal = stderr_of(running)
    assert "Warning" not in terminal and "watchdog" not in terminal, terminal
    assert "serving" in terminal  # the terminal itself works


def _out_and_back(workspace: Path, away: Path, client: Client, attempt: int) -> None:
    """A watched directory moved out of the workspace and straight back under a new name."""
    original = workspace / "src" / f"package_with_a_long_name_{attempt}"
    os.rename(original, away / original.name)
    os.rename(away / original.name, workspace / "src" / f"back_{attempt}")
    settle(client, workspace)  # the watcher handled both moves and what followed
