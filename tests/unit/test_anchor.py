"""Tests for the chain anchor (daemon.store.chainanchor) on real files and a real journal: the
tip is appended per commit, truncation and recomputed chains are found (naming the
first anchored seq that changed), and with a key a forged anchor is found too."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from editjournal.daemon.store.chainanchor import (
    ANCHOR_FILE,
    Anchor,
    copy_path,
    create_key,
    key_path,
    load_key,
)
from editjournal.daemon.store.hashchain import GENESIS_HASH, chain_hash, hash_text
from editjournal.daemon.store.journal import Journal, sha256_hex
from editjournal.schemas.events import FileRead


def fill(journal: Journal, n: int) -> None:
    for i in range(n):
        content = f"v{i}\n".encode()
        event = FileRead(path="a.py", sha256=sha256_hex(content), size=3, line_count=1)
        journal.append("agent", event, {event.sha256: content})


@pytest.fixture
def no_key(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))


def test_every_commit_appends_its_tip_and_the_last_whole_record_counts(
    tmp_path: Path, no_key: None
) -> None:
    journal = Journal(tmp_path / "journal.db")
    fill(journal, 5)
    anchor_file = tmp_path / ANCHOR_FILE
    assert anchor_file.stat().st_size == 5 * 56
    with open(anchor_file, "ab") as f:
        f.write(b"torn")  # a crash mid-record
    last = Anchor(anchor_file).last()
    assert last is not None and (last.seq, last.hash, last.mac_ok) == (5, journal.tip_hash, True)
    assert journal.anchor_problem() is None


def test_a_cut_tail_is_found_naming_the_first_missing_seq(tmp_path: Path, no_key: None) -> None:
    journal = Journal(tmp_path / "journal.db")
    fill(journal, 6)
    journal.close()
    with sqlite3.connect(tmp_path / "journal.db") as db:
        db.execute("DROP TRIGGER events_no_delete")
        db.execute("DELETE FROM events WHERE seq > 3")
    problem = Journal(tmp_path / "journal.db").anchor_problem()
    assert problem is not None and problem[0] == 4 and "4..6 were removed" in problem[1]


@pytest.mark.parametrize("first", [1, 3, 6])
def test_a_recomputed_chain_is_found_naming_the_first_rewritten_seq(
    tmp_path: Path, no_key: None, first: int
) -> None:
    journal = Journal(tmp_path / "journal.db")
    fill(journal, 9)
    journal.close()
    with sqlite3.connect(tmp_path / "journal.db") as db:
        db.execute("DROP TRIGGER events_no_update")
        before = db.execute("SELECT hash FROM events WHERE seq = ?", [first - 1]).fetchone()
        prev = hash_text(before[0]) if before else GENESIS_HASH  # rows derive their prev_hash
        rows = db.execute(
            "SELECT seq, ts, kind, path, body FROM events WHERE seq >= ? ORDER BY seq", [first]
        ).fetchall()
        for seq, ts, kind, path, body in rows:
            digest = chain_hash(prev, seq, ts, "mallory", kind, path, body)
            db.execute(
                "UPDATE events SET agent = 'mallory', prev_hash = ?, hash = ? WHERE seq = ?",
                [prev, digest, seq],
            )
            prev = digest
    reopened = Journal(tmp_path / "journal.db")
    assert reopened.verify().ok  # the chain alone cannot tell
    problem = reopened.anchor_problem()
    assert problem is not None and problem[0] == first and "recomputed" in problem[1]


def test_with_a_key_a_forged_anchor_record_is_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    path = create_key()
    assert path == key_path() and path.stat().st_mode & 0o777 == 0o600
    key = load_key()
    assert key is not None and len(key) == 32
    journal = Journal(tmp_path / "journal.db")
    fill(journal, 3)
    assert journal.anchor_problem() is None
    Anchor(tmp_path / ANCHOR_FILE, key=None).append(3, journal.tip_hash)  # no key: no MAC
    problem = journal.anchor_problem()
    assert problem is not None and "forged" in problem[1]


@pytest.fixture
def keyed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A key, and a state directory of the test's own for the anchor's second copy."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    create_key()
    return tmp_path / "ws"


def test_with_a_key_the_anchor_is_kept_twice_and_a_deleted_copy_is_found(keyed: Path) -> None:
    keyed.mkdir()
    journal = Journal(keyed / "journal.db")
    fill(journal, 4)
    copy = copy_path(keyed / "journal.db")
    assert copy.read_bytes() == (keyed / ANCHOR_FILE).read_bytes()
    assert not copy.is_relative_to(keyed) and copy.parent.stat().st_mode & 0o077 == 0
    journal.close()
    (keyed / ANCHOR_FILE).unlink()  # with a rewritten history and no snapshot to betray it
    problem = Journal(keyed / "journal.db").anchor_problem()
    assert problem is not None and "chain-anchor is missing" in problem[1]


def test_with_a_key_a_tail_cut_from_journal_and_workspace_anchor_is_found(keyed: Path) -> None:
    keyed.mkdir()
    journal = Journal(keyed / "journal.db")
    fill(journal, 6)
    journal.close()
    with sqlite3.connect(keyed / "journal.db") as db:
        db.execute("DROP TRIGGER events_no_delete")
        db.execute("DELETE FROM events WHERE seq > 4")
    anchor = keyed / ANCHOR_FILE
    anchor.write_bytes(anchor.read_bytes()[: 4 * 56])  # its records after seq 4 cut too
    problem = Journal(keyed / "journal.db").anchor_problem()
    assert problem is not None and problem[0] == 5 and "5..6 were removed" in problem[1]


def test_with_a_key_a_missing_second_copy_is_made_again_not_refused(keyed: Path) -> None:
    """A journal from before the copy, or a workspace moved (the copy is named by the
    real path): the workspace's anchor seeds it, and the checks go on."""
    keyed.mkdir()
    journal = Journal(keyed / "journal.db")
    fill(journal, 3)
    journal.close()
    copy = copy_path(keyed / "journal.db")
    copy.unlink()
    reopened = Journal(keyed / "journal.db")
    assert reopened.anchor_problem() is None
    assert copy.read_bytes() == (keyed / ANCHOR_FILE).read_bytes()
