"""A big file's write planned ahead: made in a job's slices, taken by the final run.

Planning 1,000 hunks or operations on a 200,000-line file (parse, locate, carry,
apply, check, render, hash, derive the anchors, diff) is ~0.1-0.3 s of the
daemon's thread: every other agent would wait that long. So a handler that plans
ahead (daemon/handlers/aheadjob.py) runs with `asking` on: the writing path, about
to plan a big file's write for a writer that `plans_ahead`, raises `PlanAhead`
instead, before anything is planned; the request is parked, a job runs the path's
phases (`path.Readying`) a slice at a time and keeps the finished `Written` here
(`Kept`); the handler then runs again from the start and the path takes it, paying
only for the reply, the event and the commit.

A kept plan is taken only when nothing it was made from moved on: the same writer
(the same request's same operation), the file holding the same content, no
outside change noticed now, and no journal record naming the path since the plan
began (another agent's write, a read, an outside change: each may move the
agent's snapshot, the unseen lines or the writers a plan reads). Otherwise it is
planned again, ahead, at most `MAX_TRIES` times a path; after that (a file that
keeps changing) at once, as before. A plan the job found refused is made again at
once too: the refusal's words (its delta, the latest state) are the final run's.

What it must never do: hand over a plan whose inputs changed, or plan anything
itself (the path's phases do, wherever they run).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from editjournal.daemon.settings.limits import check_line_count, count_lines

if TYPE_CHECKING:
    from editjournal.daemon.writing.path import Readying, Writer, Written
    from editjournal.daemon.writing.target import Target

MAX_TRIES = 3  # plans of one path in one request made ahead before one is made at once


@dataclass(frozen=True)
class Kept:
    """A plan made ahead, and what it was made from."""

    writer: Any  # the planner (compared by equality: the same request's same operation)
    sha256: str  # the content planned on
    seq: int  # the journal's last seq when the plan began
    written: Written | None  # None: the plan was refused
    existed: bool = True  # the file was there (a new file's plan is kept while it is not)


@dataclass
class Asking:
    """One request's plans made ahead, by path, and how many times each was asked."""

    plans: dict[str, Kept] = field(default_factory=dict)
    tries: dict[str, int] = field(default_factory=dict)


class PlanAhead(Exception):  # a signal to the handler's wrapper, not an error
    """A big write to plan in a job: `readying` runs the phases, the job keeps the end."""

    def __init__(self, readying: Readying, asking: Asking) -> None:
        super().__init__("a write is planned ahead in a job")
        self.readying, self.asking = readying, asking
        self.seq = readying.target.ctx.journal.last_seq
        asking.tries[readying.target.path] = asking.tries.get(readying.target.path, 0) + 1

    def keep(self, written: Written | None) -> None:
        target = self.readying.target
        kept = Kept(self.readying.writer, target.snap.sha256, self.seq, written, target.exists)
        self.asking.plans[target.path] = kept


_ASKING: ContextVar[Asking | None] = ContextVar("editjournal_plan_ahead", default=None)


@contextmanager
def asking(plans: Asking) -> Iterator[None]:
    """Let the writing path ask for big writes to be planned ahead, into `plans`."""
    token = _ASKING.set(plans)
    try:
        yield
    finally:
        _ASKING.reset(token)


class WholeContent:
    """What a writer bringing a whole new content (`write_file`, `overwrite_entire_file`)
    says to be planned ahead: a big content over a small or no file too (its anchors, its
    diff: 2.6 s of one turn for 200,000 lines), parked at once past 10,000 lines."""

    plans_ahead = True
    params: Any  # with a `content`

    @property
    def lines_written(self) -> int:
        return int(self.params.content.count("\n"))

    @property
    def weight(self) -> int:
        return self.lines_written // 100

    def check_lines(self, limit: int, path: str) -> None:
        """`file_too_many_lines` before anything is planned, as the content's parse would
        refuse it after (a job would plan a refused 150,000-line content for nothing)."""
        check_line_count(count_lines(self.params.content), limit, path)


def planned_ahead(
    target: Target, writer: Writer, readying: Callable[[], Readying]
) -> Written | None:
    """The plan made ahead for this write, still good; None: plan it now. Raises
    `PlanAhead` when it is to be planned in a job first."""
    plans = _ASKING.get()
    if plans is None or not getattr(writer, "plans_ahead", False) or target.noticed:
        return None  # an outside change noticed now: journaled by the run that plans at once
    kept = plans.plans.get(target.path)
    if kept is not None and _still_good(kept, target, writer):
        return kept.written  # None (refused): the refusal is made, and worded, now
    if plans.tries.get(target.path, 0) >= MAX_TRIES:
        return None
    raise PlanAhead(readying(), plans)


def _still_good(kept: Kept, target: Target, writer: Writer) -> bool:
    """Whether nothing the plan was made from moved on (see the module)."""
    if type(kept.writer) is not type(writer) or kept.writer != writer:
        return False
    if kept.existed != target.exists or kept.sha256 != target.snap.sha256:
        return False  # a file created, removed or changed since (a new big file's plan kept)
    ctx = target.ctx
    if target.path in ctx.workspace.overlay:  # a write of this batch, not yet committed
        return False
    since = ctx.journal.records(after_seq=kept.seq, path=target.path, limit=1)
    return next(iter(since), None) is None
