"""The group commit's pieces, on real files and a real SQLite journal: the staged
events a batch's later requests see, the durability setting of each commit, the
pending-writes rows recovery needs, and a full journal recognised as `disk_full`."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from editjournal.daemon.files.tempfiles import TEMP_PREFIX
from editjournal.daemon.files.workspace import Workspace
from editjournal.daemon.landing.flusher import Flusher
from editjournal.daemon.landing.pendingwrites import prepare, recover
from editjournal.daemon.landing.writeround import Prepared, WriteRound, disk_full
from editjournal.daemon.store.journal import Journal, JournalError
from editjournal.schemas.events import FileRead


def read(path: str) -> FileRead:
    return FileRead(path=path, sha256="0" * 64, line_count=1, size=1)


@pytest.fixture
def journal(tmp_path: Path) -> Journal:
    return Journal(tmp_path / "journal.db")


@given(
    committed=st.integers(0, 5),
    staged=st.integers(0, 5),
    limit=st.none() | st.integers(1, 8),
    newest_first=st.booleans(),
)
def test_records_are_the_committed_then_the_staged_events(
    tmp_path_factory: pytest.TempPathFactory,
    committed: int,
    staged: int,
    limit: int | None,
    newest_first: bool,
) -> None:
    journal = Journal(tmp_path_factory.mktemp("j") / "journal.db")
    for i in range(committed):
        journal.append("a", read(f"f{i % 2}"))
    for i in range(staged):
        journal.stage("b", read(f"f{i % 2}"))
    every = list(range(1, committed + staged + 1))
    expected = every[::-1] if newest_first else every
    got = journal.records(limit=limit, newest_first=newest_first)
    assert [r.seq for r in got] == expected[:limit]
    on_f1 = [s for s in expected if (s - 1 if s <= committed else s - committed - 1) % 2]
    got = journal.records(path="f1", limit=limit, newest_first=newest_first)
    assert [r.seq for r in got] == on_f1[:limit]
    journal.close()


def test_a_full_journal_is_recognised_as_disk_full(journal: Journal) -> None:
    journal.append("a", read("f"))
    pages = journal.db.execute("PRAGMA page_count").fetchone()[0]
    journal.db.execute(f"PRAGMA max_page_count = {pages}")  # SQLite's own "disk" is full
    journal.stage("a", read("g"), {"f" * 64: os.urandom(200_000)})
    with pytest.raises(JournalError) as failed:
        journal.commit()
    assert disk_full(failed.value)
    assert not disk_full(JournalError("locked"))


def test_a_round_publishes_the_last_content_of_each_file_once(tmp_path: Path) -> None:
    ws = Workspace(tmp_path)
    journal = Journal(tmp_path / "journal.db")
    prepare(journal)
    flusher = Flusher()
    round_ = WriteRound(ws, flusher, "this-boot")
    for seq, text in enumerate(["one\n", "two\n", "three\n"], start=1):
        write = ws.prepare_write("a.txt", text.encode(), durable=False)
        round_.add([Prepared(write, None)], seq, [seq])
        assert ws.read("a.txt").text == text  # the overlay serves the batch's content
    assert not (tmp_path / "a.txt").exists()
    round_.drop_superseded()
    assert len(temps(tmp_path)) == 1  # the superseded temp files are gone, never committed
    journal.commit(also=round_.statements())
    round_.committed()
    rows = journal.db.execute("SELECT seq, path, boot FROM pending_writes").fetchall()
    assert rows == [(3, "a.txt", "this-boot")]
    assert round_.publish() == {}
    assert (tmp_path / "a.txt").read_text() == "three\n" and temps(tmp_path) == []
    assert ws.overlay == {}
    assert flusher.settle()  # the file and its directory fsynced, off this thread
    journal.commit(also=round_.statements())  # the flushed row goes with the next commit
    assert journal.db.execute("SELECT COUNT(*) FROM pending_writes").fetchone() == (0,)
    flusher.close()


def test_recovery_finishes_only_what_the_journal_names(tmp_path: Path) -> None:
    ws = Workspace(tmp_path)
    journal = Journal(tmp_path / "journal.db")
    prepare(journal)
    (tmp_path / "a.txt").write_text("old\n")
    round_ = WriteRound(ws, Flusher(), "this-boot")
    write = ws.prepare_write("a.txt", b"new\n", durable=False)
    round_.add([Prepared(write, _sha(b"old\n"))], 1, [0])
    round_.drop_superseded()
    journal.commit(also=round_.statements())  # ... and a crash before the rename
    (tmp_path / f"{TEMP_PREFIX}stray").write_text("never journaled")
    done = recover(ws, journal, unclean=True, boot="this-boot")
    assert done.rolled_forward == ["a.txt"] and done.temps_removed == 1
    assert (tmp_path / "a.txt").read_text() == "new\n" and temps(tmp_path) == []
    assert journal.db.execute("SELECT COUNT(*) FROM pending_writes").fetchone() == (0,)


def temps(root: Path) -> list[Path]:
    return list(root.glob(f"{TEMP_PREFIX}*"))


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_a_files_older_rows_go_with_its_newest_flushed_write(tmp_path: Path) -> None:
    """Two rounds write a.txt one after the other: the flusher syncs only the newest
    (one burst), and both rows go, so recovery can never put the older content back."""
    ws = Workspace(tmp_path)
    journal = Journal(tmp_path / "journal.db")
    prepare(journal)
    flusher = Flusher()
    round_ = WriteRound(ws, flusher, "this-boot")
    for seq, text in enumerate(["one\n", "two\n"], start=1):
        write = ws.prepare_write("a.txt", text.encode(), durable=False)
        round_.add([Prepared(write, None)], seq, [seq])
        journal.commit(also=round_.statements())
        round_.committed()
        assert round_.publish() == {}
    assert flusher.settle()
    journal.commit(also=round_.statements())
    assert journal.db.execute("SELECT COUNT(*) FROM pending_writes").fetchone() == (0,)
    assert (tmp_path / "a.txt").read_text() == "two\n"
    flusher.close()
