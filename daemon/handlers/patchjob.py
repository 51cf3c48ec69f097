"""A many-file `apply_patch` planned a slice at a time between other requests (issue 40).

A patch of 1,000 file operations planned every file in one handler run: 1.9 s of the
daemon's thread for 1,000 updates of 60-line files, 1.3 s for 1,000 deletes, every
other agent waiting. `apply_patch` (daemon/handlers/apply_patch.py) hands such a
patch to a `PatchJob`. Its slices first resolve each operation's path and claim it
(one operation per file), no file read: judging a path's confinement is ~0.1 ms, so
1,000 of them were a turn of their own. Then a `PlanJob`
(daemon/handlers/slicedwrites.py) opens and plans each file a slice at a time,
exactly as `write_all` would, in the operations' order; the final run takes each
plan, made again where the journal (or the disk) moved on, and merges them all or
nothing. The reply and the events are those the inline path gives.

A path refused while resolving (outside the workspace, two operations on one file)
ends the job `unsliced`: the final run plans the patch at once, as the inline path
always did, which refuses it with the refusal of the first operation it cannot take,
nothing written. A file the patch cannot open (a binary file, a directory, say) ends
the job too, its refusal (naming the operation) kept for the final run to raise.

The job's own work in a handler run (its inline try and its final run) plans with
deferring off (`deferral.inline`): a big file in a many-file patch is planned at once
in its slice, as a restore's slices plan it, never handed to an `IndexJob` or an
`AheadJob`, whose final runs would not be this job's.

What it must never do: plan a file but through the writing path's `write` (the
`PlanJob` does), or keep a plan the journal or the disk has moved on from.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Protocol

from editjournal.daemon.contract.context import Context, Progress
from editjournal.daemon.contract.outcome import Outcome
from editjournal.daemon.handlers.slicedwrites import FilePlan, PlanJob, merged
from editjournal.daemon.handlers.treejob import run_inline
from editjournal.daemon.text.deferral import inline
from editjournal.daemon.text.v4a import Operation
from editjournal.daemon.writing.path import Writer
from editjournal.daemon.writing.target import Target
from editjournal.schemas.errors import ToolError


class Operations(Protocol):
    """What the handler knows of its operations' files (daemon/handlers/apply_patch.py)."""

    def claim(self, ctx: Context, number: int, op: Operation) -> str:
        """The operation's workspace-relative path, claimed for it alone; a refusal raises."""
        ...

    def open(self, ctx: Context, number: int, op: Operation, path: str) -> tuple[Target, Writer]:
        """The file, opened now (a refusal, naming the operation, raises), and its planner."""
        ...


class PatchJob:
    """A patch's file operations resolved, then planned, a slice at a time; `outcome`
    is the final run's, all or nothing."""

    def __init__(self, operations: Sequence[Operation], files: Operations) -> None:
        self.operations = operations
        self.files = files  # the handler's: held strongly, it holds nothing of this job
        self.by_path: dict[str, tuple[int, Operation]] = {}
        self.planning: PlanJob | None = None  # begun once every path is claimed
        self.unsliced = False  # a path refused while resolving: planned at once at the end
        self.refused: ToolError | None = None  # a file the patch could not open

    @property
    def done(self) -> bool:
        if self.unsliced or self.refused is not None:
            return True
        return self.planning is not None and self.planning.done

    def try_inline(self, ctx: Context) -> bool:
        """Work for up to INLINE_S; whether the job is done (then the request is
        answered at once, without being parked)."""
        with inline():
            return run_inline(self, ctx)

    def step(self, ctx: Context, deadline: float) -> Progress:
        """Paths claimed, then files planned (`PlanJob.step`), until `deadline`; a path
        refused or a file that cannot be opened ends the job."""
        try:
            if self.planning is None:
                self._claim(ctx, deadline)
                return Progress()
            return self.planning.step(ctx, deadline)
        except ToolError as e:
            if self.planning is None:
                self.unsliced = True
            else:  # without its traceback, whose frames hold this job: no cycle to collect
                self.refused = e.with_traceback(None)
            return Progress()

    def _claim(self, ctx: Context, deadline: float) -> None:
        """The next operations' paths claimed until `deadline`; with the last, the plans
        begin (the `PlanJob` holds `self.consider` weakly: this job keeps it)."""
        for number in range(len(self.by_path) + 1, len(self.operations) + 1):
            op = self.operations[number - 1]
            self.by_path[self.files.claim(ctx, number, op)] = (number, op)
            if time.monotonic() >= deadline and number < len(self.operations):
                return
        self.planning = PlanJob(ctx, list(self.by_path), self.consider)

    def leftovers(self) -> list[dict[str, FilePlan]]:
        """Every plan, freed a few a turn once the patch is answered (runtime/leftovers.py)."""
        return self.planning.leftovers() if self.planning is not None else []

    def consider(self, ctx: Context, path: str) -> tuple[Target, Writer | None]:
        """The operation's file, opened now, and its planner."""
        number, op = self.by_path[path]
        return self.files.open(ctx, number, op, path)

    def outcome(self, ctx: Context) -> Outcome:
        """The final run's: every file's plan, kept or made again where it may be out of
        date (each at once: see the module), merged as `write_all` merges them."""
        if self.refused is not None:
            raise self.refused
        assert self.planning is not None and not self.unsliced
        if self.planning.again(ctx, list(self.by_path)):
            return Outcome(job=self)  # many files recorded since their plans: sliced again
        with inline():
            plans = self.planning.plans(ctx, list(self.by_path))
        return merged(plans)
