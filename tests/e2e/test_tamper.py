"""Tampering with the journal between two runs, seen by a real daemon's start-up.

Each case edits `.editjournal/journal.db` with plain SQL (as anyone with the
file can), then starts the daemon: it must refuse with `journal_corrupt` naming
the seq, append nothing, and keep refusing. A journal left alone starts from
the state snapshot its last clean stop wrote.
"""

from __future__ import annotations

import sqlite3
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from editjournal.daemon.store.chainanchor import ANCHOR_FILE
from editjournal.daemon.store.hashchain import GENESIS_HASH, chain_hash, hash_text
from editjournal.schemas.endpoint import JOURNAL_FILE, STATE_DIR_NAME
from tests.conftest import START_TIMEOUT, spawn, start


def journal_path(root: Path) -> Path:
    return root / STATE_DIR_NAME / JOURNAL_FILE


def some_history(root: Path, edits: int = 4) -> int:
    """A daemon run with reads and edits, stopped cleanly; returns the last seq."""
    (root / "notes.txt").write_text("".join(f"line {i}\n" for i in range(30)))
    daemon = start(root, "--no-watch")
    client = daemon.client()
    for k in range(edits):
        anchor = client.read_file("notes.txt", hashes=True).lines[10].hash
        client.edit("notes.txt", [{"op": "replace_line", "hash": anchor, "content": f"edit {k}"}])
    assert daemon.stop() == 0
    with sqlite3.connect(journal_path(root)) as db:
        return int(db.execute("SELECT MAX(seq) FROM events").fetchone()[0])


def tamper(root: Path, *sql: str) -> None:
    with sqlite3.connect(journal_path(root)) as db:
        for statement in sql:
            db.execute(statement)


def recompute_chain(root: Path, from_seq: int) -> None:
    """Rewrite event `from_seq` and give it and every later event a recomputed hash:
    a consistent chain, as a careful forger would leave it."""
    with sqlite3.connect(journal_path(root)) as db:
        db.execute("DROP TRIGGER events_no_update")
        db.execute("UPDATE events SET agent = 'mallory' WHERE seq = ?", [from_seq])
        before = db.execute("SELECT hash FROM events WHERE seq = ?", [from_seq - 1]).fetchone()
        prev = hash_text(before[0]) if before else GENESIS_HASH  # rows derive their prev_hash
        rows = db.execute(
            "SELECT seq, ts, agent, kind, path, body FROM events WHERE seq >= ? ORDER BY seq",
            [from_seq],
        ).fetchall()
        for seq, ts, agent, kind, path, body in rows:
            digest = chain_hash(prev, seq, ts, agent, kind, path, body)
            db.execute(
                "UPDATE events SET prev_hash = ?, hash = ? WHERE seq = ?", [prev, digest, seq]
            )
            prev = digest
        db.execute(
            "CREATE TRIGGER events_no_update BEFORE UPDATE ON events"
            " BEGIN SELECT RAISE(ABORT, 'editjournal: events are append-only'); END"
        )


def refused_start(root: Path) -> str:
    """Start the daemon; it must exit 1 at once. Its stderr."""
    proc = spawn(root, "--no-watch")
    try:
        _, err = proc.communicate(timeout=START_TIMEOUT)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise AssertionError("the daemon started on a tampered journal") from None
    assert proc.returncode == 1, err.decode()
    return err.decode()


def count(root: Path) -> int:
    with sqlite3.connect(journal_path(root)) as db:
        return int(db.execute("SELECT COUNT(*) FROM events").fetchone()[0])


CASES: dict[str, tuple[Callable[[Path, int], None], Callable[[int], int]]] = {
    "update-with-triggers-dropped": (
        lambda root, last: tamper(
            root,
            "DROP TRIGGER events_no_update",
            "UPDATE events SET agent = 'mallory' WHERE seq = 4",
        ),
        lambda last: 4,
    ),
    "middle-delete": (
        lambda root, last: tamper(
            root, "DROP TRIGGER events_no_delete", "DELETE FROM events WHERE seq = 5"
        ),
        lambda last: 5,
    ),
    "tail-truncated": (
        lambda root, last: tamper(
            root, "DROP TRIGGER events_no_delete", f"DELETE FROM events WHERE seq > {last - 3}"
        ),
        lambda last: last - 2,
    ),
    # seq 4 is a read: not a durable commit, so not anchored; the edit after it is
    "chain-recomputed": (lambda root, last: recompute_chain(root, 4), lambda last: 5),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_tampered_journal_is_refused_at_start_naming_the_seq(workspace: Path, case: str) -> None:
    last = some_history(workspace)
    damage, bad_seq = CASES[case]
    damage(workspace, last)
    before = count(workspace)

    for _ in range(2):  # and again: the first refusal must not have "repaired" anything
        err = refused_start(workspace)
        assert "journal_corrupt" in err
        assert f"at seq {bad_seq(last)}:" in err
        assert "editjournal verify" in err and ANCHOR_FILE in err
        assert "Traceback" not in err
        assert count(workspace) == before  # nothing appended onto the broken chain
    if case == "chain-recomputed":
        assert "from an event in 4..5 on" in err  # the edit at 3 was anchored, and held


def test_a_clean_stop_leaves_a_snapshot_the_next_start_uses(workspace: Path) -> None:
    last = some_history(workspace)
    with sqlite3.connect(journal_path(workspace)) as db:
        assert db.execute("SELECT seq FROM state_snapshot").fetchone() == (last,)
    daemon = start(workspace, "--no-watch")
    status = daemon.client().read_file("notes.txt")
    assert "edit 3" in status.content
    assert daemon.stop() == 0


def test_an_anchor_file_from_another_journal_is_refused_not_overwritten(
    workspace: Path,
) -> None:
    some_history(workspace)
    for name in (JOURNAL_FILE, JOURNAL_FILE + "-wal", JOURNAL_FILE + "-shm"):
        (workspace / STATE_DIR_NAME / name).unlink(missing_ok=True)
    err = refused_start(workspace)  # an empty journal where the anchor knew events
    assert "journal_corrupt" in err and "were removed" in err
