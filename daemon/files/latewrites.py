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
before the swap is lost, however long the writer sleeps. Where leases cannot be
taken (a file system without them, a file owned by another user) the grace alone
applies.

Bounded: at most `MAX_HELD` fds; past that, the oldest are checked early and let
go, writers or not. Daemon thread only.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import os
import signal
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

GRACE_S = 0.5
MAX_HELD = 256
_CHUNK = 1024 * 1024


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
    """The displaced files held open until their grace check."""

    def __init__(self, limit: int) -> None:
        _ignore_lease_breaks()
        self._held: deque[Held] = deque()
        self.kept_for_writers = 0  # grace checks that found a writer still there
        self.taken_in = 0  # changes taken in while a writer still held the file
        self._limit = limit  # a file grown past the size limit is read no further
        # closes a checked file: its last close frees the unlinked inode, which costs
        # about an fsync on ext4; the server hands it to another thread (`release_with`)
        self._release: Callable[[int], None] = os.close

    def release_with(self, release: Callable[[int], None]) -> None:
        self._release = release

    def __len__(self) -> int:
        return len(self._held)

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
        info = os.fstat(fd)
        # the size of what was judged, not what is there now: bytes that came between
        # the judging read and this fstat are late too
        size, mtime_ns = (-1, -1) if changed else (len(base), info.st_mtime_ns)
        due = time.monotonic() + (0 if changed else GRACE_S)
        self._held.append(Held(fd, by[0], base, size, mtime_ns, by[1], due))

    def due(self, now: float | None = None) -> list[Late]:
        """Check every held file whose grace is over (or that is over the bound)."""
        final = now == float("inf")
        now = time.monotonic() if now is None else now
        found: list[Late] = []
        while self._held and (self._held[0].due <= now or len(self._held) > MAX_HELD):
            held = self._held.popleft()
            if final or len(self._held) >= MAX_HELD or not _writers_remain(held.fd):
                late = self._check(held)
            else:  # a writer may still write into it: take in what it wrote, look again
                late = self._take_in(held)
            if late is not None:
                found.append(late)
        return found

    def close(self) -> list[Late]:
        """At shutdown: every held file is checked now, and let go."""
        return self.due(float("inf"))

    def stats(self) -> dict[str, int]:
        """What `status` shows: files held now, checks that found a writer still there,
        changes taken in while it was."""
        return {
            "held": len(self._held),
            "kept_for_writers": self.kept_for_writers,
            "taken_in": self.taken_in,
        }

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


def _writers_remain(fd: int) -> bool:
    """Whether some process still has the file behind `fd` open for writing. The kernel
    places a read lease only on a file nobody has open for writing (fcntl(2)); the lease
    is dropped at once. False where leases are refused for another reason (EINVAL: the
    file system has none; EACCES: not the file's owner): the grace alone applies."""
    try:
        fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_RDLCK)
    except BlockingIOError:  # EAGAIN: open for writing somewhere
        return True
    except OSError:
        return False
    with contextlib.suppress(OSError):
        fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_UNLCK)
    return False


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
