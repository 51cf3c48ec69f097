"""A many-edit `check_write` of a big file, judged as a job: a slice of edits per turn.

`check_write` judges each edit of a harness's MultiEdit on the file as it is (the
writing path's search for its text, then the carry) and foresees the content the
tool will leave (`toolwrite.expected`). Each of those is a pass over the whole text
per edit (a substring need not start at a line, so no index finds it): 1,000 edits of
a 200,000-line file held the daemon's thread 7.3 s. When edits x lines is over
`INLINE_BUDGET`, the handler hands this job back instead: it judges one edit a step
until each slice's deadline, then foresees the content an edit a step, and the
handler runs again with its verdicts. They hold while the file's content and the
agent's snapshot of it are what the job saw; else the job starts over (up to
`MAX_ROUNDS`, then the check is made at once). The first refusal is judged once more
in the final run, on the target of that run, so its events are that run's.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Final

from editjournal.daemon.contract.context import Context, Progress
from editjournal.daemon.contract.outcome import Outcome
from editjournal.daemon.handlers.treejob import INLINE_S
from editjournal.daemon.settings.config import write_access_denied
from editjournal.daemon.text.lines import Document
from editjournal.daemon.text.toolwrite import expecting
from editjournal.daemon.writing.target import Target
from editjournal.schemas.errors import ToolError
from editjournal.schemas.tools import CheckWriteParams, HarnessEdit

INLINE_BUDGET = 2_000_000  # edits x lines judged at once (100 edits of 20,000 lines)
MAX_ROUNDS = 3

# harness._edit_refused: (target, tool, index, edit, denied) -> (refusal, checked)
Judge = Callable[[Target, str, int, HarnessEdit, ToolError | None], tuple[Outcome | None, int]]


class Unknown:
    """Not foreseen yet (`None` is an answer: the tool's result cannot be foreseen)."""


UNKNOWN: Final = Unknown()
Judged = tuple[Outcome | None, int, Document | Unknown | None]


def is_big(target: Target, params: CheckWriteParams) -> bool:
    """Whether judging these edits at once would hold the thread for long."""
    return len(params.edits or ()) * max(1, target.doc.line_count) > INLINE_BUDGET


class EditsJob:
    """Each edit's verdict (the first refused one, how many were checked) and the
    content foreseen, for the content and snapshot the job started on."""

    def __init__(self, target: Target, params: CheckWriteParams, judge: Judge, rounds: int):
        self.sha256 = target.snap.sha256
        self.seen = _seen(target)
        self.rounds = rounds
        self.refused_at: int | None = None  # 1-based
        self.checked = 0
        self.wanted: Document | None = None
        self.done = False
        self._steps = self._work(target, params, judge)

    def _work(self, target: Target, params: CheckWriteParams, judge: Judge) -> Iterator[None]:
        ctx = target.ctx
        denied = write_access_denied(ctx.workspace.state_dir, ctx.agent)
        for index, edit in enumerate(params.edits or (), start=1):
            refused, counted = judge(target, params.tool, index, edit, denied)
            self.checked += counted
            if refused is not None:
                self.refused_at = index
                return
            yield None
        edits = [(e.old_string, e.new_string, e.replace_all) for e in params.edits or ()]
        self.wanted = yield from expecting(target.doc, edits)

    def step(self, ctx: Context, deadline: float) -> Progress:
        for _ in self._steps:
            if time.monotonic() >= deadline:
                return Progress()
        self.done = True
        return Progress()

    def fits(self, target: Target) -> bool:
        """The verdicts hold for `target`: the same content, the same snapshot of it."""
        return target.snap.sha256 == self.sha256 and _seen(target) == self.seen


def _seen(target: Target) -> object:
    return target.ctx.state.snapshots.get((target.ctx.agent, target.path))


def judged_in_slices(
    ctx: Context, target: Target, params: CheckWriteParams, judge: Judge
) -> Outcome | Judged:
    """The job's verdicts for `target` (the first refusal judged again, here), or the
    job to park the request on while it judges."""
    job = ctx.finished if isinstance(ctx.finished, EditsJob) else None
    if job is None or not job.fits(target):
        rounds = job.rounds + 1 if job is not None else 1
        if rounds > MAX_ROUNDS:  # the file keeps changing under the job: judge it at once
            return _at_once(target, params, judge)
        job = EditsJob(target, params, judge, rounds)
        job.step(ctx, time.monotonic() + INLINE_S)
        if not job.done:
            return Outcome(job=job)
    if job.refused_at is None:
        return None, job.checked, job.wanted
    edit = (params.edits or [])[job.refused_at - 1]
    denied = write_access_denied(ctx.workspace.state_dir, ctx.agent)
    refused, _ = judge(target, params.tool, job.refused_at, edit, denied)
    if refused is None:  # nothing changed, yet not refused now: judge every edit again
        return _at_once(target, params, judge)
    return refused, job.checked, UNKNOWN


def _at_once(target: Target, params: CheckWriteParams, judge: Judge) -> Judged:
    denied = write_access_denied(target.ctx.workspace.state_dir, target.ctx.agent)
    checked = 0
    for index, edit in enumerate(params.edits or (), start=1):
        refused, counted = judge(target, params.tool, index, edit, denied)
        checked += counted
        if refused is not None:
            return refused, checked, UNKNOWN
    return None, checked, UNKNOWN
