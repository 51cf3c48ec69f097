"""Landed writes made durable on disk after their reply, off the owner thread.

Why: an acknowledged write is durable once the journal's commit is (synchronous=FULL:
the write's event, its new content as a blob, and a `pending_writes` row naming it,
in one fsynced transaction). The file's own fsyncs (the new content, then its
directory, for the rename) no longer stand between the commit and the reply: this
thread does them after the landing, and only then is the write's row let go (the
owner removes it in its next commit). Until then the row says the write may be lost
to a power cut, and start-up recovery (daemon/landing/pendingwrites.py) rebuilds the
file from the journal's blob if it was. A kill -9 loses nothing either way: the
kernel's page cache holds what was renamed.

It also closes the files writes displaced once their late-write check is done
(daemon/files/latewrites.py): the last close of an unlinked file frees its inode,
which on ext4 costs about as much as an fsync, and need not hold the owner thread.

A landing whose fsync fails is retried (every `RETRY_S`, at most `MAX_ATTEMPTS`
times, its directory held open meanwhile); each failure, and the retry that
succeeds, is a notice the owner thread takes (`notices`) to publish on the PUB feed,
and `health` counts them for `status`. One given up on keeps its row: start-up
recovery finishes it from the journal's blob if a power cut took it.

What it must never do: report a write synced whose fsync failed (its row must stay
for recovery), or fsync through a path (the target's held directory fd is used, as
every landing step does, and the file is opened read-only without following links,
which the watcher does not see). It touches no state and no journal.
"""

from __future__ import annotations

import logging
import os
import queue
import threading
import time
from dataclasses import dataclass
from typing import Any

from editjournal.daemon.files.confined import DirHandle

log = logging.getLogger("editjournal")
_O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # a FIFO swapped in cannot hang the thread
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | _O_NOFOLLOW | _O_NONBLOCK
# how long a burst gathers: the window in which a power cut may take a landed file is
# this plus the fsyncs (the write stays durable in the journal all the while)
GATHER_S = 0.02
RETRY_S = 1.0  # between attempts of a landing whose fsync failed
MAX_ATTEMPTS = 30  # then given up on: its row stays, recovery finishes it after a crash
MAX_RETRYING = 1024  # landings held for a retry (each holds its directory's fd)


@dataclass(frozen=True)
class FlushNotice:
    """A landed write whose fsync failed (`retrying` or given up on), or that a retry
    made durable after failures: for the PUB feed (owner thread)."""

    path: str
    kind: str  # "flush_failed" or "flush_retried"
    attempts: int
    error: str | None  # the last failure's words


@dataclass
class FlushHealth:
    """What `status` shows of the flusher: failures, retries under way, gave up."""

    failures: int = 0  # fsyncs that failed, retries included
    retried_ok: int = 0  # landings a retry made durable
    retrying: int = 0  # landings waiting for their next attempt
    given_up: int = 0  # landings left to recovery after MAX_ATTEMPTS
    last_error: str | None = None


@dataclass(frozen=True)
class Landing:
    """A write in place, to be made durable: its held directory (the flusher closes
    it), the name it landed under (None: a removal, only the directory to sync), the
    file it is a write of (`path`, workspace-relative) and its `pending_writes` key."""

    directory: DirHandle
    name: str | None
    path: str
    key: str


_TICK = object()  # the flusher's wake-up for a due retry, with nothing new queued


@dataclass(frozen=True)
class _Release:
    """An fd to close (the last reference to an unlinked file)."""

    fd: int


class Flusher:
    """One thread that fsyncs landed files and their directories, a burst at a time.

    It gathers for `GATHER_S` after the first landing of a burst, then syncs: only the
    newest landing of each file (an older one was replaced by it: once the newest is
    durable, the write round lets the older rows go with its row; if it fails, every
    row of the file stays),
    and each directory once. Back-to-back edits of a file then cost one fsync of it
    and of its directory per burst, not per edit, and the thread takes the
    interpreter's lock once per burst, not once per write."""

    def __init__(self, enabled: bool = True) -> None:
        """`enabled` False: nothing is ever fsynced nor reported (the crash tests' power
        cut that came before any flush)."""
        self._enabled = enabled
        self._todo: queue.SimpleQueue[Landing | _Release | None] = queue.SimpleQueue()
        self._synced: queue.SimpleQueue[tuple[str, str]] = queue.SimpleQueue()
        self._idle = threading.Condition()
        self._outstanding = 0
        self._thread: threading.Thread | None = None
        # by key: the landing, its failed attempts, when the next is due (flusher thread)
        self._retrying: dict[str, tuple[Landing, int, float]] = {}
        self._notices: queue.SimpleQueue[FlushNotice] = queue.SimpleQueue()
        self._health = FlushHealth()
        self._health_lock = threading.Lock()

    def submit(self, landings: list[Landing]) -> None:
        if not landings:
            return
        if not self._enabled:
            for landing in landings:
                landing.directory.close()
            return
        self._put(landings)

    def release(self, fd: int) -> None:
        """Close `fd` on this thread (owner thread: LateWrites)."""
        if not self._enabled:
            os.close(fd)
            return
        self._put([_Release(fd)])

    def _put(self, items: list[Landing] | list[_Release]) -> None:
        with self._idle:
            self._outstanding += len(items)
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="flusher", daemon=True)
            self._thread.start()
        for item in items:
            self._todo.put(item)

    def synced(self) -> list[tuple[str, str]]:
        """(path, key) of each file's newest write made durable since the last call
        (owner thread): that file's older writes are durable with it."""
        keys: list[tuple[str, str]] = []
        while True:
            try:
                keys.append(self._synced.get_nowait())
            except queue.Empty:
                return keys

    def notices(self) -> list[FlushNotice]:
        """Failed fsyncs and successful retries since the last call (owner thread)."""
        found: list[FlushNotice] = []
        while True:
            try:
                found.append(self._notices.get_nowait())
            except queue.Empty:
                return found

    def health(self) -> dict[str, Any]:
        """For `status`: failed fsyncs, landings being retried and given up on."""
        with self._health_lock:
            h = self._health
            return {
                "failures": h.failures,
                "retried_ok": h.retried_ok,
                "retrying": h.retrying,
                "given_up": h.given_up,
                "last_error": h.last_error,
            }

    def settle(self, timeout: float = 30.0) -> bool:
        """Wait until everything submitted is flushed (a clean stop); False on timeout."""
        with self._idle:
            return self._idle.wait_for(lambda: self._outstanding == 0, timeout)

    def close(self) -> None:
        if self._thread is not None:
            self._todo.put(None)
            self._thread.join(timeout=30.0)
            self._thread = None

    def _run(self) -> None:
        while (first := self._next()) is not None:
            time.sleep(GATHER_S)  # the interpreter's lock is free meanwhile
            items = [] if first is _TICK else [first, *self._more()]
            landings = [item for item in items if isinstance(item, Landing)]
            released = [item.fd for item in items if isinstance(item, _Release)]
            try:
                self._flush_burst(landings)
            except Exception:  # never end the thread: its rows stay for recovery
                log.exception("landed writes could not be flushed; their rows stay")
            for fd in released:
                _close(fd)
            with self._idle:
                self._outstanding -= len(landings) + len(released)
                self._idle.notify_all()
            if items and items[-1] is None:
                return

    def _next(self) -> Landing | _Release | object | None:
        """The next item; `_TICK` when a retry is due and nothing came meanwhile."""
        if not self._retrying:
            return self._todo.get()
        due = min(when for _, _, when in self._retrying.values())
        try:
            return self._todo.get(timeout=max(0.0, due - time.monotonic()))
        except queue.Empty:
            return _TICK

    def _flush_burst(self, landings: list[Landing]) -> None:
        """Flush the burst with the landings waiting for a retry (a newer landing of the
        same file supersedes one), then note what failed and what a retry made durable."""
        now, paths = time.monotonic(), {landing.path for landing in landings}
        retried = {  # due, or superseded by a newer landing of its file (closed by _flush)
            key: (landing, n)
            for key, (landing, n, due) in self._retrying.items()
            if due <= now or landing.path in paths
        }
        for key in retried:
            del self._retrying[key]
        burst = [landing for landing, _ in retried.values()] + landings
        errors: dict[str, str] = {}
        synced = _flush(burst, errors)
        for path, key in synced:
            self._synced.put((path, key))
        done = {key for _, key in synced}
        for key, (landing, attempts) in retried.items():
            if key in done:
                self._note(FlushNotice(landing.path, "flush_retried", attempts, None))
        failed = [landing for landing in burst if landing.key in errors]
        for landing in failed:
            self._retry(landing, retried.get(landing.key, (landing, 0))[1] + 1, errors)
        with self._health_lock:
            self._health.failures += len(failed)
            self._health.retrying = len(self._retrying)
            if errors:
                self._health.last_error = next(reversed(errors.values()))

    def _retry(self, landing: Landing, attempts: int, errors: dict[str, str]) -> None:
        error = errors[landing.key]
        if attempts >= MAX_ATTEMPTS or len(self._retrying) >= MAX_RETRYING:
            landing.directory.close()
            with self._health_lock:
                self._health.given_up += 1
            log.error("%s: fsync given up after %d attempts; its row stays", landing.key, attempts)
        else:
            self._retrying[landing.key] = (landing, attempts, time.monotonic() + RETRY_S)
        if attempts == 1 or landing.key not in self._retrying:  # the first, and the last
            self._note(FlushNotice(landing.path, "flush_failed", attempts, error))

    def _note(self, notice: FlushNotice) -> None:
        if notice.kind == "flush_retried":
            with self._health_lock:
                self._health.retried_ok += 1
            log.info("%s: made durable on attempt %d", notice.path, notice.attempts + 1)
        self._notices.put(notice)

    def _more(self) -> list[Landing | _Release | None]:
        """What else is queued: one pass syncs a burst's writes together."""
        more: list[Landing | _Release | None] = []
        while True:
            try:
                item = self._todo.get_nowait()
            except queue.Empty:
                return more
            more.append(item)
            if item is None:
                return more


def _flush(landings: list[Landing], errors: dict[str, str]) -> list[tuple[str, str]]:
    """fsync the newest landing of each file, then each directory once; (path, key) of
    each newest landing now durable. Closes them all, but those that failed (their key
    in `errors`, with why: held open for a retry)."""
    newest: dict[str, Landing] = {}
    for landing in landings:
        replaced = newest.get(landing.path)
        if replaced is not None:
            replaced.directory.close()
        newest[landing.path] = landing
    synced_files = [
        landing
        for landing in newest.values()
        if landing.name is None or _fsync_file(landing, errors)  # else retried
    ]
    directories: dict[tuple[int, int], str | None] = {}
    keys: list[tuple[str, str]] = []
    for landing in synced_files:
        if _directory_synced(landing, directories, errors):
            keys.append((landing.path, landing.key))
    for landing in newest.values():
        if landing.key not in errors:
            landing.directory.close()
    return keys


def _directory_synced(
    landing: Landing, done: dict[tuple[int, int], str | None], errors: dict[str, str]
) -> bool:
    """fsync the landing's directory unless this burst already did (by device, inode)."""
    try:
        info = os.fstat(landing.directory.fd)
    except OSError as e:
        log.warning("a landed write's directory is gone (%s): %s", landing.key, e)
        return False
    which = (info.st_dev, info.st_ino)
    if which not in done:
        done[which] = _fsync_directory(landing)
    if done[which] is not None:
        errors[landing.key] = f"fsync of its directory: {done[which]}"
    return done[which] is None


def _fsync_file(landing: Landing, errors: dict[str, str]) -> bool:
    assert landing.name is not None
    try:
        fd = os.open(landing.name, _OPEN_FLAGS, dir_fd=landing.directory.fd)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    except FileNotFoundError:  # replaced or removed since: nothing of this write to sync
        return True
    except OSError as e:
        log.warning("a landed write's file could not be fsynced (%s): %s", landing.key, e)
        errors[landing.key] = f"fsync: {e}"
        return False
    return True


def _fsync_directory(landing: Landing) -> str | None:
    """None when the directory is durable; else why not."""
    try:
        os.fsync(landing.directory.fd)
    except OSError as e:
        log.warning("a landed write's directory could not be fsynced (%s): %s", landing.key, e)
        return str(e)
    return None


def _close(fd: int) -> None:
    try:
        os.close(fd)
    except OSError as e:
        log.warning("a displaced file's fd could not be closed: %s", e)
