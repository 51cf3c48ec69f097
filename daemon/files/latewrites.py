"""Writes that reach a file after a write displaced it: held open, checked after a grace.

When a write lands (daemon/landing/exchange.py) the file it displaces is compared and, if
it holds what the write was planned against, removed. But a process may have
opened that file just before (`open(path, "a")`, `echo >> path`) and write a
moment after the comparison: its bytes would go into an unlinked inode, lost.
So a displaced file is not simply unlinked: its name goes, an fd stays open on
it, and after a grace period the daemon looks again (one `fstat`). Unchanged, it
is closed. Changed, its new content is handed to the server, which carries the
late bytes into the file (an append is appended; anything else is merged, or
kept beside the file when it conflicts) and journals them (daemon/runtime/server.py).

A grace alone loses a line when the writer is descheduled between its `open` and
its `write` for longer than the grace (seen: 1 line in 771, in 3 runs of 6). So at
the grace check the daemon asks the kernel whether anyone still has the inode open
for writing: a read lease (`fcntl(F_SETLEASE, F_RDLCK)`) can only be placed on a
file nobody has open for writing, and an unlinked file can be opened again by
nobody. While a writer holds it, the file stays held: what was written so far is
taken in (handed to the server like any late write) every `GRACE_S`, and the final
check comes once the last writer closed — so no byte written through an fd opened
before the swap is lost, however long the writer sleeps. Where a lease cannot be
taken (EINVAL: a file system without them; EACCES: a file owned by another user than
the daemon's) the daemon asks /proc which processes have the inode open for writing
(`proc_writers`); only writers /proc hides from it (another user's
processes when the daemon is not root, another PID namespace) are left to the grace.

Bounded: at most `bound` fds, a quarter of the daemon's open-file limit
(daemon/runtime/fdlimit.py: 256 at the usual 1,024); past that the oldest are let go
early, writers or not, and each such early let-go is counted in `status` and logged.
At a clean stop every held file is taken in once more and let go; one still open for
writing is named in the log (what its writer writes after the stop is lost, as after a
kill -9 for every held file: an unlinked inode cannot be found again). Daemon thread
only.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import logging
import os
import signal
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

try:
    import resource
except ImportError:  # Windows: no rlimits
    resource = None  # type: ignore[assignment]

GRACE_S = 0.5
WARN_EVERY_S = 60.0  # early let-goes are logged at most this often (all are counted)
_CHUNK = 1024 * 1024
HELD_SHARE = 4  # displaced files held: at most 1/HELD_SHARE of the open-file limit
HELD_MIN, HELD_MAX = 64, 4096
SCAN_EVERY_S = GRACE_S  # a /proc scan is reused this long (each file is looked at once a grace)
_DELETED = " (deleted)"
_ACCESS = getattr(os, "O_ACCMODE", 3)
_leases = True  # False only in tests: every lease "unavailable", so /proc is asked
log = logging.getLogger("editjournal")


def refuse_leases() -> None:
    """Tests only (`--no-leases`): behave as on a file system without leases, so the
    /proc path is the one taken (it is then real: the same scan as in production)."""
    global _leases
    _leases = False


@dataclass(frozen=True, slots=True)
class Held:
    """An unlinked displaced file, still open, and what it held when it was judged."""

    fd: int
    key: str  # the real workspace-relative path it was displaced from
    base: bytes  # its content when judged
    size: int
    mtime_ns: int
    seq: int  # the event of the write that displaced it
    due: float  # monotonic time of the check


@dataclass(frozen=True, slots=True)
class Late:
    """A displaced file written to after it was judged: `data` is what it holds now."""

    key: str
    base: bytes
    data: bytes
    seq: int


class LateWrites:
    """The displaced files held open until nobody can write into them any more."""

    def __init__(self, limit: int, bound: int | None = None) -> None:
        """`bound`: how many files may be held at once; None: from the open-file limit
        as it is at the first hold (the server raises it after the workspace is made)."""
        _ignore_lease_breaks()
        self._held: deque[Held] = deque()
        self._bound = bound
        self._proc = ProcScan()
        self.kept_for_writers = 0  # grace checks that found a writer still there
        self.taken_in = 0  # changes taken in while a writer still held the file
        self.let_go_early = 0  # let go before their grace was over, to keep the bound
        self.let_go_with_writers = 0  # ... while a writer still had them open
        self.open_at_stop = 0  # still open for writing when a clean stop let them go
        self._warned_at = float("-inf")
        self._limit = limit  # a file grown past the size limit is read no further
        # closes a checked file: its last close frees the unlinked inode, which costs
        # about an fsync on ext4; the server hands it to another thread (`release_with`)
        self._release: Callable[[int], None] = os.close

    def release_with(self, release: Callable[[int], None]) -> None:
        self._release = release

    def __len__(self) -> int:
        return len(self._held)

    @property
    def bound(self) -> int:
        if self._bound is None:
            self._bound = held_files_bound()
        return self._bound

    def hold(
        self, directory: int, name: str, by: tuple[str, int], base: bytes, changed: bool
    ) -> None:
        """Unlink displaced file `name` (in held `directory`), keeping it open for a check.
        `by`: the path it was displaced from and the seq of the write that did it;
        `changed`: it already holds more than `base`, so it is checked at the next tick."""
        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
        try:
            fd = os.open(name, flags, dir_fd=directory)
        except OSError:
            fd = -1
        with contextlib.suppress(OSError):
            os.unlink(name, dir_fd=directory)
        if fd < 0:
            return
        self._proc.stale()  # a /proc scan from before this unlink did not look at it
        info = os.fstat(fd)
        # the size of what was judged, not what is there now: bytes that came between
        # the judging read and this fstat are late too
        size, mtime_ns = (-1, -1) if changed else (len(base), info.st_mtime_ns)
        due = time.monotonic() + (0 if changed else GRACE_S)
        self._held.append(Held(fd, by[0], base, size, mtime_ns, by[1], due))

    def due(self, now: float | None = None) -> list[Late]:
        """Check every held file whose grace is over (or that is over the bound)."""
        now = time.monotonic() if now is None else now
        found: list[Late] = []
        while self._held and (self._held[0].due <= now or len(self._held) > self.bound):
            held = self._held.popleft()
            over = len(self._held) >= self.bound  # let go, whatever it finds, to keep it
            writing = self._writers_remain(held.fd)
            if writing and not over:  # a writer may still write: take in, look again
                late = self._take_in(held)
            else:
                if over and (writing or held.due > now):
                    self._let_go_early(held, writing)
                late = self._check(held)
            if late is not None:
                found.append(late)
        return found

    def close(self) -> list[Late]:
        """At a clean stop: every held file is taken in once more and let go. One still
        open for writing is named in the log: what its writer writes from now on goes
        into an inode nobody can find again."""
        found: list[Late] = []
        while self._held:
            held = self._held.popleft()
            if self._writers_remain(held.fd):
                self.open_at_stop += 1
                log.warning(
                    "%s: the file a write displaced (seq %d) is still open for writing at"
                    " the stop: what was written to it so far is taken in, what is written"
                    " after is lost",
                    held.key,
                    held.seq,
                )
            late = self._check(held)
            if late is not None:
                found.append(late)
        return found

    def stats(self) -> dict[str, int]:
        """What `status` shows: files held now and the most that may be, checks that
        found a writer still there, changes taken in while it was, files let go before
        their time to keep the bound (and of those, with a writer still there), /proc
        scans made where leases were unavailable."""
        return {
            "held": len(self._held),
            "bound": self.bound,
            "kept_for_writers": self.kept_for_writers,
            "taken_in": self.taken_in,
            "let_go_early": self.let_go_early,
            "let_go_with_writers": self.let_go_with_writers,
            "proc_scans": self._proc.scans,
        }

    def _let_go_early(self, held: Held, writing: bool) -> None:
        """Counted always, logged at most every WARN_EVERY_S: a storm of displacements
        must not become a storm of log lines."""
        self.let_go_early += 1
        self.let_go_with_writers += writing
        now = time.monotonic()
        if now - self._warned_at < WARN_EVERY_S:
            return
        self._warned_at = now
        log.warning(
            "%d displaced files held (the bound, from the open-file limit): the oldest, %s"
            " (seq %d), let go before its grace was over%s; %d let go early so far, %d with"
            " a writer",
            self.bound,
            held.key,
            held.seq,
            " while a process still had it open for writing" if writing else "",
            self.let_go_early,
            self.let_go_with_writers,
        )

    def _writers_remain(self, fd: int) -> bool:
        """Whether some process still has the file behind `fd` open for writing: the
        kernel's answer through a lease, else /proc's (`proc_writers`)."""
        lease = _lease_says(fd)
        if lease is not None:
            return lease
        try:
            return self._proc.writing(os.fstat(fd))
        except OSError:
            return False

    def _take_in(self, held: Held) -> Late | None:
        """`held` is still open for writing somewhere: hand on what changed in it so
        far and hold it again, judged from now on against what it holds now."""
        self.kept_for_writers += 1
        again = time.monotonic() + GRACE_S
        try:
            info = os.fstat(held.fd)
            if (info.st_size, info.st_mtime_ns) == (held.size, held.mtime_ns):
                self._held.append(dataclasses.replace(held, due=again))
                return None
            data = _read_all(held.fd, self._limit)
        except OSError:
            data = None
        if data is None:  # gone past the size limit, or unreadable: let it go
            self._release(held.fd)
            return None
        self._held.append(
            dataclasses.replace(
                held, base=data, size=len(data), mtime_ns=info.st_mtime_ns, due=again
            )
        )
        if data == held.base:
            return None
        self.taken_in += 1
        return Late(held.key, held.base, data, held.seq)

    def _check(self, held: Held) -> Late | None:
        try:
            info = os.fstat(held.fd)
            if (info.st_size, info.st_mtime_ns) == (held.size, held.mtime_ns):
                return None
            data = _read_all(held.fd, self._limit)
        except OSError:
            return None
        finally:
            self._release(held.fd)
        if data is None or data == held.base:
            return None
        return Late(held.key, held.base, data, held.seq)


def _lease_says(fd: int) -> bool | None:
    """Whether some process has the file behind `fd` open for writing, as a lease tells:
    the kernel places a read lease only on a file nobody has open for writing
    (fcntl(2)); the lease is dropped at once. None where leases are refused for another
    reason (EINVAL: the file system has none; EACCES: not the file's owner)."""
    if not _leases:
        return None
    try:
        fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_RDLCK)
    except BlockingIOError:  # EAGAIN: open for writing somewhere
        return True
    except OSError:
        return None
    with contextlib.suppress(OSError):
        fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_UNLCK)
    return False


def held_bound_for(soft: int | None) -> int:
    """How many displaced files may be held open at once under a soft limit of `soft`
    fds (None: no rlimits, or unlimited): a quarter, so the rest of the daemon (a big
    restore's ~2 fds a file, connections, the journal, the watcher) keeps three
    quarters; at least 64, at most 4,096 (each held file also keeps in memory the
    content it was judged against)."""
    if soft is None:
        return HELD_MAX
    return max(HELD_MIN, min(HELD_MAX, soft // HELD_SHARE))


def held_files_bound() -> int:
    """`held_bound_for` the soft open-file limit this process has now (the daemon raised
    it at start-up: daemon/runtime/fdlimit.py)."""
    if resource is None:
        return held_bound_for(None)
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    return held_bound_for(None if soft == resource.RLIM_INFINITY else soft)


# --- who writes an unlinked file, as /proc tells it -------------------------------------
#
# Asked only for held files whose lease failed. Every `/proc/PID/fd/N` whose link ends
# " (deleted)" (the held files are all unlinked, so nothing else can match) is stat'ed,
# and one on a held inode counts when `/proc/PID/fdinfo/N` gives an access mode of
# O_WRONLY or O_RDWR. Cost: one `listdir` per process and one `readlink` per open fd of
# the processes the daemon may look into (its own user's, or all as root), a `stat` and
# a small read only for fds on unlinked files: measured here, 94 processes and ~690
# fds, 7 to 10 ms of CPU; at most one scan per SCAN_EVERY_S (`ProcScan`). Blind to
# processes of other users when the daemon is not root (/proc hides their fds) and to
# another PID namespace: those are left to the grace. Linux only: elsewhere none found.


def proc_writers() -> set[tuple[int, int]]:
    """(st_dev, st_ino) of every unlinked file some other process has open for writing."""
    found: set[tuple[int, int]] = set()
    try:
        pids = [p for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return found
    me = str(os.getpid())
    for pid in pids:
        if pid != me:  # the daemon's own fds are never an outside writer
            found |= _writers_of(pid)
    return found


def _writers_of(pid: str) -> set[tuple[int, int]]:
    base = f"/proc/{pid}/fd"
    found: set[tuple[int, int]] = set()
    try:
        fds = os.listdir(base)
    except OSError:  # gone, or not ours to look into
        return found
    for fd in fds:
        try:
            if not os.readlink(f"{base}/{fd}").endswith(_DELETED):
                continue
            info = os.stat(f"{base}/{fd}")
            if _open_for_writing(pid, fd):
                found.add((info.st_dev, info.st_ino))
        except OSError:  # closed meanwhile
            continue
    return found


def _open_for_writing(pid: str, fd: str) -> bool:
    """fdinfo's "flags:" is the open flags in octal; its access mode says writing."""
    with open(f"/proc/{pid}/fdinfo/{fd}", "rb") as info:
        for line in info:
            if line.startswith(b"flags:"):
                return (int(line.split()[1], 8) & _ACCESS) in (os.O_WRONLY, os.O_RDWR)
    return False


class ProcScan:
    """`proc_writers()`, reused for `SCAN_EVERY_S` while no file was held since: an unlinked
    file gains no writer after it is unlinked (none can open it again by name), so a
    scan that found none on it stays true; one that found a writer gone since only holds
    the file a grace longer. A file held after the scan was not unlinked when it ran:
    `stale()` makes the next look scan again."""

    def __init__(self) -> None:
        self._found: set[tuple[int, int]] = set()
        self._at = float("-inf")
        self.scans = 0

    def stale(self) -> None:
        self._at = float("-inf")

    def writing(self, stat: os.stat_result) -> bool:
        now = time.monotonic()
        if now - self._at > SCAN_EVERY_S:
            self._found, self._at = proc_writers(), now
            self.scans += 1
        return (stat.st_dev, stat.st_ino) in self._found


def _ignore_lease_breaks() -> None:
    """A lease held for the instant of `_writers_remain` would be broken by an open for
    writing (only possible through /proc/PID/fd, the file being unlinked) with SIGIO,
    whose default action ends the process: the daemon ignores SIGIO (nothing of it uses
    the signal). Only the main thread may set a handler; elsewhere it is left alone."""
    if threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGIO) == signal.SIG_DFL:
        signal.signal(signal.SIGIO, signal.SIG_IGN)


def _read_all(fd: int, limit: int) -> bytes | None:
    chunks, size, offset = [], 0, 0
    while chunk := os.pread(fd, _CHUNK, offset):
        chunks.append(chunk)
        size += len(chunk)
        offset += len(chunk)
        if size > limit:
            return None
    return b"".join(chunks)
