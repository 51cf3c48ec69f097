"""The journal's own files, changed under a serving daemon, met by a real daemon and client.

- The WAL unlinked (`rm .editjournal/journal.db-wal`): SQLite would go on appending to
  the unlinked inode and every write acknowledged after it would vanish at the next
  kill -9. The daemon notices before it acknowledges, checkpoints every committed
  frame into the database file and reopens it (a fresh WAL at the path): writes keep
  being acknowledged, and after kill -9 and a restart every acknowledged event is
  there and `editjournal verify` passes.
- The database file replaced by a copy, moved aside or cut short: the daemon stops
  acknowledging. The next write is refused (`journal_unavailable`; `journal_corrupt`
  for a file cut short, which is damaged), changes neither the workspace file nor the
  file now at the journal's path, and so does every write after it; ping is still
  answered and SIGTERM still stops the daemon with exit 0.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from editjournal.client import Client
from editjournal.client.library.errors import RequestError
from editjournal.daemon.store.journal import Journal
from editjournal.schemas.endpoint import JOURNAL_FILE, STATE_DIR_NAME
from tests.conftest import RunningDaemon, start
from tests.e2e.cli_support import cli
from tests.polling import wait_until

BEFORE, AFTER = 20, 30  # writes acknowledged before the files are touched, and after


def journal_path(root: Path) -> Path:
    return root / STATE_DIR_NAME / JOURNAL_FILE


def wal_path(root: Path) -> Path:
    return root / STATE_DIR_NAME / (JOURNAL_FILE + "-wal")


def append(client: Client, k: int) -> int:
    """Append line k to log.txt; the seq its reply acknowledged."""
    return client.append_to_file("log.txt", f"line {k}\n").version


class Daemons:
    """The daemons a test started: any still running at its end is killed and reaped
    (an unreaped child would look alive to the fixture that checks none is left)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.started: list[RunningDaemon] = []

    def start(self, watch: bool = False) -> RunningDaemon:
        running = start(self.root, *([] if watch else ["--no-watch"]))
        self.started.append(running)
        return running

    def serving(self, watch: bool = False) -> tuple[RunningDaemon, Client, list[int]]:
        """A daemon that has acknowledged BEFORE appends to log.txt."""
        (self.root / "log.txt").write_text("")
        daemon = self.start(watch)
        client = daemon.client()
        return daemon, client, [append(client, k) for k in range(BEFORE)]

    def close(self) -> None:
        for running in self.started:
            if running.proc.poll() is None:
                running.stop(signal.SIGKILL)


@pytest.fixture
def daemons(workspace: Path) -> Iterator[Daemons]:
    tracked = Daemons(workspace)
    yield tracked
    tracked.close()


def journaled_seqs(root: Path) -> set[int]:
    """Every seq in the (stopped) daemon's journal, read without writing to it."""
    journal = Journal(journal_path(root), readonly=True)
    try:
        return {record.seq for record in journal.records()}
    finally:
        journal.close()


def digest(path: Path) -> str | None:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else None


def test_the_wal_unlinked_while_serving_loses_no_acknowledged_write(
    workspace: Path, daemons: Daemons
) -> None:
    daemon, client, acked = daemons.serving()
    wal_path(workspace).unlink()
    acked += [append(client, k) for k in range(BEFORE, BEFORE + AFTER)]
    client.close()
    daemon.stop(signal.SIGKILL)
    again = daemons.start()  # refused before: "events 1..51 were removed"
    assert again.client().ping().pid == again.proc.pid
    assert again.stop() == 0
    missing = sorted(set(acked) - journaled_seqs(workspace))
    assert not missing, f"acknowledged and lost: {missing}"
    lines = (workspace / "log.txt").read_text().splitlines()
    assert lines == [f"line {k}" for k in range(BEFORE + AFTER)]
    verified = cli(workspace, "verify", "--strict")
    assert verified.returncode == 0, verified.stdout + verified.stderr


def test_the_wal_unlinked_twice_is_taken_back_twice(workspace: Path, daemons: Daemons) -> None:
    """The WAL the daemon made after the first rescue is watched as well."""
    daemon, client, acked = daemons.serving()
    for round_ in range(2):
        wal_path(workspace).unlink()
        acked += [append(client, BEFORE + 10 * round_ + k) for k in range(10)]
    client.close()
    daemon.stop(signal.SIGKILL)
    assert not sorted(set(acked) - journaled_seqs(workspace))
    assert cli(workspace, "verify", "--strict").returncode == 0


def test_the_wal_unlinked_while_idle_is_taken_back_without_a_request(
    workspace: Path, daemons: Daemons
) -> None:
    """With the watcher on, the loop commits its observations every turn (each 100 ms
    at most), and each commit looks first: the WAL is taken back with no request at
    all, so a kill -9 soon after loses nothing. (With --no-watch the loop looks every
    turn too: test_issue40_loose's
    test_with_no_watcher_a_wal_unlinked_while_idle_is_taken_back_without_a_request.)"""
    daemon, client, acked = daemons.serving(watch=True)
    wal_path(workspace).unlink()
    wait_until(wal_path(workspace).exists, 10, "a fresh WAL at the path")
    client.close()
    daemon.stop(signal.SIGKILL)
    assert not sorted(set(acked) - journaled_seqs(workspace))
    assert cli(workspace, "verify", "--strict").returncode == 0


def replaced_by_a_copy(root: Path, client: Client) -> None:
    """A copy of the journal restored over it: a new inode at the path."""
    copy = root.parent / "journal-copy.db"
    shutil.copyfile(journal_path(root), copy)
    os.replace(copy, journal_path(root))


def moved_aside(root: Path, client: Client | None = None) -> None:
    journal_path(root).rename(journal_path(root).with_name("journal.db.aside"))


def cut_short(root: Path, client: Client) -> None:
    """The file cut to two pages while the WAL holds the pages a commit touches (every
    committed page moved into the file, then a few more writes): SQLite itself reads
    nothing that is missing and would go on committing onto a damaged file."""
    with sqlite3.connect(journal_path(root)) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    for k in range(5):
        append(client, 50 + k)
    os.truncate(journal_path(root), 8192)


CHANGES: dict[str, tuple[Callable[[Path, Client], None], str, str]] = {
    "replaced-by-a-copy": (replaced_by_a_copy, "journal_unavailable", "replaced"),
    "moved-aside": (moved_aside, "journal_unavailable", "moved away or removed"),
    "cut-short": (cut_short, "journal_corrupt", "cut short"),
}


@pytest.mark.parametrize("change", list(CHANGES))
def test_a_journal_file_changed_under_the_daemon_stops_every_acknowledgement(
    workspace: Path, daemons: Daemons, change: str
) -> None:
    make_change, code, named = CHANGES[change]
    daemon, client, _ = daemons.serving()
    make_change(workspace, client)
    at_path, in_file = digest(journal_path(workspace)), digest(workspace / "log.txt")
    for k in range(3):  # the first write after the change, and every one after it
        with pytest.raises(RequestError) as refused:
            append(client, 100 + k)
        assert refused.value.code == code, (refused.value.code, refused.value.message)
        assert named in refused.value.message, refused.value.message
    assert digest(workspace / "log.txt") == in_file  # the refused writes changed nothing
    assert digest(journal_path(workspace)) == at_path
    assert client.ping().pid == daemon.proc.pid
    assert daemon.stop() == 0
    stderr = daemon.proc.stderr.read().decode() if daemon.proc.stderr else ""
    assert "Traceback" not in stderr, stderr


def test_a_journal_moved_aside_holds_every_acknowledged_write(
    workspace: Path, daemons: Daemons
) -> None:
    """What was acknowledged before the move is all in the moved file by itself: a
    person who moves journal.db aside and clears the rest loses nothing acknowledged."""
    daemon, client, acked = daemons.serving()
    moved_aside(workspace)
    with pytest.raises(RequestError):
        append(client, 100)
    client.close()
    daemon.stop(signal.SIGKILL)  # no clean close may be what puts the WAL into the file
    aside = journal_path(workspace).with_name("journal.db.aside")
    for leftover in (wal_path(workspace), wal_path(workspace).with_name(JOURNAL_FILE + "-shm")):
        leftover.unlink(missing_ok=True)  # what a person moving only journal.db leaves
    os.replace(aside, journal_path(workspace))
    assert not sorted(set(acked) - journaled_seqs(workspace))
