"""A final run with many files recorded since their plans goes back to slices.

`PlanJob.plans` makes again, at once, the plan of every path the journal recorded
anything of since the plans began: when the watcher journaled 1,000 files an agent
had just created, a patch's final run planned 612 of them again in one turn (745 ms).
Past `REPLANNED_AT_ONCE` such paths, `again` drops their plans and the job plans them
a slice at a time before the final run comes back; at most `ROUNDS` times.
"""

from __future__ import annotations

from pathlib import Path

from editjournal.daemon.contract.context import Context, DaemonInfo
from editjournal.daemon.files.textcache import TextCache
from editjournal.daemon.files.workspace import Workspace
from editjournal.daemon.handlers.slicedwrites import REPLANNED_AT_ONCE, ROUNDS, PlanJob
from editjournal.daemon.model.state import State
from editjournal.daemon.store.journal import Journal
from editjournal.daemon.writing.path import Writer
from editjournal.daemon.writing.target import Target, open_target
from editjournal.schemas.events import FileRead

FILES = REPLANNED_AT_ONCE + 8


def context(tmp_path: Path) -> Context:
    root = tmp_path / "ws"
    (root / ".editjournal").mkdir(parents=True)
    for i in range(FILES):
        (root / f"f{i:03}.txt").write_text(f"file {i}\n")
    journal = Journal(tmp_path / "journal.db")
    info = DaemonInfo(1, "test", "ipc://x", "ipc://y", "log", 0.0)
    return Context("agent-a", State(), Workspace(root), journal, info, TextCache())


class Owner:
    """A handler's job: it keeps the plan job (which holds `consider` weakly)."""

    def __init__(self, ctx: Context, paths: list[str]) -> None:
        self.planning = PlanJob(ctx, paths, self.consider)
        self.considered: list[str] = []

    def consider(self, ctx: Context, path: str) -> tuple[Target, Writer | None]:
        self.considered.append(path)
        return open_target(ctx, path), None


def planned(ctx: Context, owner: Owner) -> None:
    while not owner.planning.done:
        owner.planning.step(ctx, deadline=0.0)


def record_reads(ctx: Context, paths: list[str]) -> None:
    for path in paths:
        ctx.journal.stage("agent-b", FileRead(path=path, sha256="0" * 64, size=1, line_count=1))
    ctx.journal.commit()


def test_many_paths_recorded_since_go_back_to_slices_and_few_are_planned_at_once(
    tmp_path: Path,
) -> None:
    ctx = context(tmp_path)
    paths = [f"f{i:03}.txt" for i in range(FILES)]
    owner = Owner(ctx, paths)
    planned(ctx, owner)
    assert owner.considered == paths
    record_reads(ctx, paths[: REPLANNED_AT_ONCE + 1])
    assert owner.planning.again(ctx, paths)
    assert not owner.planning.done and len(owner.planning.planned) == FILES - REPLANNED_AT_ONCE - 1
    owner.considered.clear()
    planned(ctx, owner)
    assert owner.considered == paths[: REPLANNED_AT_ONCE + 1]  # in slices, not at once
    record_reads(ctx, paths[:2])  # few: the final run plans them again itself
    assert not owner.planning.again(ctx, paths)
    owner.considered.clear()
    assert [p.target.path for p in owner.planning.plans(ctx, paths)] == paths
    assert owner.considered == paths[:2]


def test_a_tree_that_keeps_changing_is_sent_back_at_most_rounds_times(tmp_path: Path) -> None:
    ctx = context(tmp_path)
    paths = [f"f{i:03}.txt" for i in range(FILES)]
    owner = Owner(ctx, paths)
    planned(ctx, owner)
    for _ in range(ROUNDS):
        record_reads(ctx, paths)
        assert owner.planning.again(ctx, paths)
        planned(ctx, owner)
    record_reads(ctx, paths)
    assert not owner.planning.again(ctx, paths)  # then planned at once by the final run
