"""Waiting on a condition with a bounded poll, never a bare sleep: the one helper the
tests, their fixtures (tests/pg_support.py) and the bench's servers share."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def wait_until(predicate: Callable[[], T], timeout: float = 30.0, what: str = "condition") -> T:
    """Poll `predicate` until it returns something truthy; fail after `timeout` seconds.
    The default is generous: the suite runs its tests in parallel on a machine that
    may be busy with other work, where a daemon's start alone has taken over 10 s."""
    deadline, delay = time.monotonic() + timeout, 0.005
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(delay)
        delay = min(delay * 2, 0.1)
