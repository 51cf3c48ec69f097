"""A checkpoint's manifest: every file it covers (path, size, sha256), in chunks.

A checkpoint of a whole workspace covers every file, 100,000 of them in a big
repository; the event cannot carry them (megabytes per checkpoint, read back on
every fold). The manifest is stored as blobs instead — content-addressed, so what
two checkpoints share is stored once — and the event names the chunks.

The list, sorted by path, is cut after each path whose hash ends in `BOUNDARY_BITS`
zero bits (content-defined chunking, as backup tools do): a file added, removed or
changed touches one chunk and leaves every other chunk's bytes, and so its blob, as
it was. The next checkpoint after one edit therefore stores one new chunk.

A chunk is one JSON row per line (`["path", size, "sha256 hex", held]`), so a new
version of a chunk is stored as a line delta on its previous version (daemon.store.blobs,
keyed by `delta_key`: the chunk's first path): a file changed costs the journal its
one line, not a copy of its thousand neighbours' (issue 37: a prompt checkpoint per
turn must cost what changed). Chunks written before that are msgpack, read as they are.
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
DELTA_KEY = "\0manifest chunk from "  # + the chunk's first path: never a file's path (NUL)
_ENCODER = msgspec.json.Encoder()
_DECODER = msgspec.json.Decoder(tuple[str, int, str, bool])
_MSGPACK_DECODER = msgspec.msgpack.Decoder(list[tuple[str, int, bytes, bool]])
_JSON_START = b"["  # a line-delimited chunk starts so; a msgpack array, 0x90-0x9f or 0xdc-0xdd


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
    """The manifest's chunks, each a `[path, size, sha256 hex, held]` JSON row per line."""
    return list(chunks_of_sorted(sorted(entries)))


def chunks_of_sorted(entries: Iterable[ManifestEntry]) -> Iterator[bytes]:
    """`chunks`, one at a time, of entries already sorted by path (so a caller can
    build a big manifest a slice at a time)."""
    rows: list[ManifestEntry] = []
    for entry in entries:
        rows.append(entry)
        if len(rows) >= MAX_CHUNK or xxhash.xxh64_intdigest(entry.path.encode()) & _MASK == 0:
            yield _ENCODER.encode_lines(rows)
            rows = []
    if rows:
        yield _ENCODER.encode_lines(rows)


def entries(chunk: bytes) -> Iterator[ManifestEntry]:
    try:
        if chunk.startswith(_JSON_START):
            rows = _DECODER.decode_lines(chunk)
        else:  # written before line-delimited chunks: msgpack, raw sha256 bytes
            rows = [(p, n, d.hex(), held) for p, n, d, held in _MSGPACK_DECODER.decode(chunk)]
    except msgspec.DecodeError as e:
        raise ManifestError(f"a checkpoint manifest chunk does not decode: {e}") from e
    for path, size, digest, held in rows:
        yield ManifestEntry(path, size, digest, held)


def delta_key(blob: bytes) -> str | None:
    """What a manifest chunk's versions have in common: its first path (a change inside
    the chunk leaves it; content-defined cuts move it only when that very file comes or
    goes). The blob store stores a chunk as a line delta on the last chunk stored under
    the same key. None for anything that is not a line-delimited chunk."""
    if not blob.startswith(_JSON_START):
        return None
    first = blob[: blob.find(b"\n") + 1 or len(blob)]
    try:
        path = _DECODER.decode(first)[0]
    except msgspec.DecodeError:
        return None  # a file's content that merely starts with "[": no key
    return DELTA_KEY + path
