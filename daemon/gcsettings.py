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

import gc

THRESHOLDS = (20_000, 50, 100)  # gen0 allocations; gen0 runs per gen1; gen1 runs per gen2


def settle_after_start_up() -> None:
    """Collect what start-up left, freeze the survivors, and set saner thresholds."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*THRESHOLDS)
