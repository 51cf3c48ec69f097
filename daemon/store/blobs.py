"""File versions in the journal's `blobs` table: content-addressed, stored as line deltas.

Why: a copy of the whole file per edit made the journal grow by kilobytes per
one-line change. A new version of a file is stored as a line delta
(`daemon.store.linedelta`) against the latest stored version of the same path, with a
full (zlib or raw) copy when the path has none, when the delta is not smaller, or
when the chain above the last full copy would outgrow it: once its deltas' bytes
would pass the full copy's own, or past `MAX_DEPTH` versions. So the full copies
cost at most what the deltas do (a one-line edit of a 100 KB file pays a 21 KB
copy once per ~256 edits, not per 64), and reading any version applies at most
`MAX_DEPTH - 1` deltas, each spliced in place. Old journals' full blobs (codec
zlib/raw, no base) are read as they are. A checkpoint manifest's chunk is a version
of its `delta_key` (daemon.store.manifest), with the same rules; no event names that
key, so after a restart a chunk's first new version is a full copy again.

Addresses are stored as 32 raw bytes since schema 3 (hex text before, which a
read-only open of an older journal still reads); in Python they are hex strings.

What it must never do: hand out bytes that are not the content of their address.
Every version read is rebuilt from its own row, hashed and compared with its
SHA-256 (a wrong base on the way cannot give the right content); a mismatch, a
missing base, or a chain that is too long or loops is `CorruptBlob`. Only the
journal's owning thread uses a BlobStore.
"""

from __future__ import annotations

import hashlib
import sqlite3
import zlib
from collections import OrderedDict
from collections.abc import Callable, Generator, Iterator, Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

from editjournal.daemon.store import linedelta
from editjournal.daemon.store.hashchain import hash_text
from editjournal.daemon.store.manifest import DELTA_KEY, delta_key

MAX_DEPTH = 256  # versions per full copy at most: bounds a read to MAX_DEPTH - 1 deltas
CACHE_BYTES = 32 * 1024 * 1024  # verified contents kept to serve bases and re-reads
PRESENT_MAX = 65_536  # digests known stored (`has` without a query); forgotten when full
INDEX_MAX = 500_000  # a journal with at most this many blobs may be indexed whole (~60 MB)
INSERT_BLOB = "INSERT INTO blobs (sha256, size, codec, data, base, depth) VALUES (?, ?, ?, ?, ?, ?)"
_SELECT = "SELECT sha256, size, codec, data, base, depth FROM blobs"
_SELECT_V0 = "SELECT sha256, size, codec, data, NULL, 0 FROM blobs"
_LEVEL = 6
FAST_FROM = 1 << 20  # bytes of a content from which zlib's fastest level is used (`_level`)
PIECE = 1 << 20  # bytes of a content a step of `full_in_steps` compresses (~10-20 ms)
STEPPED_FROM = 2 * PIECE  # a job's content this big is compressed in steps (daemon/runtime/jobs.py)
BINARY_KEYS_SINCE = 3  # the schema version from which addresses are stored as raw bytes
# a version's chain down to its full copy: (depth, stored bytes) per row, newest first
_CHAIN = """
WITH RECURSIVE chain(key, base, depth, bytes, n) AS (
    SELECT sha256, base, depth, length(data), 1 FROM blobs WHERE sha256 = :key
    UNION ALL
    SELECT b.sha256, b.base, b.depth, length(b.data), chain.n + 1
    FROM blobs AS b JOIN chain ON b.sha256 = chain.base
    WHERE chain.depth > 0 AND chain.n <= :most
)
SELECT depth, bytes FROM chain ORDER BY n
"""
DELTA_CODECS = ("delta", "zdelta")  # plain or zlib'd msgpack splices on `base`


class CorruptBlob(Exception):
    """A stored blob's bytes do not give back the content of its address."""


class StoredBlob(NamedTuple):
    sha256: str
    size: object  # columns as SQLite hands them back: a tamperer can store any type
    codec: object
    data: object
    base: object
    depth: object


class _Head(NamedTuple):
    """A path's latest stored version, and what its delta chain has cost so far."""

    sha256: str
    depth: int
    chain_bytes: int  # the deltas' bytes above the full copy
    full_bytes: int  # the full copy's stored bytes: what the chain may cost at most


@dataclass
class Packed:
    """New blob rows for one commit, and what the store learns once they are in."""

    rows: list[tuple[object, ...]] = field(default_factory=list)
    heads: dict[str, _Head] = field(default_factory=dict)
    contents: dict[str, bytes] = field(default_factory=dict)


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class BlobStore:
    """Reads and packs the blobs of one journal connection."""

    def __init__(self, conn: sqlite3.Connection, latest: Callable[[str], str | None]) -> None:
        """`latest(path)`: the newest stored version of `path` the journal's events name."""
        self._conn = conn
        self._latest = latest
        columns = {row[1] for row in conn.execute("PRAGMA table_info(blobs)")}
        # a read-only open of a schema-0 journal: every blob there is a full copy
        self._select = _SELECT if "base" in columns else _SELECT_V0
        # a read-only open of a journal before schema 3 keys its blobs by hex text
        binary = conn.execute("PRAGMA user_version").fetchone()[0] >= BINARY_KEYS_SINCE
        self._key: Callable[[str], object] = bytes.fromhex if binary else str
        self._heads: dict[str, _Head] = {}  # path -> its latest stored version
        self._cache = _Cache(CACHE_BYTES)
        # digests seen committed: a re-read's "is this content stored?" costs no query;
        # sound because a blob row is never deleted (trigger blobs_no_delete)
        self._present: set[str] = set()
        self._complete = False  # `_present` holds every stored digest: a miss is an answer
        self._full: Mapping[str, tuple[str, bytes]] = {}  # the pack in progress's `full`

    # --- writing --------------------------------------------------------------------

    def reconnect(self, conn: sqlite3.Connection) -> None:
        """Read and pack through `conn` from now on: the same file, reopened (its WAL
        taken back, daemon.store.journal); what is cached and known stays true."""
        self._conn = conn

    def pack(
        self,
        blobs: Mapping[str, bytes],
        paths: Mapping[str, str],
        full: Mapping[str, tuple[str, bytes]] | None = None,
    ) -> Packed:
        """Rows for the blobs not stored yet; `paths` says which file each one is of;
        `full`: full copies compressed already (`full_in_steps`), taken where a full
        copy is stored."""
        packed = Packed()
        self._full = full or {}
        try:
            self._pack_into(packed, blobs, paths)
        finally:
            self._full = {}
        return packed

    def _pack_into(
        self, packed: Packed, blobs: Mapping[str, bytes], paths: Mapping[str, str]
    ) -> None:
        for digest, data in blobs.items():
            if digest in packed.contents or self.has(digest):
                continue
            # a checkpoint manifest's chunk has no file: its versions share its first path
            path = paths.get(digest) or delta_key(data)
            row, head = self._row(digest, data, path, packed)
            packed.rows.append(row)
            packed.contents[digest] = data
            if path is not None:
                packed.heads[path] = head

    def committed(self, packed: Packed) -> None:
        """The rows are in the database: they may now serve as bases."""
        self._heads.update(packed.heads)
        for digest, data in packed.contents.items():
            self._cache.put(digest, data)
            self._known(digest)

    def _row(
        self, digest: str, data: bytes, path: str | None, packed: Packed
    ) -> tuple[tuple[object, ...], _Head]:
        """A delta on the path's latest version when that is smaller and the chain may
        still grow by it, else a full copy."""
        key = self._key(digest)
        head = self._head(path, packed) if path is not None else None
        full = self._full.get(digest)
        if head is not None and head.depth + 1 < MAX_DEPTH:
            base = self._base_content(head, packed)
            delta = _delta(base, data) if base is not None else None
            if delta is not None and delta[1] and len(delta[1]) * 8 >= len(data):
                full = full or _full(data)  # compared with it: made once, kept for the row
            if delta is not None and _worth_a_delta(head, len(delta[1]), data, full):
                depth = head.depth + 1
                grown = _Head(digest, depth, head.chain_bytes + len(delta[1]), head.full_bytes)
                # the base as 32 raw bytes: half the hex, on every delta row
                return (key, len(data), *delta, bytes.fromhex(head.sha256), depth), grown
        full = full or _full(data)
        return (key, len(data), *full, None, 0), _Head(digest, 0, 0, len(full[1]))

    def stored_whole(self, digest: str, path: str | None) -> bool:
        """Whether `digest`, a version of `path`, would be stored as a full copy: not
        stored yet, and no earlier version of its path to be a delta on."""
        if self.has(digest):
            return False
        return path is None or self._head(path, Packed()) is None

    def _head(self, path: str, packed: Packed) -> _Head | None:
        head = packed.heads.get(path) or self._heads.get(path)
        if head is None and path.startswith(DELTA_KEY):  # no event names a chunk's key
            return None
        if head is None:  # first version of this path since start: ask the journal
            digest = self._latest(path)
            head = self._stored_head(digest) if digest is not None else None
            if head is not None:
                self._heads[path] = head
        return head

    def _stored_head(self, digest: str) -> _Head | None:
        """The head `digest` makes, its chain's costs summed in one walk down its bases;
        None (so a full copy comes next) when the chain is not whole down to a full copy."""
        found = self._conn.execute(_CHAIN, {"key": self._key(digest), "most": MAX_DEPTH})
        rows = found.fetchall()
        depths = [depth for depth, _ in rows]
        if not rows or not all(isinstance(d, int) for d in depths):
            return None
        if depths != list(range(depths[0], -1, -1)):  # damaged: verify() will say how
            return None
        chain_bytes = sum(size for depth, size in rows if depth > 0)
        return _Head(digest, depths[0], chain_bytes, rows[-1][1])

    def _base_content(self, head: _Head, packed: Packed) -> bytes | None:
        content = packed.contents.get(head.sha256) or self._cache.get(head.sha256)
        if content is not None:
            return content
        try:
            return self.read(head.sha256)
        except CorruptBlob:  # a damaged base is verify()'s to report; store this one whole
            return None

    # --- reading --------------------------------------------------------------------

    def index(self) -> bool:
        """Know every stored digest, so `has` answers a miss without a query (for a
        checkpoint's hundred thousand contents); False when the journal holds too many."""
        if self._complete:
            return True
        if self._conn.execute("SELECT count(*) FROM blobs").fetchone()[0] > INDEX_MAX:
            return False
        rows = self._conn.execute("SELECT sha256 FROM blobs")
        self._present = {hash_text(row[0]) for row in rows}
        self._complete = True
        return True

    def has(self, digest: str) -> bool:
        if digest in self._present:
            return True
        if self._complete:
            return False
        key = self._key(digest)
        row = self._conn.execute("SELECT 1 FROM blobs WHERE sha256 = ?", [key]).fetchone()
        if row is not None:
            self._known(digest)
        return row is not None

    def _known(self, digest: str) -> None:
        if len(self._present) >= PRESENT_MAX and not self._complete:
            self._present.clear()
        self._present.add(digest)

    def read(self, digest: str) -> bytes | None:
        """The verified content of `digest`, None if it was never stored (bases on the way
        may come from the cache of verified contents; the result is checked anyway)."""
        row = self._fetch(digest)  # its own row always: damage on disk must show
        return None if row is None else self._rebuild(row)

    def _fetch(self, digest: str) -> StoredBlob | None:
        row = self._conn.execute(f"{self._select} WHERE sha256 = ?", [self._key(digest)])
        return _stored(row.fetchone())

    def _rebuild(self, row: StoredBlob) -> bytes:
        """Walk the bases down to a full copy (or a cached version), then apply the
        deltas back up; the result is checked against its address (which checks every
        base on the way: a wrong one cannot give the right content)."""
        chain = [row]
        content = None
        while content is None and chain[-1].codec in DELTA_CODECS:
            if len(chain) > MAX_DEPTH:
                raise CorruptBlob(f"its delta chain is longer than {MAX_DEPTH} (or loops)")
            base = _base_address(chain[-1].base)
            content = self._cache.get(base) if base is not None else None
            if content is None:
                found = self._fetch(base) if base is not None else None
                if found is None:
                    raise CorruptBlob(f"its base {base} is missing")
                chain.append(found)
        if content is None:
            bottom = chain.pop()
            content = _checked(bottom, unpack_full(bottom))
        lines = linedelta.split(content)
        for delta_row in reversed(chain):  # on the lines: one split, one join, one hash
            _apply_delta(delta_row, lines)
        content = _checked(row, linedelta.join(lines))
        self._cache.put(row.sha256, content)
        return content

    def stored(self) -> Iterator[StoredBlob]:
        """Every stored blob, oldest first (so bases come before their deltas)."""
        for row in self._conn.execute(f"{self._select} ORDER BY rowid"):
            yield StoredBlob(hash_text(row[0]), *row[1:])

    def problem(self, row: StoredBlob) -> str | None:
        """What is wrong with a stored blob (its bytes, chain, address or size), or None."""
        try:
            content = self._rebuild(row)  # the row's own bytes, never a cached copy
        except CorruptBlob as e:
            return str(e)
        if len(content) != row.size:
            return f"holds {len(content)} bytes, its size column says {row.size}"
        return None


def unpack_full(row: StoredBlob) -> bytes:
    """A full copy's bytes (zlib or raw), unchecked."""
    if not isinstance(row.data, bytes):
        raise CorruptBlob(f"data is {type(row.data).__name__}, not bytes")
    if row.codec == "zlib":
        try:
            return zlib.decompress(row.data)
        except zlib.error as e:
            raise CorruptBlob(f"does not decompress ({e})") from e
    if row.codec == "raw":
        return row.data
    raise CorruptBlob(f"unknown codec {row.codec!r}")


def _stored(row: tuple[object, ...] | None) -> StoredBlob | None:
    return None if row is None else StoredBlob(hash_text(row[0]), *row[1:])


def _worth_a_delta(
    head: _Head, delta_bytes: int, data: bytes, full: tuple[str, bytes] | None
) -> bool:
    """A delta smaller than the version (an eighth of it, or its full copy, `full` when
    made already), on a chain whose deltas would still cost no more than its full copy:
    so the full copies, one per chain, never cost more than the deltas they spare."""
    small = delta_bytes * 8 < len(data) or delta_bytes < len((full or _full(data))[1])
    return small and head.chain_bytes + delta_bytes <= head.full_bytes


def _base_address(base: object) -> str | None:
    return base.hex() if isinstance(base, bytes) and len(base) == 32 else None


def _delta(base: bytes, data: bytes) -> tuple[str, bytes] | None:
    """(codec, bytes) of the line delta from `base` to `data`: zlib'd unless that is
    no smaller (a one-line change is a few dozen bytes either way). None when its
    splices replace more than half of the lines: no such delta is worth storing, and
    encoding and compressing one (a 200,000-line rewrite) cost ~0.3 s of a commit."""
    splices = linedelta.diff(base, data, most_lines=(data.count(b"\n") + 1) // 2)
    if splices is None:
        return None
    encoded = linedelta.encode(splices)
    packed = zlib.compress(encoded, _level(len(encoded)))
    return ("zdelta", packed) if len(packed) < len(encoded) else ("delta", encoded)


def _apply_delta(row: StoredBlob, lines: list[bytes]) -> None:
    """Splice `row`'s delta into `lines` in place (a version deep in a chain costs its
    splices, not a copy of the file per delta)."""
    if not isinstance(row.data, bytes):
        raise CorruptBlob(f"data is {type(row.data).__name__}, not bytes")
    try:
        encoded = zlib.decompress(row.data) if row.codec == "zdelta" else row.data
        splices = linedelta.decode(encoded)
        linedelta.apply_in_place(lines, splices)
    except zlib.error as e:
        raise CorruptBlob(f"delta does not decompress ({e})") from e
    except linedelta.DeltaError as e:
        raise CorruptBlob(str(e)) from e


def _checked(row: StoredBlob, content: bytes) -> bytes:
    if sha256_hex(content) != row.sha256:
        raise CorruptBlob(f"content of {row.sha256} does not match its SHA-256")
    return content


def _full(data: bytes) -> tuple[str, bytes]:
    return _chosen(data, zlib.compress(data, _level(len(data))))


def _level(size: int) -> int:
    """zlib's level for `size` bytes: 6 (its default) below `FAST_FROM`, 1 from there:
    a 4.8 MB content took 214 ms at 6 and 38 ms at 1, for 25% more bytes, in a turn of
    the daemon's thread when no job compresses it in steps (an outside change's)."""
    return _LEVEL if size < FAST_FROM else 1


def full_in_steps(data: bytes) -> Generator[None, None, tuple[str, bytes]]:
    """A full copy's (codec, bytes), compressed a `PIECE` at a time, yielding between
    pieces: a 7.6 MB content is ~140 ms of zlib, which one turn of the daemon's loop
    must not take. zlib's stream does not depend on how its input is fed, so these are
    the very bytes `_full` gives."""
    packer = zlib.compressobj(_level(len(data)))
    pieces = []
    for at in range(0, len(data), PIECE):
        pieces.append(packer.compress(data[at : at + PIECE]))
        yield
    pieces.append(packer.flush())
    return _chosen(data, b"".join(pieces))


def _chosen(data: bytes, packed: bytes) -> tuple[str, bytes]:
    return ("zlib", packed) if len(packed) < len(data) else ("raw", data)


class _Cache:
    """Verified contents by address, least recently used out first, bounded in bytes."""

    def __init__(self, max_bytes: int) -> None:
        self._max = max_bytes
        self._items: OrderedDict[str, bytes] = OrderedDict()
        self._bytes = 0

    def get(self, digest: str) -> bytes | None:
        data = self._items.get(digest)
        if data is not None:
            self._items.move_to_end(digest)
        return data

    def put(self, digest: str, data: bytes) -> None:
        if digest in self._items or len(data) > self._max:
            return
        self._items[digest] = data
        self._bytes += len(data)
        while self._bytes > self._max:
            _, old = self._items.popitem(last=False)
            self._bytes -= len(old)
