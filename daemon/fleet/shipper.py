"""`editjournal ship`: a workspace's journal copied into PostgreSQL, as it is written.

The server's copy is a witness: events go in seq order, each batch in one
transaction with the workspace's tail (`ej_workspaces.last_seq`, `last_hash`), so a
crash or a lost connection leaves the server at a batch boundary and the next run
resumes from there — nothing shipped twice (the key is (workspace, seq)), nothing
skipped. Before shipping, the local journal must continue the server's copy: the
event at the server's last seq must have the server's last hash, and every row
shipped links to the one before; a rewritten or truncated journal is refused
(`journal_diverged`, naming the first seq that differs) and the witness is never
overwritten. One shipper per workspace and server (a session advisory lock:
`shipper_busy`). `follow` keeps shipping as the daemon commits (the journal is
polled every `poll_s`), rides out a server that goes away (retries with backoff), and
a journal the daemon rescued under it (a WAL unlinked and taken back: the local
journal is opened again, once per failure, and shipping goes on where it was).
Whoever follows may be handed each batch's rows once its transaction has committed
(`shipped`): `ship --follow --otel` exports them as OpenTelemetry spans (`records_of`
decodes the ones it wants; the fleet never imports the telemetry).
"""

from __future__ import annotations

import logging
import re
import socket
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
import psycopg

from editjournal.daemon.fleet.pgschema import prepare
from editjournal.daemon.fleet.source import Checked, LocalJournal
from editjournal.daemon.store.blobrefs import stored_blobs
from editjournal.daemon.store.hashchain import GENESIS_HASH, StoredRow
from editjournal.daemon.store.identity import workspace_id
from editjournal.schemas.errors import ErrorCode, ToolError
from editjournal.schemas.events import EVENT_DECODER, Record

log = logging.getLogger(__name__)
Rows = Callable[[Sequence[StoredRow]], None]  # a batch's rows, once on the server
BATCH = 5000  # events per transaction
CONNECT_TIMEOUT_S = 10
POLL_S = 0.1  # follow: how often the journal is looked at for new events
BACKOFF_S = (0.2, 5.0)  # follow: the first and the longest wait before reconnecting
_COPY = (
    "COPY ej_events (workspace_id, seq, ts_ms, agent, kind, path, body, raw, prev_hash, hash)"
    " FROM STDIN"
)
_NUL = re.compile(rb"(?<!\\)((?:\\\\)*)\\u0000")  # jsonb refuses NUL: the raw body keeps it


@dataclass
class Shipped:
    """What one run (or one round of `follow`) shipped."""

    workspace_id: str
    events: int = 0
    blobs: int = 0
    backfilled: int = 0  # contents of events shipped earlier without --blobs
    first_seq: int | None = None
    last_seq: int = 0  # the server's last seq for the workspace afterwards
    seconds: float = 0.0


def redacted(url: str) -> str:
    """The URL without its password, for messages."""
    return re.sub(r"(://[^:/@]*):[^@/]*@", r"\1:***@", url)


def connect(url: str) -> psycopg.Connection[Any]:
    """An autocommit connection (each batch is its own transaction); `fleet_unavailable`
    when the server cannot be reached or refuses the login."""
    try:
        return psycopg.connect(url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S)
    except (psycopg.Error, ValueError) as e:
        raise unavailable(url, e) from None


def unavailable(url: str, error: Exception) -> ToolError:
    why = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    return ToolError(
        ErrorCode.FLEET_UNAVAILABLE,
        f"PostgreSQL at {redacted(url)} cannot be used: {why}",
        {"url": redacted(url)},
    )


class Shipper:
    """One workspace's journal, shipped to one server."""

    def __init__(self, root: Path, url: str, blobs: bool = False, batch: int = BATCH) -> None:
        self.local = LocalJournal(root)
        self.url = url
        self.blobs = blobs
        self.batch = batch
        self.workspace_id = workspace_id(self.local.state_dir)
        self._shipped_blobs: set[str] = set()
        self._reads = 0  # follow: rounds that read the local journal without failing

    def close(self) -> None:
        self.local.close()

    # --- one run ---------------------------------------------------------------------------

    def ship(self) -> Shipped:
        """Everything the server's copy lacks, now; then return."""
        started = time.monotonic()
        with self.session() as conn:
            done = self.catch_up(conn)
        done.seconds = time.monotonic() - started
        return done

    @contextmanager
    def session(self) -> Iterator[psycopg.Connection[Any]]:
        """A connection with the schema ready and this workspace's shipping lock held."""
        conn = connect(self.url)
        try:
            prepare(conn)
            self._lock(conn)
            yield conn
            # released now, not when the server gets round to ending the backend: the
            # next shipper of this workspace (the next run) must find it free
            conn.execute("SELECT pg_advisory_unlock_all()")
        except psycopg.Error as e:
            raise unavailable(self.url, e) from None
        finally:
            conn.close()

    def _lock(self, conn: psycopg.Connection[Any]) -> None:
        held = conn.execute(
            "SELECT pg_try_advisory_lock(hashtextextended(%s, 27))", (self.workspace_id,)
        ).fetchone()
        if not held or not held[0]:
            raise ToolError(
                ErrorCode.SHIPPER_BUSY,
                f"another shipper is shipping workspace {self.workspace_id} to"
                f" {redacted(self.url)} now: nothing was written",
                {"workspace_id": self.workspace_id},
            )

    def catch_up(self, conn: psycopg.Connection[Any], shipped: Rows | None = None) -> Shipped:
        """Every event after the server's tail, batch by batch (with `blobs`, first the
        contents of the events shipped earlier without them); each batch's rows handed
        to `shipped` once its transaction has committed."""
        last_seq, last_hash, blobs_seq = self._tail(conn)
        self._check_continues(conn, last_seq, last_hash)
        done = Shipped(self.workspace_id, last_seq=last_seq)
        if self.blobs and blobs_seq < last_seq:
            done.backfilled = self._backfill(conn, blobs_seq, last_seq)
        while rows := self.local.rows(last_seq, last_hash, self.batch):
            with conn.transaction():
                self._copy(conn, rows)
                if self.blobs:
                    done.blobs += self._ship_blobs(conn, contents_named(r.body for r in rows))
                # blobs_seq moves only with the contents: a run without --blobs leaves it
                conn.execute(
                    "UPDATE ej_workspaces SET last_seq = %s, last_hash = %s,"
                    " last_shipped = now(),"
                    " blobs_seq = CASE WHEN %s THEN %s ELSE blobs_seq END"
                    " WHERE workspace_id = %s",
                    (rows[-1].seq, rows[-1].hash, self.blobs, rows[-1].seq, self.workspace_id),
                )
            if shipped is not None:
                shipped(rows)
            done.first_seq = done.first_seq or rows[0].seq
            done.events += len(rows)
            last_seq, last_hash = rows[-1].seq, rows[-1].hash
            done.last_seq = last_seq
        return done

    def _backfill(self, conn: psycopg.Connection[Any], after: int, upto: int) -> int:
        """The contents named by events after..upto, shipped earlier without --blobs.
        The names are read from the server's own copy of those events (what `fleet
        blame` folds), the bytes from the local journal; each batch commits with
        `blobs_seq`, so an interrupted run resumes and a finished one is never redone."""
        shipped = 0
        while after < upto:
            last = min(upto, after + self.batch)
            raws = conn.execute(
                "SELECT raw FROM ej_events WHERE workspace_id = %s AND seq > %s AND seq <= %s",
                (self.workspace_id, after, last),
            ).fetchall()
            with conn.transaction():
                shipped += self._ship_blobs(conn, contents_named(bytes(r) for (r,) in raws))
                conn.execute(
                    "UPDATE ej_workspaces SET blobs_seq = %s WHERE workspace_id = %s",
                    (last, self.workspace_id),
                )
            after = last
        return shipped

    def _tail(self, conn: psycopg.Connection[Any]) -> tuple[int, str, int]:
        """The server's last seq and hash for this workspace (registered if new), and the
        seq up to which the contents its events name were shipped."""
        conn.execute(
            "INSERT INTO ej_workspaces (workspace_id, host, path, last_seq, last_hash)"
            " VALUES (%s, %s, %s, 0, %s) ON CONFLICT (workspace_id) DO UPDATE SET"
            " host = excluded.host, path = excluded.path",
            (self.workspace_id, socket.gethostname(), str(self.local.root), GENESIS_HASH),
        )
        row = conn.execute(
            "SELECT last_seq, last_hash, blobs_seq FROM ej_workspaces WHERE workspace_id = %s",
            (self.workspace_id,),
        ).fetchone()
        assert row is not None
        return int(row[0]), str(row[1]), int(row[2])

    def _check_continues(
        self, conn: psycopg.Connection[Any], last_seq: int, last_hash: str
    ) -> None:
        """`journal_diverged` unless the local journal holds the server's copy as its start."""
        if last_seq == 0:
            return
        local_last = self.local.last_seq()
        if (
            local_last >= last_seq
            and self.local.hashes(last_seq, last_seq).get(last_seq) == last_hash
        ):
            return
        found = first_difference(conn, self.local, self.workspace_id, last_seq)
        seq, what = (
            (found.seq, found.reason)
            if found is not None
            else (last_seq, f"event {last_seq} differs from the copy shipped")
        )
        raise ToolError(
            ErrorCode.JOURNAL_DIVERGED,
            f"the local journal of {self.local.root} no longer continues its copy on"
            f" {redacted(self.url)}: {what} (rewritten, truncated, or another journal under"
            " the same workspace id); nothing was shipped",
            {"seq": seq, "workspace_id": self.workspace_id, "server_last_seq": last_seq},
        )

    def _copy(self, conn: psycopg.Connection[Any], rows: Sequence[StoredRow]) -> None:
        with conn.cursor() as cur, cur.copy(_COPY) as copy:
            for row in rows:
                copy.write_row(
                    (self.workspace_id, row.seq, row.ts, row.agent, row.kind, row.path,
                     json_body(row.body), row.body, row.prev_hash, row.hash)
                )  # fmt: skip

    def _ship_blobs(self, conn: psycopg.Connection[Any], wanted: set[str]) -> int:
        """The contents `wanted` that the server lacks and the local journal holds (shared
        by hash across workspaces; one never stored here is left out, as the local audit
        lacks it too)."""
        wanted = wanted - self._shipped_blobs
        if not wanted:
            return 0
        held = conn.execute(
            "SELECT sha256 FROM ej_blobs WHERE sha256 = ANY(%s)", (sorted(wanted),)
        ).fetchall()
        missing = wanted - {h for (h,) in held}
        shipped = 0
        with conn.cursor() as cur:
            for sha in sorted(missing):
                data = self.local.blob(sha)
                if data is None:  # never stored here (an untracked file's content)
                    continue
                cur.execute(
                    "INSERT INTO ej_blobs (sha256, size, data) VALUES (%s, %s, %s)"
                    " ON CONFLICT (sha256) DO NOTHING",
                    (sha, len(data), data),
                )
                shipped += 1
        self._shipped_blobs |= wanted
        return shipped

    # --- following -------------------------------------------------------------------------

    def follow(
        self,
        stop: threading.Event,
        report: Callable[[Shipped], None] | None = None,
        poll_s: float = POLL_S,
        shipped: Rows | None = None,
    ) -> None:
        """Ship what is there, then every event as it commits, until `stop` is set. A
        server that goes away is retried with backoff; the copy resumes where it ended.
        A divergence or another shipper ends it (an error). `shipped`: see `catch_up`."""
        wait = BACKOFF_S[0]
        while not stop.is_set():
            try:
                with self.session() as conn:
                    wait = BACKOFF_S[0]
                    self._follow_on(conn, stop, report, poll_s, shipped)
            except ToolError as e:
                if e.code is not ErrorCode.FLEET_UNAVAILABLE:
                    raise
                log.warning("%s; retrying in %.1f s", e.message, wait)
                stop.wait(wait)
                wait = min(wait * 2, BACKOFF_S[1])

    def _follow_on(
        self,
        conn: psycopg.Connection[Any],
        stop: threading.Event,
        report: Callable[[Shipped], None] | None,
        poll_s: float,
        shipped: Rows | None = None,
    ) -> None:
        reads_at_reopen = -1  # `_reads` when the local journal was last opened again
        while not stop.is_set():
            try:
                self._ship_new(conn, stop, report, poll_s, shipped)
                return
            except sqlite3.OperationalError as e:
                if self._reads == reads_at_reopen:  # failed again, nothing read since
                    raise ToolError(
                        ErrorCode.JOURNAL_UNAVAILABLE,
                        f"the local journal {self.local.path} cannot be read, even opened"
                        f" again: {e}",
                        {"path": str(self.local.path)},
                    ) from e
                # "disk I/O error": the daemon rescued its journal under this connection
                # (daemon/fleet/source.py `reopen`); a failed batch was rolled back on the
                # server, so shipping resumes at its tail
                log.warning("the local journal failed a read (%s); opening it again", e)
                self.local.reopen()
                reads_at_reopen = self._reads

    def _ship_new(
        self,
        conn: psycopg.Connection[Any],
        stop: threading.Event,
        report: Callable[[Shipped], None] | None,
        poll_s: float,
        shipped: Rows | None,
    ) -> None:
        """Ship what is new, then wait for more, until `stop` is set."""
        while not stop.is_set():
            started = time.monotonic()
            done = self.catch_up(conn, shipped)
            self._reads += 1
            if done.events and report is not None:
                done.seconds = time.monotonic() - started
                report(done)
            while not stop.is_set() and self.local.last_seq() <= done.last_seq:
                stop.wait(poll_s)


def records_of(rows: Iterable[StoredRow], kinds: frozenset[str]) -> list[Record]:
    """The rows of these kinds as records (only those are decoded)."""
    return [
        Record(
            seq=row.seq, ts=row.ts, agent=row.agent, event=EVENT_DECODER.decode(row.body),
            prev_hash=row.prev_hash, hash=row.hash,
        )
        for row in rows
        if row.kind in kinds
    ]  # fmt: skip


def json_body(raw: bytes) -> str:
    """The event body as JSON text for jsonb (a NUL character, which jsonb refuses, is
    written as U+FFFD: the raw body keeps the original)."""
    text = msgspec.json.encode(msgspec.msgpack.decode(raw))
    if b"\\u0000" in text:
        text = _NUL.sub(rb"\1\\ufffd", text)
    return text.decode()


def contents_named(bodies: Iterable[bytes]) -> set[str]:
    """Every content these event bodies name that the local audit may read: the blobs
    stored with each event, and the content each establishes (a file version `blame`
    folds, whichever event stored its bytes)."""
    names: set[str] = set()
    for body in bodies:
        event = EVENT_DECODER.decode(body)
        names.update(stored_blobs(event))
        if event.content_sha256 is not None:
            names.add(event.content_sha256)
    return names


@dataclass(frozen=True)
class Difference:
    """Where a local journal stops being the copy shipped, and why."""

    seq: int
    reason: str


def first_difference(
    conn: psycopg.Connection[Any],
    local: LocalJournal,
    workspace: str,
    upto: int,
    step: int = 10_000,
) -> Difference | None:
    """The first seq (1..upto) where the local journal is not the copy on the server, or
    None when it is throughout. Each local row's hash is recomputed from its contents
    (`LocalJournal.recomputed`) before it is compared with the server's: a row rewritten
    with its old hash left beside it differs at its own seq."""
    expected = 1
    for chunk in _chunks(local.recomputed(upto, step), step):
        theirs = _server_hashes(conn, workspace, chunk[0].row.seq, chunk[-1].row.seq)
        for row, problem in chunk:
            if row.seq != expected:
                return Difference(expected, f"the local journal has no event {expected}")
            if problem is not None:
                return Difference(row.seq, f"local event {row.seq} was altered: {problem}")
            if theirs.get(row.seq) != row.hash:
                return Difference(row.seq, f"event {row.seq} differs from the copy shipped")
            expected += 1
    if expected <= upto:
        return Difference(
            expected,
            f"the local journal ends at seq {expected - 1}, but the server holds up to {upto}",
        )
    return None


def _server_hashes(
    conn: psycopg.Connection[Any], workspace: str, first: int, last: int
) -> dict[int, str]:
    rows = conn.execute(
        "SELECT seq, hash FROM ej_events WHERE workspace_id = %s AND seq BETWEEN %s AND %s",
        (workspace, first, last),
    ).fetchall()
    return {int(seq): str(digest) for seq, digest in rows}


def _chunks(items: Iterable[Checked], size: int) -> Iterator[list[Checked]]:
    chunk: list[Checked] = []
    for item in items:
        chunk.append(item)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk
