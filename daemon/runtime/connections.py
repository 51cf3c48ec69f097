"""Connection churn: memory given back after clients come and go.

Each connection to the daemon's ROUTER socket costs libzmq about 27 KB of native
memory (its pipes' chunks, the ipc engine's batch buffers), allocated on libzmq's
I/O thread and freed when the peer disconnects. Freed, but not returned: glibc
keeps the free pages in that thread's arena, fragmented, and later bursts do not
reuse them all. Measured: 2,000 clients connected at once, pinged and closed, five
times over: RSS 43 -> 97 -> 125 -> 143 -> 155 MB, while Python's own heap stayed at
17 MB (tracemalloc); one `malloc_trim(0)` after each round kept it at 43 MB. So the
daemon watches its ROUTER's disconnections (a libzmq socket monitor) and gives the
memory back once they stop (a quiet turn of the loop) or every `TRIM_EVERY` of them
under a steady churn. Nothing here is kept per connection: only a count.

It never touches requests or replies, and never trims while nobody disconnected.
"""

from __future__ import annotations

import contextlib
import time

import zmq

from editjournal.daemon.runtime.gcsettings import give_back_memory

TRIM_EVERY = 1_000  # disconnections between two trims while the churn never pauses
# libzmq reports a disconnection before it has freed all of that connection's memory
# (its I/O thread deletes the engine just after, the pipes go later by command): the
# trim after a burst is done again once this long has passed without one
SETTLE_S = 0.3


class ConnectionChurn:
    """Counts the ROUTER's disconnections and trims the heap after them."""

    def __init__(self, router: zmq.Socket[bytes]) -> None:
        """Monitor `router` (before it binds or after: libzmq reports either way)."""
        self._router = router
        self.socket: zmq.Socket[bytes] = router.get_monitor_socket(zmq.EVENT_DISCONNECTED)
        self.disconnected = 0  # since the daemon started, for `status`
        self.trims = 0
        self.trim_ms = 0.0  # the time all trims took, for `status`
        self._since_trim = 0
        self._again_at: float | None = None  # when the settling trim is due

    def take_events(self) -> None:
        """Count the disconnections waiting (called when the monitor socket is ready)."""
        while True:
            try:
                self.socket.recv_multipart(zmq.NOBLOCK)  # [event, endpoint]: only counted
            except zmq.Again:
                break
            self.disconnected += 1
            self._since_trim += 1
        if self._since_trim >= TRIM_EVERY:
            self._trim()

    def after_turn(self, quiet: bool) -> None:
        """At the end of a loop turn: trim if clients left and the loop has gone quiet
        (trimming in the middle of a burst would only be undone by the next arrivals)."""
        if not quiet:
            return
        if self._since_trim:
            self._trim()
        elif self._again_at is not None and time.monotonic() >= self._again_at:
            self._trim(settling=True)

    def _trim(self, settling: bool = False) -> None:
        """Give freed memory back; unless this is the settling trim, another is due
        `SETTLE_S` after it for what libzmq frees after reporting."""
        started = time.perf_counter()
        give_back_memory()
        self.trim_ms += (time.perf_counter() - started) * 1000
        self.trims += 1
        self._since_trim = 0
        self._again_at = None if settling else time.monotonic() + SETTLE_S

    def stats(self) -> dict[str, float | int]:
        """What `status` shows of it."""
        return {
            "disconnected": self.disconnected,
            # disconnections no trim has followed yet, or the settling trim still due
            "untrimmed": self._since_trim or int(self._again_at is not None),
            "trims": self.trims,
            "trim_ms": round(self.trim_ms, 1),
        }

    def close(self) -> None:
        """Stop monitoring: before the context ends, or its `term` waits for this socket."""
        with contextlib.suppress(zmq.ZMQError):  # a closed router took its monitor along
            self._router.disable_monitor()
        self.socket.close(linger=0)
