"""Tests for line-delta blob storage (daemon.linedelta, daemon.blobstore) through the
real Journal on a real SQLite file: round trips, bounded chains, damage detected,
and a journal of the first schema (full blobs only) upgraded in place."""

from __future__ import annotations

import itertools
import os
import sqlite3
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from editjournal.daemon.store import linedelta
from editjournal.daemon.store.blobs import MAX_DEPTH
from editjournal.daemon.store.journal import Journal, JournalError, sha256_hex
from editjournal.daemon.store.schema import SCHEMA_VERSION
from editjournal.schemas.errors import ErrorCode, ToolError
from editjournal.schemas.events import EditApplied, FileRead, OutsideChangeRecorded

LINE = st.sampled_from(
    [b"x = 1", b"", b"}", b"    return a\r", b"\xff\xfe\x00bin", b"caf\xc3\xa9", b"  # note", b"\r"]
)
CONTENT = st.lists(LINE, max_size=30).map(b"\n".join)


def file_read(path: str, content: bytes) -> FileRead:
    return FileRead(
        path=path, sha256=sha256_hex(content), size=len(content), line_count=content.count(b"\n")
    )


def edit(path: str, before: bytes, after: bytes) -> EditApplied:
    return EditApplied(
        path=path,
        writer="edit",
        before_sha256=sha256_hex(before),
        after_sha256=sha256_hex(after),
        size=len(after),
        lines_before=before.count(b"\n"),
        line_count=after.count(b"\n"),
    )


def write_versions(journal: Journal, path: str, versions: list[bytes]) -> None:
    """As the daemon does: a read of the first version, then one edit per next one."""
    journal.append("a", file_read(path, versions[0]), {sha256_hex(versions[0]): versions[0]})
    for before, after in itertools.pairwise(versions):
        journal.append("a", edit(path, before, after), {sha256_hex(after): after})


def source(n: int, tag: str = "") -> bytes:
    return b"".join(b"value_%d = compute(%d)%s\n" % (i, i, tag.encode()) for i in range(n))


def one_line_changed(n: int, k: int) -> bytes:
    lines = source(n).split(b"\n")
    lines[(k * 37) % n] = b"value = changed(%d)" % k
    return b"\n".join(lines)


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "journal.db"


@pytest.fixture
def journal(db_path: Path) -> Iterator[Journal]:
    j = Journal(db_path)
    yield j
    j.close()


def rows(db_path: Path) -> list[tuple[str, object, object, int]]:
    with sqlite3.connect(db_path) as db:
        return db.execute("SELECT sha256, codec, base, depth FROM blobs ORDER BY rowid").fetchall()


# --- the pure delta -------------------------------------------------------------------


@given(old=CONTENT, new=CONTENT)
def test_a_delta_turns_any_bytes_into_any_other_bytes(old: bytes, new: bytes) -> None:
    splices = linedelta.diff(old, new)
    decoded = linedelta.decode(linedelta.encode(splices))
    assert linedelta.join(linedelta.apply(linedelta.split(old), decoded)) == new


@settings(max_examples=400)
@given(
    old=st.lists(LINE, max_size=40),
    at=st.integers(0, 40),
    cut=st.integers(0, 5),
    put=st.lists(LINE, max_size=5),
    joiner=st.sampled_from([b"\n", b"\r\n"]),
)
def test_a_delta_of_a_spliced_version_round_trips(
    old: list[bytes], at: int, cut: int, put: list[bytes], joiner: bytes
) -> None:
    """Near versions (one splice anywhere: head, middle, end, no final newline), where the
    common head and tail found on the bytes matter."""
    at = min(at, len(old))
    new = old[:at] + put + old[at + cut :]
    a, b = joiner.join(old), joiner.join(new)
    splices = linedelta.diff(a, b)
    assert linedelta.join(linedelta.apply(linedelta.split(a), splices)) == b
    assert sum(len(lines) for _, _, lines in splices) <= len(put) + 2


def test_a_one_line_change_is_one_splice_of_one_line() -> None:
    old, new = source(1000), one_line_changed(1000, 3)
    assert linedelta.diff(old, new) == [(111, 112, [b"value = changed(3)"])]


def test_a_splice_that_does_not_fit_its_base_is_an_error() -> None:
    with pytest.raises(linedelta.DeltaError):
        linedelta.apply([b"a"], [(0, 5, [])])


# --- stored versions --------------------------------------------------------------------


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(versions=st.lists(CONTENT, min_size=1, max_size=80))
def test_every_version_of_a_random_edit_sequence_reads_back(
    tmp_path_factory: pytest.TempPathFactory, versions: list[bytes]
) -> None:
    path = tmp_path_factory.mktemp("seq") / "journal.db"
    journal = Journal(path)
    try:
        write_versions(journal, "f.txt", versions)
        fresh = Journal(path)  # a new process: no cache, every version rebuilt from disk
        try:
            for content in versions:
                assert fresh.blob(sha256_hex(content)) == content
            assert fresh.verify().ok
        finally:
            fresh.close()
    finally:
        journal.close()


def chains(db_path: Path) -> list[tuple[int, list[int]]]:
    """Per full copy, oldest first: its stored bytes and its deltas' stored bytes."""
    with sqlite3.connect(db_path) as db:
        stored = db.execute("SELECT depth, length(data) FROM blobs ORDER BY rowid").fetchall()
    found: list[tuple[int, list[int]]] = []
    for depth, size in stored:
        if depth == 0:
            found.append((size, []))
        else:
            found[-1][1].append(size)
    return found


def test_small_edits_are_small_deltas_whose_chain_costs_no_more_than_its_full_copy(
    journal: Journal, db_path: Path
) -> None:
    versions = [source(1000)] + [one_line_changed(1000, k) for k in range(300)]
    write_versions(journal, "big.py", versions)
    found = chains(db_path)
    assert len(found) >= 2  # the budget ran out at least once: a new full copy
    for full, deltas in found:
        assert sum(deltas) <= full
        assert max(deltas, default=0) < 100
    spent = sum(full + sum(deltas) for full, deltas in found[1:])
    assert spent <= 2 * sum(sum(deltas) for _, deltas in found)  # copies cost ≤ deltas


def test_a_chain_ends_at_max_depth_versions_however_small_its_deltas(
    journal: Journal, db_path: Path
) -> None:
    """Incompressible lines make a full copy dear, so only the depth bound cuts the chain."""
    lines = [os.urandom(30).hex().encode() for _ in range(400)]

    def version(k: int) -> bytes:
        return b"\n".join([*lines[:200], b"changed %d" % k, *lines[201:]])

    write_versions(journal, "r.txt", [version(k) for k in range(MAX_DEPTH + 5)])
    found = chains(db_path)
    assert [len(deltas) for _, deltas in found] == [MAX_DEPTH - 1, 4]  # 1 + 255, 1 + 4
    fresh = Journal(db_path)  # the deepest version rebuilt from disk, MAX_DEPTH - 1 deltas
    assert fresh.blob(sha256_hex(version(MAX_DEPTH - 1))) == version(MAX_DEPTH - 1)
    fresh.close()


def test_a_reopened_journal_goes_on_with_the_chain_it_left(db_path: Path) -> None:
    versions = [source(500)] + [one_line_changed(500, k) for k in range(20)]
    first = Journal(db_path)
    write_versions(first, "f.py", versions[:10])
    first.close()
    second = Journal(db_path)  # the chain's depth and bytes come from disk, not memory
    for before, after in itertools.pairwise(versions[9:]):
        second.append("a", edit("f.py", before, after), {sha256_hex(after): after})
    second.close()
    found = chains(db_path)
    assert [len(deltas) for _, deltas in found] == [20]


def test_a_delta_that_is_not_smaller_is_stored_as_a_full_copy(
    journal: Journal, db_path: Path
) -> None:
    write_versions(journal, "f.py", [source(50), source(50, "  # all lines changed")])
    assert [codec for _, codec, _, _ in rows(db_path)] == ["zlib", "zlib"]


def test_a_version_of_another_file_is_never_a_base(journal: Journal, db_path: Path) -> None:
    write_versions(journal, "a.py", [source(100)])
    content = one_line_changed(100, 1)
    journal.append("a", file_read("b.py", content), {sha256_hex(content): content})
    assert [codec for _, codec, _, _ in rows(db_path)] == ["zlib", "zlib"]


def test_an_outside_change_is_stored_as_a_delta_on_the_version_before(
    journal: Journal, db_path: Path
) -> None:
    old, new = source(300), one_line_changed(300, 2)
    write_versions(journal, "f.py", [old])
    change = OutsideChangeRecorded(
        path="f.py",
        change="modified",
        old_sha256=sha256_hex(old),
        new_sha256=sha256_hex(new),
        size=len(new),
        line_count=300,
        content_stored=True,
    )
    journal.append(None, change, {sha256_hex(new): new})
    _, codec, base, depth = rows(db_path)[1]
    assert (codec, base, depth) == ("delta", bytes.fromhex(sha256_hex(old)), 1)
    assert Journal(db_path).blob(sha256_hex(new)) == new


# --- damage -----------------------------------------------------------------------------


def damage_newest_delta(db_path: Path, column: str, value: object) -> str:
    with sqlite3.connect(db_path) as db:
        db.execute("DROP TRIGGER blobs_no_update")
        (sha,) = db.execute(
            "SELECT sha256 FROM blobs WHERE depth > 0 ORDER BY rowid DESC"
        ).fetchone()
        db.execute(f"UPDATE blobs SET {column} = ? WHERE sha256 = ?", [value, sha])
    return bytes(sha).hex()


FORGED = linedelta.encode([(0, 1, [b"forged"])])


@pytest.mark.parametrize(
    ("column", "value"),
    [
        ("data", FORGED),  # decodes, applies, gives other content
        ("data", b"\xc1garbage"),  # does not decode
        ("data", linedelta.encode([(5000, 5001, [])])),  # does not fit its base
        ("base", bytes(32)),  # a base that does not exist
        ("base", "not an address"),
    ],
    ids=["forged", "garbage", "misfit", "missing-base", "bad-base"],
)
def test_a_damaged_delta_is_journal_corrupt_on_read_and_in_verify(
    journal: Journal, db_path: Path, column: str, value: object
) -> None:
    write_versions(
        journal, "f.py", [source(200), one_line_changed(200, 1), one_line_changed(200, 2)]
    )
    sha = damage_newest_delta(db_path, column, value)
    fresh = Journal(db_path)
    with pytest.raises(ToolError) as caught:
        fresh.blob(sha)
    assert caught.value.code == ErrorCode.JOURNAL_CORRUPT
    assert sha in caught.value.message
    report = fresh.verify()
    assert not report.ok and report.bad_blob == sha


def test_a_damaged_base_makes_the_versions_above_it_corrupt(
    journal: Journal, db_path: Path
) -> None:
    versions = [source(200), one_line_changed(200, 1), one_line_changed(200, 2)]
    write_versions(journal, "f.py", versions)
    with sqlite3.connect(db_path) as db:
        db.execute("DROP TRIGGER blobs_no_update")
        db.execute(
            "UPDATE blobs SET data = ? WHERE sha256 = ?",
            [zlib.compress(b"other\n"), bytes.fromhex(sha256_hex(versions[0]))],
        )
    with pytest.raises(ToolError, match=r"damaged"):
        Journal(db_path).blob(sha256_hex(versions[2]))


def test_a_delta_chain_that_loops_is_corrupt_not_endless(journal: Journal, db_path: Path) -> None:
    write_versions(journal, "f.py", [source(200), one_line_changed(200, 1)])
    sha = damage_newest_delta(db_path, "base", None)
    with sqlite3.connect(db_path) as db:
        key = bytes.fromhex(sha)
        db.execute("UPDATE blobs SET base = ? WHERE sha256 = ?", [key, key])
    with pytest.raises(ToolError, match="longer than"):
        Journal(db_path).blob(sha)


# --- the first schema -------------------------------------------------------------------

V0_SCHEMA = """
CREATE TABLE events (seq INTEGER PRIMARY KEY, ts INTEGER NOT NULL, agent TEXT,
  kind TEXT NOT NULL, path TEXT, body BLOB NOT NULL, prev_hash TEXT NOT NULL, hash TEXT NOT NULL);
CREATE TABLE blobs (sha256 TEXT PRIMARY KEY, size INTEGER NOT NULL, codec TEXT NOT NULL,
  data BLOB NOT NULL);
"""


def old_journal(db_path: Path, versions: list[bytes]) -> None:
    """A schema-0 journal: events chained by the same code, blobs as full zlib copies,
    written with raw SQL as the first editjournal did."""
    scratch = db_path.with_name("scratch.db")
    new = Journal(scratch)
    write_versions(new, "f.py", versions)
    events = new.db.execute("SELECT * FROM events ORDER BY seq").fetchall()
    new.close()
    with sqlite3.connect(db_path) as db:
        db.executescript(V0_SCHEMA)
        db.executemany("INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?, ?)", events)
        for content in dict.fromkeys(versions):
            db.execute(
                "INSERT INTO blobs VALUES (?, ?, 'zlib', ?)",
                [sha256_hex(content), len(content), zlib.compress(content)],
            )


def test_an_old_journal_is_upgraded_in_place_and_old_blobs_read_as_they_are(
    db_path: Path,
) -> None:
    versions = [source(100), one_line_changed(100, 1), one_line_changed(100, 2)]
    old_journal(db_path, versions)
    before = sqlite3.connect(db_path).execute("SELECT * FROM events").fetchall()

    journal = Journal(db_path)
    assert journal.db.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
    assert all(journal.blob(sha256_hex(v)) == v for v in versions)
    assert journal.verify().ok
    newer = one_line_changed(100, 3)
    journal.append("a", edit("f.py", versions[-1], newer), {sha256_hex(newer): newer})
    journal.close()

    reopened = Journal(db_path)
    assert reopened.db.execute("SELECT * FROM events WHERE seq <= 3").fetchall() == before
    assert reopened.blob(sha256_hex(newer)) == newer
    assert reopened.verify().ok
    reopened.close()


def test_an_old_journal_reads_without_being_changed_when_opened_read_only(
    db_path: Path,
) -> None:
    versions = [source(100), one_line_changed(100, 1)]
    old_journal(db_path, versions)
    journal = Journal(db_path, readonly=True)
    assert journal.blob(sha256_hex(versions[1])) == versions[1]
    assert journal.verify().ok
    journal.close()
    assert sqlite3.connect(db_path).execute("PRAGMA user_version").fetchone() == (0,)


def test_a_journal_from_a_newer_editjournal_is_refused_naming_its_version(
    db_path: Path,
) -> None:
    with sqlite3.connect(db_path) as db:
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(JournalError, match=f"schema version {SCHEMA_VERSION + 1}"):
        Journal(db_path)


def test_after_a_restart_the_next_version_is_a_delta_on_the_last_one_stored(
    journal: Journal, db_path: Path
) -> None:
    v0, v1, v2 = source(200), one_line_changed(200, 1), one_line_changed(200, 2)
    write_versions(journal, "f.py", [v0, v1])
    journal.close()
    reopened = Journal(db_path)  # no memory of the heads: found through the events
    reopened.append("a", edit("f.py", v1, v2), {sha256_hex(v2): v2})
    reopened.close()
    _, codec, base, depth = rows(db_path)[-1]
    assert (codec, base, depth) == ("delta", bytes.fromhex(sha256_hex(v1)), 2)


# --- schema 2: keys as hex text -----------------------------------------------------------

AS_SCHEMA_2 = """
CREATE TABLE blobs_text (sha256 TEXT PRIMARY KEY, size INTEGER NOT NULL, codec TEXT NOT NULL,
  data BLOB NOT NULL, base TEXT, depth INTEGER NOT NULL DEFAULT 0);
INSERT INTO blobs_text SELECT lower(hex(sha256)), size, codec, data, base, depth FROM blobs
  ORDER BY rowid;
DROP TABLE blobs;
ALTER TABLE blobs_text RENAME TO blobs;
CREATE TRIGGER blobs_no_replace BEFORE INSERT ON blobs
WHEN EXISTS (SELECT 1 FROM blobs WHERE sha256 = NEW.sha256)
BEGIN SELECT RAISE(ABORT, 'editjournal: blobs are immutable'); END;
CREATE TRIGGER blobs_no_update BEFORE UPDATE ON blobs
BEGIN SELECT RAISE(ABORT, 'editjournal: blobs are immutable'); END;
CREATE TRIGGER blobs_no_delete BEFORE DELETE ON blobs
BEGIN SELECT RAISE(ABORT, 'editjournal: blobs are immutable'); END;
PRAGMA user_version = 2;
"""


def schema_2_journal(db_path: Path, versions: list[bytes]) -> None:
    """A journal as schema 2 stored it: deltas on raw-byte bases, keys as hex text."""
    journal = Journal(db_path)
    write_versions(journal, "f.py", versions)
    journal.close()
    with sqlite3.connect(db_path) as db:
        db.executescript(AS_SCHEMA_2)


def test_a_schema_2_journal_reads_read_only_as_it_is(db_path: Path) -> None:
    versions = [source(200)] + [one_line_changed(200, k) for k in range(5)]
    schema_2_journal(db_path, versions)
    journal = Journal(db_path, readonly=True)
    assert all(journal.blob(sha256_hex(v)) == v for v in versions)
    assert journal.verify().ok
    journal.close()
    with sqlite3.connect(db_path) as db:
        assert db.execute("PRAGMA user_version").fetchone() == (2,)
        assert db.execute("SELECT DISTINCT typeof(sha256) FROM blobs").fetchall() == [("text",)]


def test_a_schema_2_journal_is_rekeyed_once_every_other_byte_kept(db_path: Path) -> None:
    versions = [source(200)] + [one_line_changed(200, k) for k in range(5)]
    schema_2_journal(db_path, versions)
    with sqlite3.connect(db_path) as db:
        events = db.execute("SELECT * FROM events").fetchall()
        blobs = db.execute("SELECT * FROM blobs ORDER BY rowid").fetchall()

    journal = Journal(db_path)
    assert not journal.opened_without_triggers
    stored = journal.db.execute("SELECT * FROM blobs ORDER BY rowid").fetchall()
    assert [(bytes.fromhex(row[0]), *row[1:]) for row in blobs] == stored
    assert journal.db.execute("SELECT * FROM events").fetchall() == events
    assert all(journal.blob(sha256_hex(v)) == v for v in versions)
    newer = one_line_changed(200, 9)  # goes on with the old chain, on its binary keys
    journal.append("a", edit("f.py", versions[-1], newer), {sha256_hex(newer): newer})
    assert journal.verify().ok
    journal.close()
    assert [len(deltas) for _, deltas in chains(db_path)] == [6]
    with sqlite3.connect(db_path) as db, pytest.raises(sqlite3.IntegrityError):
        db.execute("DELETE FROM blobs")  # the triggers were made again
