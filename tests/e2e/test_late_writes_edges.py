"""The edges of holding a displaced file for late writes (daemon/files/latewrites.py).

- Where a read lease cannot be taken (a file system without leases, a file owned by
  another user), the daemon asks /proc who has the displaced inode open for writing.
  The tests run as root, and root may take any lease, so the daemon is started with
  `--no-leases` (tests only: every lease "unavailable"); the /proc scan it then makes
  is the real one.
- At a clean stop, what a writer still holding a displaced file wrote is taken in, and
  the file is named in the log: what the writer writes after the stop is lost (as for
  every held file at a kill -9: an unlinked inode cannot be found again).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from editjournal.client import Client
from editjournal.schemas.endpoint import LOG_FILE, STATE_DIR_NAME
from tests.conftest import RunningDaemon, start
from tests.polling import wait_until

NAME = "shared.txt"


@pytest.fixture
def target(workspace: Path) -> Path:
    (workspace / NAME).write_text("HEADER 0\nbody\n")
    return workspace / NAME


@pytest.fixture
def no_leases(workspace: Path, target: Path) -> Iterator[RunningDaemon]:
    running = start(workspace, "--no-watch", "--no-leases")
    yield running
    if running.proc.poll() is None:
        running.stop()


@pytest.fixture
def daemon(workspace: Path, target: Path) -> Iterator[RunningDaemon]:
    running = start(workspace, "--no-watch")
    yield running
    if running.proc.poll() is None:
        running.stop()


def late_writes(client: Client) -> dict[str, int]:
    stats: dict[str, int] = client.status().group_commit["late_writes"]
    return stats


def prepend_displacing(client: Client, target: Path) -> None:
    """An agent's write that replaces `target` (a new inode at its name)."""
    client.read_file(NAME)
    inode = target.stat().st_ino
    client.prepend_to_file(NAME, "agent line\n")
    assert target.stat().st_ino != inode


def test_without_leases_proc_finds_a_writer_holding_the_displaced_file_past_the_grace(
    no_leases: RunningDaemon, target: Path
) -> None:
    """A writer descheduled between its `open` and its `write` for longer than the grace,
    on a file whose lease cannot be taken: /proc shows the displaced inode open for
    writing in the writer's process, so the daemon keeps holding it, takes the line in,
    and lets it go once the writer closed it."""
    client = no_leases.client("agent-a")
    with open(target, "a", encoding="utf-8") as writer:  # opened before the write lands
        prepend_displacing(client, target)
        wait_until(
            lambda: late_writes(client)["kept_for_writers"] >= 1,
            10,
            "a grace check to find the writer through /proc",
        )
        assert late_writes(client)["proc_scans"] >= 1
        writer.write("late line\n")
        writer.flush()
        wait_until(
            lambda: "late line" in target.read_text().splitlines(),
            10,
            "the line taken in while its writer holds the displaced file",
        )
    wait_until(lambda: late_writes(client)["held"] == 0, 10, "the displaced file let go")
    assert target.read_text().splitlines() == ["agent line", "HEADER 0", "body", "late line"]


def test_a_clean_stop_takes_in_what_a_writer_still_holding_a_displaced_file_wrote(
    daemon: RunningDaemon, target: Path, workspace: Path
) -> None:
    """The writer writes its line and keeps the file open across the daemon's stop: the
    line is in the file after the stop, and the log names the file still open."""
    client = daemon.client("agent-a")
    with open(target, "a", encoding="utf-8") as writer:
        prepend_displacing(client, target)
        wait_until(
            lambda: late_writes(client)["kept_for_writers"] >= 1,
            10,
            "a grace check to find the writer still there",
        )
        writer.write("late line\n")
        writer.flush()
        assert daemon.stop() == 0
    assert target.read_text().splitlines() == ["agent line", "HEADER 0", "body", "late line"]
    log = (workspace / STATE_DIR_NAME / LOG_FILE).read_text()
    assert f"{NAME}: the file a write displaced" in log
    assert "still open for writing at the stop" in log
