"""A checkpoint manifest's chunks cost the journal what changed (issue 37): a chunk is a
JSON row per line, so its next version is stored as a line delta on the last one stored
under its key (its first path); chunks written before (msgpack) still read."""

from __future__ import annotations

import hashlib
import sqlite3

import msgspec

from editjournal.daemon.store import linedelta, schema
from editjournal.daemon.store.blobs import INSERT_BLOB, BlobStore
from editjournal.daemon.store.manifest import (
    DELTA_KEY,
    ManifestEntry,
    chunks,
    delta_key,
    entries,
)


def _entries(n: int, changed: int = -1) -> list[ManifestEntry]:
    return [
        ManifestEntry(
            f"src/m{i:05}.py", i, hashlib.sha256(f"{i}{i == changed}".encode()).hexdigest()
        )
        for i in range(n)
    ]


def _store() -> tuple[sqlite3.Connection, BlobStore]:
    conn = sqlite3.connect(":memory:")
    schema.prepare(conn)
    return conn, BlobStore(conn, lambda path: None)


def _keep(
    conn: sqlite3.Connection, store: BlobStore, blobs: list[bytes]
) -> list[tuple[object, ...]]:
    packed = store.pack({hashlib.sha256(b).hexdigest(): b for b in blobs}, {})
    with conn:
        conn.executemany(INSERT_BLOB, packed.rows)
    store.committed(packed)
    return packed.rows


def test_odd_paths_read_back_and_an_old_msgpack_chunk_still_reads() -> None:
    odd = [ManifestEntry("a\nb.py", 1, "ab" * 32), ManifestEntry("é [x].bin", 10**9, "", False)]
    assert [e for c in chunks(odd) for e in entries(c)] == sorted(odd)
    old = msgspec.msgpack.encode([("a.py", 3, bytes.fromhex("cd" * 32), True)])
    assert list(entries(old)) == [ManifestEntry("a.py", 3, "cd" * 32, True)]


def test_a_chunks_next_version_is_a_small_delta_on_its_last() -> None:
    conn, store = _store()
    first = chunks(_entries(3000))
    full = _keep(conn, store, first)
    assert {row[2] for row in full} <= {"zlib", "raw"}
    second = chunks(_entries(3000, changed=1234))
    new = [c for c in second if c not in first]
    assert len(new) == 1 and delta_key(new[0]) == delta_key(first[second.index(new[0])])
    (row,) = _keep(conn, store, new)
    assert row[2] in ("delta", "zdelta") and len(row[3]) < 300  # type: ignore[arg-type]
    assert store.read(hashlib.sha256(new[0]).hexdigest()) == new[0]


def test_only_a_chunk_has_a_delta_key() -> None:
    (chunk,) = chunks(_entries(1))
    assert delta_key(chunk) == DELTA_KEY + "src/m00000.py"
    for content in (b"[1, 2]\n", b"[not json\n", b"print(1)\n", b""):
        assert delta_key(content) is None


def test_a_big_chunk_changed_far_apart_is_still_a_small_delta() -> None:
    """Past difflib's budget (a 5,000-file chunk, two files changed at either end), the
    lines are compared line for line rather than the chunk stored again."""
    conn, store = _store()
    before = _entries(5000)
    first = msgspec.json.Encoder().encode_lines(
        before
    )  # one chunk: cut by MAX_CHUNK, not by hashes
    _keep(conn, store, [first])
    after = list(before)
    for i in (3, 4990):
        after[i] = after[i]._replace(sha256="cd" * 32)
    second = msgspec.json.Encoder().encode_lines(after)
    (row,) = _keep(conn, store, [second])
    assert row[2] in ("delta", "zdelta") and len(row[3]) < 300  # type: ignore[arg-type]
    assert store.read(hashlib.sha256(second).hexdigest()) == second
    splices = linedelta.diff(b"a\nb\nc\nd\n" * 2000, b"a\nB\nc\nd\n" + b"a\nb\nc\nd\n" * 1999)
    assert splices == [(1, 2, [b"B"])]
