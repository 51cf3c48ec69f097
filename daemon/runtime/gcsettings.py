"""Garbage-collector settings for the long-running daemon.

The daemon keeps many long-lived objects (the folded state, cached parses) and
makes short-lived ones per request. With CPython's default thresholds (700, 10,
10) full collections ran about every 43 edits and took 30-40 ms each, setting
the p99 latency. So, once start-up is done: collect once, then `gc.freeze()` the
survivors (they are never scanned again), and raise the thresholds so young
collections are rarer and a full one needs far more promotions. Reference
counting still frees almost everything at once; the collector only has to find
cycles, which the request path hardly makes.
"""

from __future__ import annotations

import ctypes
import gc
import sys

# gen0 allocations; gen0 runs per gen1; gen1 runs per gen2. A gen1 collection scans what
# the young collections since the last let through: after a big file's index was built
# (200,000 fresh lists of positions) one took 225 ms of a turn at 50 gen0 runs per gen1;
# at 10, at most 47 ms. 500 gen1 runs per gen2 keep full collections as rare as before.
THRESHOLDS = (20_000, 10, 500)


SWITCH_INTERVAL_S = 0.0005  # the GIL is handed between threads this often (default 5 ms)


def settle_after_start_up() -> None:
    """Collect what start-up left, freeze the survivors, and set saner thresholds.

    Also hand the GIL over more often: during a flood of outside changes the watcher's
    threads (watchdog's emitter moving its watches, our debouncer) keep it busy, and the
    thread that serves requests waited up to 5 ms at each of the several times a request
    gives it up (poll, recv, send): a ping took 100-300 ms under `mv tree` churn."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*THRESHOLDS)
    sys.setswitchinterval(SWITCH_INTERVAL_S)


class CollectorPause:
    """No collection from `pause` until `resume`: for a turn that is long by nature (a
    job's final run and its commit, every file's events at once), whose young objects
    the collector scanned there several times (10-16 ms of a 1,000-file restore's final
    turn). The server resumes at the start of the next turn, so the first collection
    after, which scans them once, falls in a turn of its own."""

    def __init__(self) -> None:
        self._paused = False

    def pause(self) -> None:
        if gc.isenabled():
            gc.disable()
            self._paused = True

    def resume(self) -> None:
        if self._paused:
            gc.enable()
            self._paused = False


LARGE_BYTES = 1024 * 1024  # a request or reply this big makes the daemon give memory back


def _load_trim() -> ctypes._CFuncPtr | None:  # type: ignore[name-defined]
    try:
        return getattr(ctypes.CDLL(None), "malloc_trim", None)
    except OSError:
        return None


_malloc_trim = _load_trim()


def give_back_memory() -> None:
    """Return freed heap memory to the system after a large request (glibc only).

    Freeing a big text does not shrink the process: glibc raises its mmap threshold
    after the first big free, so later big blocks come from the heap, whose free
    pages stay mapped. A daemon that served a few 9 MB writes would keep hundreds of
    MB for ever. `malloc_trim(0)` hands the free pages back; it costs a few ms, so it
    runs only after a request or reply of `LARGE_BYTES` or more.
    """
    if _malloc_trim is not None:
        _malloc_trim(0)
