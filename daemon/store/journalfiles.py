"""The journal's own files, watched: is what sits at the database's and the WAL's paths
still what SQLite writes?

Why: SQLite holds its files by descriptor and never looks at their paths again. A WAL
unlinked (`rm journal.db-wal`), a database file replaced at its path (a copy restored,
the file moved aside) or cut short goes unnoticed: SQLite goes on committing into an
inode nobody will open again, or onto a damaged file, and every write acknowledged
after it is lost at the next start. So before the daemon acknowledges a commit, the
journal asks `JournalFiles.look()` (daemon.store.journal decides what a change means):

- the file at the database's path is the inode opened (st_dev, st_ino);
- it is not shorter than its own header says: the header's page count (offset 28) is
  the file's size at the last checkpoint, and in WAL mode the file only changes at a
  checkpoint, which writes the header first and extends the file after it;
- the file at the WAL's path is the inode SQLite writes (recorded when it first exists
  after an open: SQLite keeps the WAL while any connection is open);
- the file at the `-shm` path (the WAL's index, shared memory every connection maps) is
  the one SQLite mapped: one unlinked or replaced holds no event, but the next process
  to open the journal (`editjournal verify`, a reader) builds another index from the
  WAL, so the two no longer see each other's commits and locks, and a connection that
  thinks itself the last checkpoints and removes the WAL the daemon still writes. It is
  taken back like the WAL: the journal reopens over a fresh index. (A `-shm` cut short
  under the daemon cannot be caught in time: the daemon's next access of a mapped page
  past its end is a SIGBUS, a crash, which start-up recovery then meets as any crash:
  what was acknowledged is in the WAL.)

Cost: three `stat` calls and one 100-byte `pread` (a few microseconds; a group commit
with its fsync is milliseconds).

What it must never do: close a descriptor of the database file while SQLite has it
open (POSIX locks belong to the process and the inode: closing any descriptor would
drop SQLite's locks), so it keeps its one descriptor until the journal is closed; run
SQLite; or change a byte of either file.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Literal, NamedTuple

from editjournal.schemas.errors import ErrorCode

Kind = Literal[
    "wal_unlinked", "wal_replaced", "shm_unlinked", "shm_replaced", "db_gone", "db_replaced",
    "db_cut_short",
]  # fmt: skip
HEADER_BYTES = 100  # SQLite's database header; a database file is never shorter
# a file found shorter than its header says is looked at again for up to this long before
# it is called cut short: another process's checkpoint writes the header before the pages
# that extend the file (the daemon's own checkpoints finish inside its commits)
SETTLE_SECONDS = 0.5
_SETTLE_STEP = 0.02


class Identity(NamedTuple):
    dev: int
    ino: int


class Change(NamedTuple):
    """What happened to one of the journal's files, and what a person should do, in words."""

    kind: Kind
    message: str
    advice: str

    @property
    def wal_only(self) -> bool:
        """Only the WAL or its index: the database file is intact, so the frames can be
        taken back (and the connection reopened over a fresh WAL and index)."""
        return self.kind.startswith(("wal_", "shm_"))

    @property
    def code(self) -> ErrorCode:
        """A file cut short is damaged (`journal_corrupt`); a file replaced or removed is
        whole where it went, but no longer the journal's (`journal_unavailable`)."""
        if self.kind == "db_cut_short":
            return ErrorCode.JOURNAL_CORRUPT
        return ErrorCode.JOURNAL_UNAVAILABLE


def identity(stat: os.stat_result) -> Identity:
    return Identity(stat.st_dev, stat.st_ino)


def _identity_at(name: str) -> Identity | None:
    try:
        return identity(os.stat(name))
    except FileNotFoundError:
        return None


class JournalFiles:
    """The database file and WAL of one open journal connection, and what they must stay."""

    def __init__(self, db_path: Path) -> None:
        self.db_path = db_path
        self.wal_path = db_path.with_name(db_path.name + "-wal")
        self.shm_path = db_path.with_name(db_path.name + "-shm")
        # stat by str: a Path costs ~2 us more per call, and this runs twice per commit
        self._db_name, self._wal_name = os.fspath(db_path), os.fspath(self.wal_path)
        self._shm_name = os.fspath(self.shm_path)
        self._fd = os.open(db_path, os.O_RDONLY | os.O_CLOEXEC)
        self._db = identity(os.fstat(self._fd))
        self._wal: Identity | None = None
        self._shm: Identity | None = None
        self.wal_opened()

    def wal_opened(self) -> None:
        """Record the WAL and its index at their paths as the ones SQLite uses: at an
        open, and again after the connection was reopened over fresh ones."""
        self._wal, self._shm = _identity_at(self._wal_name), _identity_at(self._shm_name)

    def look(self) -> Change | None:
        """What changed under the journal, None when its files are still its own."""
        return self._db_change() or self._wal_change() or self._shm_change()

    def _db_change(self) -> Change | None:
        try:
            stat = os.stat(self._db_name)
        except FileNotFoundError:
            return Change(
                "db_gone",
                f"{self.db_path} was moved away or removed while the daemon served it (its"
                f" journal is now {self.held_at()})",
                f"put it back at {self.db_path} (every acknowledged event is in it), then stop"
                " the daemon (`editjournal stop`) and start it again",
            )
        if identity(stat) != self._db:
            return Change(
                "db_replaced",
                f"{self.db_path} was replaced while the daemon served it: another file is at"
                " its path (a copy restored, or the journal moved aside and another put in its"
                f" place); the daemon's journal is now {self.held_at()}",
                "stop the daemon (`editjournal stop`): the next start uses the file now at the"
                " path; to keep this run's history, put the daemon's journal back there first",
            )
        short = self._short_by(stat.st_size)
        if short is not None:
            return Change(
                "db_cut_short",
                f"{self.db_path} was cut short while the daemon served it: {short[0]} bytes"
                f" where its header says {short[1]}",
                "stop the daemon (`editjournal stop`), run `editjournal verify` and restore"
                f" {self.db_path.name} from a backup",
            )
        return None

    def _short_by(self, size: int) -> tuple[int, int] | None:
        """(size, the size its header gives) when the file is shorter than its header
        says and stays so for SETTLE_SECONDS (another process's checkpoint may be
        extending it), else None. The header is read again as the file is."""
        needed, deadline = self._header_size(), time.monotonic() + SETTLE_SECONDS
        while size < needed:
            if time.monotonic() > deadline:
                return size, needed
            time.sleep(_SETTLE_STEP)
            size, needed = os.fstat(self._fd).st_size, self._header_size()
        return None

    def _header_size(self) -> int:
        """The size the database's header gives the file: page count × page size. The
        count is only kept by writers that also keep 'version-valid-for' (offset 92)
        equal to the change counter (offset 24), as SQLite has since 3.7.0; else only
        the header itself is required."""
        header = os.pread(self._fd, HEADER_BYTES, 0)
        if len(header) < HEADER_BYTES or header[24:28] != header[92:96]:
            return HEADER_BYTES
        page_size = int.from_bytes(header[16:18], "big")
        page_size = 65536 if page_size == 1 else page_size
        return int.from_bytes(header[28:32], "big") * page_size

    def _wal_change(self) -> Change | None:
        try:
            found = identity(os.stat(self._wal_name))
        except FileNotFoundError:
            if self._wal is None:
                return None
            return Change(
                "wal_unlinked",
                f"the WAL {self.wal_path} was removed while the daemon served it",
                self._restart_advice(),
            )
        if self._wal is None:
            self._wal = found
        elif found != self._wal:
            return Change(
                "wal_replaced",
                f"the WAL {self.wal_path} was replaced by another file while the daemon served it",
                self._restart_advice(),
            )
        return None

    def _shm_change(self) -> Change | None:
        found = _identity_at(self._shm_name)
        if self._shm is None or found == self._shm:
            self._shm = self._shm or found  # recorded when it first exists
            return None
        how = "removed" if found is None else "replaced by another file"
        return Change(
            "shm_unlinked" if found is None else "shm_replaced",
            f"the WAL index {self.shm_path} was {how} while the daemon served it",
            self._restart_advice(),
        )

    def _restart_advice(self) -> str:
        return (
            f"the events acknowledged before are in {self.db_path}: stop the daemon"
            " (`editjournal stop`) and start it again"
        )

    def held_at(self) -> str:
        """Where the database file the daemon holds is now: its new path, or, removed,
        how to copy it out while the daemon still holds it (Linux's /proc)."""
        proc = f"/proc/{os.getpid()}/fd/{self._fd}"
        try:
            where = os.readlink(f"/proc/self/fd/{self._fd}")
        except OSError:
            return "a file it can no longer name"
        if where.endswith(" (deleted)"):
            return f"held open only by the daemon: copy it out (`cp {proc} FILE`) before it stops"
        return where

    def close(self) -> None:
        """After the SQLite connection is closed, never before (see the module's note).
        A second close does nothing (a journal may be closed twice)."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
