"""Requests whose work is too long for one turn of the loop, done a slice at a time.

A handler that hands back a `Job` (daemon/contract/context.py) has its request
parked here. Each turn of the loop gives the oldest parked job one slice
(`SLICE_S`), after the outside changes and before the requests waiting, so no
other agent waits on it for longer than a slice; the contents a slice hands back
are committed at once (blobs only: content-addressed, nothing refers to them yet,
so a crash leaves nothing half done), and the temp files of the writes it planned
are written (daemon/landing/earlywrites.py: invisible, journaled nowhere). A
finished job's request is handled again, for good, by the server (`ctx.finished`),
which takes those temp files.
"""

from __future__ import annotations

import logging
import time
import traceback
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from editjournal.daemon.contract.context import Context, Job, Progress
from editjournal.daemon.landing.earlywrites import EarlyWrites
from editjournal.daemon.runtime.blobsteps import SteppedBlobs
from editjournal.daemon.runtime.boundary import failure_reply, loose_id
from editjournal.daemon.runtime.groupcommit import error_response
from editjournal.daemon.store.journal import Journal
from editjournal.schemas.errors import ToolError
from editjournal.schemas.wire import Response

log = logging.getLogger("editjournal")
SLICE_S = 0.05  # the longest a parked job holds the daemon's thread at a time


@dataclass(eq=False)
class Parked:
    """A request waiting for its job."""

    route: list[bytes]
    payload: bytes
    agent: str
    job: Job
    error: Exception | None = None  # the job failed: the request gets this error
    early: EarlyWrites = field(default_factory=EarlyWrites)  # temp files of its plans
    contents: SteppedBlobs = field(default_factory=SteppedBlobs)  # big ones, compressed in steps

    def failed_reply(self) -> Response:
        """The reply to a request whose job failed: its error, or (a bug of ours) an
        internal error, logged with its traceback."""
        assert self.error is not None
        if isinstance(self.error, ToolError):
            return error_response(loose_id(self.payload), self.error.to_wire())
        trace = "".join(traceback.format_exception(self.error))
        log.error("a parked request's job failed: %s", trace)
        return failure_reply(self.payload, self.error, "working on the request")


class Jobs:
    """The parked requests, oldest first; owned by the daemon's thread.

    A slice is the job's step, then the temp files of the writes it planned and the
    commit of the contents it hands back; their cost follows from the step's, so the
    step gets the share of `SLICE_S` that the last slices' steps took."""

    def __init__(self) -> None:
        self._parked: deque[Parked] = deque()
        self._step_share = 0.5  # of a slice, for the step (the rest: its commit)

    def __bool__(self) -> bool:
        return bool(self._parked)

    @property
    def working(self) -> bool:
        """A parked job has work for the loop: not only jobs `waiting` on a thread of
        their own (daemon/handlers/offthread.py) that has not finished."""
        return any(_ready(p) for p in self._parked)

    def __len__(self) -> int:
        return len(self._parked)

    def take_back(self, parked: Parked) -> bool:
        """Whether `parked`'s job was parked again by its final run (its plans went back
        to slices): then it keeps the temp files its slices wrote (its new entry takes
        them), which the final run that planned them again left untouched."""
        for again in self._parked:
            if again.job is parked.job:
                again.early = parked.early
                return True
        return False

    def park(self, route: list[bytes], payload: bytes, agent: str, job: Job) -> None:
        self._parked.append(Parked(route, payload, agent, job))

    def work(self, context: Callable[[str], Context], journal: Journal) -> Parked | None:
        """One slice of the oldest job the loop can work on (a job waiting on its own
        thread is passed over until that thread is done); it, when it is done (or
        failed). None when no job finished."""
        parked = next((p for p in self._parked if _ready(p)), None)
        if parked is None:
            return None
        began = time.monotonic()
        try:
            ctx = context(parked.agent)
            done_before = parked.job.done  # only its contents were left to compress
            deadline = began + SLICE_S * self._step_share
            progress = Progress() if done_before else parked.job.step(ctx, deadline)
            stepped = time.monotonic()
            parked.early.prepare(ctx.workspace, progress.writes)
            kept = parked.contents.keep(journal, progress.blobs, progress.paths)
            if parked.contents.work(journal, began + SLICE_S) or kept:
                journal.commit(durable=False)
            if not done_before:
                self._learn(stepped - began, time.monotonic() - stepped)
        except Exception as e:  # the request's error, not the loop's
            parked.error = e
        if parked.error is None and (not parked.job.done or parked.contents):
            return None
        self._parked.remove(parked)  # Parked compares by identity (eq=False)
        return parked

    def discard(self) -> None:
        """The temp files parked jobs prepared are removed (a stop: none will be taken)."""
        for parked in self._parked:
            parked.early.discard()

    def _learn(self, step_s: float, commit_s: float) -> None:
        """Move the step's share toward what this slice's step took of the whole."""
        if step_s + commit_s > 0:
            seen = step_s / (step_s + commit_s)
            self._step_share = min(0.9, max(0.1, (self._step_share + seen) / 2))


def _ready(parked: Parked) -> bool:
    """The loop has something to do for this job: a slice, or its final run (not
    while it is `waiting` on a thread of its own)."""
    return not getattr(parked.job, "waiting", False)
