"""The append-only journal: every event, in one total order, hash-chained, in SQLite.

What it holds: `events` (seq, ts, agent, kind, path, body, prev_hash, hash),
`blobs` (file contents addressed by their SHA-256, stored once, as line deltas
on the file's previous version: daemon.store.blobs), and the last state snapshot
(daemon.store.statesnap); the schema and its upgrades are daemon.store.schema. After
each durable commit the chain's tip is appended to `chain-anchor` beside the
database (daemon.store.chainanchor), so a cut tail or a recomputed chain is found too
(`anchor_problem()`). What it must never do: change or delete a committed event, or hand out
a blob's bytes without checking them against its address. Triggers
refuse UPDATE and DELETE, and an INSERT whose seq is not exactly last + 1
(which also stops `INSERT OR REPLACE` from overwriting a row). Anyone can drop
a trigger, so each event's hash covers the previous one (daemon.store.hashchain):
`verify()` detects any edit to history, and any blob that is damaged or missing while
an event needs it (daemon.store.integrity, daemon.store.blobrefs). `verify()` never
raises on corrupt data (it reports); `blob()` raises the catalogued `journal_corrupt`
error.

Events are staged in memory and committed together (group commit): the server
stages every request of a batch, then commits once. Only the thread that owns
the daemon's state may stage and commit.
"""

from __future__ import annotations

import hashlib
import logging
import sqlite3
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import sqlite_utils

from editjournal.daemon.store import schema as journal_schema
from editjournal.daemon.store.blobrefs import blob_paths, stored_blobs
from editjournal.daemon.store.blobs import INSERT_BLOB, BlobStore, CorruptBlob
from editjournal.daemon.store.chainanchor import (
    ANCHOR_FILE,
    Anchor,
    anchor_problem,
    copy_path,
    key_path,
    load_key,
)
from editjournal.daemon.store.dbfaults import is_malformed, startup_refusal
from editjournal.daemon.store.hashchain import (
    DERIVED,
    GENESIS_HASH,
    ROW_COLUMNS,
    chain_hash,
    hash_text,
    row_problem,
    stored_hash,
    stored_rows,
)
from editjournal.daemon.store.integrity import VerifyReport, verify_journal
from editjournal.daemon.store.journalfiles import Change, JournalFiles
from editjournal.schemas.errors import ErrorCode, ToolError
from editjournal.schemas.events import EVENT_DECODER, EVENT_ENCODER, AnyEvent, Record

_log = logging.getLogger("editjournal")


# a row's prev_hash for a reader that skips rows: the hash of the row before it when the
# row derives it (schema 3: stored empty), GENESIS_HASH before the first
_LINK = (
    "CASE WHEN length(prev_hash) > 0 THEN prev_hash ELSE coalesce("
    "(SELECT before.hash FROM events AS before WHERE before.seq = events.seq - 1),"
    f" '{GENESIS_HASH}') END"
)
_INSERT_EVENT = (
    "INSERT INTO events (seq, ts, agent, kind, path, body, prev_hash, hash)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
)


# a statement and its rows, run inside a commit's transaction (`Journal.commit(also=...)`)
Statement = tuple[str, Sequence[tuple[object, ...]]]


class JournalError(Exception):
    """The journal cannot be opened or written; the daemon must not go on."""


class JournalCorrupt(JournalError):
    """The journal's chain is broken (or disagrees with its anchor): nothing may be
    appended to it. `seq` is the first event found wrong."""

    def __init__(self, path: Path, seq: int, reason: str) -> None:
        self.seq, self.reason = seq, reason
        super().__init__(
            f"journal_corrupt: {path} is damaged at seq {seq}: {reason}. Nothing was appended."
            " Run `editjournal verify` to see the damage; to start afresh, stop the daemon"
            f" and move {path.name}* and {ANCHOR_FILE} (in {path.parent}) aside, keeping"
            " them as evidence"
        )


class JournalFilesChanged(JournalError):
    """The journal's files are no longer the ones its connection writes (replaced,
    removed, cut short; a WAL that could not be taken back): the journal is sealed,
    nothing more is committed. `error_code` is the catalogued code its requests get,
    `advice` what to do (the catalogue's "retry" would not help)."""

    def __init__(self, change: Change, why_not: str = "") -> None:
        self.change, self.error_code, self.advice = change, change.code, change.advice
        taken = f"; it could not be taken back ({why_not})" if why_not else ""
        super().__init__(
            f"{change.message}{taken}. So that nothing is acknowledged into a file nobody"
            f" will read, the daemon records nothing more: {change.advice}"
        )


def _writable(path: Path) -> sqlite_utils.Database:
    """The daemon's connection: WAL, synchronous=FULL (at an open, and again when the
    connection is reopened over a fresh WAL; the schema is prepared once, at the open)."""
    # No sqlite-utils plugins: whatever else is installed beside editjournal must
    # not run code on the journal's connection, and looking for plugins reads every
    # installed package's entry points (~50 ms of each daemon's and command's start)
    db = sqlite_utils.Database(path, execute_plugins=False)
    db.enable_wal()
    # FULL: an acknowledged edit survives power loss; group commit keeps it cheap.
    db.execute("PRAGMA synchronous=FULL")
    return db


def _readonly_connection(path: Path) -> sqlite3.Connection:
    """`mode=ro`: a missing file is an error, not a new empty journal. Without a WAL file
    beside it no connection is open (SQLite removes the WAL at the last close), so it is
    opened `immutable`: SQLite then creates no -wal/-shm files beside a copied journal."""
    live = path.with_name(path.name + "-wal").exists()
    uri = f"{path.resolve().as_uri()}?mode=ro" + ("" if live else "&immutable=1")
    return sqlite3.connect(uri, uri=True, check_same_thread=False)


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass
class _Pending:
    rows: list[tuple[object, ...]] = field(default_factory=list)
    records: list[Record] = field(default_factory=list)
    blobs: dict[str, bytes] = field(default_factory=dict)
    paths: dict[str, str] = field(default_factory=dict)  # blob -> the file it is a version of
    full: dict[str, tuple[str, bytes]] = field(default_factory=dict)  # compressed in steps


class Journal:
    """The SQLite event store of one workspace."""

    def __init__(
        self, path: Path, clock: Callable[[], int] = now_ms, *, readonly: bool = False
    ) -> None:
        self.path = path
        self._clock = clock
        self.opened_without_triggers = False  # set when the schema is prepared
        # the files watched before each acknowledgement (daemon.store.journalfiles); set
        # once they are found replaced, removed or cut short: nothing more is committed
        self._files: JournalFiles | None = None
        self._gone: JournalFilesChanged | None = None
        try:
            if readonly:  # audit (daemon.audit): never create, migrate or write the file
                self.db = sqlite_utils.Database(_readonly_connection(path), execute_plugins=False)
            else:
                self.db = _writable(path)
                self.opened_without_triggers = journal_schema.prepare(self.db.conn)
            self._reload_tip()  # the first read of a row: a damaged file often fails here
            if not readonly:  # after a first read: SQLite has opened the WAL by now
                self._files = JournalFiles(path)
        except Exception as e:  # sqlite3.DatabaseError and friends
            if is_malformed(e) and readonly:  # `editjournal verify` and the other readers
                raise JournalError(
                    f"journal_corrupt: {path} is damaged: {e}; PRAGMA integrity_check cannot"
                    " even open it. Restore it from a backup"
                ) from e
            if is_malformed(e):
                raise JournalError(startup_refusal(e, path)) from e
            raise JournalError(f"cannot open journal {path}: {e}") from e
        self._blobs = BlobStore(self.db.conn, self._latest_version)
        # read-only opens read it too (verify); only commit() appends to it
        self.anchor = Anchor(path.with_name(ANCHOR_FILE), load_key(), copy_path(path))
        self._pending = _Pending()
        self._durable = True  # synchronous=FULL, as opened

    def _reload_tip(self) -> None:
        """Take the chain's tip from disk: at open, and after a failed commit."""
        row = self.db.execute("SELECT seq, hash FROM events ORDER BY seq DESC LIMIT 1").fetchone()
        self._last_seq: int = row[0] if row else 0
        self._last_hash: str = hash_text(row[1]) if row else GENESIS_HASH

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
        row = (seq, ts, agent, event.kind, event.path, body, DERIVED, stored_hash(digest))
        self._pending.rows.append(row)
        self._pending.records.append(record)
        self._pending.blobs.update(blobs or {})
        self._pending.paths.update(blob_paths(event))
        self._last_seq, self._last_hash = seq, digest
        return record

    def commit(self, durable: bool = True, also: Sequence[Statement] = ()) -> list[Record]:
        """Write every staged event and blob in one transaction; return the records.

        `durable`: the WAL is fsynced before this returns (synchronous=FULL), so the
        commit survives a power loss. False (NORMAL) survives the process being killed;
        a power loss may undo it, until the next durable commit, which carries it (the
        WAL is one sequence). `also`: (sql, rows) run in the same transaction (the
        daemon's pending-writes rows, see daemon/landing/pendingwrites.py).
        """
        if self._gone is not None:  # staged events stay staged: the caller discards them
            raise self._gone
        pending, self._pending = self._pending, _Pending()
        if not pending.rows and not pending.blobs and not also:
            return []
        try:  # packing reads the previous versions: a damaged file can fail it too
            packed = self._blobs.pack(pending.blobs, pending.paths, pending.full)
            self._synchronous(durable)
            with self.db.conn:
                self.db.conn.executemany(INSERT_BLOB, packed.rows)
                self.db.conn.executemany(_INSERT_EVENT, pending.rows)
                for sql, rows in also:
                    self.db.conn.executemany(sql, rows)
        except Exception as e:  # rolled back: the tip is the one before these events
            self._rewind(pending.records)
            raise JournalError(f"commit of {len(pending.rows)} events failed: {e}") from e
        self._blobs.committed(packed)
        if pending.records and durable:
            self._anchor_tip(pending.records[-1])
        return pending.records

    # --- its own files, watched --------------------------------------------------------

    def check_files(self) -> None:
        """Before a commit, and after it before its replies go: are the files at the
        journal's paths still the ones this connection writes (daemon.store.journalfiles)?

        A WAL unlinked or replaced (the database file intact) is taken back: every
        committed frame is checkpointed into the database file through the WAL SQLite
        still holds, and the connection is reopened over a fresh WAL, so nothing
        acknowledged is lost. A database file replaced, removed or cut short (or a WAL
        that cannot be taken back) seals the journal: JournalFilesChanged, now and at
        every later commit. Never journals anything about it (only the log says so)."""
        if self._gone is not None:
            raise self._gone
        change = self._files.look() if self._files is not None else None
        if change is None:
            return
        why_not = self._take_back_wal(change) if change.wal_only else ""
        if why_not is None:
            _log.warning(
                "%s; every committed event was moved into %s and a new WAL opened",
                change.message,
                self.path,
            )
            return
        self._seal(change, why_not)

    def _take_back_wal(self, change: Change) -> str | None:
        """Checkpoint the WAL SQLite still holds into the database file, reopen the
        connection and check that the tip on disk is the committed one: None when done,
        else why not. A file still at the WAL's path after the close would be taken as
        the new connection's WAL: then nothing is reopened."""
        tip = self._committed_tip()
        try:
            busy = self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
            if busy:
                return "another connection to the journal kept the checkpoint from finishing"
            self.db.conn.close()  # the last connection removes whatever is at the WAL's path
            if self._files is not None and self._files.wal_path.exists():
                return "a file is still at the WAL's path, held by another connection"
            self.db = _writable(self.path)
            self._durable = True
            self._blobs.reconnect(self.db.conn)
            row = self.db.execute(
                "SELECT seq, hash FROM events ORDER BY seq DESC LIMIT 1"
            ).fetchone()
        except sqlite3.Error as e:
            return f"SQLite: {e}"
        on_disk = (row[0], hash_text(row[1])) if row else (0, GENESIS_HASH)
        if on_disk != tip:
            return f"the journal reopened ends at seq {on_disk[0]}, not at seq {tip[0]}"
        if self._files is not None:
            self._files.wal_opened()
        return None

    def _committed_tip(self) -> tuple[int, str]:
        """(seq, chain hash) of the last committed event: the tip before anything staged."""
        staged = self._pending.records
        if staged:
            return staged[0].seq - 1, staged[0].prev_hash
        return self._last_seq, self._last_hash

    def _seal(self, change: Change, why_not: str) -> None:
        """Refuse every later commit. A database file replaced or removed first gets
        every frame of the WAL this connection holds (a checkpoint into the inode it
        still has open): the file moved aside is whole by itself, and no frame of its
        stays at the WAL's path to be laid over the file now at the database's path."""
        if change.kind in ("db_gone", "db_replaced"):
            try:
                self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            except sqlite3.Error as e:
                _log.error("the WAL could not be moved into the journal's file: %s", e)
        self._gone = JournalFilesChanged(change, why_not)
        _log.error("the journal is sealed: %s", self._gone)
        raise self._gone

    def keep_blobs(
        self,
        blobs: Mapping[str, bytes],
        paths: Mapping[str, str],
        full: Mapping[str, tuple[str, bytes]] | None = None,
    ) -> None:
        """Stage contents without an event (a long job's slices, daemon/runtime/jobs.py):
        committed by the next commit. Content-addressed, so one that no event ends up
        naming is harmless. `paths`: which file each is a version of (line deltas);
        `full`: full copies a job compressed in steps (`blobs.full_in_steps`)."""
        self._pending.blobs.update(blobs)
        self._pending.paths.update(paths)
        self._pending.full.update(full or {})

    def stored_whole(self, digest: str, path: str | None) -> bool:
        """Whether a content would be stored as a full copy (`BlobStore.stored_whole`)."""
        return self._blobs.stored_whole(digest, path)

    def drop_staged_after(self, seq: int) -> None:
        """Forget the staged events after `seq` (one failed request's), keeping the ones
        before it; their blobs stay staged (content-addressed, harmless)."""
        pending = self._pending
        keep = [r for r in pending.records if r.seq <= seq]
        pending.rows[:] = pending.rows[: len(keep)]
        dropped = pending.records[len(keep) :]
        pending.records[:] = keep
        if keep:
            self._last_seq, self._last_hash = keep[-1].seq, keep[-1].hash
        else:
            self._rewind(dropped)

    def discard_staged(self) -> None:
        """Forget every staged event and blob (a batch that cannot be made durable)."""
        dropped, self._pending = self._pending.records, _Pending()
        self._rewind(dropped)

    def _rewind(self, dropped: Sequence[Record]) -> None:
        """Make the tip the one on disk again (staged events never committed; another
        writer may have moved it). When the file cannot be read (damaged), the tip
        before `dropped`, from the records: a damaged file must not fail the rewind."""
        try:
            self._reload_tip()
        except sqlite3.Error:
            if dropped:
                self._last_seq, self._last_hash = dropped[0].seq - 1, dropped[0].prev_hash

    def _synchronous(self, durable: bool) -> None:
        """FULL or NORMAL for the next commit; set only when it changes (outside a transaction)."""
        if durable != self._durable:
            self.db.conn.execute(f"PRAGMA synchronous={'FULL' if durable else 'NORMAL'}")
            self._durable = durable

    def _anchor_tip(self, record: Record) -> None:
        """After a durable commit, never before and never after a non-durable one: the
        anchor must not be on disk ahead of the journal (a power loss may undo a NORMAL
        commit, and the anchor would then cry truncation). Not fsynced itself: a record
        lost to a power cut only makes the check a little older."""
        try:
            self.anchor.append(record.seq, record.hash)
        except OSError as e:  # the events are committed: a missed anchor only ages the check
            _log.error("chain anchor not written for seq %d: %s", record.seq, e)

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
        since_ts: int | None = None,
    ) -> Iterator[Record]:
        """Events in seq order (or newest first), filtered by path/agent/kind (and
        `since_ts`: recorded at or after that time, ms since the epoch). Staged events
        come after the committed ones: a request of a batch sees the batch's earlier
        events (group commit), and its reply is sent only once they are committed."""
        staged = [
            r
            for r in self._pending.records
            if r.seq > after_seq
            and (until_seq is None or r.seq <= until_seq)
            and (since_ts is None or r.ts >= since_ts)
            and all(v is None or v == got for v, got in _columns(r, path, agent, kind))
        ][: None if newest_first else limit]
        if newest_first:
            yield from reversed(staged[-limit:] if limit is not None else staged)
            limit = None if limit is None else max(0, limit - len(staged))
            if limit == 0:
                return
        where: list[str] = ["seq > ?"]
        args: list[object] = [after_seq]
        if until_seq is not None:
            where.append("seq <= ?")
            args.append(until_seq)
        if since_ts is not None:
            where.append("ts >= ?")
            args.append(since_ts)
        for column, value in (("path", path), ("agent", agent), ("kind", kind)):
            if value is not None:
                where.append(f"{column} = ?")
                args.append(value)
        sql = (
            f"SELECT seq, ts, agent, body, {_LINK} AS prev_hash, hash FROM events"
            f" WHERE {' AND '.join(where)} ORDER BY seq {'DESC' if newest_first else 'ASC'}"
        )
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        count = 0
        for seq, ts, agent_, body, prev_hash, digest in self.db.execute(sql, args):
            event = EVENT_DECODER.decode(body)
            count += 1
            yield Record(
                seq=seq,
                ts=ts,
                agent=agent_,
                event=event,
                prev_hash=hash_text(prev_hash),
                hash=hash_text(digest),
            )
        if not newest_first:
            yield from staged[: None if limit is None else max(0, limit - count)]

    def count(self) -> int:
        return int(self.db.execute("SELECT COUNT(*) FROM events").fetchone()[0])

    def size_bytes(self) -> int:
        """Bytes on disk of the database and its WAL."""
        files = (self.path, self.path.with_name(self.path.name + "-wal"))
        return sum(f.stat().st_size for f in files if f.exists())

    def _latest_version(self, path: str) -> str | None:
        """The newest stored content of `path` its recent events name: the base for
        the path's next version's delta (the first one after a start)."""
        for record in self.records(path=path, newest_first=True, limit=32):
            for digest in reversed(stored_blobs(record.event)):  # an edit's after, first
                if self._blobs.has(digest):
                    return digest
        return None

    def index_blobs(self) -> None:
        """Hold every stored blob's digest in memory, so `has_blob` costs no query (a
        checkpoint asks it of every file); a journal with too many blobs is not indexed."""
        self._blobs.index()

    def has_blob(self, sha256: str) -> bool:
        return sha256 in self._pending.blobs or self._blobs.has(sha256)

    def blob(self, sha256: str) -> bytes | None:
        """The content whose SHA-256 is `sha256`, if it was ever stored.

        Raises `ToolError(journal_corrupt)` when the stored bytes do not give back
        that content: a damaged blob must never pass for a file's past."""
        if sha256 in self._pending.blobs:
            return self._pending.blobs[sha256]
        try:
            return self._blobs.read(sha256)
        except CorruptBlob as e:
            raise ToolError(
                ErrorCode.JOURNAL_CORRUPT,
                f"blob {sha256} in journal {self.path} is damaged: {e}",
                {"blob": sha256, "journal": str(self.path)},
            ) from e

    def verify(self) -> VerifyReport:
        """Recompute the chain from genesis, then check every blob and that every blob an
        event needs is there (daemon.store.integrity). Never raises on corrupt data: the
        first problem is the report's `reason`."""
        return verify_journal(self.db, self._blobs)

    # --- start-up: snapshot, tip, incremental chain check ----------------------------

    @property
    def tip_hash(self) -> str:
        """The chain hash of the last staged event (GENESIS_HASH on an empty journal)."""
        return self._last_hash

    def committed_to_tip(self) -> bool:
        """Nothing is staged: every event up to `last_seq` is in the database."""
        return not self._pending.rows

    def hash_at(self, seq: int) -> str | None:
        """The stored chain hash of event `seq` (GENESIS_HASH for 0), None if absent."""
        if seq == 0:
            return GENESIS_HASH
        row = self.db.execute("SELECT hash FROM events WHERE seq = ?", [seq]).fetchone()
        return hash_text(row[0]) if row else None

    def first_gap(self) -> int | None:
        """The first seq missing below the tip (a deleted row), None when gap-free.
        Cheap when there is none: a count against the tip, both from the index."""
        if self.count() == self._last_seq:
            return None
        row = self.db.execute(
            "SELECT MIN(seq) + 1 FROM events e WHERE seq < ?"
            " AND NOT EXISTS (SELECT 1 FROM events WHERE seq = e.seq + 1)",
            [self._last_seq],
        ).fetchone()
        first = self.db.execute("SELECT MIN(seq) FROM events").fetchone()[0]
        if first != 1:
            return 1
        return int(row[0]) if row[0] is not None else None

    def verified_records(self, after_seq: int, prev_hash: str) -> Iterator[Record]:
        """Committed events after `after_seq`, each checked against the chain as it is
        read (gap-free, body decodes, hash recomputed): raises JournalCorrupt at the
        first that is not, so nothing is folded or appended past a break."""
        rows = self.db.execute(
            f"SELECT {ROW_COLUMNS} FROM events WHERE seq > ? ORDER BY seq", [after_seq]
        )
        expected, prev = after_seq + 1, prev_hash
        for row in stored_rows(rows, prev_hash):
            problem = row_problem(expected, prev, row)
            if problem:
                raise JournalCorrupt(self.path, min(expected, row.seq), problem)
            yield Record(
                seq=row.seq,
                ts=row.ts,
                agent=row.agent,
                event=EVENT_DECODER.decode(row.body),
                prev_hash=row.prev_hash,
                hash=row.hash,
            )
            expected, prev = expected + 1, row.hash

    def anchor_problem(self) -> tuple[int, str] | None:
        """(seq, why) when the journal disagrees with the last tip anchored in
        `chain-anchor` (cut short, or rewritten with recomputed hashes), else None
        (also when there is no anchor file yet). Cheap: a few indexed reads."""
        missing = self.anchor.missing()
        if missing is not None and self._last_seq > 0:
            return 1, (
                f"the chain anchor {missing} is missing although the journal holds"
                f" {self._last_seq} events and an anchor key ({key_path()}) is set: it was"
                " deleted (with a rewrite or a cut tail, both copies must agree)"
            )
        record = self.anchor.last()
        if record is None:
            return None
        at_tip = self.hash_at(record.seq)
        rewrite = None
        if record.mac_ok and record.seq <= self._last_seq and at_tip != record.hash:
            rewrite = self.anchor.first_disagreement(self.hash_at)
        return anchor_problem(record, self._last_seq, at_tip, rewrite)

    def check_anchor(self) -> None:
        """Raise JournalCorrupt when `anchor_problem()` finds one."""
        problem = self.anchor_problem()
        if problem is not None:
            raise JournalCorrupt(self.path, *problem)

    def save_snapshot(self, seq: int, chain: str, digest: str, shape: str, body: bytes) -> None:
        if self._gone is not None:  # never a write into a file that is no longer the journal
            raise self._gone
        with self.db.conn:
            self.db.conn.execute(
                "INSERT OR REPLACE INTO state_snapshot (id, seq, chain_hash, digest, shape, body)"
                " VALUES (1, ?, ?, ?, ?, ?)",
                [seq, chain, digest, shape, body],
            )

    def load_snapshot(self) -> tuple[object, object, object, object, bytes] | None:
        """(seq, chain_hash, digest, shape, body) as stored, None without one."""
        try:
            row = self.db.execute(
                "SELECT seq, chain_hash, digest, shape, body FROM state_snapshot WHERE id = 1"
            ).fetchone()
        except sqlite3.Error:  # no table (a read-only open of an old journal)
            return None
        if row is None or not isinstance(row[4], bytes):
            return None
        return row[0], row[1], row[2], row[3], row[4]

    def integrity_check(self) -> list[str]:
        """SQLite's own check of the file (`PRAGMA integrity_check`): every page, index
        and record sound. [] when it says ok; else its findings (a few), or why it could
        not run. The hash chain cannot see a damaged page it never reads: this can."""
        try:
            rows = self.db.execute("PRAGMA integrity_check(20)").fetchall()
        except sqlite3.Error as e:
            return [f"could not run: {e}"]
        return [str(row[0]) for row in rows if row[0] != "ok"]

    def close(self) -> None:
        if self.anchor is not None:
            self.anchor.close()
        self.db.conn.close()
        if self._files is not None:  # after the connection: see daemon.store.journalfiles
            self._files.close()


def _columns(
    record: Record, path: str | None, agent: str | None, kind: str | None
) -> tuple[tuple[str | None, str | None], ...]:
    """(wanted, actual) for the filters `records` takes, on a staged record."""
    event = record.event
    return ((path, event.path), (agent, record.agent), (kind, event.kind))
