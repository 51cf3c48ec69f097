"""Tests for daemon.store.journal: gap-free seqs, the hash chain, append-only guards, blobs."""

from __future__ import annotations

import itertools
import os
import sqlite3
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from editjournal.daemon.store.hashchain import GENESIS_HASH, chain_hash
from editjournal.daemon.store.journal import Journal, JournalError, sha256_hex
from editjournal.schemas.errors import CATALOGUE, ErrorCode, ToolError
from editjournal.schemas.events import (
    EVENT_ENCODER,
    AnyEvent,
    DaemonStarted,
    DaemonStopped,
    EditApplied,
    EditRejected,
    FileRead,
    OutsideChangeRecorded,
)


def read(path: str = "a.py", content: bytes = b"x = 1\n", lines=None) -> FileRead:
    return FileRead(
        path=path,
        sha256=sha256_hex(content),
        size=len(content),
        line_count=content.count(b"\n"),
        lines=lines,
    )


def blob_of(*contents: bytes) -> dict[str, bytes]:
    """The blobs the daemon stores with an event about these contents."""
    return {sha256_hex(c): c for c in contents}


def append_read(journal: Journal, agent: str, path: str = "a.py", content: bytes = b"x = 1\n"):
    """A read as the daemon journals it: the event and the content it saw."""
    return journal.append(agent, read(path, content), blob_of(content))


def ticking_clock(start: int = 1_700_000_000_000) -> Callable[[], int]:
    counter = itertools.count(start)
    return lambda: next(counter)


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "journal.sqlite"


@pytest.fixture
def journal(db_path: Path) -> Iterator[Journal]:
    j = Journal(db_path, clock=ticking_clock())
    yield j
    j.close()


@pytest.fixture
def raw(db_path: Path, journal: Journal) -> Iterator[sqlite3.Connection]:
    """A plain sqlite3 connection (recursive_triggers OFF), as an outside tamperer has."""
    conn = sqlite3.connect(db_path, isolation_level=None)
    assert conn.execute("PRAGMA recursive_triggers").fetchone() == (0,)
    yield conn
    conn.close()


def fill(journal: Journal, n: int) -> None:
    for i in range(n):
        append_read(journal, f"agent{i % 2}", f"f{i % 3}.py", f"v{i}\n".encode())


def event_row(conn: sqlite3.Connection, seq: int) -> tuple[object, ...]:
    return conn.execute("SELECT * FROM events WHERE seq = ?", [seq]).fetchone()


# --- appending and the chain ----------------------------------------------------------


def test_append_gives_gap_free_seqs_chained_from_genesis(journal: Journal) -> None:
    records = [append_read(journal, "alice", content=bytes([i])) for i in range(5)]

    assert [r.seq for r in records] == [1, 2, 3, 4, 5]
    assert records[0].prev_hash == GENESIS_HASH
    for before, after in itertools.pairwise(records):
        assert after.prev_hash == before.hash
    assert list(journal.records()) == records
    report = journal.verify()
    assert report.ok and report.checked == journal.count() == 5


def test_stored_hash_is_chain_hash_of_the_row(journal: Journal) -> None:
    record = journal.append("alice", read())
    body = EVENT_ENCODER.encode(record.event)
    assert record.hash == chain_hash(GENESIS_HASH, 1, record.ts, "alice", "file_read", "a.py", body)


def test_empty_journal_verifies_with_nothing_checked(journal: Journal) -> None:
    report = journal.verify()
    assert report.ok and report.checked == 0 and journal.last_seq == 0


def test_group_commit_writes_nothing_until_commit_then_everything_in_order(
    journal: Journal, raw: sqlite3.Connection
) -> None:
    staged = [journal.stage("alice", read(f"f{i}.py"), blob_of(b"x = 1\n")) for i in range(4)]

    assert [r.seq for r in staged] == [1, 2, 3, 4]
    assert journal.last_seq == 4
    # the batch's later requests see its staged events; the database has none yet
    assert list(journal.records()) == staged
    assert list(journal.records(newest_first=True, limit=2)) == staged[:1:-1]
    assert list(journal.records(path="f1.py")) == staged[1:2]
    assert raw.execute("SELECT COUNT(*) FROM events").fetchone() == (0,)

    committed = journal.commit()

    assert committed == staged
    assert raw.execute("SELECT seq FROM events ORDER BY seq").fetchall() == [(1,), (2,), (3,), (4,)]
    assert list(journal.records()) == staged
    assert journal.verify().ok


def test_commit_with_nothing_staged_returns_nothing(journal: Journal) -> None:
    assert journal.commit() == []
    journal.append(None, DaemonStopped(pid=1, reason="test"))
    assert journal.commit() == []


def test_failed_commit_raises_and_retakes_the_tip_from_disk(
    journal: Journal, db_path: Path
) -> None:
    journal.stage("alice", read("lost.py"))
    other = Journal(db_path)
    try:
        winner = append_read(other, "bob", "won.py")
    finally:
        other.close()

    with pytest.raises(JournalError, match="commit of 1 events failed"):
        journal.commit()

    assert journal.last_seq == 1
    assert [r.path for r in journal.records()] == ["won.py"]
    assert append_read(journal, "alice", "next.py").prev_hash == winner.hash
    assert journal.verify().ok


def test_reopening_continues_seq_and_chain(db_path: Path) -> None:
    first = Journal(db_path, clock=ticking_clock())
    fill(first, 3)
    tip = list(first.records())[-1]
    first.close()

    again = Journal(db_path, clock=ticking_clock(2_000_000_000_000))
    try:
        assert again.last_seq == 3
        record = append_read(again, "bob", "new.py")
        assert record.seq == 4
        assert record.prev_hash == tip.hash
        report = again.verify()
        assert report.ok and report.checked == 4
    finally:
        again.close()


# --- append-only guards ------------------------------------------------------------------

APPEND_ONLY = "append-only"


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        ("UPDATE events SET agent = 'mallory' WHERE seq = 2", APPEND_ONLY),
        ("UPDATE events SET ts = 0", APPEND_ONLY),
        ("DELETE FROM events WHERE seq = 2", APPEND_ONLY),
        ("DELETE FROM events", APPEND_ONLY),
        (
            "INSERT OR REPLACE INTO events (seq, ts, agent, kind, path, body, prev_hash, hash)"
            " SELECT seq, 0, 'mallory', kind, path, body, prev_hash, hash FROM events"
            " WHERE seq = 2",
            "seq must be exactly",
        ),
        (
            "INSERT OR REPLACE INTO events (seq, ts, agent, kind, path, body, prev_hash, hash)"
            " SELECT seq, 0, 'mallory', kind, path, body, prev_hash, hash FROM events"
            " WHERE seq = 3",
            "seq must be exactly",
        ),
        (
            "INSERT INTO events (seq, ts, agent, kind, path, body, prev_hash, hash)"
            " SELECT 5, ts, agent, kind, path, body, hash, hash FROM events WHERE seq = 3",
            "seq must be exactly",
        ),
        (
            "INSERT INTO events (ts, agent, kind, path, body, prev_hash, hash)"
            " SELECT ts, agent, kind, path, body, hash, hash FROM events WHERE seq = 3",
            "seq must be exactly",
        ),
    ],
    ids=[
        "update-one",
        "update-all",
        "delete-one",
        "delete-all",
        "insert-or-replace-middle",
        "insert-or-replace-last",
        "insert-with-gap",
        "insert-without-seq",
    ],
)
def test_raw_sql_cannot_change_events(
    journal: Journal, raw: sqlite3.Connection, sql: str, message: str
) -> None:
    fill(journal, 3)
    before = raw.execute("SELECT * FROM events ORDER BY seq").fetchall()

    with pytest.raises(sqlite3.IntegrityError, match=message):
        raw.execute(sql)

    assert raw.execute("SELECT * FROM events ORDER BY seq").fetchall() == before
    assert journal.verify().ok


@pytest.mark.parametrize(
    "sql",
    [
        "UPDATE blobs SET data = x'00'",
        "UPDATE blobs SET codec = 'raw'",
        "DELETE FROM blobs",
    ],
)
def test_raw_sql_cannot_change_blobs(journal: Journal, raw: sqlite3.Connection, sql: str) -> None:
    content = b"hello\n" * 50
    journal.append("alice", read(content=content), {sha256_hex(content): content})
    before = raw.execute("SELECT * FROM blobs").fetchall()

    with pytest.raises(sqlite3.IntegrityError, match="blobs are immutable"):
        raw.execute(sql)

    assert raw.execute("SELECT * FROM blobs").fetchall() == before
    assert journal.blob(sha256_hex(content)) == content


def test_insert_or_replace_cannot_overwrite_a_blob(
    journal: Journal, raw: sqlite3.Connection
) -> None:
    content = b"the real content\n" * 20
    digest = sha256_hex(content)
    journal.append("alice", read(content=content), {digest: content})

    with pytest.raises(sqlite3.IntegrityError, match="immutable"):
        raw.execute(
            "INSERT OR REPLACE INTO blobs (sha256, size, codec, data) VALUES (?, 4, 'raw', ?)",
            [bytes.fromhex(digest), b"evil"],
        )

    assert journal.blob(digest) == content


# --- tampering is detected ---------------------------------------------------------------


def drop(raw: sqlite3.Connection, trigger: str) -> None:
    raw.execute(f"DROP TRIGGER {trigger}")


@pytest.mark.parametrize(
    ("column", "value"),
    [
        ("ts", 42),
        ("agent", "mallory"),
        ("agent", None),
        ("body", EVENT_ENCODER.encode(read("f0.py", b"forged\n"))),
        ("prev_hash", GENESIS_HASH),
        ("hash", "f" * 64),
    ],
)
def test_edited_column_is_reported_at_its_seq(
    journal: Journal, raw: sqlite3.Connection, column: str, value: object
) -> None:
    fill(journal, 5)
    drop(raw, "events_no_update")
    # seq 4 is about f0.py, so the forged body keeps the kind/path columns consistent.
    raw.execute(f"UPDATE events SET {column} = ? WHERE seq = 4", [value])

    report = journal.verify()

    assert not report.ok
    assert report.first_bad_seq == 4
    assert report.checked == 3
    assert report.reason


def test_body_that_does_not_decode_is_reported(journal: Journal, raw: sqlite3.Connection) -> None:
    fill(journal, 3)
    drop(raw, "events_no_update")
    raw.execute("UPDATE events SET body = x'c1' WHERE seq = 2")

    report = journal.verify()

    assert (report.ok, report.first_bad_seq) == (False, 2)
    assert "decode" in (report.reason or "")


@pytest.mark.parametrize("value", ["not a blob", 12345], ids=["text", "integer"])
def test_body_of_the_wrong_sqlite_type_is_reported(
    journal: Journal, raw: sqlite3.Connection, value: object
) -> None:
    fill(journal, 3)
    drop(raw, "events_no_update")
    raw.execute("UPDATE events SET body = ? WHERE seq = 2", [value])

    report = journal.verify()

    assert (report.ok, report.first_bad_seq) == (False, 2)


def test_kind_column_disagreeing_with_body_is_reported(
    journal: Journal, raw: sqlite3.Connection
) -> None:
    fill(journal, 3)
    drop(raw, "events_no_update")
    raw.execute("UPDATE events SET path = 'other.py' WHERE seq = 3")

    report = journal.verify()

    assert (report.ok, report.first_bad_seq) == (False, 3)
    assert "disagree" in (report.reason or "")


def test_deleted_row_is_reported_as_a_gap(journal: Journal, raw: sqlite3.Connection) -> None:
    fill(journal, 5)
    drop(raw, "events_no_delete")
    raw.execute("DELETE FROM events WHERE seq = 4")

    report = journal.verify()

    assert (report.ok, report.first_bad_seq, report.checked) == (False, 5, 3)
    assert "gap" in (report.reason or "")


def test_consistently_rewritten_hash_link_is_still_caught(
    journal: Journal, raw: sqlite3.Connection
) -> None:
    fill(journal, 5)
    drop(raw, "events_no_update")
    forged = "ab" * 32
    raw.execute("UPDATE events SET hash = ? WHERE seq = 2", [forged])
    raw.execute("UPDATE events SET prev_hash = ? WHERE seq = 3", [forged])

    report = journal.verify()

    assert (report.ok, report.first_bad_seq) == (False, 2)
    assert "hash does not match" in (report.reason or "")


def test_forged_append_with_a_wrong_link_is_caught(
    journal: Journal, raw: sqlite3.Connection
) -> None:
    fill(journal, 3)
    body = EVENT_ENCODER.encode(read("evil.py"))
    raw.execute(
        "INSERT INTO events (seq, ts, agent, kind, path, body, prev_hash, hash)"
        " VALUES (4, 0, 'mallory', 'file_read', 'evil.py', ?, ?, ?)",
        [
            body,
            GENESIS_HASH,
            chain_hash(GENESIS_HASH, 4, 0, "mallory", "file_read", "evil.py", body),
        ],
    )

    report = journal.verify()

    assert (report.ok, report.first_bad_seq) == (False, 4)
    assert "prev_hash" in (report.reason or "")


# --- blobs -------------------------------------------------------------------------------


def test_blob_shared_by_two_events_is_stored_once(
    journal: Journal, raw: sqlite3.Connection
) -> None:
    content = b"same\n" * 100
    digest = sha256_hex(content)
    journal.append("alice", read(content=content), {digest: content})
    journal.stage("bob", read(content=content), {digest: content})
    journal.stage("carol", read(content=content), {digest: content})
    journal.commit()

    assert raw.execute("SELECT COUNT(*) FROM blobs").fetchone() == (1,)
    assert journal.blob(digest) == content


def test_compressible_blob_is_stored_zlib_and_smaller(
    journal: Journal, raw: sqlite3.Connection
) -> None:
    content = b"def f():\n    return 1\n" * 200
    digest = sha256_hex(content)
    journal.append("alice", read(content=content), {digest: content})

    size, codec, stored = raw.execute(
        "SELECT size, codec, length(data) FROM blobs WHERE sha256 = ?", [bytes.fromhex(digest)]
    ).fetchone()

    assert (size, codec) == (len(content), "zlib")
    assert stored < len(content)
    assert journal.blob(digest) == content


def test_incompressible_blob_is_stored_raw(journal: Journal, raw: sqlite3.Connection) -> None:
    content = os.urandom(4096)
    digest = sha256_hex(content)
    journal.append("alice", read(content=content), {digest: content})

    key = bytes.fromhex(digest)
    codec, data = raw.execute("SELECT codec, data FROM blobs WHERE sha256 = ?", [key]).fetchone()

    assert codec == "raw"
    assert data == content
    assert journal.blob(digest) == content


def test_empty_blob_round_trips(journal: Journal) -> None:
    digest = sha256_hex(b"")
    journal.append("alice", read(content=b""), {digest: b""})
    assert journal.has_blob(digest)
    assert journal.blob(digest) == b""


def test_has_blob_and_unknown_blob(journal: Journal) -> None:
    content = b"known\n"
    digest = sha256_hex(content)
    assert not journal.has_blob(digest)
    journal.append("alice", read(content=content), {digest: content})

    assert journal.has_blob(digest)
    assert not journal.has_blob("0" * 64)
    assert journal.blob("0" * 64) is None


def test_staged_blob_is_readable_before_commit(journal: Journal, raw: sqlite3.Connection) -> None:
    content = b"pending\n" * 10
    digest = sha256_hex(content)
    journal.stage("alice", read(content=content), {digest: content})

    assert raw.execute("SELECT COUNT(*) FROM blobs").fetchone() == (0,)
    assert journal.has_blob(digest)
    assert journal.blob(digest) == content

    journal.commit()
    assert raw.execute("SELECT COUNT(*) FROM blobs").fetchone() == (1,)
    assert journal.blob(digest) == content


def test_blobs_survive_reopening(db_path: Path) -> None:
    content = b"persisted\n" * 30
    digest = sha256_hex(content)
    first = Journal(db_path)
    first.append("alice", read(content=content), {digest: content})
    first.close()

    again = Journal(db_path)
    try:
        assert again.blob(digest) == content
    finally:
        again.close()


# --- damaged and missing blobs -----------------------------------------------------------

STORED = b"def f():\n    return 1\n" * 50  # compressible: stored zlib
OTHER = b"def g():\n    return 2\n" * 50


@pytest.fixture
def stored(journal: Journal) -> str:
    """A journal of three reads whose content `STORED` is one zlib blob; its sha256."""
    for agent in ("alice", "bob", "carol"):
        append_read(journal, agent, content=STORED)
    return sha256_hex(STORED)


def damage(raw: sqlite3.Connection, digest: str, column: str, value: object) -> None:
    raw.execute("DROP TRIGGER blobs_no_update")
    raw.execute(f"UPDATE blobs SET {column} = ? WHERE sha256 = ?", [value, bytes.fromhex(digest)])


UNREADABLE = [
    ("data", b"\x00not zlib\xff"),
    ("data", "a text value"),
    ("data", zlib.compress(OTHER)),
    ("codec", "lz4"),
]
UNREADABLE_IDS = ["not-zlib", "text-data", "another-content", "unknown-codec"]


@pytest.mark.parametrize(("column", "value"), UNREADABLE, ids=UNREADABLE_IDS)
def test_damaged_blob_raises_journal_corrupt_naming_it(
    journal: Journal, raw: sqlite3.Connection, stored: str, column: str, value: object
) -> None:
    damage(raw, stored, column, value)

    with pytest.raises(ToolError) as caught:
        journal.blob(stored)

    error = caught.value
    assert error.code is ErrorCode.JOURNAL_CORRUPT
    assert stored in error.message
    assert error.details["blob"] == stored
    assert error.hint == CATALOGUE[ErrorCode.JOURNAL_CORRUPT].hint


@pytest.mark.parametrize(
    ("column", "value", "reason"),
    [
        ("data", b"\x00not zlib\xff", "decompress"),
        ("data", "a text value", "not bytes"),
        ("size", len(STORED) + 1, "size column"),
    ],
    ids=["not-zlib", "text-data", "wrong-size"],
)
def test_damaged_blob_is_reported_by_verify_not_raised(
    journal: Journal, raw: sqlite3.Connection, stored: str, column: str, value: object, reason: str
) -> None:
    damage(raw, stored, column, value)

    report = journal.verify()

    assert (report.ok, report.checked, report.first_bad_seq) == (False, 3, None)
    assert report.bad_blob == stored
    assert stored in (report.reason or "")
    assert reason in (report.reason or "")


OLD, NEW = b"old\n", b"new\n"
OLD_SHA, NEW_SHA = sha256_hex(OLD), sha256_hex(NEW)
EDIT = EditApplied(
    path="a.py",
    writer="edit",
    before_sha256=OLD_SHA,
    after_sha256=NEW_SHA,
    size=len(NEW),
    lines_before=1,
    line_count=1,
)


@pytest.mark.parametrize(
    ("event", "contents", "deleted"),
    [
        (read(content=OLD), [OLD], OLD),
        (EDIT, [OLD, NEW], OLD),
        (EDIT, [OLD, NEW], NEW),
        (
            EditRejected(path="a.py", writer="edit", sha256=OLD_SHA, code="c", message="m"),
            [OLD],
            OLD,
        ),
        (
            OutsideChangeRecorded(
                path="a.py", change="modified", old_sha256=OLD_SHA, new_sha256=NEW_SHA
            ),
            [NEW],
            NEW,
        ),
    ],
    ids=["file-read", "edit-before", "edit-after", "edit-rejected", "outside-change"],
)
def test_missing_blob_an_event_needs_is_reported(
    journal: Journal,
    raw: sqlite3.Connection,
    event: AnyEvent,
    contents: list[bytes],
    deleted: bytes,
) -> None:
    journal.append(None, DaemonStarted(pid=1, workspace="/w", version="0", socket="s"))
    journal.append("alice", event, blob_of(*contents))
    journal.append(None, DaemonStopped(pid=1, reason="test"))
    raw.execute("DROP TRIGGER blobs_no_delete")
    raw.execute("DELETE FROM blobs WHERE sha256 = ?", [bytes.fromhex(sha256_hex(deleted))])

    report = journal.verify()

    assert (report.ok, report.checked, report.first_bad_seq) == (False, 3, None)
    assert report.bad_blob == sha256_hex(deleted)
    assert "event 2" in (report.reason or "") and "missing" in (report.reason or "")


@pytest.mark.parametrize(
    "event",
    [
        OutsideChangeRecorded(
            path="big.bin",
            change="modified",
            old_sha256=OLD_SHA,
            new_sha256=NEW_SHA,
            content_stored=False,
        ),
        OutsideChangeRecorded(path="a.py", change="deleted", old_sha256=OLD_SHA, new_sha256=None),
        EditRejected(path="a.py", writer="edit", sha256=None, code="c", message="m"),
    ],
    ids=["untracked-outside-change", "deletion", "rejected-unread"],
)
def test_event_that_stores_no_content_needs_no_blob(journal: Journal, event: AnyEvent) -> None:
    journal.append("alice", event)
    assert journal.verify().ok


# --- reading -----------------------------------------------------------------------------


@pytest.fixture
def mixed(journal: Journal) -> Journal:
    journal.append(None, DaemonStarted(pid=1, workspace="/w", version="0", socket="s"))  # 1
    journal.append("alice", read("a.py"))  # 2
    journal.append("bob", read("b.py"))  # 3
    journal.append("alice", read("b.py", b"y\n"))  # 4
    journal.append("bob", read("a.py", b"z\n", lines=(1, 1)))  # 5
    journal.append(None, DaemonStopped(pid=1, reason="bye"))  # 6
    return journal


@pytest.mark.parametrize(
    ("filters", "seqs"),
    [
        ({}, [1, 2, 3, 4, 5, 6]),
        ({"path": "a.py"}, [2, 5]),
        ({"path": "b.py"}, [3, 4]),
        ({"agent": "alice"}, [2, 4]),
        ({"agent": "bob", "path": "a.py"}, [5]),
        ({"kind": "file_read"}, [2, 3, 4, 5]),
        ({"kind": "daemon_stopped"}, [6]),
        ({"after_seq": 4}, [5, 6]),
        ({"after_seq": 6}, []),
        ({"limit": 2}, [1, 2]),
        ({"newest_first": True}, [6, 5, 4, 3, 2, 1]),
        ({"newest_first": True, "limit": 2}, [6, 5]),
        ({"agent": "alice", "newest_first": True, "limit": 1}, [4]),
        ({"path": "b.py", "after_seq": 3}, [4]),
        ({"path": "missing.py"}, []),
    ],
)
def test_records_filters(mixed: Journal, filters: dict[str, object], seqs: list[int]) -> None:
    assert [r.seq for r in mixed.records(**filters)] == seqs  # type: ignore[arg-type]


def test_records_round_trip_events_and_agents(mixed: Journal) -> None:
    fifth = next(mixed.records(after_seq=4))
    assert fifth.agent == "bob"
    assert fifth.event == read("a.py", b"z\n", lines=(1, 1))
    assert fifth.kind == "file_read" and fifth.path == "a.py"


def test_count_and_size_grow(journal: Journal) -> None:
    assert journal.count() == 0
    empty_size = journal.size_bytes()
    content = os.urandom(64 * 1024)
    journal.append("alice", read(content=content), {sha256_hex(content): content})
    fill(journal, 10)

    assert journal.count() == 11
    assert journal.size_bytes() > empty_size + len(content)


# --- the chain hash ----------------------------------------------------------------------

CHAIN_ARGS = (
    GENESIS_HASH,
    7,
    1_700_000_000_000,
    "alice",
    "file_read",
    "a.py",
    b"\x81\xa4kind\xa9file_read",
)

_column_values = st.one_of(
    st.none(),
    st.integers(-(2**63), 2**63 - 1),  # what SQLite's INTEGER can hold
    st.floats(),
    st.text(max_size=70),
    st.binary(max_size=70),
)


@given(index=st.integers(0, len(CHAIN_ARGS) - 1), value=_column_values)
def test_chain_hash_changes_when_any_single_argument_changes(index: int, value: object) -> None:
    if type(value) is type(CHAIN_ARGS[index]) and value == CHAIN_ARGS[index]:
        return
    changed = list(CHAIN_ARGS)
    changed[index] = value
    assert chain_hash(*changed) != chain_hash(*CHAIN_ARGS)  # type: ignore[arg-type]


def test_chain_hash_tells_none_from_empty() -> None:
    base = list(CHAIN_ARGS)
    for index in (3, 5):  # agent, path
        as_none, as_empty = list(base), list(base)
        as_none[index], as_empty[index] = None, ""
        assert chain_hash(*as_none) != chain_hash(*as_empty)  # type: ignore[arg-type]


# --- how a row stores its hashes (schema 3) ----------------------------------------------


def test_a_row_stores_its_hash_as_32_bytes_and_derives_its_prev_hash(
    journal: Journal, raw: sqlite3.Connection
) -> None:
    fill(journal, 3)
    stored = raw.execute("SELECT prev_hash, hash FROM events ORDER BY seq").fetchall()
    records = list(journal.records())
    assert stored == [(b"", bytes.fromhex(r.hash)) for r in records]
    assert [r.prev_hash for r in records] == [GENESIS_HASH, records[0].hash, records[1].hash]


def test_a_skipping_reader_is_given_each_rows_prev_hash(journal: Journal) -> None:
    fill(journal, 6)
    every = {r.seq: r for r in journal.records()}
    for record in journal.records(path="f1.py"):  # seqs 2 and 5: the rows before are skipped
        assert record.prev_hash == every[record.seq - 1].hash
    newest = next(iter(journal.records(newest_first=True, limit=1)))
    assert newest.prev_hash == every[5].hash


def as_hex_rows(db_path: Path) -> None:
    """Rewrite every row as schema 2 stored it: both hashes as hex text."""
    with sqlite3.connect(db_path) as db:
        db.execute("DROP TRIGGER events_no_update")
        rows = db.execute("SELECT seq, hash FROM events ORDER BY seq").fetchall()
        prev = GENESIS_HASH
        for seq, digest in rows:
            db.execute(
                "UPDATE events SET prev_hash = ?, hash = ? WHERE seq = ?",
                [prev, digest.hex(), seq],
            )
            prev = digest.hex()
        db.execute(
            "CREATE TRIGGER events_no_update BEFORE UPDATE ON events"
            " BEGIN SELECT RAISE(ABORT, 'editjournal: events are append-only'); END"
        )


def test_rows_of_hex_text_and_rows_of_bytes_make_one_chain(db_path: Path) -> None:
    older = Journal(db_path, clock=ticking_clock())
    fill(older, 3)
    older.close()
    as_hex_rows(db_path)
    before = sqlite3.connect(db_path).execute("SELECT * FROM events").fetchall()

    journal = Journal(db_path, clock=ticking_clock(1_800_000_000_000))
    fill(journal, 5)  # appended after the hex rows, on their tip
    records = list(journal.records())
    assert journal.verify().ok
    assert journal.anchor_problem() is None
    assert journal.db.execute("SELECT * FROM events WHERE seq <= 3").fetchall() == before
    assert records[3].prev_hash == records[2].hash  # the first binary row's derived link
    assert [r.prev_hash for r in journal.records(path="f0.py")] == [
        GENESIS_HASH,
        records[2].hash,
        records[5].hash,
    ]
    journal.close()
