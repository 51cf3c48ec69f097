"""The daemon's loop: receive, decode, dispatch; the lifecycle around it.

One thread — the one that calls `Server.serve_forever` — owns the state and
the journal; nothing else writes either. Each turn takes the outside changes
first (`daemon.runtime.watchtick`), then the requests waiting, handled one
after another and made durable together by the group commit
(`daemon.runtime.groupcommit`, which owns the state and the write round): a
reply is only sent after the events it reports are committed, so "applied"
always means durable. A write's temp file is prepared when it is planned and
served to the rest of the batch (daemon/landing/writeround.py); a crash
between commit and rename is finished at the next start
(daemon/landing/pendingwrites.py).

Any bad input gets an error reply — undecodable frames, unknown methods,
mistyped params — never a crash and never a silent drop.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import logging
import os
import signal
import time
import traceback
from collections import deque
from collections.abc import Callable
from types import FrameType
from typing import Any

import msgspec
import zmq

from editjournal import __version__
from editjournal.daemon.contract.context import Context, DaemonInfo, Job
from editjournal.daemon.contract.outcome import ABSENT, Handler, Outcome, Write
from editjournal.daemon.files.textcache import TextCache
from editjournal.daemon.files.workspace import Workspace
from editjournal.daemon.handlers import registry
from editjournal.daemon.handlers.offthread import WAIT_POLL_MS, off_thread_stats
from editjournal.daemon.landing.earlywrites import EarlyWrites
from editjournal.daemon.landing.pendingwrites import boot_id, recover
from editjournal.daemon.landing.writeround import (
    Prepared,
)
from editjournal.daemon.model.idempotency import answered
from editjournal.daemon.model.state import State
from editjournal.daemon.runtime.applyorder import in_apply_order
from editjournal.daemon.runtime.boundary import (
    DECODE_ERRORS,
    check_frame,
    crash_reason,
    decode_failure,
    encode_reply,
    failure_reply,
    is_journal_failure,
    loose_id,
    split_route,
    was_crash,
)
from editjournal.daemon.runtime.connections import ConnectionChurn
from editjournal.daemon.runtime.faults import NO_FAULTS, Faults
from editjournal.daemon.runtime.fdlimit import raise_soft_limit
from editjournal.daemon.runtime.gcsettings import (
    LARGE_BYTES,
    CollectorPause,
    give_back_memory,
)
from editjournal.daemon.runtime.groupcommit import Answer, Batch, GroupCommit, error_response
from editjournal.daemon.runtime.hookhttp import HookHttp
from editjournal.daemon.runtime.jobs import SLICE_S, Jobs
from editjournal.daemon.runtime.leftovers import Leftovers
from editjournal.daemon.runtime.publisher import Publisher
from editjournal.daemon.runtime.runfiles import (
    acquire_lock,
    ensure_state_dir,
    make_endpoint,
    remove_run_files,
    socket_path,
    write_endpoint,
)
from editjournal.daemon.runtime.turns import TurnClock
from editjournal.daemon.runtime.watchtick import watch_tick
from editjournal.daemon.settings.limits import Limits, check_text_fields
from editjournal.daemon.store.dbfaults import journal_failure
from editjournal.daemon.store.identity import workspace_id
from editjournal.daemon.store.journal import Journal, JournalError
from editjournal.daemon.store.startup import load_state
from editjournal.daemon.store.statesnap import Snapshotter
from editjournal.daemon.telemetry.tap import Tap
from editjournal.daemon.watch.intake import Watching, WatchSettings
from editjournal.schemas.endpoint import JOURNAL_FILE, LOG_FILE
from editjournal.schemas.errors import ErrorCode, ToolError
from editjournal.schemas.events import DaemonStarted, DaemonStopped
from editjournal.schemas.toolerrors import declared
from editjournal.schemas.tools import TOOL_PARAMS, explain_validation
from editjournal.schemas.wire import (
    Request,
    Response,
    agent_problem,
    envelope_keys,
    unknown_envelope_key,
)

VERSION = __version__  # one source: editjournal/__init__.py (pyproject.toml reads it)
WRITE_ATTEMPTS = 3  # plans of one write request, while its file keeps changing on disk
MAX_BATCH = 256
POLL_MS = 100
STOP_QUIET_MS = 20  # at a stop, requests still arriving are answered until this quiet
ZERO_COPY_FROM = 1 << 20  # reply bytes from which zmq sends the reply without copying it
SLICE_WAITS = 3  # turns in a row a job's slice may be put off for what the turn did before it

log = logging.getLogger("editjournal")
_REQUEST_DECODER = msgspec.msgpack.Decoder(Request)


@functools.cache
def params_decoder(method: str) -> msgspec.msgpack.Decoder[Any]:
    """A method's decoder, built at its first request: building every method's at start-up
    was an eighth of a daemon's start and stop (msgspec resolves each type's annotations)."""
    return msgspec.msgpack.Decoder(TOOL_PARAMS[method])


class Server:
    """One workspace's daemon."""

    def __init__(
        self,
        workspace: Workspace,
        watch: WatchSettings | None = None,
        limits: Limits | None = None,
        faults: Faults = NO_FAULTS,
    ) -> None:
        """`watch=None`: outside changes are noticed only when a file is accessed.
        `faults`: what the crash tests inject (`runtime.faults`); none otherwise."""
        self.workspace = workspace
        self.limits = limits or Limits.for_file_size(workspace.max_file_size)
        self.faults = faults
        self.fd_limit = raise_soft_limit()  # a big restore holds ~2 fds a file (fdlimit.py)
        # writes prepared by the request being handled, not yet in the round: the
        # boundary removes their temp files if the request fails before it hands them on
        self._unrounded: list[Prepared] = []
        # the keyed reply the request being handled staged: amended if its write's landing
        # changes the reply (daemon/model/idempotency.py)
        self._answer: Answer | None = None
        # the temp files a finished job's slices wrote, while its request is handled
        self._early: EarlyWrites | None = None
        self.state_dir = ensure_state_dir(workspace.state_dir)
        self._lock_fd = acquire_lock(self.state_dir)
        self.journal = Journal(self.state_dir / JOURNAL_FILE)
        # before the state and the start-up scan: finish writes a crash left half done
        began = time.monotonic()
        unclean = _unclean_previous_run(self.journal) is not None
        self.recovered = recover(workspace, self.journal, unclean, faults.boot_id or boot_id())
        snapshots = Snapshotter()
        state = load_state(self.journal, snapshots)  # checked, or refused
        # start-up recovery's duration (the telemetry's editjournal.recovery.duration)
        self.recovery_s = time.monotonic() - began
        self.group = GroupCommit(
            self.journal, state, workspace, self.limits, faults, self._send, snapshots
        )
        self.group.answer_recovered(self.recovered)
        self.handlers: dict[str, Handler] = registry()
        self.sock_path = socket_path(self.state_dir)
        self.events_path = self.sock_path.with_name(self.sock_path.stem + "-events.sock")
        self.address = f"ipc://{self.sock_path}"
        self.info = DaemonInfo(
            pid=os.getpid(),
            version=VERSION,
            socket=self.address,
            events_socket=f"ipc://{self.events_path}",
            log_path=str(self.state_dir / LOG_FILE),
            started_monotonic=time.monotonic(),
            watch_health=self._watch_health,
            commit_stats=self._commit_stats,
            parked=lambda: len(self.jobs) + (self.group.landing is not None),
            workspace_id=workspace_id(self.state_dir),
        )
        self._stopping: str | None = None
        self._zmq = zmq.Context()
        self.router = self._zmq.socket(zmq.ROUTER)
        self.router.setsockopt(zmq.LINGER, 1000)
        # over twice the frame limit libzmq drops the frame unread (and the connection)
        self.router.setsockopt(zmq.MAXMSGSIZE, 2 * self.limits.frame_bytes)
        self.churn = ConnectionChurn(self.router)  # memory back after clients leave
        self.watching: Watching | None = None
        self._watch = watch
        self.hook_http: HookHttp | None = None  # the hook over loopback HTTP (runtime.hookhttp)
        self.jobs = Jobs()
        # the parked requests' routes and frames, oldest first as `jobs` works them: a stop
        # answers each (never left hanging until the client's timeout)
        self._parked: deque[tuple[list[bytes], bytes]] = deque()
        self.cache = TextCache(max_bytes=self.limits.cache_bytes, max_lines=self.limits.file_lines)
        self.turns = TurnClock()  # how long each turn held the thread (runtime/turns.py)
        self.leftovers = Leftovers()  # what finished jobs hold, freed a few items a turn
        self.collector = CollectorPause()  # off for a job's final run, on at the next turn
        self._slice_waited = 0  # turns in a row that put their slice off (`_slice_waits`)

    # --- lifecycle ------------------------------------------------------------------

    def serve_forever(self, on_ready: Callable[[], None] = lambda: None) -> None:
        """Bind, announce, loop until a signal asks to stop, then shut down cleanly."""
        self._install_signal_handlers()
        for stale in (self.sock_path, self.events_path):  # we hold the lock: nobody serves them
            stale.unlink(missing_ok=True)
        self.router.bind(self.address)
        # OpenTelemetry, off unless [otel]
        tap = Tap(self.state_dir, self.info.workspace_id, recovery_s=self.recovery_s)
        self.group.publisher = Publisher(self._zmq, self.info.events_socket, tap)
        self.group.record_now(None, self._started_event())
        if self._watch is not None:
            lines = self.limits.file_lines
            self.watching = Watching(self.workspace, self._zmq, self._watch, lines)
            self.watching.start()  # first, so nothing slips between the check and the watch
            self.watching.at_startup(self.state, self.group.record_outside)
            self.group.commit()
        # before the endpoint: whoever sees the daemon serve finds its hook URL too
        self.hook_http = HookHttp.serve(self.workspace.root, self.state_dir)
        write_endpoint(
            self.state_dir,
            make_endpoint(
                self.workspace.root,
                self.address,
                self.info.events_socket,
                VERSION,
                self.limits.frame_bytes,
            ),
        )
        log.info("serving %s on %s (pid %d)", self.workspace.root, self.address, self.info.pid)
        on_ready()
        try:
            self._loop()
        except BaseException as e:  # the boundary failed: say so in the journal and the log
            self._stopping = crash_reason(e)
            log.critical("the loop ended by a crash: %s", traceback.format_exc())
            raise
        finally:
            self._shutdown()

    def _started_event(self) -> DaemonStarted:
        """`daemon_started`, saying so when the run before it never journaled its stop."""
        unclean = _unclean_previous_run(self.journal)
        pid, last_seen = unclean if unclean is not None else (None, None)
        return DaemonStarted(
            pid=self.info.pid,
            workspace=str(self.workspace.root),
            version=VERSION,
            socket=self.address,
            previous_unclean=unclean is not None,
            previous_pid=pid,
            previous_last_seen_ms=last_seen,
        )

    @property
    def state(self) -> State:
        """The folded journal: the group commit's, which rebuilds it when it must."""
        return self.group.state

    def _send(self, route: list[bytes], reply: bytes) -> None:
        # a big reply is sent without a copy: zmq takes the bytes object itself (immutable)
        # where copying it into a message first was ~35 ms of the thread for 40 MB; a small
        # one is copied (the zero-copy frame costs a few us more)
        self.router.send_multipart([*route, reply], copy=len(reply) < ZERO_COPY_FROM)

    def _commit_stats(self) -> dict[str, Any]:
        stats = {**self.group.stats.as_dict(), "recovered": dataclasses.asdict(self.recovered)}
        stats["connections"] = self.churn.stats()  # disconnections, heap trims (connections.py)
        stats["late_writes"] = self.workspace.late_writes.stats()  # displaced files held
        stats["flush"] = self.group.flusher.health()  # failed fsyncs, retried (flusher.py)
        stats["turns"] = self.turns.stats()  # the longest hold of the thread (turns.py)
        stats["off_thread"] = off_thread_stats()  # audit reads done beside the loop
        if self.group.publisher is not None:  # the OpenTelemetry export (daemon/telemetry)
            stats["otel"] = self.group.publisher.telemetry()
        return stats

    def _watch_health(self) -> dict[str, Any]:
        if self.watching is None:
            return {"state": "disabled"}
        return dataclasses.asdict(self.watching.health)

    def request_stop(self, reason: str) -> None:
        self._stopping = reason

    @property
    def stop_reason(self) -> str | None:
        """Why the daemon stopped or is stopping (a signal's name), if it is."""
        return self._stopping

    def _install_signal_handlers(self) -> None:
        def on_signal(signum: int, frame: FrameType | None) -> None:
            self.request_stop(signal.Signals(signum).name)

        signal.signal(signal.SIGTERM, on_signal)
        signal.signal(signal.SIGINT, on_signal)

    def _shutdown(self) -> None:
        reason = self._stopping or "loop ended"
        if self.hook_http is not None:  # first: no hook is taken in that cannot be answered
            self.hook_http.stop()
        if not was_crash(reason):  # a big batch's last writes land and it is answered
            self.group.finish_landing()
        self.jobs.discard()  # the temp files parked jobs wrote early
        self._answer_parked(reason)
        self.churn.close()  # before the router: its monitor would hold the context's term
        self.router.close()
        if self.watching is not None:
            self.watching.stop()
        if self._stopping is not None and not was_crash(self._stopping):
            self.group.carry_late(self.workspace.late_writes.close())
        self.group.record_stop(self.info.pid, reason)
        self.group.snapshots.save(self.journal, self.state)  # the next start folds nothing
        if self.group.publisher is not None:
            self.group.publisher.close()
        self._zmq.term()
        remove_run_files(self.state_dir, self.workspace.root, self.sock_path, self.events_path)
        self.journal.close()
        os.close(self._lock_fd)
        log.info("stopped (%s)", reason)

    def _answer_parked(self, reason: str) -> None:
        """Each parked request gets its reply at a stop (`daemon_stopping`): its job only
        took contents (the request itself was never handled), so nothing was changed and
        it may be sent again. So does each request already waiting in the socket: it
        would otherwise be dropped unanswered with the socket, and its client would wait
        to notice the daemon gone, unsure whether it ran."""
        waiting = [split_route(frames)[:2] for frames in self._waiting_at_stop()]
        for route, payload in [*self._parked, *waiting]:
            error = ToolError(
                ErrorCode.DAEMON_STOPPING,
                f"the daemon stopped ({reason}) before this request's work was done; nothing"
                " was changed: send it again (a new daemon serves it)",
                {"reason": reason},
            )
            try:
                self._send(route, encode_reply(error_response(loose_id(payload), error.to_wire())))
            except zmq.ZMQError as e:
                log.warning("a request could not be answered at the stop: %s", e)
        self._parked.clear()

    def _waiting_at_stop(self) -> list[list[bytes]]:
        """Every request the socket holds, whatever their number, and any that arrives
        until it has been quiet for STOP_QUIET_MS: a frame the kernel held when the stop
        came may reach the socket only once libzmq's thread has read it."""
        waiting: list[list[bytes]] = []
        give_up = time.monotonic() + 1.0  # clients that never pause cannot hold the stop
        try:
            while time.monotonic() < give_up and self.router.poll(STOP_QUIET_MS, zmq.POLLIN):
                waiting += self._waiting()
        except zmq.ZMQError as e:  # the stop goes on: the journal must still be closed
            log.warning("requests waiting at the stop could not be taken: %s", e)
        return waiting

    # --- the loop -------------------------------------------------------------------------

    def _loop(self) -> None:
        poller = zmq.Poller()
        poller.register(self.router, zmq.POLLIN)
        poller.register(self.churn.socket, zmq.POLLIN)
        if self.watching is not None:
            poller.register(self.watching.socket, zmq.POLLIN)
        while self._stopping is None:
            busy = self.jobs.working or self.group.landing is not None or bool(self.leftovers)
            busy = busy or (self.watching is not None and self.watching.busy)
            # a job done on a thread of its own is looked at soon, not spun for
            wait_ms = WAIT_POLL_MS if self.jobs else POLL_MS
            ready = dict(poller.poll(0 if busy else wait_ms))
            self.turns.start()
            self.collector.resume()  # paused by the last turn's final run, if it had one
            try:
                self._turn(ready)
                self.churn.after_turn(quiet=not ready)
            except Exception as e:  # the journal failing outside any request: keep serving
                if not is_journal_failure(e):
                    raise
                log.error("the journal failed outside a request: %s", traceback.format_exc())
            finally:
                self.turns.stop()

    def _turn(self, ready: dict[Any, int]) -> None:
        """One turn of the loop: outside changes, late writes, requests, a job's slice."""
        if self.watching is not None:
            if self.watching.socket in ready or self.watching.busy:
                self.turns.label("outside changes")
            watch_tick(self.watching, ready, self.group)
        else:
            self._look_at_journal_files()
        if len(self.workspace.late_writes):
            self.group.carry_late(self.workspace.late_writes.due())
        self.group.report_flushes()  # a failed fsync is told as it happens, not at a commit
        if self.churn.socket in ready:
            self.churn.take_events()
        if self.router in ready and self._stopping is None:  # else answered at the stop
            self._serve_waiting()
        if self.leftovers:  # a finished job's plans, freed a few a turn (leftovers.py)
            self.leftovers.free_some()
        if not (self.group.landing is not None or self.jobs.working) or self._slice_waits():
            return
        if self.group.landing is not None:  # a big batch's writes land a slice a turn
            self.turns.label("landing slice")
            self.group.land_slice()
        else:  # after the requests waiting: none waits for more than a slice
            self.turns.label("job slice")
            self._work_on_job()

    def _slice_waits(self) -> bool:
        """A slice of long work waits for the next turn (at once: the loop does not
        sleep while there is some) when what this turn did (requests, outside changes)
        took half a slice already, so a turn holds the thread for about a slice, not a
        slice more; at most `SLICE_WAITS` turns in a row, so a steady flow of requests
        cannot starve it (at most one in a row let a big outside change's look, 60-70 ms,
        and a slice share a turn: 111-208 ms)."""
        waits = self._slice_waited < SLICE_WAITS and self.turns.elapsed() >= SLICE_S / 2
        self._slice_waited = self._slice_waited + 1 if waits else 0
        return waits

    def _look_at_journal_files(self) -> None:
        """With no watcher nothing commits between requests, yet a WAL unlinked must be
        taken back at once, not at the next write (a kill -9 meanwhile would lose what
        only the unlinked WAL holds): an empty commit looks at the journal's own files,
        as the watch tick's does each turn (daemon.store.journalfiles; ~20 us)."""
        with contextlib.suppress(JournalError):  # sealed or failed: the commit logs it
            self.group.commit(durable=False)

    def _serve_waiting(self) -> None:
        batch = self.group.batch = Batch()
        for frames in in_apply_order(self._waiting(), self.state.hunks):
            batch.bytes += len(frames[-1])
            if self._handle_frames(frames, batch):
                self.group.flush(batch)  # empties the batch, which goes on
        self.group.flush(batch)
        if batch.bytes >= LARGE_BYTES:
            give_back_memory()

    def _waiting(self) -> list[list[bytes]]:
        """The requests waiting now (up to MAX_BATCH), received before any is handled so
        that applies arriving together go in their hunks' order (`daemon.runtime.applyorder`)."""
        received: list[list[bytes]] = []
        for _ in range(MAX_BATCH):
            try:
                received.append(self.router.recv_multipart(zmq.NOBLOCK))
            except zmq.Again:
                break
        return received

    def _work_on_job(self) -> None:
        """A slice of the oldest parked request's job; when it is done, the request is
        handled again, for good, and answered like any other."""
        parked = self.jobs.work(self._context, self.journal)
        if parked is None:
            return
        self._parked.remove((parked.route, parked.payload))  # answered below
        batch = self.group.batch = Batch()
        self._early = parked.early  # temp files its slices wrote, for `_prepare` to take
        self.collector.pause()  # the final run's young objects: collected next turn
        try:
            if parked.error is not None:
                batch.replies.append((parked.route, parked.failed_reply()))
            else:
                self._handle_frames([*parked.route, parked.payload], batch, finished=parked.job)
        finally:
            self._early = None
            if not self.jobs.take_back(parked):  # (a final run may send it back to slices)
                parked.early.discard()
                self.leftovers.keep(parked.job)  # not freed all at once as `parked` goes
        self.group.flush(batch)

    def _handle_frames(
        self, frames: list[bytes], batch: Batch, finished: Job | None = None
    ) -> bool:
        """Handle one request into the batch; True when the batch must end after it.

        A write is prepared (temp file written, not yet synced) before its event is
        staged; the write round then serves its content to the rest of the batch, and
        the group commit's `flush` makes it durable with the batch. A failed write
        journals nothing. A removal ends the batch, as it did when the round's overlay
        held contents only (it serves a committed removal as a tombstone now, but the
        batches its tests cover end at one).
        """
        route, payload, refusal = split_route(frames)
        if refusal is not None:  # frames no client of ours sends: answered, none echoed
            batch.replies.append((route, error_response(loose_id(payload), refusal.to_wire())))
            return False
        staged_before = self.journal.last_seq
        self._answer = None
        try:  # the request boundary: whatever this request raises, it gets the reply
            response, prepared, agent = self._dispatch(payload, finished)
        except Exception as e:
            for item in self._unrounded:
                item.write.discard()
            self._unrounded.clear()
            self.group.unstage_after(staged_before)
            batch.replies.append((route, failure_reply(payload, e, "handling the request")))
            return False
        self._unrounded.clear()
        if not isinstance(response, Response):  # a job: answered when it is done
            self.jobs.park(route, payload, agent or "", response)
            self._parked.append((route, payload))
            return False
        if prepared:
            self.group.round.add(prepared, response.seq or 0, [len(batch.replies)], agent)
        if self._answer is not None:
            batch.answers[len(batch.replies)] = self._answer
        batch.replies.append((route, response))
        return self.group.round.removes

    def _dispatch(
        self, payload: bytes, finished: Job | None = None
    ) -> tuple[Response | Job, list[Prepared], str | None]:
        try:
            request = self._decode(payload)
            self.faults.on_request(request.method, request.agent)
            self.turns.label(request.method)
            handler, params = self._route(request)
            replay = self.state.answers.replay(request, params)  # a keyed request's retry
        except ToolError as e:
            return error_response(loose_id(payload), e.to_wire()), [], None
        if replay is not None:
            return replay, [], request.agent
        outcome, prepared = self._decide(handler, request, params, finished)
        records = self.group.record(request.agent, outcome, request.identity)
        if outcome.job is not None and outcome.error is None:
            return outcome.job, prepared, request.agent
        if prepared:
            self.faults.on_prepared(request.method, request.agent)
        seq = records[-1].seq if records else None
        if outcome.error is not None:
            error = outcome.error.to_wire()
            if not declared(request.method, error.code):
                _undeclared(request.method, error.code)
            response = Response(
                id=request.id, ok=False, error=error, seq=seq, warnings=outcome.warnings
            )
            return response, prepared, request.agent
        result = outcome.result
        response = Response(
            id=request.id, ok=True, result=result, warnings=outcome.warnings, seq=seq
        )
        remembered = answered(request, response, records, params)
        if remembered is not None:  # staged with the request's events: one transaction
            seq = self.group.stage(request.agent, remembered)
            self._answer = Answer(request.agent, remembered, seq)
        return response, prepared, request.agent

    def _decide(
        self, handler: Handler, request: Request, params: Any, finished: Job | None
    ) -> tuple[Outcome, list[Prepared]]:
        """Run the handler and prepare its writes. If a file it read changed on disk
        meanwhile (someone appending while an edit is computed), nothing has been
        recorded yet: the handler runs again on the new content — which journals
        the outside change and rebases the edit over it, or refuses it as stale.
        A file that keeps changing gets no refusal: the last plan goes ahead, and its
        landing carries it over what changed since (daemon/landing/exchange.py)."""
        with self.workspace.one_request():  # the handler and its writes' preparation
            return self._decide_once_judged(handler, request, params, finished)

    def _decide_once_judged(
        self, handler: Handler, request: Request, params: Any, finished: Job | None
    ) -> tuple[Outcome, list[Prepared]]:
        for attempt in range(1, WRITE_ATTEMPTS + 1):
            outcome = self._run(handler, request, params, finished)
            if not outcome.writes or outcome.error is not None:
                return outcome, []
            if self.group.round and any(w.data is None for w in outcome.writes):
                self.group.flush(self.group.batch)  # a removal goes alone (_handle_frames)
                outcome = self._run(handler, request, params, finished)  # on what is on disk
                if not outcome.writes or outcome.error is not None:
                    return outcome, []
            outcome, prepared = self._prepare(outcome)
            last = attempt == WRITE_ATTEMPTS
            if not prepared or last or self._unchanged_since_read(outcome.writes):
                return outcome, prepared
            for item in prepared:
                item.write.discard()
        raise AssertionError("unreachable: the last attempt returns")

    def _unchanged_since_read(self, writes: list[Write]) -> bool:
        """Every file is still what its handler based the new content on."""
        early = self._early.unchanged if self._early is not None else {}
        for write in writes:
            if write.based_on is None or self.workspace.own_writes.unchanged(
                write.path, write.based_on
            ):  # still exactly the daemon's last write of it: no re-read needed
                continue
            if early.get(write.path) == write.based_on:  # read in the job's slice, its
                continue  # stat the same since
            found = self.workspace.fingerprint(write.path)
            if (found.sha256 if found is not None else ABSENT) != write.based_on:
                log.info("%s changed on disk during a write; planning it again", write.path)
                return False
        return True

    def _prepare(self, outcome: Outcome) -> tuple[Outcome, list[Prepared]]:
        """Temp files for every write (synced later, with the batch), or an error
        outcome that journals nothing."""
        prepared: list[Prepared] = []
        try:
            for write in outcome.writes:
                if self._early is not None and (early := self._early.take(write)):
                    ready = early  # prepared in the job's slices (daemon/landing/earlywrites.py)
                    if write.data is not None:
                        self.cache.files.expect(ready.snapshot.path, ready.snapshot)
                elif write.data is None:
                    ready = self.workspace.prepare_delete(write.path)
                else:
                    ready = self.workspace.prepare_write(
                        write.path, write.data, durable=False, sha256=write.sha256
                    )
                    self.cache.files.expect(ready.snapshot.path, ready.snapshot)
                prepared.append(Prepared(ready, write.based_on, write.based_on_data))
                self._unrounded.append(prepared[-1])
        except ToolError as e:
            for done in prepared:
                done.write.discard()
            return Outcome(error=e, warnings=outcome.warnings), []
        return outcome, prepared

    def _decode(self, payload: bytes) -> Request:
        check_frame(payload, self.limits.frame_bytes)
        try:
            request = _REQUEST_DECODER.decode(payload)
        except DECODE_ERRORS as e:
            unknown = unknown_envelope_key(e)
            if unknown is not None:  # a misspelt idempotency_key must not pass unnoticed
                raise _unknown_key(unknown) from e
            message = f"undecodable request envelope: {decode_failure(e)}"
            raise ToolError(ErrorCode.BAD_REQUEST, message) from e
        problem = agent_problem(request.agent)
        if problem is not None:
            raise ToolError(ErrorCode.BAD_REQUEST, f"{problem} - at `$.agent`")
        return request

    def _route(self, request: Request) -> tuple[Handler, Any]:
        handler = self.handlers.get(request.method)
        if handler is None:
            raise ToolError(
                ErrorCode.UNKNOWN_METHOD,
                f"unknown method {request.method!r}",
                {"method": request.method, "known_methods": sorted(self.handlers)},
            )
        try:
            params = params_decoder(request.method).decode(request.params)
        except (UnicodeDecodeError, RecursionError) as e:
            message = f"undecodable params: {decode_failure(e)} - at `$.params`"
            raise ToolError(ErrorCode.INVALID_PARAMS, message, {"method": request.method}) from e
        except (msgspec.DecodeError, msgspec.ValidationError) as e:
            message = str(e).replace("- at `$", "- at `$.params")
            if "- at `$" not in message:
                message += " - at `$.params`"
            details: dict[str, Any] = {"method": request.method}
            hint = explain_validation(request.method, message)
            if hint:
                message, details["hint"] = f"{message} ({hint})", hint
            raise ToolError(ErrorCode.INVALID_PARAMS, message, details) from e
        check_text_fields(params, self.workspace.max_file_size)
        return handler, params

    def _context(
        self, agent: str, finished: Job | None = None, identity: str | None = None
    ) -> Context:
        ignore = tuple(self._watch.ignore) if self._watch is not None else ()
        return Context(
            agent, self.state, self.workspace, self.journal, self.info, self.cache,
            ignore, finished, identity,
        )  # fmt: skip

    def _run(
        self, handler: Handler, request: Request, params: Any, finished: Job | None
    ) -> Outcome:
        ctx = self._context(request.agent, finished, request.identity)
        try:
            with self.workspace.one_request():  # each path's confinement judged once
                return handler(ctx, params)
        except ToolError as e:
            return Outcome(error=e)
        except Exception as e:  # a bug of ours, or the journal failing: report it, keep serving
            log.error("error in %s: %s", request.method, traceback.format_exc())
            if is_journal_failure(e):
                return Outcome(error=journal_failure(e, f"handling {request.method}"))
            return Outcome(
                error=ToolError(
                    ErrorCode.INTERNAL_ERROR,
                    f"{type(e).__name__}: {e}",
                    {"method": request.method},
                )
            )


@functools.cache
def _undeclared(method: str, code: str) -> None:
    """Said once per pair: the method's guidance may not tell an agent what to do."""
    log.warning("%s answered %s, which schemas/toolerrors.py does not declare", method, code)


def _unknown_key(key: str) -> ToolError:
    known = ", ".join(envelope_keys())
    return ToolError(
        ErrorCode.BAD_REQUEST,
        f"unknown envelope key {key!r}: a request envelope holds only {known} - at `$.{key}`",
        {"unknown_envelope_key": key, "envelope_keys": list(envelope_keys())},
    )


def _unclean_previous_run(journal: Journal) -> tuple[int | None, int] | None:
    """(pid, ts of its last event) of the previous run when its last event is not
    `daemon_stopped` — killed, crashed or cut off by a power loss — or is one saying the
    loop ended by a crash; None after a clean stop or on a new journal. Read from the
    journal, not from leftover run files, so it holds even when the machine went down."""
    last = list(journal.records(newest_first=True, limit=1))
    if not last:
        return None
    if isinstance(last[0].event, DaemonStopped) and not was_crash(last[0].event.reason):
        return None
    found = list(journal.records(kind="daemon_started", newest_first=True, limit=1))
    started = found[0].event if found else None
    return (started.pid if isinstance(started, DaemonStarted) else None), last[0].ts
