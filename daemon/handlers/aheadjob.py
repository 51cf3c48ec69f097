"""A big file's write planned in a job, a phase a slice at a time (issue 40).

A handler wrapped by `planned_in_slices` lets the writing path ask for a big
file's write to be planned ahead (daemon/writing/ahead.py): the path raises
`PlanAhead` before planning, and the request gets an `AheadJob`. The job first
tries to finish within `treejob.INLINE_S` (a few operations on a file just over
`SLICED_FROM` lines answer at once; a writer's `weight`, its operations or hunks,
of `HEAVY` or more is parked without trying); otherwise the server parks the
request and gives the job a slice per turn (daemon/runtime/jobs.py). Each step runs
the path's next phase (`path.Readying`: prepare, plan, apply, check, content, diff)
under `deferring`: a phase that needs an index structure not built yet (the
positions of the hunks' lines, the new version's derived anchors) is stopped
before it changed anything, the structure is built a chunk at a time
(`IndexBuild`) and the phase runs again.

Once the plan is made, the next slice hands back the new content (kept by the
journal now: the final commit only names it, its line delta computed here) and the
write (its temp file is written now, daemon/landing/earlywrites.py), and the job
says it is done only at the slice after: the final run, which takes the plan and
commits, gets a turn of its own.

What it must never do: change anything but through what a slice hands back (a
step is read-only, like a handler).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import TypeVar

from editjournal.daemon.contract.context import Context, Progress
from editjournal.daemon.contract.outcome import Outcome
from editjournal.daemon.files.textcache import Parsed
from editjournal.daemon.handlers.indexjob import SLICED_FROM, indexed_in_slices
from editjournal.daemon.handlers.treejob import INLINE_S
from editjournal.daemon.text.deferral import Deferred, deferring
from editjournal.daemon.text.indexbuild import IndexBuild
from editjournal.daemon.writing.ahead import Asking, PlanAhead, asking
from editjournal.schemas.errors import ToolError
from editjournal.schemas.tools import Params

MAX_WAITS = 8  # index structures one job builds before a phase builds the rest at once
# a write of this many operations or hunks is parked at once: its phases (~30 µs each an
# operation) would outlast the inline try, and the turn goes on with a slice of the job
HEAVY = 100
P = TypeVar("P", bound=Params)
Handler = Callable[[Context, P], Outcome]


class AheadJob:
    """Run a `Readying`'s phases until each slice's deadline; keep the end in `asking`."""

    def __init__(self, asked: PlanAhead) -> None:
        self.asked = asked
        self.asking: Asking = asked.asking
        self._phases = iter(asked.readying.phases)
        self._phase: Callable[[], None] | None = next(self._phases)
        self._index: Iterator[bool | None] | None = None  # an index structure a phase waits for
        self._owner: object = None
        self._waits = 0  # index structures built for its phases so far
        self._planned = False  # the plan is kept
        self._handed: Progress | None = None  # what the next step hands over
        self.done = False

    @property
    def heavy(self) -> bool:
        """Too many operations to try the plan inline (`HEAVY`)."""
        return int(getattr(self.asked.readying.writer, "weight", 1)) >= HEAVY

    def step(self, ctx: Context, deadline: float) -> Progress:
        """Phases (and the index work they wait for) until `deadline`, at least one."""
        if self._planned:  # a slice of its own each: the contents and their commit, then
            handed, self._handed = self._handed, None  # the final run's
            self.done = handed is None
            return handed or Progress()
        self._work(ctx)
        while not self._planned and time.monotonic() < deadline:
            self._work(ctx)
        return Progress()

    def _work(self, ctx: Context) -> None:
        """One unit of work: a chunk of an index structure, or a phase."""
        if self._index is not None:
            try:
                if next(self._index, None) is None:
                    self._index_built(ctx)
            except ToolError:  # a stepped parse that refuses the diff: as a phase's refusal
                self._index = None
                self._kept(refused=True)
            return
        assert self._phase is not None
        try:  # a file whose structures keep going (evicted, say) is not chased for ever
            with deferring(SLICED_FROM if self._waits < MAX_WAITS else 0):
                self._phase()
        except Deferred as wanted:
            self._index, self._owner = _built(wanted), wanted.owner
            self._waits += 1
            return
        except ToolError:  # refused: the final run plans it again and words the refusal
            self._kept(refused=True)
            return
        self._phase = next(self._phases, None)
        if self._phase is None:
            self._kept()

    def _index_built(self, ctx: Context) -> None:
        """The structure is built (`_built`'s last item): the phase runs again next."""
        if isinstance(self._owner, Parsed):
            ctx.cache.keep(self._owner)
        self._index, self._owner = None, None

    def _kept(self, refused: bool = False) -> None:
        """The plan kept for the final run; what the next slice hands over."""
        self._planned = True
        readying = self.asked.readying
        self.asked.keep(None if refused else readying.written)
        if not refused:
            blobs, writes = readying.progress()
            paths = dict.fromkeys(blobs, readying.target.path)
            self._handed = Progress(blobs=blobs, paths=paths, writes=writes)


def _built(wanted: Deferred) -> Iterator[bool | None]:
    """The structure's steps, each a True, then a None when it is built."""
    for _ in IndexBuild(wanted).steps():
        yield True
    yield None


def planned_in_slices(handler: Handler[P]) -> Handler[P]:
    """`handler` with its index work sliced (`indexed_in_slices`) and a big file's write
    planned in an `AheadJob` (see the module)."""
    indexed = indexed_in_slices(handler)

    def sliced(ctx: Context, params: P) -> Outcome:
        finished = ctx.finished
        plans = finished.asking if isinstance(finished, AheadJob) else Asking()
        while True:
            try:
                with asking(plans):
                    return indexed(ctx, params)
            except PlanAhead as asked:
                # without its traceback: its frames hold this frame, whose `job` holds
                # it, a cycle only a full collection frees (a refused 150,000-line
                # write's documents, 7 MB a request: test_memory)
                job = AheadJob(asked.with_traceback(None))
                # once parked, parked again at once (its run took its turn's share)
                if finished is not None or job.heavy or not _finished_inline(job, ctx):
                    return Outcome(job=job)

    sliced.__name__ = handler.__name__
    sliced.__doc__ = handler.__doc__
    return sliced


def _finished_inline(job: AheadJob, ctx: Context) -> bool:
    """Step the job for up to INLINE_S; whether it is done (the handler then runs again
    at once, taking the plan)."""
    deadline = time.monotonic() + INLINE_S
    while not job.done and time.monotonic() < deadline:
        job.step(ctx, deadline)
    return job.done
