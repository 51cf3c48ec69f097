"""The journal database's schema, its version, and the upgrade of older journals.

Why a version: journals outlive the code that wrote them. `PRAGMA user_version`
says which schema a database has: 0 is the first one (blobs were always full
copies), 2 adds line-delta blobs (`base`, `depth` columns) and the
`state_snapshot` table, 3 keys blobs by their SHA-256 as 32 raw bytes instead of
64 hex characters (stored twice, in the row and in its index: ~100 bytes per
stored version). Upgrading to 2 only adds columns and a table; upgrading to 3
copies the blobs table once with its keys unhexed, every other byte as it was.
No event is touched and no hash changes. A journal newer than this code is
refused, naming the version, rather than half-understood.

It also tells whether the append-only triggers were missing when the journal
was opened: they are only dropped by someone editing the database by hand, so
the daemon then checks the whole chain instead of trusting its last check.
"""

from __future__ import annotations

import sqlite3

SCHEMA_VERSION = 3
TRIGGERS = (
    "events_no_update",
    "events_no_delete",
    "events_gap_free",
    "blobs_no_replace",
    "blobs_no_update",
    "blobs_no_delete",
)

# a blob's columns (schema 3): the table as created, and as an older one is copied into
_BLOB_TABLE = """(
    sha256 BLOB PRIMARY KEY,
    size INTEGER NOT NULL,
    codec TEXT NOT NULL,
    data BLOB NOT NULL,
    base TEXT,
    depth INTEGER NOT NULL DEFAULT 0
)"""

_TABLES = f"""
CREATE TABLE IF NOT EXISTS events (
    seq INTEGER PRIMARY KEY,
    ts INTEGER NOT NULL,
    agent TEXT,
    kind TEXT NOT NULL,
    path TEXT,
    body BLOB NOT NULL,
    prev_hash BLOB NOT NULL,  -- empty since schema 3: the hash of the row before
    hash BLOB NOT NULL  -- 32 bytes since schema 3, hex text before
);
CREATE INDEX IF NOT EXISTS events_path ON events(path, seq);
CREATE INDEX IF NOT EXISTS events_agent ON events(agent, seq);
CREATE TABLE IF NOT EXISTS blobs {_BLOB_TABLE};
"""

# schema 2: a blob may be a line delta on `base` (`depth` deltas above a full copy)
_BLOB_COLUMNS = (
    ("base", "ALTER TABLE blobs ADD COLUMN base TEXT"),
    ("depth", "ALTER TABLE blobs ADD COLUMN depth INTEGER NOT NULL DEFAULT 0"),
)

_V2 = """
CREATE TABLE IF NOT EXISTS state_snapshot (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    seq INTEGER NOT NULL,
    chain_hash TEXT NOT NULL,
    digest TEXT NOT NULL,
    shape TEXT NOT NULL,
    body BLOB NOT NULL
);
"""

# schema 3: the blobs table again, keyed by raw bytes (in one transaction with the rest;
# its triggers go with the old table and are made again below)
_V3_BLOBS = f"""
CREATE TABLE blobs_v3 {_BLOB_TABLE};
INSERT INTO blobs_v3 (rowid, sha256, size, codec, data, base, depth)
    SELECT rowid, ej_unhex(sha256), size, codec, data, base, depth FROM blobs ORDER BY rowid;
DROP TABLE blobs;
ALTER TABLE blobs_v3 RENAME TO blobs;
"""

_TRIGGERS = """
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


class NewerJournal(Exception):
    """The journal was written by a newer editjournal."""


def prepare(conn: sqlite3.Connection) -> bool:
    """Create or upgrade the schema; True when an existing journal had lost a trigger."""
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version > SCHEMA_VERSION:
        raise NewerJournal(
            f"the journal has schema version {version}; this editjournal reads up to"
            f" {SCHEMA_VERSION}: upgrade editjournal"
        )
    existed = _has_table(conn, "events")
    tampered = existed and _missing_triggers(conn)
    if version == SCHEMA_VERSION and not tampered:
        return False  # nothing to do: no write lock taken (a reader beside the daemon)
    present = {row[1] for row in conn.execute("PRAGMA table_info(blobs)")}
    alters = "".join(
        f"{sql};\n" for column, sql in _BLOB_COLUMNS if present and column not in present
    )
    # someone edited the log by hand: the snapshot's verified point is void for good
    # (the triggers are back after this, so the next start must not trust it either)
    distrust = "DELETE FROM state_snapshot;\n" if tampered else ""
    rekey = _V3_BLOBS if present and version < 3 else ""
    conn.create_function("ej_unhex", 1, _unhex, deterministic=True)
    script = _TABLES + alters + _V2 + distrust + rekey + _TRIGGERS
    script += f"PRAGMA user_version = {SCHEMA_VERSION};\n"
    try:  # one transaction: a crash mid-upgrade leaves the old schema whole
        conn.executescript(f"BEGIN IMMEDIATE;\n{script}COMMIT;")
    except sqlite3.Error:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return tampered


_Value = str | bytes | int | float | None  # what SQLite hands a function


def _unhex(key: _Value) -> _Value:
    """A hex address as its 32 bytes; any other key (a tamperer's) kept as it is, for
    verify() to report rather than the upgrade to fail on."""
    if isinstance(key, str) and len(key) == 64:
        try:
            return bytes.fromhex(key)
        except ValueError:
            return key
    return key


def _has_table(conn: sqlite3.Connection, name: str) -> bool:
    found = conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", [name])
    return found.fetchone() is not None


def _missing_triggers(conn: sqlite3.Connection) -> bool:
    rows = conn.execute("SELECT name FROM sqlite_master WHERE type='trigger'").fetchall()
    return not set(TRIGGERS) <= {row[0] for row in rows}
