"""A job's big new content is compressed a piece per slice before the journal keeps it
(daemon/runtime/blobsteps.py): the bytes stored are the ones one `zlib` call would give,
what would be a delta or is small is kept at once, and nothing is kept half done."""

from __future__ import annotations

import sqlite3
import time
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from editjournal.daemon.runtime.blobsteps import SteppedBlobs
from editjournal.daemon.store.blobs import PIECE, STEPPED_FROM, _full, full_in_steps, sha256_hex
from editjournal.daemon.store.journal import Journal
from tests.unit.test_blobstore import file_read


def big(tag: str, size: int = STEPPED_FROM + PIECE // 2) -> bytes:
    line = f"a line of {tag}, numbered so zlib has work to do: %d\n"
    return "".join(line % n for n in range(size // len(line) + 1)).encode()[:size]


@pytest.fixture
def journal(tmp_path: Path) -> Iterator[Journal]:
    j = Journal(tmp_path / "journal.db")
    yield j
    j.close()


def stored(journal: Journal, digest: str) -> tuple[object, bytes] | None:
    with sqlite3.connect(journal.path) as db:
        row = db.execute(
            "SELECT codec, data FROM blobs WHERE sha256 = ?", [bytes.fromhex(digest)]
        ).fetchone()
    return None if row is None else (row[0], row[1])


def test_the_pieces_give_the_bytes_one_call_gives() -> None:
    for data in (big("x"), b"short", b"", bytes(range(256)) * 9000):
        packing = full_in_steps(data)
        steps = 0
        while True:
            try:
                next(packing)
                steps += 1
            except StopIteration as done:
                assert done.value == _full(data)
                break
        assert steps == -(-len(data) // PIECE)


def test_a_big_new_content_is_kept_after_its_pieces_and_a_small_one_at_once(
    journal: Journal,
) -> None:
    data, small = big("new"), b"small\n"
    blobs = {sha256_hex(data): data, sha256_hex(small): small}
    contents = SteppedBlobs()
    assert contents.keep(journal, blobs, {sha256_hex(data): "big.txt"})  # the small one
    journal.commit()
    assert stored(journal, sha256_hex(small)) == ("raw", small)
    assert contents and stored(journal, sha256_hex(data)) is None
    slices = 0
    while contents:
        staged = contents.work(journal, deadline=time.monotonic())  # one piece a slice
        journal.commit()
        slices += 1
        assert staged == (not contents)
        assert (stored(journal, sha256_hex(data)) is None) == bool(contents)  # never half
    assert slices == -(-len(data) // PIECE) + 1
    codec, packed = stored(journal, sha256_hex(data)) or ("", b"")
    assert (codec, packed) == _full(data) and zlib.decompress(packed) == data
    assert journal.blob(sha256_hex(data)) == data


def test_a_big_new_version_of_a_known_file_is_kept_at_once_as_a_delta(journal: Journal) -> None:
    first = big("v1")
    journal.append("a", file_read("f.txt", first), {sha256_hex(first): first})
    second = first.replace(b"numbered", b"NUMBERED", 1)
    contents = SteppedBlobs()
    assert contents.keep(journal, {sha256_hex(second): second}, {sha256_hex(second): "f.txt"})
    assert not contents
    journal.commit()
    codec, _ = stored(journal, sha256_hex(second)) or ("", b"")
    assert codec in ("delta", "zdelta")
