"""Tests for state snapshots (daemon.store.statesnap) and the checked start-up fold
(daemon.store.startup) on a real journal: a snapshot plus the tail equals the full fold;
a snapshot that does not match its journal is ignored, never trusted."""

from __future__ import annotations

import dataclasses
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from editjournal.daemon.model.state import State, fold
from editjournal.daemon.store import statesnap
from editjournal.daemon.store.journal import Journal, JournalCorrupt, sha256_hex
from editjournal.daemon.store.startup import load_state
from editjournal.daemon.store.statesnap import STATE_FIELDS, Snapshotter
from editjournal.schemas.events import (
    CheckpointCreated,
    DaemonStarted,
    EditApplied,
    EditRejected,
    FileRead,
    HunkPrepared,
    OutsideChangeRecorded,
    RequestAnswered,
)


def content(k: int) -> bytes:
    return b"".join(b"line %d of version %d\n" % (i, k if i == 3 else 0) for i in range(20))


def history(journal: Journal, steps: int, start: int = 0) -> State:
    """Reads, edits, an outside change, a rejection that showed content, a hunk: by two
    agents on three files; returns the live state (applied as the daemon does)."""
    state = fold(journal.records())
    for k in range(start, start + steps):
        path, agent = f"f{k % 3}.py", f"agent-{k % 2}"
        old, new = content(k), content(k + 1)
        events = [
            (
                agent,
                FileRead(
                    path=path,
                    sha256=sha256_hex(old),
                    size=len(old),
                    line_count=20,
                    lines=(1, 5),
                    unseen=[(6, 20)],
                ),
            ),
            (
                agent,
                EditApplied(
                    path=path,
                    writer="edit",
                    before_sha256=sha256_hex(old),
                    after_sha256=sha256_hex(new),
                    size=len(new),
                    lines_before=20,
                    line_count=20,
                    line_changes=[(3, 4, 1)],
                ),
            ),
        ]
        if k % 4 == 1:
            events.append(
                (
                    None,
                    OutsideChangeRecorded(
                        path=path,
                        change="modified",
                        old_sha256=sha256_hex(new),
                        new_sha256=sha256_hex(old),
                        size=len(old),
                        line_count=20,
                    ),
                )
            )
        if k % 4 == 2:
            events.append(
                (
                    agent,
                    EditRejected(
                        path=path,
                        writer="edit",
                        sha256=sha256_hex(new),
                        code="anchor_stale",
                        message="stale",
                        shown_sha256=sha256_hex(new),
                    ),
                )
            )
        if k % 4 == 3:
            events.append(
                (
                    agent,
                    HunkPrepared(
                        path=path,
                        hunk_id=f"h{k}",
                        hunk_kind="append",
                        created_at_ms=k,
                        expires_at_ms=k + 1000,
                        base_version=1,
                        base_sha256=sha256_hex(new),
                        start=20,
                        end=20,
                        new_lines=["x"],
                    ),
                )
            )
        if k % 5 == 4:
            events.append(
                (agent, CheckpointCreated(name=f"cp{k % 2}", files={path: sha256_hex(new)}))
            )
            events.append(
                (
                    agent,
                    RequestAnswered(
                        key=f"key{k}", method="edit", request_sha256="0" * 64, reply=b"\x80"
                    ),
                )
            )
        for who, event in events:
            state.apply(journal.stage(who, event, {sha256_hex(old): old, sha256_hex(new): new}))
        journal.commit()
    return state


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "journal.db"


@pytest.fixture
def journal(db_path: Path) -> Iterator[Journal]:
    j = Journal(db_path)
    j.append(None, DaemonStarted(pid=1, workspace="/w", version="t", socket="-"))
    yield j
    j.close()


def start(db_path: Path) -> tuple[State, Snapshotter]:
    """What the daemon does at start: open the journal, load the checked state."""
    journal = Journal(db_path)
    snapshotter = Snapshotter()
    try:
        return load_state(journal, snapshotter), snapshotter
    finally:
        journal.close()


def assert_same(a: State, b: State) -> None:
    assert a.digest() == b.digest()
    assert (a.files, a.snapshots, a.hunks, a.last_seq) == (
        b.files,
        b.snapshots,
        b.hunks,
        b.last_seq,
    )


def test_snapshot_plus_tail_equals_the_full_fold(journal: Journal, db_path: Path) -> None:
    live = history(journal, 12)
    assert statesnap.save(journal, live)
    saved_at = live.last_seq
    live = history(journal, 5, start=12)

    state, snapshotter = start(db_path)

    assert snapshotter.saved_seq == saved_at  # the snapshot was used: only the tail folded
    assert_same(state, live)
    assert_same(state, fold(Journal(db_path).records()))


def test_dict_order_survives_the_snapshot(journal: Journal, db_path: Path) -> None:
    live = history(journal, 7)
    statesnap.save(journal, live)
    state, _ = start(db_path)
    assert list(state.files) == list(live.files)
    assert list(state.snapshots) == list(live.snapshots)


def test_snapshot_holds_every_field_of_the_state() -> None:
    """A field added to State must be added to the snapshot (and FORMAT bumped); a "_"
    field is a cache of the state's own (its digest), in no snapshot."""
    fields = {f.name for f in dataclasses.fields(State)}
    assert {name for name in fields if name[0] != "_"} == set(STATE_FIELDS)


def test_no_snapshot_while_events_are_staged(journal: Journal) -> None:
    live = history(journal, 2)
    live.apply(journal.stage("a", FileRead(path="x", sha256="0" * 64, size=0, line_count=0)))
    assert not statesnap.save(journal, live)


TAMPERS = {
    # (the first character is changed to another, whatever it was: never a no-op)
    "chain-hash": "UPDATE state_snapshot SET chain_hash ="
    " (CASE substr(chain_hash, 1, 1) WHEN 'f' THEN 'e' ELSE 'f' END) || substr(chain_hash, 2)",
    "seq-beyond-tip": "UPDATE state_snapshot SET seq = seq + 100",
    "digest": "UPDATE state_snapshot SET digest ="
    " (CASE substr(digest, 1, 1) WHEN '0' THEN '1' ELSE '0' END) || substr(digest, 2)",
    "shape": "UPDATE state_snapshot SET shape = 'an older editjournal'",
    "body-garbage": "UPDATE state_snapshot SET body = x'c1c1c1'",
    "body-other-state": "UPDATE state_snapshot SET body = ?",
    "seq-not-int": "UPDATE state_snapshot SET seq = 'ten'",
}


@pytest.mark.parametrize("how", list(TAMPERS))
def test_a_snapshot_that_does_not_match_its_journal_is_ignored_and_rebuilt(
    journal: Journal, db_path: Path, how: str
) -> None:
    live = history(journal, 8)
    early = statesnap.encode(fold(journal.records(until_seq=5)))
    statesnap.save(journal, live)
    with sqlite3.connect(db_path) as db:
        db.execute(TAMPERS[how], [early] if "?" in TAMPERS[how] else [])

    assert statesnap.load(journal) is None
    state, snapshotter = start(db_path)
    assert snapshotter.saved_seq == 0  # folded from the beginning
    assert_same(state, live)


def test_an_event_changed_after_the_snapshot_refuses_the_start_naming_its_seq(
    journal: Journal, db_path: Path
) -> None:
    history(journal, 4)
    statesnap.save(journal, fold(journal.records()))
    history(journal, 4, start=4)
    bad = journal.last_seq - 3
    with sqlite3.connect(db_path) as db:
        db.execute("DROP TRIGGER events_no_update")
        db.execute("UPDATE events SET agent = 'mallory' WHERE seq = ?", [bad])
        db.execute(  # the trigger put back, as a careful tamperer would
            "CREATE TRIGGER events_no_update BEFORE UPDATE ON events"
            " BEGIN SELECT RAISE(ABORT, 'editjournal: events are append-only'); END"
        )
    with pytest.raises(JournalCorrupt) as caught:
        start(db_path)
    assert caught.value.seq == bad


def test_a_snapshot_is_saved_once_every_n_events(journal: Journal) -> None:
    snapshotter = Snapshotter(every=10)
    live = history(journal, 2)  # fewer than 10 events
    snapshotter.after_commit(journal, live)
    assert snapshotter.saved_seq == 0 and journal.load_snapshot() is None
    live = history(journal, 4, start=2)
    snapshotter.after_commit(journal, live)
    assert snapshotter.saved_seq == live.last_seq >= 10
    stored = journal.load_snapshot()
    assert stored is not None and stored[0] == live.last_seq
