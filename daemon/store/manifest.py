"""A checkpoint's manifest: every file it covers (path, size, sha256), in chunks.

A checkpoint of a whole workspace covers every file, 100,000 of them in a big
repository; the event cannot carry them (megabytes per checkpoint, read back on
every fold). The manifest is stored as blobs instead — content-addressed, so what
two checkpoints share is stored once — and the event names the chunks.

The list, sorted by path, is cut after each path whose hash ends in `BOUNDARY_BITS`
zero bits (content-defined chunking, as backup tools do): a file added, removed or
changed touches one chunk and leaves every other chunk's bytes, and so its blob, as
it was. The next checkpoint after one edit therefore stores one small chunk.
Pure: bytes in, entries out.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import NamedTuple

import msgspec
import xxhash

BOUNDARY_BITS = 10  # ~1,024 files per chunk
MAX_CHUNK = 8 * 1024  # files: a chunk is cut here whatever the hashes say
_MASK = (1 << BOUNDARY_BITS) - 1
_ENCODER = msgspec.msgpack.Encoder()
_DECODER = msgspec.msgpack.Decoder(list[tuple[str, int, bytes, bool]])


class ManifestEntry(NamedTuple):
    """One file as a checkpoint found it. `held`: the journal holds its content (a text
    file); a binary, non-UTF-8 or too large file is listed, not held (its sha256 is ""
    when it was too large to read)."""

    path: str
    size: int
    sha256: str
    held: bool = True


class ManifestError(Exception):
    """A chunk that does not decode: the journal is damaged."""


def chunks(entries: Iterable[ManifestEntry]) -> list[bytes]:
    """The manifest's chunks, each the msgpack of `[path, size, sha256 bytes, held]` rows."""
    return list(chunks_of_sorted(sorted(entries)))


def chunks_of_sorted(entries: Iterable[ManifestEntry]) -> Iterator[bytes]:
    """`chunks`, one at a time, of entries already sorted by path (so a caller can
    build a big manifest a slice at a time)."""
    rows: list[tuple[str, int, bytes, bool]] = []
    for entry in entries:
        rows.append((entry.path, entry.size, bytes.fromhex(entry.sha256), entry.held))
        if len(rows) >= MAX_CHUNK or xxhash.xxh64_intdigest(entry.path.encode()) & _MASK == 0:
            yield _ENCODER.encode(rows)
            rows = []
    if rows:
        yield _ENCODER.encode(rows)


def entries(chunk: bytes) -> Iterator[ManifestEntry]:
    try:
        rows = _DECODER.decode(chunk)
    except msgspec.DecodeError as e:
        raise ManifestError(f"a checkpoint manifest chunk does not decode: {e}") from e
    for path, size, digest, held in rows:
        yield ManifestEntry(path, size, digest.hex(), held)
