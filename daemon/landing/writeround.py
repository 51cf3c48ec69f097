"""The writes of one batch of requests, made durable together (group commit).

Requests that arrive together are handled one after another; each write's temp
file is written as the write is planned, but nothing is fsynced or renamed until
the batch ends. Meanwhile the workspace's overlay serves every prepared content,
so a later request of the batch plans against what an earlier one wrote (no lost
update), and only the last content of a path is ever renamed into place. At the
end of the batch the server runs one round, in this order:

1. `sync`: fsync every surviving temp file (superseded ones are removed unsynced);
2. the journal commits the batch's events with one `pending_writes` row per temp
   file (`rows`), so a crash after the commit can finish the renames at start-up;
3. `publish`: swap every temp file in, then fsync each directory once;
4. the rows of published writes are removed in the next commit (`done`).

Each write lands by an exchange, not a plain rename (daemon/landing/exchange.py): what it
displaces is compared with the content the batch started from, so an outside
writer that changed the file after it was last looked at (an editor's save, an
append) is put back and the batch's change carried over it, never lost; the
round hands such writes over as `Met`, for the server to journal.

A removal is published alone: the overlay holds contents, not absences, so the
server ends the batch at a removal (and before it, when the batch has writes).
It never decides what to write or journals anything itself.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from editjournal.daemon.files.filesnapshot import FileSnapshot
from editjournal.daemon.files.preparedwrite import PreparedWrite
from editjournal.daemon.files.workspace import Workspace
from editjournal.daemon.landing.exchange import Landed, land
from editjournal.daemon.landing.pendingwrites import ABSENT, DELETE, INSERT, removal_key
from editjournal.daemon.settings.limits import DEFAULT_FILE_LINES
from editjournal.daemon.store.journal import Statement
from editjournal.schemas.errors import ToolError

log = logging.getLogger("editjournal")
_SQLITE_FULL = 13


@dataclass(frozen=True)
class Prepared:
    """A prepared write and the content it was computed from (`Write.based_on`, and
    its bytes when known: the base of a carry over a displaced outside change)."""

    write: PreparedWrite
    based_on: str | None
    based_on_data: bytes | None = None


@dataclass
class _Slot:
    """The latest prepared write of one target in this batch."""

    write: PreparedWrite
    before: str | None  # the target's content before the batch (ABSENT; None: unchecked)
    before_data: bytes | None  # its bytes, when known
    seq: int  # the event that journals the latest content
    agent: str | None  # who wrote the latest content
    owners: list[int] = field(default_factory=list)  # the replies that wrote it


@dataclass(frozen=True)
class Met:
    """A write that met outside changes as it landed (daemon/landing/exchange.py): the server
    journals them, and the carry or the refusal, for the replies that wrote it."""

    key: str  # the real workspace-relative path
    ours: FileSnapshot | None  # what the batch wrote (None: a removal)
    landed: Landed
    seq: int  # the event that journaled the write
    agent: str | None
    owners: list[int]


class WriteRound:
    """Prepared writes of the current batch, by the real path of their target."""

    def __init__(self, workspace: Workspace) -> None:
        self._workspace = workspace
        self._slots: dict[str, _Slot] = {}
        self._superseded: list[PreparedWrite] = []
        self._done: list[tuple[str]] = []  # rows to remove from pending_writes
        self.removes = False  # a removal is in the batch: it must end here
        self.met: list[Met] = []  # writes of the last publish that met outside changes

    def __len__(self) -> int:
        return len(self._slots)

    def add(
        self, prepared: list[Prepared], seq: int, owners: list[int], agent: str | None = None
    ) -> None:
        """Take a request's prepared writes; the overlay serves them from now on."""
        for item in prepared:
            write = item.write
            key = self._key(write)
            old = self._slots.get(key)
            if old is not None:
                self._superseded.append(old.write)
                before, before_data = old.before, old.before_data
                wrote = [*old.owners, *owners]
            else:
                before, before_data, wrote = item.based_on, item.based_on_data, list(owners)
            self._slots[key] = _Slot(write, before, before_data, seq, agent, wrote)
            if write.temp is None:
                self.removes = True
            else:
                self._workspace.overlay[key] = write.snapshot

    def sync(self) -> None:
        """Make every temp file durable before the commit names it (ToolError if one fails)."""
        for write in self._superseded:
            write.discard()
        self._superseded.clear()
        for slot in self._slots.values():
            slot.write.sync()

    def statements(self) -> list[Statement]:
        """For the next commit: remove the rows of writes published since the last one,
        add a row for every write of this round (what recovery needs to finish it)."""
        rows = [
            (self._temp_name(s.write, key), s.seq, key, _content(s.write), s.before)
            for key, s in self._slots.items()
        ]
        return [(sql, r) for sql, r in ((DELETE, list(self._done)), (INSERT, rows)) if r]

    def committed(self) -> None:
        """The statements are committed: the published rows are gone."""
        self._done.clear()

    def publish(self, max_lines: int = DEFAULT_FILE_LINES) -> dict[int, ToolError]:
        """Land every write (daemon/landing/exchange.py), fsync each directory once, end the round.
        Returns the failures by reply index (the journal is then ahead of the disk); the
        writes that met outside changes are left in `met` for the server to journal."""
        failures: dict[int, ToolError] = {}
        directories: dict[Path, PreparedWrite] = {}
        for key, slot in self._slots.items():
            expected = (slot.before, slot.before_data)
            try:
                limits = (max_lines, slot.seq)
                landed = land(self._workspace, key, slot.write, expected, limits)
            except ToolError as error:
                log.error("journaled write (seq %d) could not be renamed: %s", slot.seq, error)
                failures.update((owner, error) for owner in slot.owners)
                continue
            final = landed.carried or slot.write
            directories.setdefault(slot.write.target.parent, final)
            self._done.append((self._temp_name(slot.write, key),))
            if landed.observed:
                ours = None if slot.write.temp is None else slot.write.snapshot
                self.met.append(Met(key, ours, landed, slot.seq, slot.agent, slot.owners))
            if not landed.refused:
                self._note_own(key, final)
        for write in directories.values():
            write.sync_directory()
        for slot in self._slots.values():
            slot.write.close()
        for found in self.met:
            if found.landed.carried is not None:
                found.landed.carried.close()
        self._end()
        return failures

    def _note_own(self, key: str, write: PreparedWrite) -> None:
        """So the watcher's report of this rename costs a stat (daemon/files/ownwrites.py)."""
        if write.temp is None:
            self._workspace.own_writes.forget(key)
        else:
            self._workspace.own_writes.note(key, write.snapshot.sha256, write.snapshot.size)

    def take_met(self) -> list[Met]:
        """The writes of the last publish that met outside changes, handed over once."""
        found, self.met = self.met, []
        return found

    def discard(self) -> None:
        """Nothing of the round reaches the disk: every temp file is removed."""
        for write in [*self._superseded, *(s.write for s in self._slots.values())]:
            write.discard()
        self._superseded.clear()
        self._end()

    def _end(self) -> None:
        self._slots.clear()
        self._workspace.overlay.clear()
        self.removes = False

    def _key(self, write: PreparedWrite) -> str:
        # `target` is where the write lands, already walked by the workspace (a removal:
        # the name given, never resolved); resolving it again could follow a swapped link
        return os.path.relpath(write.target, self._workspace.root)

    def _temp_name(self, write: PreparedWrite, key: str) -> str:
        if write.temp is None:
            return removal_key(key)
        return os.path.relpath(write.temp, self._workspace.root)


def _content(write: PreparedWrite) -> str:
    return ABSENT if write.temp is None else write.snapshot.sha256


def disk_full(error: BaseException) -> bool:
    """True when SQLite refused a commit because the disk (or a quota) is full."""
    cause = error.__cause__
    return isinstance(cause, sqlite3.Error) and (
        getattr(cause, "sqlite_errorcode", None) == _SQLITE_FULL or "disk is full" in str(cause)
    )


@dataclass
class CommitStats:
    """How the group commit is doing, for `status`: commits, and what they carried."""

    commits: int = 0
    durable: int = 0  # of which synchronous=FULL
    events: int = 0
    batches_with_writes: int = 0
    writes: int = 0  # files renamed into place
    largest: int = 0  # the most events one commit carried

    def count(self, events: int, durable: bool) -> None:
        if not events:
            return
        self.commits += 1
        self.durable += durable
        self.events += events
        self.largest = max(self.largest, events)

    def as_dict(self) -> dict[str, int]:
        return dataclasses.asdict(self)
