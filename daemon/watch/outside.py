"""Turning "something happened at this path" into `outside_change` events.

Runs on the daemon's one thread, fed by the watcher's messages, by the
start-up check and by rescans. It decides by content hash, never by timing:
a path whose bytes hash to what the state already holds produced no event —
which is how the daemon's own writes, however slow the file system, never
show up as outside changes. Files an agent has read or written (tracked) get
their new content stored as a blob; other files get lightweight events (path,
change, size, hash) so a big workspace's churn does not fill the journal.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from editjournal.daemon.files.filesnapshot import Fingerprint
from editjournal.daemon.files.workspace import Workspace
from editjournal.daemon.model.state import FileInfo, State
from editjournal.daemon.settings.limits import DEFAULT_FILE_LINES, count_lines
from editjournal.daemon.watch.ignore import Ignorer
from editjournal.daemon.watch.listing import list_directory
from editjournal.schemas.events import OutsideChangeRecorded


@dataclass
class Observation:
    """Events to record and the blobs they refer to."""

    events: list[OutsideChangeRecorded] = field(default_factory=list)
    blobs: dict[str, bytes] = field(default_factory=dict)

    def extend(self, other: Observation) -> None:
        self.events.extend(other.events)
        self.blobs.update(other.blobs)


class OutsideObserver:
    """Compares the workspace with the state; owned by the daemon's thread."""

    def __init__(
        self, workspace: Workspace, ignorer: Ignorer, max_lines: int = DEFAULT_FILE_LINES
    ) -> None:
        self.workspace = workspace
        self.ignorer = ignorer
        self.max_lines = max_lines  # a longer file is treated like one over the size limit
        # (size, mtime_ns) when a path was last hashed: a rescan skips what did not move
        self.stat_cache: dict[str, tuple[int, int]] = {}
        # files already there when watching began that the journal does not know, with
        # their (size, mtime_ns): so a rescan does not call every one of them "created"
        self.unseen: dict[str, tuple[int, int]] = {}

    def note_unseen(self, state: State) -> None:
        """Remember what the workspace holds beyond the journal's files, by stat only."""
        self.unseen = {
            rel: (size, mtime_ns)
            for rel, size, mtime_ns in self._walk("")
            if rel not in state.files
        }

    def observe(
        self, state: State, rel: str, tracked_hint: bool = False, defer: bool = True
    ) -> Observation:
        """One path: created, modified or deleted, if its content differs from the state's.
        A change observed while an agent's shell windows are open waits in them (their
        close journals it as the agent's: daemon/files/shellwindows.py); `defer` False:
        journaled as an outside change now whatever is open."""
        found = self._observe(state, rel, tracked_hint)
        windows = self.workspace.harness_writes.windows
        if not (defer and len(found.events) == 1 and windows.any_open):
            return found
        event = found.events[0]
        data = found.blobs.get(event.new_sha256) if event.new_sha256 else None
        return Observation() if windows.take(rel, event, data) else found

    def _observe(self, state: State, rel: str, tracked_hint: bool) -> Observation:
        known = state.files.get(rel)
        if known is not None and (own := self.workspace.own_writes.unchanged(rel, known.sha256)):
            self.stat_cache[rel] = (own[2], own[3])  # the daemon's own write: nothing to see
            return Observation()
        found = self._fingerprint(rel)
        if self._announced(rel, known, found):
            return Observation()  # an agent's announced write: its claim journals it
        existed = known is None and self.unseen.pop(rel, None) is not None
        if found is None:
            if known is not None and known.sha256 is not None:
                return Observation([_gone(rel, known.sha256, known.tracked)])
            return Observation([_gone(rel, None, False)] if existed else [])
        if known is not None and known.sha256 == found.sha256:
            return Observation()
        tracked = known.tracked if known is not None else tracked_hint
        old_sha = known.sha256 if known else None
        lines = count_lines(found.text) if found.text is not None else None
        if lines is not None and lines > self.max_lines:
            lines = None  # the daemon will not serve it: its content is not stored either
        existed = existed or old_sha is not None
        return _changed(rel, old_sha, found, lines, tracked, existed=existed)

    def _announced(self, rel: str, known: FileInfo | None, found: Fingerprint | None) -> bool:
        """A change that holds a write a harness hook announced (check_write): its claim
        journals it in a moment, split between the agent and whoever else wrote there.
        Anything else is looked at now, announced or not (daemon/files/harnesswrites.py)."""
        if found is None or (known is not None and known.sha256 == found.sha256):
            return False
        return self.workspace.harness_writes.defers(rel, found.sha256, found.text)

    def observe_move(self, state: State, src: str, dest: str) -> Observation:
        """A rename: the source is `moved` (if it was known); the destination is observed
        and inherits tracking, so an agent's file keeps its history under its new name."""
        known = state.files.get(src)
        result = Observation()
        unknown = known is None and src not in self.unseen  # e.g. the daemon's temp file
        if not unknown and not self._still_our_write(src, known) and self._fingerprint(src) is None:
            if known is not None and known.sha256 is not None:
                result.events.append(_gone(src, known.sha256, known.tracked, moved_to=dest))
            elif known is None and self.unseen.pop(src, None) is not None:
                result.events.append(_gone(src, None, False, moved_to=dest))
        if not self.ignorer.ignored(dest):
            # a temp file renamed over `dest` (sed -i, an atomic save) is a change of dest a
            # shell window may credit; a known file moved there is a move: outside
            hint = bool(known and known.tracked)
            result.extend(self.observe(state, dest, tracked_hint=hint, defer=unknown))
        return result

    def _still_our_write(self, rel: str, known: FileInfo | None) -> bool:
        """Whether `rel` is still, by its stat, the daemon's own last write of it: a
        rename the daemon made (its write landing by exchange) names the written path as
        a source, and that path is not gone — a stat says so without reading and hashing
        the file (which cost a write a quarter of a millisecond on the daemon's thread)."""
        if known is None or known.sha256 is None:
            return False
        return self.workspace.own_writes.unchanged(rel, known.sha256) is not None

    def changed_below(self, state: State, below: str = "") -> list[str]:
        """Paths under `below` that may have changed: every file whose size or mtime
        differs from the last look (or was never looked at), and every known file that
        is gone. For rescans after lost events, and for directories created or moved."""
        walk = self.walk(state, below)
        candidates: list[str] = []
        while not walk.done:
            candidates += walk.step()
        return candidates

    def walk(self, state: State, below: str = "") -> Walk:
        """`changed_below`, a directory at a time (`Walk.step`)."""
        return Walk(self, state, below)

    def _fingerprint(self, rel: str) -> Fingerprint | None:
        found = self.workspace.fingerprint(rel)
        if found is None:
            self.stat_cache.pop(rel, None)
        else:
            self.stat_cache[rel] = (found.size, found.mtime_ns)
        return found

    def _changed(self, state: State, rel: str, size: int, mtime_ns: int) -> bool:
        last_look = self.stat_cache.get(rel) or self.unseen.get(rel)
        return last_look != (size, mtime_ns) or (rel not in state.files and rel not in self.unseen)

    def _walk(self, below: str) -> list[tuple[str, int, int]]:
        """(path, size, mtime_ns) of every regular, not-ignored file under `below`
        (symbolic links followed for files, not for directories, as `os.walk` does).
        One scandir per directory: its entries carry their type, so only files cost a stat.
        """
        found: list[tuple[str, int, int]] = []
        pending = [below.strip("/")]
        while pending:
            files, subdirs = self._list(pending.pop())
            found += files
            pending += subdirs
        return found

    def _list(self, base: str) -> tuple[list[tuple[str, int, int]], list[str]]:
        """One directory: (path, size, mtime_ns) of its regular, not-ignored files
        (symbolic links followed for files), and its not-ignored subdirectories."""
        files, subdirs = list_directory(self.workspace.root, base, self.ignorer, file_links=True)
        return [(rel, info.st_size, info.st_mtime_ns) for rel, info in files], subdirs


def _gone(
    rel: str, old_sha: str | None, tracked: bool, moved_to: str | None = None
) -> OutsideChangeRecorded:
    """`old_sha` None: a file the journal never knew, but that was there when watching began."""
    return OutsideChangeRecorded(
        path=rel,
        change="moved" if moved_to else "deleted",
        old_sha256=old_sha,
        new_sha256=None,
        moved_to=moved_to,
        content_stored=tracked,
    )


def _changed(
    rel: str,
    old_sha: str | None,
    found: Fingerprint,
    lines: int | None,
    tracked: bool,
    existed: bool,
) -> Observation:
    """`existed` without `old_sha`: a file that was there, unknown, when watching began.
    `lines` None: not text the daemon serves (binary, or over the size or line limit)."""
    store = tracked and lines is not None
    event = OutsideChangeRecorded(
        path=rel,
        change="modified" if existed else "created",
        old_sha256=old_sha,
        new_sha256=found.sha256,
        size=found.size,
        line_count=lines,
        content_stored=store,
    )
    return Observation([event], {found.sha256: found.data} if store else {})


class Walk:
    """One subtree's look for changes, a directory per `step`, so that a big tree (or a
    flood of moves of one) never holds the daemon's thread for long (daemon/watch/intake.py).
    The files known under it are indexed by directory once, at the start: each step
    reports its directory's changed files and its known files that are gone; the known
    files of directories never reached (gone, or ignored now) come with the last step."""

    def __init__(self, observer: OutsideObserver, state: State, below: str) -> None:
        self._observer, self._state = observer, state
        self.below = below.strip("/")
        self.spent = 0.0  # seconds of steps so far (a whole rescan reports it)
        self._pending = [self.below]
        prefix = self.below + "/" if self.below else ""
        self._known: dict[str, list[str]] = {}
        tracked = (rel for rel, info in state.files.items() if info.sha256 is not None)
        for rel in (*tracked, *observer.unseen):
            if rel.startswith(prefix):
                self._known.setdefault(rel.rpartition("/")[0], []).append(rel)

    @property
    def done(self) -> bool:
        return not self._pending

    def step(self) -> list[str]:
        """The paths of the next directory that may have changed."""
        base = self._pending.pop()
        files, subdirs = self._observer._list(base)
        self._pending += subdirs
        state, observer = self._state, self._observer
        candidates = [
            rel for rel, size, mtime in files if observer._changed(state, rel, size, mtime)
        ]
        present = {rel for rel, _, _ in files}
        candidates += [rel for rel in self._known.pop(base, ()) if rel not in present]
        if not self._pending:  # directories never reached: their known files are gone
            candidates += [rel for rels in self._known.values() for rel in rels]
            self._known.clear()
        return candidates
