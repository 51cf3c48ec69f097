"""A many-file write planned in slices: `write_all`'s planning spread over turns of the loop.

A restore of 5,000 files, or an `undo --by` over 1,000, plans every file on the
writing path (read it, diff it, render, hash and index the new content): seconds of
the daemon's thread in one handler run, every other agent waiting. Such a handler
hands its files to a `PlanJob`: the server runs it a slice at a time between other
requests (daemon/runtime/jobs.py), each file opened and planned by the writing
path's own `write`, exactly as `write_all` plans it. The handler's final run takes
each plan as it was made, unless the journal recorded anything of that path since
(an agent's write, a read, an outside change it noticed), which it plans again; and
when the server runs it once more because a file it planned changed on disk
meanwhile (`Write.based_on`, checked for every write), every plan whose file no
longer holds what it was planned on is made again. Then the outcomes are merged as
`write_all` merges them: one refusal, nothing written. Each slice hands back the
writes its plans make (`Progress.writes`): their temp files are written in the slice
(daemon/landing/earlywrites.py), and the final run's prepare takes them; after the
commit the writes land a slice at a time (daemon/landing/writeround.py). What still
grows with the files in one step: the final run's checks, its events and the commit.
Once every file is planned, the job asks for one more step that does nothing (it is
`done` only after it): the final run then gets a turn of its own, not the rest of the
turn whose slice planned the last files (at 1,000 files that slice and the final run
held the thread together, 50-70 ms of it the slice's).

What it must never do: plan a file but through the writing path's `write`, or keep
a plan the journal or the disk has moved on from.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from inspect import ismethod
from weakref import WeakMethod

from editjournal.daemon.contract.context import Context, Progress
from editjournal.daemon.contract.outcome import ABSENT, Outcome
from editjournal.daemon.writing.path import Writer, merge_all, write
from editjournal.daemon.writing.target import Target

REPLANNED_AT_ONCE = 32  # files a final run plans again itself; past it, back to slices
ROUNDS = 3  # times a final run sends its job back to slices, at most
# what a handler makes of one path: its file as found and its planner, or no planner
# (nothing to write there: the handler files the target as it likes)
Consider = Callable[[Context, str], tuple[Target, Writer | None]]


@dataclass(frozen=True)
class FilePlan:
    """One path as planned: the file as found, its planner, and the writing path's
    outcome (None: nothing to write)."""

    target: Target
    writer: Writer | None
    outcome: Outcome | None


class PlanJob:
    """Plan `paths` a slice at a time; `plans` hands the final run every path's plan,
    made again where the journal (or the disk) moved on."""

    def __init__(self, ctx: Context, paths: Iterable[str], consider: Consider) -> None:
        self.paths = list(paths)
        # a handler's job hands its own method and keeps this job: held weakly, else the
        # two make a cycle that only a full collection frees (with every plan in it: a
        # 2,000-file restore's 106,000 objects, freed 0.3 s into some later turn)
        self._consider = WeakMethod(consider) if ismethod(consider) else lambda: consider
        self.started = ctx.journal.last_seq  # a record after this on a path: plan it again
        self.planned: dict[str, FilePlan] = {}
        self._at = 0
        self._finals = 0  # final runs: after the first, the server saw a file change on disk
        self._settled = False  # the step after the last file's: the final run's turn is its own
        self._rounds = 0  # times the final run sent the job back to slices (`again`)

    @property
    def consider(self) -> Consider:
        """The handler's `consider`, while its job lives (it owns this one)."""
        found = self._consider()
        assert found is not None, "the job whose method this is is gone"
        return found

    def leftovers(self) -> list[dict[str, FilePlan]]:
        """The plans, to be freed a few a turn once the job is done (runtime/leftovers.py)."""
        return [self.planned]

    @property
    def planned_all(self) -> bool:
        """Every path has its plan (the final run may still make some again)."""
        return self._at >= len(self.paths)

    @property
    def done(self) -> bool:
        return self._settled

    def step(self, ctx: Context, deadline: float) -> Progress:
        """Plan files until `deadline`, at least one (read-only, like a handler); the
        writes planned, for their temp files to be written early, and their contents,
        for the journal to keep now (the final commit then only names them). Once all
        are planned, a step of nothing, after which the job is done."""
        progress = Progress()
        if self.planned_all:
            self._settled = True
            return progress
        while self._at < len(self.paths):
            path = self.paths[self._at]
            plan = self.planned[path] = plan_file(ctx, path, self.consider)
            outcome = plan.outcome
            if outcome is not None and outcome.error is None:
                progress.writes.extend(outcome.writes)
                progress.blobs.update(outcome.blobs)
                progress.paths.update(dict.fromkeys(outcome.blobs, plan.target.path))
            self._at += 1
            if time.monotonic() >= deadline:
                break
        return progress

    def again(self, ctx: Context, paths: Sequence[str]) -> bool:
        """Whether the final run must go back to slices first: more than
        `REPLANNED_AT_ONCE` of `paths` were recorded since their plans (the watcher
        journaling 1,000 files an agent had just created: 612 planned again in one final
        run, 745 ms) or never planned. Their plans are dropped and made again a slice at
        a time; at most `ROUNDS` times (a tree that keeps changing), then at once."""
        if self._rounds >= ROUNDS:
            return False
        moved = self.touched_since(ctx)
        stale = [p for p in paths if p in moved or p not in self.planned]
        if len(stale) <= REPLANNED_AT_ONCE:
            return False
        self._rounds += 1
        for path in stale:
            self.planned.pop(path, None)
        self.paths, self._at, self._settled = stale, 0, False
        self.started = ctx.journal.last_seq
        return True

    def plans(self, ctx: Context, paths: Sequence[str]) -> list[FilePlan]:
        """The final run's plan of each of `paths` (the final list, which may name paths
        the slices never planned): kept, or made now when it may be out of date."""
        self._finals += 1
        moved = self.touched_since(ctx)
        found = []
        for path in paths:
            plan = self.planned.get(path)
            if plan is None or path in moved or (self._finals > 1 and _on_disk_moved(ctx, plan)):
                plan = self.planned[path] = plan_file(ctx, path, self.consider)
            found.append(plan)
        self.started = ctx.journal.last_seq
        return found

    def touched_since(self, ctx: Context) -> set[str]:
        """The paths a record since the plans began names (any kind: a read moves the
        agent's snapshot, which a plan reads), and those of this batch's pending writes."""
        return {
            path
            for record in ctx.journal.records(after_seq=self.started)
            for path in (record.event.path, getattr(record.event, "moved_to", None))
            if path is not None
        } | set(ctx.workspace.overlay)


def plan_file(ctx: Context, path: str, consider: Consider) -> FilePlan:
    target, writer = consider(ctx, path)
    outcome = write(target, writer, []) if writer is not None else None
    return FilePlan(target, writer, outcome)


def _on_disk_moved(ctx: Context, plan: FilePlan) -> bool:
    """The file no longer holds what the plan was made on (a full read: only on the
    rare run after the server found a planned file changed)."""
    found = ctx.workspace.fingerprint(plan.target.path)
    now = found.sha256 if found is not None else ABSENT
    return now != (plan.target.snap.sha256 if plan.target.exists else ABSENT)


def merged(plans: Sequence[FilePlan]) -> Outcome:
    """The plans' outcomes as `write_all` merges them (every event, blob and write in
    order, or, a file refused, the refusals and the outside changes the reads noticed)."""
    return merge_all([(p.target, p.outcome) for p in plans if p.outcome is not None])
