"""The daemon's in-memory projection of the journal.

What it holds: the files the daemon knows (current content hash, version =
the seq at which that content was first seen, size, line count) and, for each
(agent, path), the snapshot that agent last saw. What it must never do:
change except through `apply(record)`. So `fold(journal.records())` rebuilds
exactly the state a live daemon has, which is what makes replay, audit and
crash recovery honest.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field

import msgspec

from editjournal.daemon.model.checkpointbook import CheckpointBook
from editjournal.daemon.model.hunkbook import HunkBook
from editjournal.daemon.model.idempotency import Answers
from editjournal.schemas.events import (
    CHECKPOINT_EVENTS,
    HUNK_EVENTS,
    DaemonStarted,
    DaemonStopped,
    EditApplied,
    EditRejected,
    FileRead,
    OutsideChangeRecorded,
    Record,
    RequestAnswered,
)


@dataclass(frozen=True, slots=True)
class FileInfo:
    """What the journal last established about one file's content."""

    path: str
    sha256: str | None  # None: the file was deleted
    version: int  # seq of the event at which this content was first seen
    size: int
    line_count: int
    last_seq: int  # seq of the latest event about this file
    writers: tuple[str, ...] = ()  # every writer that ever changed it: "edit", "outside", ...
    tracked: bool = True  # an agent read or wrote it: its contents are kept in the journal

    @property
    def baseline_continuity(self) -> str:
        """ "clean" while one writer type wrote the file, "mixed" once a second one did."""
        return "clean" if len(set(self.writers)) <= 1 else "mixed"


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The content an agent last saw of a file; `lines` None means all of it."""

    agent: str
    path: str
    version: int  # seq of the read (or the agent's own write) that showed it
    sha256: str
    lines: tuple[int, int] | None
    # Lines of this content the agent has not been shown (1-based, inclusive ranges):
    # its anchors must not rely on them. Empty after a full read.
    unseen: tuple[tuple[int, int], ...] = ()
    # The last (version, sha256) at which the agent had been shown every line: what
    # explains, when an edit relies on unseen lines, who changed them since.
    full_view: tuple[int, str] | None = None


@dataclass
class State:
    """The fold of every event so far."""

    files: dict[str, FileInfo] = field(default_factory=dict)
    snapshots: dict[tuple[str, str], Snapshot] = field(default_factory=dict)
    hunks: HunkBook = field(default_factory=HunkBook)  # prepared hunks (daemon.model.hunkbook)
    checkpoints: CheckpointBook = field(default_factory=CheckpointBook)
    answers: Answers = field(default_factory=Answers)  # keyed replies (daemon.model.idempotency)
    last_seq: int = 0
    event_count: int = 0
    # the digest and the (last_seq, event_count) it was computed at: a cache, so no
    # snapshot holds it (statesnap's shape leaves out "_" fields) and no comparison sees it
    _digest_kept: tuple[tuple[int, int], str] | None = field(
        default=None, init=False, repr=False, compare=False
    )

    def apply(self, record: Record) -> None:
        """The only way state changes: fold one committed (or staged) event in."""
        if record.seq != self.last_seq + 1:
            raise ValueError(f"event {record.seq} applied after {self.last_seq}: out of order")
        event = record.event
        if isinstance(event, FileRead):
            self._apply_read(record, event)
        elif isinstance(event, EditApplied):
            self._apply_write(record, event)
        elif isinstance(event, OutsideChangeRecorded):
            self._apply_outside(record, event)
        elif isinstance(event, EditRejected):
            self._apply_rejection(record, event)
        elif isinstance(event, HUNK_EVENTS):
            self.hunks.apply(record)
        elif isinstance(event, CHECKPOINT_EVENTS):
            self.checkpoints.apply(record)
        elif isinstance(event, RequestAnswered):
            self.answers.apply(record, event)
        elif not isinstance(event, (DaemonStarted, DaemonStopped)):
            raise TypeError(f"state does not know how to apply {event.kind}")
        self.last_seq = record.seq
        self.event_count += 1

    def _apply_read(self, record: Record, event: FileRead) -> None:
        self._observe_content(record.seq, event.path, event.sha256, event.size, event.line_count)
        self._see(record, event.path, event.sha256, event.lines, event.unseen)

    def _apply_write(self, record: Record, event: EditApplied) -> None:
        """A tool's write: new content, a writer, and the writer's own snapshot. The
        writer saw its own deletion (or move away) too: it keeps no view of content that
        is gone, as before it first saw the file, or it would be told the file it just
        removed (undoing its own new file, say) changed since it read it."""
        sha, size, lines = event.content_sha256, event.size, event.line_count
        self._observe_content(record.seq, event.path, sha, size, lines, event.writer)
        if sha is not None:
            self._see(record, event.path, sha, None, event.unseen)
        elif record.agent is not None:
            self.snapshots.pop((record.agent, event.path), None)

    def _apply_rejection(self, record: Record, event: EditRejected) -> None:
        """A rejection that showed the agent the current content (a delta) is a read."""
        if event.shown_sha256 is not None:
            self._see(record, event.path, event.shown_sha256, None, event.unseen)

    def _see(
        self,
        record: Record,
        path: str,
        sha256: str,
        lines: tuple[int, int] | None,
        unseen: list[tuple[int, int]],
    ) -> None:
        """The agent's snapshot moves to `sha256`, minus the lines it was not shown."""
        if record.agent is None:
            return
        key = (record.agent, path)
        previous = self.snapshots.get(key)
        full_view = previous.full_view if previous is not None else None
        if not unseen:
            full_view = (record.seq, sha256)
        ranges = tuple((start, end) for start, end in unseen)
        self.snapshots[key] = Snapshot(
            record.agent, path, record.seq, sha256, lines, ranges, full_view
        )

    def _apply_outside(self, record: Record, event: OutsideChangeRecorded) -> None:
        known = self.files.get(event.path)
        self._observe_content(
            record.seq,
            event.path,
            event.new_sha256,
            event.size or 0,
            event.line_count or 0,
            "outside",
            tracked=known.tracked if known else event.content_stored,
        )

    def _observe_content(
        self,
        seq: int,
        path: str,
        sha256: str | None,
        size: int,
        lines: int,
        writer: str | None = None,
        tracked: bool = True,
    ) -> None:
        """A new content hash starts a new version; the same one keeps the old version."""
        known = self.files.get(path)
        version = known.version if known and known.sha256 == sha256 else seq
        writers = known.writers if known else ()
        if writer is not None and writer not in writers:
            writers = tuple(sorted((*writers, writer)))
        self.files[path] = FileInfo(path, sha256, version, size, lines, seq, writers, tracked)

    def agents(self) -> set[str]:
        return {agent for agent, _ in self.snapshots}

    def digest(self) -> str:
        """A hash of the whole projection: live state and a fold must agree on it. Kept
        for the position it was computed at: only `apply` changes a state, and it moves
        `last_seq` (a `status` asked it anew each time, O(files): 50 ms and more while
        a test or a dashboard polled a daemon watching thousands of files)."""
        at = (self.last_seq, self.event_count)
        if self._digest_kept is not None and self._digest_kept[0] == at:
            return self._digest_kept[1]
        value = self._digest()
        self._digest_kept = (at, value)
        return value

    def _digest(self) -> str:
        canonical: tuple[object, ...] = (
            self.last_seq,
            self.event_count,
            sorted(self.files.values(), key=lambda f: f.path),
            sorted(self.snapshots.values(), key=lambda s: (s.agent, s.path)),
        )
        if self.hunks.hunks:  # (a journal without hunks keeps the digest it had)
            canonical = (*canonical, self.hunks.canonical())
        if self.checkpoints.by_id:  # (likewise for a journal without checkpoints)
            canonical = (*canonical, self.checkpoints.canonical())
        return hashlib.blake2b(msgspec.msgpack.encode(canonical), digest_size=16).hexdigest()


def fold(records: Iterable[Record]) -> State:
    """Rebuild the state from the journal, as the daemon does at start-up."""
    state = State()
    for record in records:
        state.apply(record)
    return state
