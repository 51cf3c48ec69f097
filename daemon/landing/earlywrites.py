"""Temp files of a many-file write, written while its job plans it, before its commit.

A restore of 5,000 files spent most of its one long step creating temp files (about
1 ms each on ext4 here: 6.1 s of the 9 s profiled). A `PlanJob`'s slices hand back
the writes each file's plan makes (`Progress.writes`); the job runner prepares their
temp files in the same slice (daemon/runtime/jobs.py), and the final run's
`Server._prepare` takes the one of each path whose content it still writes.

Why this is safe: a temp file is invisible (`.editjournal-tmp-*`: the watcher, the
tree walk and `git add -A` of a user's ignore rules never take it) and journaled
nowhere until the commit; a kill -9 before the commit leaves only such files, which
start-up removes after an unclean stop. A path planned again (someone wrote it
meanwhile) gets a new temp file, the old one removed. Before one is taken its target
and directory are looked at again (two stats through held fds): a file that changed,
became read-only, a link, hard-linked, owned by another, or a directory moved or
swapped since the temp file was made is prepared afresh by the full checks.

The final run also makes sure no file changed on disk since its plan read it
(`Server._unchanged_since_read`: a read and a hash of each, 0.75 s of a 5,000-file
restore). That read is done here, in the slice, right after the temp file: a file
found holding what its plan was made on, whose stat then says it was last changed
more than `RACY_NS` before (so a later change must move its mtime or ctime), and
whose stat is the same when its temp file is taken, is `unchanged` by stat alone.
A file changed within that window when its temp file was made is looked at again in
a later slice (`prepare`, `REVERIFY_S` of each): its stat still the same and now old
enough, it is read and hashed there, not in the final run (a restore begun right after
the files changed: 318 of 1,000 files read again in the final run, ~60 ms).

A planned removal (`data` None) is prepared here too: `Workspace.prepare_delete`'s
checks (the path judged, the confined walk to its directory, held, the file's stat
and mode), then the same look and read as a content write's target, so the final run
takes it by the same two stats (1,000 removals: ~0.35 s of checks and ~0.15 s of
reads out of the final turn). It has no temp file: it holds its directory's fd, as a
temp file does, and nothing more.

What it must never do: hand over a temp file whose bytes are not exactly the final
run's, a removal for a content write or the other way round, or one whose checks may
have changed; keep a temp file (or a held directory) past the request (`discard`).
"""

from __future__ import annotations

import os
import time
from collections import deque
from collections.abc import Iterable
from typing import NamedTuple, Protocol

from editjournal.daemon.files import held
from editjournal.daemon.files.preparedwrite import PreparedWrite
from editjournal.daemon.files.statcache import RACY_NS
from editjournal.daemon.files.workspace import Workspace
from editjournal.schemas.errors import ToolError

REVERIFY_S = 0.01  # of each slice, for files found changed too recently when prepared


class Write(Protocol):
    """What a planned write must say here (`contract.outcome.Write`, which `landing/`
    does not import: it stands below `contract/`)."""

    @property
    def path(self) -> str: ...
    @property
    def data(self) -> bytes | None: ...  # None: a removal
    @property
    def sha256(self) -> str | None: ...
    @property
    def based_on(self) -> str | None: ...  # the content the plan read (ABSENT: no file)


class _Seen(NamedTuple):
    """What the checks of `prepare_write` were made on: the target (None: no file) and
    the held directory, as stats compare them."""

    target: tuple[int, ...] | None
    directory: tuple[int, int]


class _Early(NamedTuple):
    ready: PreparedWrite
    seen: _Seen
    verified: bool  # the target held what the plan was based on, and its stat is not racy
    where: _Where  # its target's directory and name, as strings: looked at again when taken
    based_on: str | None  # what the plan read (`Write.based_on`)


class _Where(NamedTuple):
    """A target's directory path and name, made once (`Path.parent` builds a new path
    each time: 5,000 of them were a measurable part of a restore's final run)."""

    parent: str
    name: str

    @classmethod
    def of(cls, ready: PreparedWrite) -> _Where:
        return cls(os.fspath(ready.target.parent), ready.target.name)


class EarlyWrites:
    """The temp files prepared for one parked request, by the path its plan named."""

    def __init__(self, racy_ns: int = RACY_NS) -> None:
        """`racy_ns`: how long before a look a file's last change must be for its stat to
        vouch for it (the coarsest timestamps of the file systems it may be on)."""
        self._racy_ns = racy_ns
        self._by_path: dict[str, _Early] = {}
        # paths taken whose file is still what their plan read, by stat (see above), and
        # what that was: a request planned again must be planned on that same content
        self.unchanged: dict[str, str] = {}
        # what each directory's path leads to, looked at once per slice or final run
        self._dirs: dict[str, tuple[int, int] | None] = {}
        self._taking = False
        self._racy: deque[str] = deque()  # paths not verified for a stat too recent

    def __len__(self) -> int:
        return len(self._by_path)

    def prepare(self, workspace: Workspace, writes: Iterable[Write]) -> None:
        """A temp file for each write of new content, a removal's checks for each removal.
        One that cannot be prepared is left to the final run, whose own prepare refuses it."""
        self._dirs, self._taking = {}, False
        for write in writes:
            self._drop(write.path)
            try:
                ready = _prepared(workspace, write)
            except ToolError:
                continue
            where = _Where.of(ready)
            seen = _seen(ready, where, self._dirs)
            if seen is None:
                ready.discard()
                continue
            verified = _verified(ready, seen, write.based_on, self._racy_ns)
            self._by_path[write.path] = _Early(ready, seen, verified, where, write.based_on)
            if not verified and write.based_on is not None:
                self._racy.append(write.path)
        self._verify_again(time.monotonic() + REVERIFY_S)

    def _verify_again(self, deadline: float) -> None:
        """Verify, until `deadline`, the files whose stat was too recent when their temp
        file was made, oldest first: a stat still the same and now old enough, and the
        content read after it what the plan read. One still too recent ends the look
        (those after it were prepared later)."""
        while self._racy and time.monotonic() < deadline:
            path = self._racy[0]
            early = self._by_path.get(path)
            if early is None or early.verified:
                self._racy.popleft()
                continue
            seen = _seen(early.ready, early.where, self._dirs, early.seen.directory)
            if seen != early.seen:  # changed since: the final run's checks decide
                self._racy.popleft()
                continue
            if _racy(seen, self._racy_ns):
                return
            self._racy.popleft()
            if _verified(early.ready, seen, early.based_on, self._racy_ns):
                self._by_path[path] = early._replace(verified=True)

    def take(self, write: Write) -> PreparedWrite | None:
        """The temp file of `write` when it holds exactly its bytes and nothing its
        checks looked at has changed since; else None (and it is removed)."""
        early = self._by_path.pop(write.path, None)
        if early is None:
            return None
        if not self._taking:  # the final run: directories looked at afresh, once each
            self._dirs, self._taking = {}, True
        ready = early.ready
        if write.data is None:  # a removal's, for a removal (it has no temp file)
            same = ready.temp is None
        else:
            same = ready.temp is not None and ready.snapshot.data == write.data
        if not same or _seen(ready, early.where, self._dirs, early.seen.directory) != early.seen:
            ready.discard()
            return None
        if write.data is not None and write.sha256 and ready.snapshot.sha256 != write.sha256:
            ready.discard()
            return None
        if early.verified and write.based_on is not None and write.based_on == early.based_on:
            self.unchanged[write.path] = write.based_on
        return ready

    def discard(self) -> None:
        """Every temp file not taken is removed (the request is answered, or failed)."""
        for early in self._by_path.values():
            early.ready.discard()
        self._by_path.clear()
        self._racy.clear()
        self.unchanged.clear()

    def _drop(self, path: str) -> None:
        early = self._by_path.pop(path, None)
        if early is not None:
            early.ready.discard()


def _prepared(workspace: Workspace, write: Write) -> PreparedWrite:
    """`write` prepared as the final run's `Server._prepare` would: a temp file of its
    content, or a removal's checks (its file and held directory, no temp file)."""
    if write.data is None:
        return workspace.prepare_delete(write.path)
    return workspace.prepare_write(write.path, write.data, durable=False, sha256=write.sha256)


def _seen(
    ready: PreparedWrite,
    where: _Where,
    dirs: dict[str, tuple[int, int] | None],
    held_id: tuple[int, int] | None = None,
) -> _Seen | None:
    """The target's stat (through the held directory, not following a link) and the
    held directory's identity, which must still be what its path leads to (`dirs`:
    each path's, looked at once); None when it no longer is (then the full checks
    decide). `held_id`: the held directory's, already known (an open fd's inode
    never changes)."""
    parent = where.parent
    if parent not in dirs:
        try:
            info = os.stat(parent)
            dirs[parent] = (info.st_dev, info.st_ino)
        except OSError:
            dirs[parent] = None
    if held_id is None:
        try:
            directory = os.fstat(ready.directory.fd)
        except OSError:
            return None
        held_id = (directory.st_dev, directory.st_ino)
    if held_id != dirs[parent]:
        return None
    try:
        info = os.stat(where.name, dir_fd=ready.directory.fd, follow_symlinks=False)
    except FileNotFoundError:
        return _Seen(None, held_id)
    except OSError:
        return None
    target = (
        *(info.st_dev, info.st_ino, info.st_mode, info.st_nlink, info.st_uid, info.st_gid),
        *(info.st_size, info.st_mtime_ns, info.st_ctime_ns),
    )
    return _Seen(target, held_id)


def _verified(ready: PreparedWrite, seen: _Seen, based_on: str | None, racy_ns: int) -> bool:
    """The target, read after `seen` was taken, holds what the plan was based on, and
    `seen` is old enough that any change since must show in the stat."""
    if based_on is None or _racy(seen, racy_ns):
        return False
    try:
        return held.content_sha(ready.directory.fd, ready.target.name) == based_on
    except OSError:
        return False


def _racy(seen: _Seen, racy_ns: int) -> bool:
    """The target's last change is too recent for its stat to vouch for its content."""
    if seen.target is None:
        return False
    changed_ns = max(seen.target[-2], seen.target[-1])  # mtime, ctime
    return changed_ns >= time.time_ns() - racy_ns
