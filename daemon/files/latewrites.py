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

Bounded: at most `MAX_HELD` fds; past that, the oldest are checked early. A
writer that keeps its fd open longer than the grace is not caught (README
"Guarantees"). Daemon thread only.
"""

from __future__ import annotations

import contextlib
import os
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
        self._held: deque[Held] = deque()
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
        now = time.monotonic() if now is None else now
        found: list[Late] = []
        while self._held and (self._held[0].due <= now or len(self._held) > MAX_HELD):
            late = self._check(self._held.popleft())
            if late is not None:
                found.append(late)
        return found

    def close(self) -> list[Late]:
        """At shutdown: every held file is checked now."""
        return self.due(float("inf"))

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


def _read_all(fd: int, limit: int) -> bytes | None:
    chunks, size, offset = [], 0, 0
    while chunk := os.pread(fd, _CHUNK, offset):
        chunks.append(chunk)
        size += len(chunk)
        offset += len(chunk)
        if size > limit:
            return None
    return b"".join(chunks)
