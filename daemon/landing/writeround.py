"""The writes of one batch of requests, made durable together (group commit).

Requests that arrive together are handled one after another; each write's temp
file is written as the write is planned, but nothing is renamed until the batch
ends. Meanwhile the workspace's overlay serves every prepared content, so a later
request of the batch plans against what an earlier one wrote (no lost update), and
only the last content of a path is ever renamed into place. At the end of the batch
the server runs one round, in this order:

1. `drop_superseded`: remove the temp files a later write of the batch replaced;
2. the journal commits the batch's events, each write's new content stored as a
   blob, with one `pending_writes` row per temp file (`rows`), in one fsynced
   transaction: from here the write is durable in the journal, and a crash or a
   power cut after the commit is finished at start-up (pendingwrites.py);
3. `publish`: swap every temp file in, then hand it to the flusher
   (daemon/landing/flusher.py), which fsyncs the file and its directory after the
   reply, off the owner thread;
4. the rows of flushed writes are removed in the next commit (`done`).

Each write lands by an exchange, not a plain rename (daemon/landing/exchange.py): what it
displaces is compared with the content the batch started from, so an outside
writer that changed the file after it was last looked at (an editor's save, an
append) is put back and the batch's change carried over it, never lost; the
round hands such writes over as `Met`, for the server to journal.

A removal is published alone: the server ends the batch at a removal (and before it,
when the batch has writes). The overlay serves it as a tombstone
(`Workspace.tombstone`): every reader is told there is no file, though it is still on
disk until the removal lands. The name its file is moved aside to is chosen here,
before the commit, and kept in its row, so a kill -9 between that move and the
landing's look leaves nothing unnamed (pendingwrites.py cleans it at the next start).
A batch of many writes (a restore of 5,000 files) does not land in one step: after
its commit the round keeps its writes queued (`begin`) and the server lands them a
slice at a time between other requests (`land`, daemon/runtime/groupcommit.py). The
overlay keeps serving each queued write's content, or a removal's tombstone, until it
has landed, so a read of such a path is answered as the journal has it; a later batch
that writes one of those paths first lands the queued write of it (`land_keys`), then
its own over it. A kill -9 in the middle leaves the rest to `pending_writes`,
committed with the batch: all or nothing across the crash.
It never decides what to write or journals anything itself.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import posixpath
import sqlite3
import time
from dataclasses import dataclass, field

from editjournal.daemon.files.filesnapshot import FileSnapshot
from editjournal.daemon.files.preparedwrite import PreparedWrite
from editjournal.daemon.files.tempfiles import displaced_name
from editjournal.daemon.files.workspace import Workspace, tombstone
from editjournal.daemon.landing.exchange import Landed, land
from editjournal.daemon.landing.flusher import Flusher, Landing
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
    shown: FileSnapshot  # what the overlay serves meanwhile: the content, or a tombstone
    before: str | None  # the target's content before the batch (ABSENT; None: unchecked)
    before_data: bytes | None  # its bytes, when known
    seq: int  # the event that journals the latest content
    agent: str | None  # who wrote the latest content
    owners: list[int] = field(default_factory=list)  # the replies that wrote it
    aside: str | None = None  # a removal: the name its file is moved aside to


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


@dataclass
class Landings:
    """What the landing of one batch's writes came to so far: the failures by reply
    index (the journal is then ahead of the disk), and the writes that met outside
    changes, for the server to journal (`take_met`)."""

    failures: dict[int, ToolError] = field(default_factory=dict)
    met: list[Met] = field(default_factory=list)

    def take_met(self) -> list[Met]:
        found, self.met = self.met, []
        return found


@dataclass(frozen=True)
class _Queued:
    """A committed write waiting to land, and where its outcome goes."""

    slot: _Slot
    into: Landings


class WriteRound:
    """Prepared writes of the current batch, by the real path of their target."""

    def __init__(self, workspace: Workspace, flusher: Flusher, boot: str) -> None:
        """`boot`: this machine's boot id, stored with each row (pendingwrites.py)."""
        self._workspace = workspace
        self._root_parts = workspace.root.parts
        self._flusher = flusher
        self._boot = boot
        self._slots: dict[str, _Slot] = {}
        self._superseded: list[PreparedWrite] = []
        self._done: list[tuple[str]] = []  # rows to remove from pending_writes
        # rows handed to the flusher, by file, oldest first: a file's newest write made
        # durable makes its older ones durable too (they were replaced by it)
        self._unflushed: dict[str, list[str]] = {}
        # committed writes not yet landed, by real path, in landing order (removals first)
        self._queue: dict[str, _Queued] = {}
        self.removes = False  # a removal is in the batch: it must end here
        self.met: list[Met] = []  # writes of the last publish that met outside changes
        # (path, seq) of each queued write landed (or failed) since `take_landed`: the
        # events of that path up to that seq go on the PUB feed then (groupcommit.py)
        self._landed: list[tuple[str, int]] = []

    def __len__(self) -> int:
        """The writes of the current batch (not those committed and still landing)."""
        return len(self._slots)

    @property
    def landing(self) -> int:
        """How many committed writes are still to land."""
        return len(self._queue)

    def keys(self) -> list[str]:
        """The real paths the current batch writes."""
        return list(self._slots)

    def writes(self, key: str) -> bool:
        """Whether the current batch writes the real path `key`."""
        return key in self._slots

    def take_landed(self) -> list[tuple[str, int]]:
        """(real path, the seq its landed content was journaled at) of each write landed
        (or failed) since the last call, in landing order."""
        found, self._landed = self._landed, []
        return found

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
            removal = write.temp is None
            shown = tombstone(write.snapshot.path) if removal else write.snapshot
            aside = displaced_name() if removal else None
            slot = _Slot(write, shown, before, before_data, seq, agent, wrote, aside)
            self._slots[key] = slot
            self.removes = self.removes or removal
            self._workspace.overlay[key] = shown

    def drop_superseded(self) -> None:
        """Remove the temp files a later write of the batch replaced: never committed."""
        for write in self._superseded:
            write.discard()
        self._superseded.clear()

    def statements(self) -> list[Statement]:
        """For the next commit: remove the rows of writes published since the last one,
        add a row for every write of this round (what recovery needs to finish it)."""
        for path, row in self._flusher.synced():
            self._flushed(path, row)
        rows = [self._row(key, slot) for key, slot in self._slots.items()]
        return [(sql, r) for sql, r in ((DELETE, list(self._done)), (INSERT, rows)) if r]

    def _row(self, key: str, slot: _Slot) -> tuple[str | int | None, ...]:
        """The `pending_writes` row of a slot (pendingwrites.INSERT's columns)."""
        temp = self._temp_name(slot.write, key)
        content = _content(slot.write)
        return (temp, slot.seq, key, content, slot.before, self._boot, slot.aside)

    def _flushed(self, path: str, row: str) -> None:
        """`row`'s write is durable on disk, and so is every older write of `path`: a row
        left behind would, at recovery, put an older content back."""
        rows = self._unflushed.get(path, [])
        if row not in rows:
            return
        upto = rows.index(row) + 1
        self._done.extend((done,) for done in rows[:upto])
        del rows[:upto]
        if not rows:
            del self._unflushed[path]

    def committed(self) -> None:
        """The statements are committed: the published rows are gone."""
        self._done.clear()

    def publish(self, max_lines: int = DEFAULT_FILE_LINES) -> dict[int, ToolError]:
        """Land every write of the batch at once (daemon/landing/exchange.py), hand the
        landed ones to the flusher, end the round. Returns the failures by reply index;
        the writes that met outside changes are left in `met` for the server to journal."""
        into = Landings()
        self.land_keys(self.begin(into), max_lines)
        self.met.extend(into.take_met())
        return into.failures

    def begin(self, into: Landings) -> list[str]:
        """After the commit: queue the batch's writes to land, their outcomes going
        `into`; removals first. The batch's keys."""
        keys = list(self._slots)
        order = sorted(keys, key=lambda key: self._slots[key].write.temp is not None)
        for key in order:
            self._queue[key] = _Queued(self._slots[key], into)
        self._slots = {}
        self.removes = False
        return keys

    def land(
        self, deadline: float, max_lines: int = DEFAULT_FILE_LINES, at_least_one: bool = True
    ) -> bool:
        """Land queued writes, oldest first, until `deadline` (time.monotonic), at least
        one unless told otherwise (removals too: the overlay serves their tombstones
        meanwhile); True when none is left."""
        flushing: list[Landing] = []
        landed = not at_least_one
        try:
            while self._queue:
                key, queued = next(iter(self._queue.items()))
                if landed and time.monotonic() >= deadline:
                    break
                landed = True
                del self._queue[key]
                self._land(key, queued, max_lines, flushing)
        finally:
            self._flusher.submit(flushing)
        return not self._queue

    def land_keys(self, keys: list[str], max_lines: int = DEFAULT_FILE_LINES) -> None:
        """Land now the queued writes of `keys` (a later batch writes over them)."""
        flushing: list[Landing] = []
        try:
            for key in keys:
                queued = self._queue.pop(key, None)
                if queued is not None:
                    self._land(key, queued, max_lines, flushing)
        finally:
            self._flusher.submit(flushing)

    def _land(self, key: str, queued: _Queued, max_lines: int, flushing: list[Landing]) -> None:
        """One write in place; its outcome goes to its batch's `Landings`."""
        try:
            self._land_one(key, queued, max_lines, flushing)
        finally:
            self._landed.append((key, queued.slot.seq))

    def _land_one(self, key: str, queued: _Queued, max_lines: int, flushing: list[Landing]) -> None:
        slot, into = queued.slot, queued.into
        try:
            landed = self._exchange(key, slot, max_lines)
        except ToolError as error:
            log.error("journaled write (seq %d) could not be renamed: %s", slot.seq, error)
            into.failures.update((owner, error) for owner in slot.owners)
            self._forget_overlay(key, slot)
            slot.write.close()
            return
        final = landed.carried or slot.write
        row = self._temp_name(slot.write, key)
        flushed = landed.carried is None and not landed.refused
        if flushed:
            name = None if slot.write.temp is None else slot.write.target.name
            flushing.append(Landing(slot.write.directory, name, key, row))
            self._unflushed.setdefault(key, []).append(row)
        else:  # nothing of ours to flush (refused), or carried: synced as it landed
            self._done.append((row,))
            slot.write.close()  # the flusher closes the directories it is handed
        if landed.observed:
            ours = None if slot.write.temp is None else slot.write.snapshot
            into.met.append(Met(key, ours, landed, slot.seq, slot.agent, slot.owners))
        if landed.carried is not None:
            landed.carried.close()
        if not landed.refused:
            self._note_own(key, final)
        self._forget_overlay(key, slot)

    def _exchange(self, key: str, slot: _Slot, max_lines: int) -> Landed:
        expected = (slot.before, slot.before_data)
        return land(self._workspace, key, slot.write, expected, (max_lines, slot.seq), slot.aside)

    def _forget_overlay(self, key: str, slot: _Slot) -> None:
        """The overlay stops serving `slot`'s content or tombstone (it is on disk now, or
        given up on), unless a later batch's write of the path has taken its place."""
        if self._workspace.overlay.get(key) is slot.shown:
            del self._workspace.overlay[key]

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
        """Nothing of the batch reaches the disk: every temp file is removed (writes
        committed and still landing are not the batch's: they land)."""
        for write in [*self._superseded, *(s.write for s in self._slots.values())]:
            write.discard()
        self._superseded.clear()
        self._end()

    def _end(self) -> None:
        """The batch's contents leave the overlay; a path still landing from an earlier
        batch is served that batch's content again."""
        overlay = self._workspace.overlay
        for key, slot in self._slots.items():
            if overlay.get(key) is slot.shown:
                queued = self._queue.get(key)
                if queued is not None:
                    overlay[key] = queued.slot.shown
                else:
                    del overlay[key]
        self._slots.clear()
        self.removes = False

    def _key(self, write: PreparedWrite) -> str:
        # `target` is where the write lands, already walked by the workspace (a removal:
        # the name given, never resolved); resolving it again could follow a swapped link.
        # The workspace built it as the root joined with real components: those after the
        # root's are the key (`relpath`, and even `str` of 5,000 paths, cost 0.1-0.3 s)
        parts = write.target.parts
        if parts[: len(self._root_parts)] == self._root_parts and ".." not in parts:
            return "/".join(parts[len(self._root_parts) :])
        return os.path.relpath(write.target, self._workspace.root)

    def _temp_name(self, write: PreparedWrite, key: str) -> str:
        if write.temp is None:
            return removal_key(key)
        head = posixpath.dirname(key)  # the temp file is beside its target
        return f"{head}/{write.temp.name}" if head else write.temp.name


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
