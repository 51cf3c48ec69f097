"""The fleet's tables in PostgreSQL, their version, and the migrations between versions.

Owned by this project: `ej_meta.schema_version` says which version a server holds;
`prepare` migrates an older one step by step (inside one transaction, under an
advisory lock so two shippers never migrate at once) and refuses a newer one
(`fleet_schema_too_new`), as the journal's own schema does. Events are kept as
shipped, keyed by (workspace, seq): every stored column the chain hash covers
(`raw` is the msgpack body, byte for byte) so a server can re-check each chain,
and `body` as jsonb for the questions. Contents are shared by hash across
workspaces, and each workspace records up to which seq its events' contents were
shipped (`blobs_seq`). The indexes are the ones `fleet log` and `fleet stats` filter by.
"""

from __future__ import annotations

from typing import Any

from editjournal.schemas.errors import ErrorCode, ToolError

SCHEMA_VERSION = 2
SCHEMA_LOCK = 0x656A7363  # pg_advisory_xact_lock key while a schema is created or migrated

# MIGRATIONS[v] takes a server from version v to v + 1
MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE IF NOT EXISTS ej_meta (key text PRIMARY KEY, value text NOT NULL);
    CREATE TABLE ej_workspaces (
        workspace_id uuid PRIMARY KEY,
        host text NOT NULL,
        path text NOT NULL,
        first_shipped timestamptz NOT NULL DEFAULT now(),
        last_shipped timestamptz NOT NULL DEFAULT now(),
        last_seq bigint NOT NULL DEFAULT 0,
        last_hash text NOT NULL
    );
    CREATE TABLE ej_events (
        workspace_id uuid NOT NULL REFERENCES ej_workspaces,
        seq bigint NOT NULL,
        ts_ms bigint NOT NULL,
        ts timestamptz GENERATED ALWAYS AS (to_timestamp(ts_ms / 1000.0)) STORED,
        agent text,
        kind text NOT NULL,
        path text,
        body jsonb NOT NULL,
        raw bytea NOT NULL,
        prev_hash text NOT NULL,
        hash text NOT NULL,
        PRIMARY KEY (workspace_id, seq)
    );
    CREATE INDEX ej_events_ts ON ej_events (ts_ms);
    CREATE INDEX ej_events_agent ON ej_events (agent, ts_ms);
    CREATE INDEX ej_events_kind ON ej_events (kind, ts_ms);
    CREATE INDEX ej_events_path ON ej_events (workspace_id, path, seq);
    CREATE TABLE ej_blobs (
        sha256 text PRIMARY KEY,
        size bigint NOT NULL,
        data bytea NOT NULL
    );
    """,
    # 1 -> 2: how far a workspace's contents were shipped. Every content the events up to
    # blobs_seq name (and the local journal held) is in ej_blobs: `fleet blame` of a file
    # whose versions go past it would fold without their contents, so it refuses
    # (`blobs_not_shipped`) until `ship --blobs` backfills them. 0 for a copy shipped
    # before this column: its contents are not known to be there.
    """
    ALTER TABLE ej_workspaces ADD COLUMN blobs_seq bigint NOT NULL DEFAULT 0;
    """,
)
assert len(MIGRATIONS) == SCHEMA_VERSION


def prepare(conn: Any) -> int:
    """The server's schema at this code's version (created or migrated); the version it
    had before. `fleet_schema_too_new` when it is newer. Commits."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (SCHEMA_LOCK,))
        had = server_version(conn)
        if had > SCHEMA_VERSION:
            raise ToolError(
                ErrorCode.FLEET_SCHEMA_TOO_NEW,
                f"the server's editjournal schema is version {had}; this editjournal knows"
                f" up to {SCHEMA_VERSION}: nothing was written",
                {"server": had, "ours": SCHEMA_VERSION},
            )
        for version in range(had, SCHEMA_VERSION):
            conn.execute(MIGRATIONS[version])
            conn.execute(
                "INSERT INTO ej_meta (key, value) VALUES ('schema_version', %s)"
                " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (str(version + 1),),
            )
    return had


def server_version(conn: Any) -> int:
    """The server's schema version: 0 when it has none of our tables."""
    found = conn.execute("SELECT to_regclass('ej_meta') IS NOT NULL").fetchone()
    if not found or not found[0]:
        return 0
    row = conn.execute("SELECT value FROM ej_meta WHERE key = 'schema_version'").fetchone()
    return int(row[0]) if row else 0
