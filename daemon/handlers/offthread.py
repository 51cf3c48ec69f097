"""Pure work done beside the loop, on a thread of its own.

`history`, `blame` and `stats` read a journal's committed events back and compute
from them alone; on 100,000 events they held the daemon's one thread 0.26-0.56 s,
every agent waiting. Such a request on a journal past `INLINE_EVENTS` events is
parked with an `OffThreadJob`: a worker thread opens the journal read-only (as the
offline commands do, `daemon.audit.open_readonly`: its own SQLite connection, the
committed events only) and computes the reply, while the loop goes on serving; the
request's final run hands that reply back. A big markdown file's headers are parsed
there too (daemon/handlers/atomic.py). The worker touches neither the state nor the
daemon's connection: one thread still owns them. It holds the GIL at most the switch
interval at a time (0.5 ms, daemon/runtime/gcsettings.py), and the loop, waiting on
its sockets meanwhile, takes it back as soon as a request comes.

A job waiting for its thread is `waiting`: the loop does not spin for it (it polls
its sockets every `WAIT_POLL_MS`) and the other parked jobs go on (daemon/runtime/jobs.py).
One worker, started at the first such request, a daemon thread (a stop does not
wait for it: its request is answered `daemon_stopping` like any parked one).
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from editjournal.daemon.audit import open_readonly
from editjournal.daemon.contract.context import Context, Progress
from editjournal.daemon.contract.outcome import Outcome
from editjournal.daemon.store.journal import Journal

INLINE_EVENTS = 10_000  # a journal of at most this many events is read back in the turn
WAIT_POLL_MS = 2  # how often the loop looks at a waiting job when it has nothing else
Work = Callable[[Journal], Any]


class OffThreadJob:
    """One request's pure work (it reads nothing the loop owns), handed to the worker
    at its first step: an audit read on a read-only journal of its own (`on_journal`),
    a big markdown file's headers (daemon/handlers/atomic.py)."""

    def __init__(self, work: Callable[[], Any]) -> None:
        self._work = work
        self._done = threading.Event()
        self._submitted = False
        self._result: Any = None
        self._error: BaseException | None = None

    @property
    def done(self) -> bool:
        return self._done.is_set()

    @property
    def waiting(self) -> bool:
        """Handed to the worker and not finished: the loop has nothing to do for it."""
        return self._submitted and not self._done.is_set()

    def step(self, ctx: Context, deadline: float) -> Progress:
        """Hand the work to the worker (once); nothing else here."""
        if not self._submitted:
            self._submitted = True
            _worker().put(self)
        return Progress()

    def run(self) -> None:
        """On the worker: the work."""
        try:
            self._result = self._work()
        except BaseException as e:  # the request's error: raised by its final run
            self._error = e.with_traceback(None)
        finally:
            self._done.set()

    def result(self) -> Any:
        """The reply's result (the final run's), or the work's error raised."""
        if self._error is not None:
            raise self._error
        return self._result


def off_thread(ctx: Context, work: Work) -> Outcome:
    """`work`'s result: computed now on a small journal, else by the worker (the
    request parked meanwhile), taken by the request's final run."""
    if isinstance(ctx.finished, OffThreadJob):
        return Outcome(ctx.finished.result())
    if ctx.journal.last_seq <= INLINE_EVENTS:
        return Outcome(work(ctx.journal))
    return Outcome(job=OffThreadJob(on_journal(ctx.journal.path, work)))


def on_journal(path: Path, work: Work) -> Callable[[], Any]:
    """`work` run on a read-only journal of its own (the committed events only)."""

    def run() -> Any:
        journal = open_readonly(path)
        try:
            return work(journal)
        finally:
            journal.close()

    return run


_queue: queue.SimpleQueue[OffThreadJob] | None = None
_lock = threading.Lock()
_done = 0  # requests the worker answered (`status`), written by the worker alone


def off_thread_stats() -> dict[str, int]:
    """How many requests were computed on the worker (`status.group_commit.off_thread`)."""
    return {"done": _done}


def _worker() -> queue.SimpleQueue[OffThreadJob]:
    """The worker's queue, the worker started at the first call."""
    global _queue
    with _lock:
        if _queue is None:
            _queue = queue.SimpleQueue()
            thread = threading.Thread(
                target=_serve, args=(_queue,), name="editjournal-offthread", daemon=True
            )
            thread.start()
        return _queue


def _serve(jobs: queue.SimpleQueue[OffThreadJob]) -> None:
    global _done
    while True:
        jobs.get().run()
        _done += 1
