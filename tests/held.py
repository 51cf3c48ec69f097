"""A big request run while another client pings: what it did to the others.

The slicing tests (tests/e2e/test_slices.py, test_patch_slices.py,
test_sliced_removals.py) each run one big request from a client of its own (a
thread: the client waits on its socket) while another polls `status`: the longest
round trip meanwhile (a stall guard, not a speed target: a busy machine stretches
every slice) and whether the daemon reported the request parked (worked on in
slices).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from editjournal.client import Client, RequestError
from tests.conftest import RunningDaemon


@dataclass
class Held:
    """The big request's result (or, `refusals_too`, its refusal), the longest
    `status` round trip meanwhile, and whether it was seen parked."""

    result: Any
    longest: float
    parked: bool


def held(
    daemon: RunningDaemon,
    big: Callable[[Client], Any],
    timeout: float = 300,
    refusals_too: bool = False,
) -> Held:
    """Run `big` with its own client in a thread; poll `status` from another until it
    answers. A `RequestError` is the result with `refusals_too`, else re-raised."""
    worker, pinger = daemon.client("worker", timeout=timeout), daemon.client("pinger")
    out: dict[str, Any] = {}

    def run() -> None:
        try:
            out["result"] = big(worker)
        except Exception as e:  # re-raised below, in the test's thread
            out["error"] = e

    thread = threading.Thread(target=run)
    thread.start()
    longest, parked, deadline = 0.0, False, time.monotonic() + timeout
    while thread.is_alive():
        assert time.monotonic() < deadline, "the big request never answered"
        began = time.monotonic()
        parked = pinger.status().parked > 0 or parked
        longest = max(longest, time.monotonic() - began)
        thread.join(0.005)  # a poll every 5 ms at most: the loop's own CPU kept small
    thread.join()
    if refusals_too and isinstance(out.get("error"), RequestError):
        out["result"] = out.pop("error")
    if "error" in out:
        raise out["error"]
    return Held(out["result"], longest, parked)
