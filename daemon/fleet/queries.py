"""`editjournal fleet log|stats|blame|verify`: questions asked across shipped journals.

Plain SQL over the fleet's tables (daemon/fleet/pgschema.py), read-only. `blame`
runs the local audit's own fold (daemon/audit/blame.py) over a shipped copy: the
copy is a `JournalReader` of one workspace. `verify` recomputes every shipped chain
link by link (the hash covers every stored column, so any edit on the server shows),
and, given a local journal, compares it with its copy seq by seq: the witness check.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import psycopg

from editjournal.daemon.audit.blame import blame as blame_of
from editjournal.daemon.fleet.shipper import first_difference
from editjournal.daemon.fleet.source import LocalJournal
from editjournal.daemon.store.hashchain import GENESIS_HASH, StoredRow, row_problem
from editjournal.schemas.errors import ErrorCode, ToolError
from editjournal.schemas.events import EVENT_DECODER, Record
from editjournal.schemas.tools import BlameResult

Conn = psycopg.Connection[Any]


@dataclass(frozen=True)
class Filters:
    """What `fleet log` keeps: every given filter must hold."""

    workspace: str | None = None  # an id, or a prefix of one, or a path the workspace had
    agent: str | None = None
    kind: str | None = None
    path: str | None = None  # a glob: src/*.py, **/test_*.py
    since_ms: int | None = None
    until_ms: int | None = None
    limit: int = 100


@dataclass(frozen=True)
class FleetEvent:
    workspace_id: str
    host: str
    workspace_path: str
    seq: int
    ts_ms: int
    agent: str | None
    kind: str
    path: str | None
    summary: str


def log(conn: Conn, filters: Filters) -> list[FleetEvent]:
    """The newest `limit` matching events across workspaces, oldest first."""
    where, args = _where(conn, filters)
    rows = conn.execute(
        "SELECT e.workspace_id::text, w.host, w.path, e.seq, e.ts_ms, e.agent, e.kind, e.path,"
        " e.raw FROM ej_events e JOIN ej_workspaces w USING (workspace_id)"
        f" WHERE {where} ORDER BY e.ts_ms DESC, e.workspace_id, e.seq DESC LIMIT %s",
        (*args, filters.limit),
    ).fetchall()
    found = [
        FleetEvent(ws, host, wpath, seq, ts, agent, kind, path, EVENT_DECODER.decode(raw).summary())
        for ws, host, wpath, seq, ts, agent, kind, path, raw in rows
    ]
    return found[::-1]


def _where(conn: Conn, f: Filters) -> tuple[str, list[Any]]:
    parts: list[str] = ["TRUE"]
    args: list[Any] = []
    if f.workspace:
        parts.append("e.workspace_id = ANY(%s)")
        args.append(workspace_ids(conn, f.workspace))
    for column, value in (("e.agent", f.agent), ("e.kind", f.kind)):
        if value:
            parts.append(f"{column} = %s")
            args.append(value)
    if f.path:
        parts.append("e.path ~ %s")
        args.append(glob_regex(f.path))
    if f.since_ms is not None:
        parts.append("e.ts_ms >= %s")
        args.append(f.since_ms)
    if f.until_ms is not None:
        parts.append("e.ts_ms <= %s")
        args.append(f.until_ms)
    return " AND ".join(parts), args


def glob_regex(pattern: str) -> str:
    """A path glob as a regular expression PostgreSQL takes, anchored at both ends:
    `**/` any directories (none too), `**` anything, `*` anything within one
    directory, `?` one character of a name."""
    out, at = [], 0
    while at < len(pattern):
        if pattern.startswith("**/", at):
            out.append("(.*/)?")
            at += 3
        elif pattern.startswith("**", at):
            out.append(".*")
            at += 2
        elif pattern[at] == "*":
            out.append("[^/]*")
            at += 1
        elif pattern[at] == "?":
            out.append("[^/]")
            at += 1
        else:
            out.append(re.escape(pattern[at]))
            at += 1
    return "^" + "".join(out) + "$"


def workspace_ids(conn: Conn, named: str) -> list[str]:
    """The workspaces `named` names: an id, a prefix of one (as git takes a sha), or a
    path one was shipped from; `invalid_params` naming the known ones when none is."""
    rows = conn.execute(
        "SELECT workspace_id::text FROM ej_workspaces WHERE workspace_id::text LIKE %s OR"
        " path = %s",
        (named.lower() + "%", named.rstrip("/")),
    ).fetchall()
    if rows:
        return [r[0] for r in rows]
    known = [r[0] for r in conn.execute("SELECT workspace_id::text FROM ej_workspaces LIMIT 10")]
    raise ToolError(
        ErrorCode.INVALID_PARAMS,
        f"no shipped workspace is {named!r} (an id, a prefix of one, or the path it was"
        " shipped from)",
        {"workspace": named, "known": known},
    )


@dataclass
class WorkspaceStats:
    workspace_id: str
    path: str
    agent: str | None
    reads: int = 0
    writes: int = 0
    refusals: dict[str, int] = field(default_factory=dict)  # by code
    recoveries: int = 0  # refusals followed by a write of the same file by the same agent


def stats(
    conn: Conn, workspace: str | None = None, since_ms: int | None = None
) -> list[WorkspaceStats]:
    """Per workspace and agent: reads, writes, refusals by code, recoveries."""
    where, args = _where(conn, Filters(workspace=workspace, since_ms=since_ms))
    found: dict[tuple[str, str | None], WorkspaceStats] = {}
    counted = conn.execute(
        "SELECT e.workspace_id::text, w.path, e.agent, e.kind, e.body->>'code', count(*)"
        " FROM ej_events e JOIN ej_workspaces w USING (workspace_id)"
        f" WHERE {where} AND e.kind IN ('file_read', 'edit_applied', 'edit_rejected')"
        " GROUP BY 1, 2, 3, 4, 5",
        args,
    ).fetchall()
    for ws, wpath, agent, kind, code, count in counted:
        row = found.setdefault((ws, agent), WorkspaceStats(ws, wpath, agent))
        if kind == "file_read":
            row.reads += count
        elif kind == "edit_applied":
            row.writes += count
        else:
            row.refusals[code or "?"] = row.refusals.get(code or "?", 0) + count
    recovered = conn.execute(
        "SELECT e.workspace_id::text, e.agent, count(*) FROM ej_events e"
        f" WHERE {where} AND e.kind = 'edit_rejected' AND EXISTS (SELECT 1 FROM ej_events a"
        " WHERE a.workspace_id = e.workspace_id AND a.agent = e.agent AND a.path = e.path"
        " AND a.kind = 'edit_applied' AND a.seq > e.seq) GROUP BY 1, 2",
        args,
    ).fetchall()
    for ws, agent, count in recovered:
        if (ws, agent) in found:
            found[(ws, agent)].recoveries = count
    return sorted(found.values(), key=lambda s: (s.path, s.workspace_id, s.agent or ""))


class ShippedJournal:
    """One workspace's shipped copy, read as the local audit reads a journal."""

    def __init__(self, conn: Conn, workspace_id: str) -> None:
        self.conn = conn
        self.workspace_id = workspace_id

    def records(self, *, path: str | None = None, until_seq: int | None = None) -> Iterator[Record]:
        rows = self.conn.execute(
            "SELECT seq, ts_ms, agent, raw, prev_hash, hash FROM ej_events WHERE"
            " workspace_id = %s AND (%s::text IS NULL OR path = %s) AND seq <= %s ORDER BY seq",
            (self.workspace_id, path, path, until_seq if until_seq is not None else 2**62),
        )
        for seq, ts, agent, raw, prev_hash, hash_ in rows:
            event = EVENT_DECODER.decode(raw)
            yield Record(seq=seq, ts=ts, agent=agent, event=event, prev_hash=prev_hash, hash=hash_)

    def blob(self, sha256: str) -> bytes | None:
        row = self.conn.execute("SELECT data FROM ej_blobs WHERE sha256 = %s", (sha256,)).fetchone()
        return bytes(row[0]) if row else None


def blame(conn: Conn, workspace: str, path: str, until_seq: int | None = None) -> BlameResult:
    """Every line of `path` in one shipped workspace, with the event that wrote it (the
    contents must have been shipped: `ship --blobs`)."""
    ids = workspace_ids(conn, workspace)
    if len(ids) != 1:
        raise ToolError(
            ErrorCode.INVALID_PARAMS,
            f"{workspace!r} names {len(ids)} workspaces: give more of the id",
            {"workspace": workspace, "matches": ids},
        )
    return blame_of(ShippedJournal(conn, ids[0]), path, until_seq)


@dataclass(frozen=True)
class ChainCheck:
    workspace_id: str
    path: str
    events: int
    ok: bool
    first_bad_seq: int | None = None
    reason: str | None = None


def verify(conn: Conn, workspace: str | None = None) -> list[ChainCheck]:
    """Every shipped chain recomputed from genesis, and its tail against the record."""
    ids = (
        workspace_ids(conn, workspace)
        if workspace
        else [
            r[0] for r in conn.execute("SELECT workspace_id::text FROM ej_workspaces ORDER BY path")
        ]
    )
    return [_verify_one(conn, ws) for ws in ids]


def _verify_one(conn: Conn, workspace_id: str) -> ChainCheck:
    path, last_seq, last_hash = conn.execute(
        "SELECT path, last_seq, last_hash FROM ej_workspaces WHERE workspace_id = %s",
        (workspace_id,),
    ).fetchone() or ("?", 0, GENESIS_HASH)
    prev, checked = GENESIS_HASH, 0
    cursor = f"verify_{workspace_id.replace('-', '')}"
    with conn.transaction(), conn.cursor(name=cursor) as cur:  # a server-side cursor
        cur.itersize = 10_000
        cur.execute(
            "SELECT seq, ts_ms, agent, kind, path, raw, prev_hash, hash FROM ej_events"
            " WHERE workspace_id = %s ORDER BY seq",
            (workspace_id,),
        )
        for row in _stored(cur):
            problem = row_problem(checked + 1, prev, row)
            if problem:
                return ChainCheck(workspace_id, path, checked, False, row.seq, problem)
            prev, checked = row.hash, checked + 1
    if (checked, prev) != (last_seq, last_hash):
        why = f"the copy ends at seq {checked}, but the shipper recorded {last_seq}"
        return ChainCheck(workspace_id, path, checked, False, checked + 1, why)
    return ChainCheck(workspace_id, path, checked, True)


def _stored(rows: Iterable[Any]) -> Iterator[StoredRow]:
    for seq, ts, agent, kind, path, raw, prev_hash, hash_ in rows:
        yield StoredRow(seq, ts, agent, kind, path, bytes(raw), prev_hash, hash_)


@dataclass(frozen=True)
class WitnessCheck:
    workspace_id: str
    shipped: int  # events the server holds
    local: int  # events the local journal holds
    agree: bool
    first_difference: int | None = None


def witness(conn: Conn, local: LocalJournal, workspace_id: str) -> WitnessCheck:
    """The local journal against its shipped copy: every shipped seq must hold the same
    hash locally (a local journal rewritten after shipping differs from there on)."""
    row = conn.execute(
        "SELECT last_seq FROM ej_workspaces WHERE workspace_id = %s", (workspace_id,)
    ).fetchone()
    shipped = int(row[0]) if row else 0
    mine = local.last_seq()
    seq = first_difference(conn, local, workspace_id, shipped)
    if seq is None and mine < shipped:
        seq = mine + 1
    return WitnessCheck(workspace_id, shipped, mine, seq is None, seq)
