"""A workspace's journal as the shipper reads it: stored rows in seq order, and contents.

Read-only (SQLite `mode=ro`), beside a daemon that may be writing: the rows are the
ones the chain hash covers, exactly as stored, checked link by link as they are
read so a damaged journal is never shipped as if it were whole.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

from editjournal.daemon.audit import open_readonly
from editjournal.daemon.store.hashchain import (
    GENESIS_HASH,
    ROW_COLUMNS,
    StoredRow,
    hash_text,
    row_problem,
    stored_rows,
)
from editjournal.daemon.store.journal import Journal
from editjournal.schemas.endpoint import JOURNAL_FILE, STATE_DIR_NAME
from editjournal.schemas.errors import ErrorCode, ToolError


class Checked(NamedTuple):
    """A local row and why it breaks the chain (None: its hash is its contents')."""

    row: StoredRow
    problem: str | None


class LocalJournal:
    """One workspace's journal, read-only."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.state_dir = root / STATE_DIR_NAME
        self.path = self.state_dir / JOURNAL_FILE
        if not self.path.exists():
            raise ToolError(
                ErrorCode.FILE_NOT_IN_JOURNAL,
                f"{root} has no journal ({self.path}): nothing to ship",
                {"path": str(self.path)},
                "no daemon has served this workspace yet: start one in it (editjournal"
                " start), or name the workspace whose journal to ship (--workspace DIR)",
            )
        self.db = self._connect()
        self._journal: Journal | None = None

    def _connect(self) -> sqlite3.Connection:
        uri = f"file:{self.path}?mode=ro"
        return sqlite3.connect(uri, uri=True, check_same_thread=False)

    def reopen(self) -> None:
        """Open the journal again. Why: a connection opened before the daemon rescued its
        journal (a WAL or `-shm` unlinked, its frames moved into the database file and the
        daemon's connection reopened over fresh ones: daemon/store/journalfiles.py) reads
        through a WAL and index nobody writes any more, and SQLite answers "disk I/O
        error"; a new connection reads the journal as it now is."""
        self.close()
        self.db = self._connect()
        self._journal = None

    def last_seq(self) -> int:
        row = self.db.execute("SELECT COALESCE(MAX(seq), 0) FROM events").fetchone()
        return int(row[0])

    def hashes(self, first: int, last: int) -> dict[int, str]:
        """seq -> hash for seqs first..last."""
        rows = self.db.execute(
            "SELECT seq, hash FROM events WHERE seq BETWEEN ? AND ?", (first, last)
        )
        return {int(seq): hash_text(h) for seq, h in rows}

    def rows(self, after: int, prev_hash: str, limit: int) -> list[StoredRow]:
        """Up to `limit` rows after seq `after`, each checked against the one before
        (`prev_hash`: the hash of row `after`); a broken link is `journal_corrupt`."""
        found = self.db.execute(
            f"SELECT {ROW_COLUMNS} FROM events WHERE seq > ? ORDER BY seq LIMIT ?",
            (after, limit),
        )
        rows: list[StoredRow] = []
        expected, prev = after + 1, prev_hash
        for row in stored_rows(found, prev_hash):
            problem = row_problem(expected, prev, row)
            if problem:
                raise ToolError(
                    ErrorCode.JOURNAL_CORRUPT,
                    f"the local journal breaks at seq {row.seq}: {problem}; nothing from it"
                    " on was shipped (`editjournal verify` checks the whole journal)",
                    {"seq": row.seq},
                )
            rows.append(row)
            expected, prev = expected + 1, row.hash
        return rows

    def recomputed(self, upto: int, batch: int = 10_000) -> Iterator[Checked]:
        """Rows 1..`upto` in seq order, each with why it breaks the chain (None: it holds).

        Each row's hash is recomputed from its columns and the row before's, never taken
        on trust: a row rewritten with its stored hash left as it was (triggers dropped)
        is named here, where comparing stored hashes would find nothing."""
        after, prev = 0, GENESIS_HASH
        while after < upto:
            found = self.db.execute(
                f"SELECT {ROW_COLUMNS} FROM events WHERE seq > ? AND seq <= ? ORDER BY seq LIMIT ?",
                (after, upto, batch),
            ).fetchall()
            if not found:
                return
            for row in stored_rows(found, prev):
                yield Checked(row, row_problem(after + 1, prev, row))
                after, prev = row.seq, row.hash

    def blob(self, sha256: str) -> bytes | None:
        """A content, whole (the journal may store it as a delta)."""
        if self._journal is None:
            self._journal = open_readonly(self.path)
        return self._journal.blob(sha256)

    def close(self) -> None:
        self.db.close()
        if self._journal is not None:
            self._journal.close()
