"""`editjournal fleet log|stats|blame|verify`: questions asked across shipped journals.

Plain SQL over the fleet's tables (daemon/fleet/pgschema.py), read-only. `blame`
runs the local audit's own fold (daemon/audit/blame.py) over a shipped copy: the
copy is a `JournalReader` of one workspace. `verify` recomputes every shipped chain
link by link (the hash covers every stored column, so any edit on the server shows),
and, given a local journal, compares it with its copy seq by seq: the witness check.
"""

from __future__ import annotations

import itertools
import re
import shlex
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import psycopg

from editjournal.daemon.audit.blame import blame as blame_of
from editjournal.daemon.audit.stats import agent_stats
from editjournal.daemon.audit.timeline import commands_of, versions
from editjournal.daemon.fleet.pgschema import server_version
from editjournal.daemon.fleet.shipper import first_difference
from editjournal.daemon.fleet.source import LocalJournal
from editjournal.daemon.store.hashchain import GENESIS_HASH, StoredRow, row_problem
from editjournal.schemas.errors import ErrorCode, ToolError
from editjournal.schemas.events import EVENT_DECODER, AnyEvent, Record
from editjournal.schemas.tools import AgentStats, BlameResult

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
    # the shell command(s) that made the change (`timeline.commands_of`, as the local
    # `log` shows them); empty: not a shell window's edit
    commands: tuple[str, ...] = ()


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
        _fleet_event(ws, host, wpath, seq, ts, agent, kind, path, EVENT_DECODER.decode(raw))
        for ws, host, wpath, seq, ts, agent, kind, path, raw in rows
    ]
    return found[::-1]


def _fleet_event(
    ws: str, host: str, wpath: str, seq: int, ts: int, agent: str | None, kind: str,
    path: str | None, event: AnyEvent,
) -> FleetEvent:  # fmt: skip
    """One shipped event as `fleet log` shows it: decoded once for its summary and its
    shell commands."""
    summary, commands = event.summary(), tuple(commands_of(event))
    return FleetEvent(ws, host, wpath, seq, ts, agent, kind, path, summary, commands)


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


@dataclass(frozen=True)
class WorkspaceStats:
    """One shipped workspace's `stats`: the local `StatsResult` (agents, last_seq) of
    the events shipped, with the workspace it is."""

    workspace_id: str
    host: str
    path: str
    last_seq: int
    agents: list[AgentStats]


def stats(
    conn: Conn,
    workspace: str | None = None,
    since_ms: int | None = None,
    agent: str | None = None,
) -> list[WorkspaceStats]:
    """Per workspace, the local `stats` fold (daemon/audit/stats.py) over its shipped
    events: for the same journal the same agents, counts and recoveries as `editjournal
    stats` there (with `since_ms`: over the events recorded from then on)."""
    ids = workspace_ids(conn, workspace) if workspace else None
    rows = conn.execute(
        "SELECT workspace_id::text, host, path, last_seq FROM ej_workspaces"
        " WHERE %s::text[] IS NULL OR workspace_id::text = ANY(%s) ORDER BY path, workspace_id",
        (ids, ids),
    ).fetchall()
    return [
        WorkspaceStats(
            ws, host, path, last_seq,
            agent_stats(ShippedJournal(conn, ws).records(since_ts=since_ms), agent),
        )
        for ws, host, path, last_seq in rows
    ]  # fmt: skip


class ShippedJournal:
    """One workspace's shipped copy, read as the local audit reads a journal."""

    def __init__(self, conn: Conn, workspace_id: str) -> None:
        self.conn = conn
        self.workspace_id = workspace_id

    def records(
        self,
        *,
        path: str | None = None,
        until_seq: int | None = None,
        since_ts: int | None = None,
    ) -> Iterator[Record]:
        """Events in seq order, filtered as `Journal.records` filters them (through a
        server-side cursor: a workspace's whole history is folded, never held whole)."""
        query = (
            "SELECT seq, ts_ms, agent, raw, prev_hash, hash FROM ej_events WHERE"
            " workspace_id = %s AND (%s::text IS NULL OR path = %s) AND seq <= %s"
            " AND ts_ms >= %s ORDER BY seq"
        )
        until = until_seq if until_seq is not None else 2**62
        since = since_ts if since_ts is not None else -(2**62)
        name = f"records_{next(_CURSORS)}"
        with self.conn.transaction(), self.conn.cursor(name=name) as cur:
            cur.itersize = 5_000
            cur.execute(query, (self.workspace_id, path, path, until, since))
            for seq, ts, agent, raw, prev_hash, digest in cur:
                event = EVENT_DECODER.decode(raw)
                yield Record(
                    seq=seq, ts=ts, agent=agent, event=event, prev_hash=prev_hash, hash=digest
                )

    def blob(self, sha256: str) -> bytes | None:
        row = self.conn.execute("SELECT data FROM ej_blobs WHERE sha256 = %s", (sha256,)).fetchone()
        return bytes(row[0]) if row else None

    def held(self, names: Iterable[str]) -> set[str]:
        """Which of these contents the server holds."""
        rows = self.conn.execute(
            "SELECT sha256 FROM ej_blobs WHERE sha256 = ANY(%s)", (sorted(set(names)),)
        ).fetchall()
        return {sha for (sha,) in rows}


_CURSORS = itertools.count(1)  # server-side cursors' names, unique in this process


def blame(conn: Conn, workspace: str, path: str, until_seq: int | None = None) -> BlameResult:
    """Every line of `path` in one shipped workspace, with the event that wrote it: the
    local `blame` run over the shipped copy. Refused `blobs_not_shipped` when a content
    it folds was not shipped (events shipped without --blobs): folding without it would
    credit its lines to the wrong event."""
    shipped = ShippedJournal(conn, _one_workspace(conn, workspace))
    _contents_shipped(conn, shipped, path, until_seq)
    try:
        return blame_of(shipped, path, until_seq)
    except ToolError as e:
        if e.code not in _LOCAL_HINTS:
            raise
        # the local hint names a local command, of no use on the server's copy
        events = (
            f"`editjournal fleet log --workspace {shipped.workspace_id} --path {shlex.quote(path)}`"
        )
        hint = f"see the file's events on the server: {events}"
        raise ToolError(e.code, e.message, e.details, hint) from None


def _contents_tail(conn: Conn, workspace_id: str) -> tuple[str, int]:
    """The path a workspace shipped from, and its `blobs_seq` (0 on a server of schema 1,
    which did not record it: no content is known to be there until `ship` migrates the
    server and `--blobs` backfills)."""
    column = "blobs_seq" if server_version(conn) >= 2 else "0"
    row = conn.execute(
        f"SELECT path, {column} FROM ej_workspaces WHERE workspace_id = %s", (workspace_id,)
    ).fetchone()
    return (str(row[0]), int(row[1])) if row else ("?", 0)


_LOCAL_HINTS = frozenset({ErrorCode.VERSION_NOT_STORED, ErrorCode.FILE_NOT_IN_JOURNAL})


def _one_workspace(conn: Conn, workspace: str) -> str:
    ids = workspace_ids(conn, workspace)
    if len(ids) != 1:
        raise ToolError(
            ErrorCode.INVALID_PARAMS,
            f"{workspace!r} names {len(ids)} workspaces: give more of the id",
            {"workspace": workspace, "matches": ids},
        )
    return ids[0]


def _contents_shipped(
    conn: Conn, shipped: ShippedJournal, path: str, until_seq: int | None
) -> None:
    """`blobs_not_shipped` unless every content of the file's versions is on the server
    or one the local journal never held either: up to `blobs_seq` every content the
    local journal held was shipped, so only later versions can lack theirs."""
    workspace_path, blobs_seq = _contents_tail(conn, shipped.workspace_id)
    unsure = [v for v in versions(shipped, path, until_seq) if v.sha256 and v.seq > blobs_seq]
    held = shipped.held(v.sha256 for v in unsure if v.sha256)
    missing = [v for v in unsure if v.sha256 not in held]
    if missing:
        raise ToolError(
            ErrorCode.BLOBS_NOT_SHIPPED,
            f"{path} in workspace {shipped.workspace_id} ({workspace_path}) cannot be"
            f" blamed: {len(missing)} of its contents (the first at event {missing[0].seq})"
            f" are not on the server, as the events after seq {blobs_seq} were shipped"
            " without --blobs",
            {
                "workspace_id": shipped.workspace_id,
                "workspace_path": workspace_path,
                "path": path,
                "seq": missing[0].seq,
                "missing": len(missing),
                "blobs_seq": blobs_seq,
            },
        )


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
    reason: str | None = None  # why that seq differs


def witness(conn: Conn, local: LocalJournal, workspace_id: str) -> WitnessCheck:
    """The local journal against its shipped copy: every shipped seq must be there
    locally with the server's hash, each local hash recomputed from its row (a journal
    rewritten after shipping differs from there on, whatever hashes it kept)."""
    row = conn.execute(
        "SELECT last_seq FROM ej_workspaces WHERE workspace_id = %s", (workspace_id,)
    ).fetchone()
    shipped = int(row[0]) if row else 0
    found = first_difference(conn, local, workspace_id, shipped)
    if found is None:
        return WitnessCheck(workspace_id, shipped, local.last_seq(), True)
    return WitnessCheck(workspace_id, shipped, local.last_seq(), False, found.seq, found.reason)
