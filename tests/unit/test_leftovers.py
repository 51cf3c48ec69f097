"""A finished job's plans are freed a few a turn, and by reference counting alone.

`runtime/leftovers.py` empties the containers a finished job hands it within a time
bound per call; `PlanJob` holds its owner's `consider` weakly, so a restore's or an
undo's job and its plans make no cycle that only a full collection would free.
"""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from editjournal.daemon.contract.context import Context, DaemonInfo
from editjournal.daemon.files.textcache import TextCache
from editjournal.daemon.files.workspace import Workspace
from editjournal.daemon.handlers.slicedwrites import PlanJob
from editjournal.daemon.model.state import State
from editjournal.daemon.runtime.leftovers import Leftovers
from editjournal.daemon.store.journal import Journal
from editjournal.daemon.writing.path import Writer
from editjournal.daemon.writing.target import Target, open_target


class _Job:
    def __init__(self, *held: dict[Any, Any] | list[Any]) -> None:
        self.held = list(held)

    def leftovers(self) -> list[dict[Any, Any] | list[Any]]:
        return self.held


class _Tracked:
    """An object whose freeing a weak reference sees."""


def test_containers_are_emptied_over_several_calls_then_forgotten() -> None:
    big = {i: _Tracked() for i in range(5000)}
    also = [_Tracked() for _ in range(5000)]
    watched = weakref.ref(big[4999])
    leftovers = Leftovers()
    leftovers.keep(_Job(big, also, {}))
    leftovers.keep(object())  # no leftovers: nothing kept
    calls = 0
    while leftovers:
        leftovers.free_some(0.0)  # the least a call does: a few items
        calls += 1
    assert calls > 100 and not big and not also
    assert watched() is None


@pytest.fixture
def no_collector() -> Iterator[None]:
    was = gc.isenabled()
    gc.disable()
    yield
    if was:
        gc.enable()


def _context(tmp_path: Path) -> Context:
    root = tmp_path / "ws"
    (root / ".editjournal").mkdir(parents=True)
    journal = Journal(tmp_path / "journal.db")
    info = DaemonInfo(1, "test", "ipc://x", "ipc://y", "log", 0.0)
    return Context("agent-a", State(), Workspace(root), journal, info, TextCache())


def test_a_plan_job_does_not_keep_its_owner_alive(tmp_path: Path, no_collector: None) -> None:
    """With the collector off, dropping the owner frees it (no cycle through the job)."""
    ctx = _context(tmp_path)

    class Owner:
        def __init__(self) -> None:
            self.planning = PlanJob(ctx, ["a.txt"], self.consider)

        def consider(self, ctx: Context, path: str) -> tuple[Target, Writer | None]:
            return open_target(ctx, path, missing_ok=True), None

    owner = Owner()
    assert owner.planning.consider == owner.consider
    owner.planning.step(ctx, deadline=0.0)  # plans a.txt through the owner's method
    assert owner.planning.planned["a.txt"].writer is None
    gone = weakref.ref(owner)
    del owner
    assert gone() is None
