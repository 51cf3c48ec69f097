"""The fleet's rows (issue 27): shipping to a real PostgreSQL, following, asking.

- events shipped per second from a big journal (the cached million-event one), vs
  the bare floor of the same rows read from SQLite and COPYed as they are (no JSON
  body, no chain check);
- follow lag under a storm of 8 agents editing: for each event, from its commit
  (its `ts`) to the end of the shipper's transaction that holds it;
- `fleet log` over 10 workspaces of 100,000 events each (synthetic rows COPYed in):
  one agent's newest 100, and a path glob's, vs a primary-key lookup.

The server is the tests' own (tests/pg_support.py: a real postmaster in a temp
directory, as an unprivileged user when run as root).
"""

from __future__ import annotations

import sqlite3
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench.daemons import serving
from bench.journal_fill import cached_workspace
from bench.rows import Figure, Row
from bench.sizes import Sizes
from bench.stats import Summary, percentiles
from editjournal.client import Client
from editjournal.daemon.fleet.pgschema import prepare
from editjournal.daemon.fleet.queries import Filters, log
from editjournal.daemon.fleet.shipper import Shipped, Shipper, connect, json_body
from editjournal.daemon.store.hashchain import ROW_COLUMNS
from tests.pg_support import PostgresServer

GOAL_PER_S = 20_000
AGENTS = 8


def rows(tmp: Path, sizes: Sizes) -> Iterator[Row]:
    server = PostgresServer()
    try:
        server.start()
        yield ship_row(server, sizes)
        yield follow_row(server, tmp, sizes)
        yield from log_rows(server, sizes)
    finally:
        server.destroy()


def ship_row(server: PostgresServer, sizes: Sizes) -> Row:
    ws, _ = cached_workspace(sizes.fleet_events)
    ours_url, floor_url = server.new_database(), server.new_database()
    shipper = Shipper(ws, ours_url)
    try:
        started = time.perf_counter()
        done = shipper.ship()
        ours_s = time.perf_counter() - started
    finally:
        shipper.close()
    floor_s = _bare_copy(ws / ".editjournal" / "journal.db", floor_url)
    rate, floor = done.events / ours_s, done.events / floor_s
    return Row(
        f"`editjournal ship`, {done.events:,}-event journal into PostgreSQL",
        Figure("editjournal", rate, "events/s", extra=f"{ours_s:.1f} s"),
        [Figure("bare COPY of the same rows", floor, "events/s", extra=f"{floor_s:.1f} s")],
        goal=f"≥ {GOAL_PER_S:,} events/s",
        met=rate >= GOAL_PER_S,
    )


def _bare_copy(journal: Path, url: str) -> float:
    """The floor: the rows read from SQLite and COPYed into a plain table as they are."""
    db = sqlite3.connect(f"file:{journal}?mode=ro", uri=True)
    conn = connect(url)
    try:
        conn.execute(
            "CREATE TABLE bare (seq bigint, ts bigint, agent text, kind text, path text,"
            " body bytea, prev_hash bytea, hash bytea)"
        )
        started = time.perf_counter()
        after = 0
        while found := db.execute(
            f"SELECT {ROW_COLUMNS} FROM events WHERE seq > ? ORDER BY seq LIMIT 5000", (after,)
        ).fetchall():
            with conn.transaction(), conn.cursor() as cur, cur.copy("COPY bare FROM STDIN") as copy:
                for row in found:
                    copy.write_row(row)
            after = found[-1][0]
        return time.perf_counter() - started
    finally:
        conn.close()
        db.close()


def follow_row(server: PostgresServer, tmp: Path, sizes: Sizes) -> Row:
    ws = tmp / "storm"
    ws.mkdir()
    for k in range(AGENTS):
        (ws / f"f{k}.py").write_text("".join(f"v{n} = {n}\n" for n in range(200)))
    url = server.new_database()
    shipped_at: list[tuple[int, int, float]] = []  # (first seq, last seq, seconds)
    with serving(ws):
        stop, storm_stop = threading.Event(), threading.Event()
        shipper = Shipper(ws, url)

        def report(done: Shipped) -> None:
            shipped_at.append((done.first_seq or 0, done.last_seq, time.time()))

        follower = threading.Thread(target=shipper.follow, args=(stop, report), daemon=True)
        follower.start()
        agents = [threading.Thread(target=_edit, args=(ws, k, storm_stop)) for k in range(AGENTS)]
        for agent in agents:
            agent.start()
        time.sleep(sizes.fleet_storm_s)  # the storm's length is the measure's own parameter
        storm_stop.set()
        for agent in agents:
            agent.join()
        last = shipper.local.last_seq()
        deadline = time.monotonic() + 60
        while (not shipped_at or shipped_at[-1][1] < last) and time.monotonic() < deadline:
            stop.wait(0.05)
        stop.set()
        follower.join(30)
        commit_ts = dict(shipper.local.db.execute("SELECT seq, ts FROM events").fetchall())
        shipper.close()
    lags = [
        max(0.0, shipped * 1000 - commit_ts[seq]) * 1000  # microseconds
        for first, lastseq, shipped in shipped_at
        for seq in range(first, lastseq + 1)
        if seq in commit_ts
    ]
    p50, p99 = percentiles(lags) if lags else (0.0, 0.0)
    return Row(
        f"`ship --follow` lag under {AGENTS} agents editing ({len(lags):,} events)",
        Figure("editjournal", p50, "us", p99=p99),
        [],
        goal="p99 ≤ 1 s",
        met=p99 <= 1_000_000,
        notes=["lag: from an event's commit to the end of the shipper's transaction"],
    )


def _edit(ws: Path, k: int, stop: threading.Event) -> None:
    with Client(ws, f"agent-{k}", autostart=False) as client:
        client.read_file(f"f{k}.py")
        n = 0
        while not stop.is_set():
            n += 1
            line = n % 200
            client.edit_file(f"f{k}.py", f"v{line} = ", f"v{line} = {n} + ")


def log_rows(server: PostgresServer, sizes: Sizes) -> Iterator[Row]:
    url = server.new_database()
    conn = connect(url)
    try:
        prepare(conn)
        ids = _synthetic(conn, sizes.fleet_workspaces, sizes.fleet_events_each)
        n = 30
        for what, filters in (
            ("one agent's newest 100", Filters(agent="agent-3", limit=100)),
            ("a path glob's newest 100", Filters(path="src/mod7/**", limit=100)),
        ):
            ours = _timed(lambda f=filters: log(conn, f), n)
            lookup = _timed(
                lambda: conn.execute(
                    "SELECT raw FROM ej_events WHERE workspace_id = %s AND seq = 777", (ids[0],)
                ).fetchone(),
                n,
            )
            total = sizes.fleet_workspaces * sizes.fleet_events_each
            yield Row(
                f"`fleet log`, {what}, {sizes.fleet_workspaces} workspaces × "
                f"{sizes.fleet_events_each:,} events ({total:,})",
                Figure("editjournal", ours.p50, "us", p99=ours.p99),
                [Figure("a primary-key lookup", lookup.p50, "us", p99=lookup.p99)],
                goal="p50 < 100 ms",
                met=ours.p50 < 100_000,
            )
    finally:
        conn.close()


def _synthetic(conn: Any, workspaces: int, each: int) -> list[str]:
    """Shipped-looking rows (bodies of real events) for `workspaces` workspaces."""
    from editjournal.schemas.events import EVENT_ENCODER, EditApplied, FileRead

    ids = [str(uuid.uuid4()) for _ in range(workspaces)]
    now = int(time.time() * 1000)
    for k, ws in enumerate(ids):
        conn.execute(
            "INSERT INTO ej_workspaces (workspace_id, host, path, last_seq, last_hash)"
            " VALUES (%s, 'bench', %s, %s, %s)",
            (ws, f"/bench/ws{k}", each, "0" * 64),
        )
        with (
            conn.transaction(),
            conn.cursor() as cur,
            cur.copy(
                "COPY ej_events (workspace_id, seq, ts_ms, agent, kind, path, body, raw, prev_hash,"
                " hash) FROM STDIN"
            ) as copy,
        ):
            for seq in range(1, each + 1):
                path = f"src/mod{seq % 50}/file{seq % 13}.py"
                event: Any = (
                    FileRead(path=path, sha256="a" * 64, size=10, line_count=1)
                    if seq % 2
                    else EditApplied(
                        path=path, writer="edit", before_sha256="a" * 64, after_sha256="b" * 64,
                        size=10, lines_before=1, line_count=1,
                    )
                )  # fmt: skip
                raw = EVENT_ENCODER.encode(event)
                agent = f"agent-{seq % AGENTS}"
                copy.write_row(
                    (ws, seq, now - (each - seq) * 10, agent, event.kind, path, json_body(raw),
                     raw, "0" * 64, "0" * 64)
                )  # fmt: skip
    conn.execute("ANALYZE ej_events")
    return ids


def _timed(call: Any, n: int) -> Summary:
    samples = []
    for _ in range(n + 3):
        started = time.perf_counter()
        call()
        samples.append((time.perf_counter() - started) * 1e6)
    return Summary.of(samples[3:])
