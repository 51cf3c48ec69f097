"""A big file's anchor index, built as a job: no request holds the thread for it.

Anchoring a file takes a pass over all of its lines (about a second for 200,000
lines). A handler wrapped by `indexed_in_slices` runs with deferring on
(daemon.text.deferral): when it needs an index structure of a file of
`SLICED_FROM` lines or more that is not built yet, the engine stops it before
anything changed, and the handler hands back an `IndexJob`. The job first tries
to finish within `treejob.INLINE_S`; otherwise the server parks the request and
gives the job a slice per turn (daemon/runtime/jobs.py), and the handler runs
again from the start, finding the structure built (kept in the text cache, with
its content). A handler is pure until it returns, so running it again is safe.

Each structure is built once per content and kept; a request may need a few
(the file's index, then where each hash is): after `MAX_ROUNDS` jobs for one
request the rest is built at once rather than chase a file that keeps changing.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

from editjournal.daemon.contract.context import Context, Progress
from editjournal.daemon.contract.outcome import Outcome
from editjournal.daemon.files.textcache import Parsed
from editjournal.daemon.handlers.treejob import INLINE_S
from editjournal.daemon.text.deferral import Deferred, deferring
from editjournal.daemon.text.indexbuild import IndexBuild
from editjournal.schemas.tools import Params

SLICED_FROM = 20_000  # lines: a whole index of fewer is built at once (< ~100 ms)
MAX_ROUNDS = 4  # jobs one request may take before the rest is built at once

P = TypeVar("P", bound=Params)
Handler = Callable[[Context, P], Outcome]


class IndexJob:
    """Build what a `Deferred` asked for, a step at a time until each slice's deadline."""

    def __init__(self, asked: Deferred, rounds: int) -> None:
        self.build = IndexBuild(asked)
        self._steps = self.build.steps()
        self.rounds = rounds  # jobs this request has taken, this one included

    @property
    def done(self) -> bool:
        return self.build.done

    def step(self, ctx: Context, deadline: float) -> Progress:
        for _ in self._steps:
            if time.monotonic() >= deadline:
                break
        if self.done and isinstance(self.build.asked.owner, Parsed):
            ctx.cache.keep(self.build.asked.owner)
        return Progress()


def indexed_in_slices(handler: Handler[P]) -> Handler[P]:
    """`handler`, with a big file's index work handed to an `IndexJob` (see the module)."""

    def sliced(ctx: Context, params: P) -> Outcome:
        rounds = ctx.finished.rounds if isinstance(ctx.finished, IndexJob) else 0
        while True:
            if rounds >= MAX_ROUNDS:
                return handler(ctx, params)
            try:
                with deferring(SLICED_FROM):
                    return handler(ctx, params)
            except Deferred as asked:
                rounds += 1
                job = IndexJob(asked, rounds)
                # once parked, a request is parked again at once: its run already took
                # its turn's share, and a big file's work seldom fits INLINE_S anyway
                if rounds > 1 or not _finished_inline(job, ctx):
                    return Outcome(job=job)

    sliced.__name__ = handler.__name__
    sliced.__doc__ = handler.__doc__
    return sliced


def _finished_inline(job: IndexJob, ctx: Context) -> bool:
    """Step the job for up to INLINE_S; whether it is done (the handler then runs again
    at once: a file just over the line limit answers without being parked)."""
    job.step(ctx, time.monotonic() + INLINE_S)
    return job.done
