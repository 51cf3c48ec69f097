"""The append-only journal: every event, in one total order, hash-chained, in SQLite.

What it holds: `events` (seq, ts, agent, kind, path, body, prev_hash, hash) and
`blobs` (file contents addressed by their SHA-256, zlib-compressed, stored
once). What it must never do: change or delete a committed event, or hand out
a blob's bytes without checking them against its address. Triggers
refuse UPDATE and DELETE, and an INSERT whose seq is not exactly last + 1
(which also stops `INSERT OR REPLACE` from overwriting a row). Anyone can drop
a trigger, so each event's hash covers the previous one: `verify()` detects any
edit to history, and any blob that is damaged or missing while an event needs it.
`verify()` never raises on corrupt data (it reports); `blob()` raises the
catalogued `journal_corrupt` error.

Events are staged in memory and committed together (group commit): the server
stages every request of a batch, then commits once. Only the thread that owns
the daemon's state may stage and commit.
"""

from __future__ import annotations

import hashlib
import time
import zlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import msgspec
import sqlite_utils

from editjournal.schemas.errors import ErrorCode, ToolError
from editjournal.schemas.events import (
    EVENT_DECODER,
    EVENT_ENCODER,
    AnyEvent,
    EditApplied,
    EditRejected,
    FileRead,
    OutsideChangeRecorded,
    Record,
)

GENESIS_HASH = "0" * 64
_CHAIN_ENCODER = msgspec.msgpack.Encoder()

_SCHEMA = """
CREATE TABLE IF NOT EXISTS events (
    seq INTEGER PRIMARY KEY,
    ts INTEGER NOT NULL,
    agent TEXT,
    kind TEXT NOT NULL,
    path TEXT,
    body BLOB NOT NULL,
    prev_hash TEXT NOT NULL,
    hash TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS events_path ON events(path, seq);
CREATE INDEX IF NOT EXISTS events_agent ON events(agent, seq);
CREATE TABLE IF NOT EXISTS blobs (
    sha256 TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    codec TEXT NOT NULL,
    data BLOB NOT NULL
);
CREATE TRIGGER IF NOT EXISTS events_no_update BEFORE UPDATE ON events
BEGIN SELECT RAISE(ABORT, 'editjournal: events are append-only'); END;
CREATE TRIGGER IF NOT EXISTS events_no_delete BEFORE DELETE ON events
BEGIN SELECT RAISE(ABORT, 'editjournal: events are append-only'); END;
CREATE TRIGGER IF NOT EXISTS events_gap_free BEFORE INSERT ON events
WHEN NEW.seq IS NULL OR NEW.seq != (SELECT COALESCE(MAX(seq), 0) + 1 FROM events)
BEGIN SELECT RAISE(ABORT, 'editjournal: seq must be exactly the last seq + 1'); END;
CREATE TRIGGER IF NOT EXISTS blobs_no_replace BEFORE INSERT ON blobs
WHEN EXISTS (SELECT 1 FROM blobs WHERE sha256 = NEW.sha256)
BEGIN SELECT RAISE(ABORT, 'editjournal: blobs are immutable'); END;
CREATE TRIGGER IF NOT EXISTS blobs_no_update BEFORE UPDATE ON blobs
BEGIN SELECT RAISE(ABORT, 'editjournal: blobs are immutable'); END;
CREATE TRIGGER IF NOT EXISTS blobs_no_delete BEFORE DELETE ON blobs
BEGIN SELECT RAISE(ABORT, 'editjournal: blobs are immutable'); END;
"""

_INSERT_EVENT = (
    "INSERT INTO events (seq, ts, agent, kind, path, body, prev_hash, hash)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
)
_INSERT_BLOB = "INSERT INTO blobs (sha256, size, codec, data) VALUES (?, ?, ?, ?)"
_SELECT_BLOBS = "SELECT sha256, size, codec, data FROM blobs ORDER BY sha256"


class JournalError(Exception):
    """The journal cannot be opened or written; the daemon must not go on."""


class _CorruptBlob(Exception):
    """A stored blob's bytes do not give back the content of its address."""


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def chain_hash(
    prev_hash: str, seq: int, ts: int, agent: str | None, kind: str, path: str | None, body: bytes
) -> str:
    """BLAKE2b-256 over every stored column, so no column can change unnoticed."""
    payload = _CHAIN_ENCODER.encode((prev_hash, seq, ts, agent, kind, path, body))
    return hashlib.blake2b(payload, digest_size=32).hexdigest()


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class VerifyReport:
    """The outcome of `Journal.verify()`: ok, or the first seq where the chain breaks,
    or (chain intact) the first blob that is damaged or missing."""

    ok: bool
    checked: int
    first_bad_seq: int | None = None
    reason: str | None = None
    bad_blob: str | None = None


@dataclass
class _Pending:
    rows: list[tuple[object, ...]] = field(default_factory=list)
    records: list[Record] = field(default_factory=list)
    blobs: dict[str, bytes] = field(default_factory=dict)


class Journal:
    """The SQLite event store of one workspace."""

    def __init__(self, path: Path, clock: Callable[[], int] = now_ms) -> None:
        self.path = path
        self._clock = clock
        try:
            self.db = sqlite_utils.Database(path)
            self.db.enable_wal()
            # FULL: an acknowledged edit survives power loss; group commit keeps it cheap.
            self.db.execute("PRAGMA synchronous=FULL")
            self.db.conn.executescript(_SCHEMA)
        except Exception as e:  # sqlite3.DatabaseError and friends
            raise JournalError(f"cannot open journal {path}: {e}") from e
        self._reload_tip()
        self._pending = _Pending()

    def _reload_tip(self) -> None:
        """Take the chain's tip from disk: at open, and after a failed commit."""
        row = self.db.execute("SELECT seq, hash FROM events ORDER BY seq DESC LIMIT 1").fetchone()
        self._last_seq: int = row[0] if row else 0
        self._last_hash: str = row[1] if row else GENESIS_HASH

    # --- writing ----------------------------------------------------------------

    @property
    def last_seq(self) -> int:
        """The seq of the last staged event (committed or about to be)."""
        return self._last_seq

    def stage(
        self, agent: str | None, event: AnyEvent, blobs: Mapping[str, bytes] | None = None
    ) -> Record:
        """Give `event` the next seq and its chain hash; it is durable after `commit()`."""
        body = EVENT_ENCODER.encode(event)
        seq, ts = self._last_seq + 1, self._clock()
        digest = chain_hash(self._last_hash, seq, ts, agent, event.kind, event.path, body)
        record = Record(
            seq=seq, ts=ts, agent=agent, event=event, prev_hash=self._last_hash, hash=digest
        )
        row = (seq, ts, agent, event.kind, event.path, body, self._last_hash, digest)
        self._pending.rows.append(row)
        self._pending.records.append(record)
        self._pending.blobs.update(blobs or {})
        self._last_seq, self._last_hash = seq, digest
        return record

    def commit(self) -> list[Record]:
        """Write every staged event and blob in one transaction; return the records."""
        pending, self._pending = self._pending, _Pending()
        if not pending.rows and not pending.blobs:
            return []
        blob_rows = list(_blob_rows(pending.blobs, self))
        try:
            with self.db.conn:
                self.db.conn.executemany(_INSERT_BLOB, blob_rows)
                self.db.conn.executemany(_INSERT_EVENT, pending.rows)
        except Exception as e:
            self._reload_tip()
            raise JournalError(f"commit of {len(pending.rows)} events failed: {e}") from e
        return pending.records

    def append(
        self, agent: str | None, event: AnyEvent, blobs: Mapping[str, bytes] | None = None
    ) -> Record:
        """Stage and commit one event (for start-up, shutdown and tests)."""
        record = self.stage(agent, event, blobs)
        self.commit()
        return record

    # --- reading ------------------------------------------------------------------

    def records(
        self,
        *,
        after_seq: int = 0,
        until_seq: int | None = None,
        path: str | None = None,
        agent: str | None = None,
        kind: str | None = None,
        limit: int | None = None,
        newest_first: bool = False,
    ) -> Iterator[Record]:
        """Committed events in seq order (or newest first), filtered by path/agent/kind."""
        where: list[str] = ["seq > ?"]
        args: list[object] = [after_seq]
        if until_seq is not None:
            where.append("seq <= ?")
            args.append(until_seq)
        for column, value in (("path", path), ("agent", agent), ("kind", kind)):
            if value is not None:
                where.append(f"{column} = ?")
                args.append(value)
        sql = (
            "SELECT seq, ts, agent, body, prev_hash, hash FROM events"
            f" WHERE {' AND '.join(where)} ORDER BY seq {'DESC' if newest_first else 'ASC'}"
        )
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        for seq, ts, agent_, body, prev_hash, digest in self.db.execute(sql, args):
            event = EVENT_DECODER.decode(body)
            yield Record(
                seq=seq, ts=ts, agent=agent_, event=event, prev_hash=prev_hash, hash=digest
            )

    def count(self) -> int:
        return int(self.db.execute("SELECT COUNT(*) FROM events").fetchone()[0])

    def size_bytes(self) -> int:
        """Bytes on disk of the database and its WAL."""
        files = (self.path, self.path.with_name(self.path.name + "-wal"))
        return sum(f.stat().st_size for f in files if f.exists())

    def has_blob(self, sha256: str) -> bool:
        row = self.db.execute("SELECT 1 FROM blobs WHERE sha256 = ?", [sha256]).fetchone()
        return row is not None or sha256 in self._pending.blobs

    def blob(self, sha256: str) -> bytes | None:
        """The content whose SHA-256 is `sha256`, if it was ever stored.

        Raises `ToolError(journal_corrupt)` when the stored bytes do not give back
        that content: a damaged blob must never pass for a file's past."""
        if sha256 in self._pending.blobs:
            return self._pending.blobs[sha256]
        row = self.db.execute(
            "SELECT sha256, size, codec, data FROM blobs WHERE sha256 = ?", [sha256]
        ).fetchone()
        if row is None:
            return None
        try:
            return _unpack(_StoredBlob(*row))
        except _CorruptBlob as e:
            raise ToolError(
                ErrorCode.JOURNAL_CORRUPT,
                f"blob {sha256} in journal {self.path} is damaged: {e}",
                {"blob": sha256, "journal": str(self.path)},
            ) from e

    def verify(self) -> VerifyReport:
        """Recompute the chain from genesis (seqs gap-free, every hash intact), then
        check every blob and that every blob an event needs is there. Never raises
        on corrupt data: the first problem is the report's `reason`."""
        prev, checked = GENESIS_HASH, 0
        needed: dict[str, int] = {}  # blob sha256 -> first seq that needs it
        rows = self.db.execute(
            "SELECT seq, ts, agent, kind, path, body, prev_hash, hash FROM events ORDER BY seq"
        )
        for row in map(_StoredRow._make, rows):
            problem = _row_problem(checked + 1, prev, row)
            if problem:
                return VerifyReport(False, checked, row.seq, problem)
            for digest in stored_blobs(EVENT_DECODER.decode(row.body)):
                needed.setdefault(digest, row.seq)
            prev, checked = row.hash, checked + 1
        bad = self._blob_problem(needed)
        if bad:
            return VerifyReport(False, checked, None, bad[1], bad_blob=bad[0])
        return VerifyReport(True, checked)

    def _blob_problem(self, needed: Mapping[str, int]) -> tuple[str, str] | None:
        """(sha256, reason) of the first damaged blob, else of the first needed one missing."""
        present: set[str] = set()
        for row in map(_StoredBlob._make, self.db.execute(_SELECT_BLOBS)):
            problem = _stored_blob_problem(row)
            if problem:
                return str(row.sha256), f"blob {row.sha256} is damaged: {problem}"
            present.add(row.sha256)
        for digest, seq in needed.items():  # in seq order: first needed, first reported
            if digest not in present:
                return digest, f"event {seq} needs blob {digest}, which is missing"
        return None

    def close(self) -> None:
        self.db.conn.close()


def stored_blobs(event: AnyEvent) -> tuple[str, ...]:
    """The blobs the daemon stores with `event`, so the journal must hold them.

    An outside change stores the new content only for files an agent has read
    (`content_stored`); its old content is not this event's to store. A rejected
    edit stores what it was checked against; `shown_sha256` is that same content.
    """
    if isinstance(event, FileRead):
        return (event.sha256,)
    if isinstance(event, EditApplied):
        return (event.before_sha256, event.after_sha256)
    if isinstance(event, EditRejected):
        return (event.sha256,) if event.sha256 else ()
    if isinstance(event, OutsideChangeRecorded) and event.content_stored and event.new_sha256:
        return (event.new_sha256,)
    return ()


class _StoredBlob(NamedTuple):
    sha256: str
    size: object  # columns as SQLite hands them back: a tamperer can store any type
    codec: object
    data: object


def _stored_blob_problem(blob: _StoredBlob) -> str | None:
    """What is wrong with a stored blob (its bytes, address or size column), or None."""
    try:
        content = _unpack(blob)
    except _CorruptBlob as e:
        return str(e)
    if len(content) != blob.size:
        return f"holds {len(content)} bytes, its size column says {blob.size}"
    return None


def _unpack(blob: _StoredBlob) -> bytes:
    """The blob's content, checked against its address (which is all a reader needs;
    a size column that disagrees is for `verify()` to report)."""
    if not isinstance(blob.data, bytes):
        raise _CorruptBlob(f"data is {type(blob.data).__name__}, not bytes")
    if blob.codec == "zlib":
        try:
            content = zlib.decompress(blob.data)
        except zlib.error as e:
            raise _CorruptBlob(f"does not decompress ({e})") from e
    elif blob.codec == "raw":
        content = blob.data
    else:
        raise _CorruptBlob(f"unknown codec {blob.codec!r}")
    if sha256_hex(content) != blob.sha256:
        raise _CorruptBlob("content does not match its SHA-256")
    return content


def _blob_rows(blobs: Mapping[str, bytes], journal: Journal) -> Iterator[tuple[object, ...]]:
    """Compress each new blob once; skip those already stored."""
    for digest, data in blobs.items():
        if journal.db.execute("SELECT 1 FROM blobs WHERE sha256 = ?", [digest]).fetchone():
            continue
        packed = zlib.compress(data, 6)
        codec, stored = ("zlib", packed) if len(packed) < len(data) else ("raw", data)
        yield digest, len(data), codec, stored


class _StoredRow(NamedTuple):
    seq: int
    ts: int
    agent: str | None
    kind: str
    path: str | None
    body: bytes
    prev_hash: str
    hash: str


def _row_problem(expected_seq: int, prev: str, row: _StoredRow) -> str | None:
    """Why this row breaks the chain (gap, bad body, edited column), or None."""
    if row.seq != expected_seq:
        return f"seq {row.seq} follows {expected_seq - 1}: the log has a gap"
    try:
        event = EVENT_DECODER.decode(row.body)
    except (msgspec.DecodeError, TypeError) as e:  # TypeError: a body that is not a BLOB
        return f"body does not decode: {e}"
    if event.kind != row.kind or event.path != row.path:
        return "kind/path columns disagree with the body"
    if row.prev_hash != prev:
        return "prev_hash does not match the previous event's hash"
    recomputed = chain_hash(prev, row.seq, row.ts, row.agent, row.kind, row.path, row.body)
    if recomputed != row.hash:
        return "hash does not match the event's contents"
    return None
