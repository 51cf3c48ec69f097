"""The durability promise after a power cut: an acknowledged write is durable in the
journal (its event, its content as a blob, its `pending_writes` row: one fsynced
commit); its file's own fsyncs come after the reply (daemon/landing/flusher.py). If
the power goes before them, the next start rebuilds the file from the journal.

A power cut is simulated with real processes and real files: the daemon runs with
the test-only `--no-flush` (no landed write is ever fsynced, as if the power went
first) and is killed -9; the test then leaves each file as a power cut may (the old
content, nothing, an empty file, a lost temp file) and starts a daemon that sees a
new boot id (`--boot-id`, what a reboot changes).
"""

from __future__ import annotations

import signal
import sqlite3
from pathlib import Path

import pytest

from editjournal.client import RequestError
from editjournal.daemon.files.tempfiles import TEMP_PREFIX
from tests.conftest import RunningDaemon, start
from tests.e2e.test_write_recovery import since_last_start
from tests.polling import wait_until


def pending_rows(root: Path) -> int:
    db = sqlite3.connect(f"file:{root / '.editjournal' / 'journal.db'}?mode=ro", uri=True)
    try:
        return int(db.execute("SELECT COUNT(*) FROM pending_writes").fetchone()[0])
    finally:
        db.close()


def acknowledged_then_cut(workspace: Path, edits: dict[str, str]) -> None:
    """Every edit acknowledged by a daemon that never flushes, then a kill -9."""
    running = start(workspace, "--no-flush", "--boot-id", "boot-before")
    client = running.client()
    for name, line in edits.items():
        client.read_file(name)
        client.append_to_file(name, line)
    assert running.stop(signal.SIGKILL) == -signal.SIGKILL
    assert pending_rows(workspace) == len(edits)  # none was let go: none was flushed


def restarted(workspace: Path, boot: str = "boot-after") -> RunningDaemon:
    return start(workspace, "--boot-id", boot)


def test_files_a_power_cut_took_back_are_rebuilt_from_the_journal(workspace: Path) -> None:
    for name in ("old.txt", "gone.txt", "empty.txt"):
        (workspace / name).write_text("one\n")
    acknowledged_then_cut(workspace, {"old.txt": "two\n", "gone.txt": "2\n", "empty.txt": "ii\n"})
    (workspace / "old.txt").write_text("one\n")  # the rename never reached the disk
    (workspace / "gone.txt").unlink()  # a new file whose directory entry was lost
    (workspace / "empty.txt").write_bytes(b"")  # the rename did, the data did not

    running = restarted(workspace)
    try:
        client = running.client()
        recovered = client.status().group_commit["recovered"]
        assert sorted(recovered["rolled_forward"]) == ["empty.txt", "gone.txt", "old.txt"]
        assert recovered["unfinished"] == []
        assert (workspace / "old.txt").read_text() == "one\ntwo\n"
        assert (workspace / "gone.txt").read_text() == "one\n2\n"
        assert (workspace / "empty.txt").read_text() == "one\nii\n"
        assert list(workspace.glob("*.editjournal-displaced-*")) == []  # nothing to keep
        journal = running.journal()
        assert since_last_start(journal, "outside_change") == []  # nothing fake
        assert journal.verify().ok
    finally:
        running.stop()


def test_a_lost_temp_file_is_rebuilt_from_the_journal(workspace: Path) -> None:
    """Killed between the commit and the rename, and the unsynced temp file lost too."""
    (workspace / "a.txt").write_text("one\n")
    running = start(workspace, "--kill-after-commit", "--boot-id", "boot-before")
    client = running.client(timeout=5)
    client.read_file("a.txt")
    with pytest.raises(RequestError):  # no reply: the daemon died before answering
        client.append_to_file("a.txt", "two\n")
    assert running.proc.wait(timeout=10) == -signal.SIGKILL
    running.stop()
    [temp] = [p for p in workspace.glob(f"{TEMP_PREFIX}*")]
    temp.write_bytes(b"\0" * 4)  # what a power cut may leave of an unsynced file

    running = restarted(workspace)
    try:
        assert (workspace / "a.txt").read_text() == "one\ntwo\n"
        recovered = running.client().status().group_commit["recovered"]
        assert recovered["rolled_forward"] == ["a.txt"]
        assert list(workspace.glob(f"{TEMP_PREFIX}*")) == []
    finally:
        running.stop()


def test_after_a_reboot_other_content_is_kept_beside_the_rolled_forward_file(
    workspace: Path,
) -> None:
    (workspace / "a.txt").write_text("one\n")
    acknowledged_then_cut(workspace, {"a.txt": "two\n"})
    (workspace / "a.txt").write_text("on\x00\x00\x00")  # neither version: torn, or someone's

    running = restarted(workspace)
    try:
        assert (workspace / "a.txt").read_text() == "one\ntwo\n"
        [kept] = workspace.glob("a.txt.editjournal-displaced-*")
        assert kept.read_text() == "on\x00\x00\x00"  # nothing lost
        assert running.client().status().group_commit["recovered"]["rolled_forward"] == ["a.txt"]
    finally:
        running.stop()


def test_without_a_reboot_a_change_made_while_down_is_not_clobbered(workspace: Path) -> None:
    """A kill -9 keeps the page cache: a file that is neither version was changed by
    someone while the daemon was down, and is left as it is."""
    (workspace / "a.txt").write_text("one\n")
    acknowledged_then_cut(workspace, {"a.txt": "two\n"})
    (workspace / "a.txt").write_text("someone else\n")

    running = restarted(workspace, boot="boot-before")
    try:
        assert (workspace / "a.txt").read_text() == "someone else\n"
        assert running.client().status().group_commit["recovered"]["unfinished"] == ["a.txt"]
        assert list(workspace.glob("a.txt.editjournal-displaced-*")) == []
    finally:
        running.stop()


def test_a_file_the_cut_spared_is_already_done(workspace: Path) -> None:
    (workspace / "a.txt").write_text("one\n")
    acknowledged_then_cut(workspace, {"a.txt": "two\n"})

    running = restarted(workspace)
    try:
        recovered = running.client().status().group_commit["recovered"]
        assert (recovered["already_done"], recovered["rolled_forward"]) == (1, [])
        assert (workspace / "a.txt").read_text() == "one\ntwo\n"
        assert pending_rows(workspace) == 0
    finally:
        running.stop()


def test_a_flushed_write_lets_go_of_its_row(workspace: Path) -> None:
    """In a daemon that flushes, rows go with the commits after their flush, and a clean
    stop leaves none."""
    (workspace / "a.txt").write_text("one\n")
    running = start(workspace)
    try:
        client = running.client()
        client.read_file("a.txt")
        client.append_to_file("a.txt", "two\n")

        def let_go() -> bool:
            client.read_file("a.txt")  # a commit: it removes the rows flushed so far
            return pending_rows(workspace) == 0

        wait_until(let_go, what="the flushed write's row to go")
        client.append_to_file("a.txt", "three\n")
    finally:
        assert running.stop() == 0
    assert pending_rows(workspace) == 0
    assert (workspace / "a.txt").read_text() == "one\ntwo\nthree\n"
