"""A module fixture's value computed once per test run, not once per xdist worker.

worksteal may split a module's tests across workers (an idle worker steals half of
another's queue), and each worker then sets the module's fixtures up again: the
replay's 40 real commits cost ~8 s of CPU each time. The first worker to ask computes
the value and pickles it into the run's shared temp root (the workers' basetemps are
its subdirectories); the others wait on its lock and read it (pytest-xdist's documented
recipe for a fixture run once).
"""

from __future__ import annotations

import fcntl
import os
import pickle
from collections.abc import Callable
from typing import TypeVar

import pytest

T = TypeVar("T")


def once_per_run(factory: pytest.TempPathFactory, name: str, compute: Callable[[], T]) -> T:
    """`compute()`, or what another worker of this run computed under `name`."""
    if "PYTEST_XDIST_WORKER" not in os.environ:
        return compute()
    shared = factory.getbasetemp().parent  # this run's root: every worker's basetemp is in it
    kept = shared / f"once-{name}.pickle"
    with open(shared / f"once-{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if kept.exists():
            with open(kept, "rb") as f:
                value: T = pickle.load(f)
            return value
        value = compute()
        with open(kept.with_suffix(".tmp"), "wb") as f:
            pickle.dump(value, f)
        os.replace(kept.with_suffix(".tmp"), kept)
        return value
