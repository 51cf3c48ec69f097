"""The daemon's loop: receive, decode, dispatch, commit, write, reply.

One thread — the one that calls `Server.serve_forever` — owns the state and
the journal; nothing else writes either. Requests that arrive together are
handled one after another and committed together (group commit). A reply is
only sent after the events it reports are committed, so "applied" always
means durable. A request that writes files ends its batch: its events are
committed before its files are written, and the next request sees them.

Any bad input gets an error reply — undecodable frames, unknown methods,
mistyped params — never a crash and never a silent drop.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import signal
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

import msgspec
import zmq

from editjournal.daemon.handlers import (
    ABSENT,
    Context,
    DaemonInfo,
    Handler,
    Outcome,
    Write,
    registry,
)
from editjournal.daemon.journal import Journal, JournalError
from editjournal.daemon.logs import EVENTS
from editjournal.daemon.outside import Observation
from editjournal.daemon.publisher import Publisher
from editjournal.daemon.runfiles import (
    acquire_lock,
    ensure_state_dir,
    make_endpoint,
    remove_run_files,
    socket_path,
    write_endpoint,
)
from editjournal.daemon.state import State, fold
from editjournal.daemon.textcache import TextCache
from editjournal.daemon.watching import Watching, WatchSettings
from editjournal.daemon.workspace import PreparedWrite, Workspace
from editjournal.schemas.endpoint import JOURNAL_FILE, LOG_FILE
from editjournal.schemas.errors import ErrorCode, ToolError
from editjournal.schemas.events import DaemonStarted, DaemonStopped, Record
from editjournal.schemas.tools import TOOL_PARAMS, explain_validation
from editjournal.schemas.wire import Error, Request, Response

VERSION = "0.1.0"
WRITE_ATTEMPTS = 3  # plans of one write request, while its file keeps changing on disk
MAX_BATCH = 256
POLL_MS = 100
MAX_AGENT_LEN = 200

log = logging.getLogger("editjournal")
events_log = logging.getLogger(EVENTS)
_REQUEST_DECODER = msgspec.msgpack.Decoder(Request)
_LOOSE_DECODER = msgspec.msgpack.Decoder()
_RESPONSE_ENCODER = msgspec.msgpack.Encoder()


@dataclass
class _Batch:
    """Replies waiting for their events to be committed."""

    replies: list[tuple[list[bytes], Response]] = field(default_factory=list)


class Server:
    """One workspace's daemon."""

    def __init__(self, workspace: Workspace, watch: WatchSettings | None = None) -> None:
        """`watch=None`: outside changes are noticed only when a file is accessed."""
        self.workspace = workspace
        self.state_dir = ensure_state_dir(workspace.state_dir)
        self._lock_fd = acquire_lock(self.state_dir)
        self.journal = Journal(self.state_dir / JOURNAL_FILE)
        self.state: State = fold(self.journal.records())
        self.handlers: dict[str, Handler] = registry()
        self.decoders = {m: msgspec.msgpack.Decoder(TOOL_PARAMS[m]) for m in self.handlers}
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
        )
        self._stopping: str | None = None
        self._zmq = zmq.Context()
        self.router = self._zmq.socket(zmq.ROUTER)
        self.router.setsockopt(zmq.LINGER, 1000)
        self.publisher: Publisher | None = None
        self.watching: Watching | None = None
        self._watch = watch
        self.cache = TextCache()

    # --- lifecycle ------------------------------------------------------------------

    def serve_forever(self, on_ready: Callable[[], None] = lambda: None) -> None:
        """Bind, announce, loop until a signal asks to stop, then shut down cleanly."""
        self._install_signal_handlers()
        for stale in (self.sock_path, self.events_path):  # we hold the lock: nobody serves them
            stale.unlink(missing_ok=True)
        self.router.bind(self.address)
        self.publisher = Publisher(self._zmq, self.info.events_socket)
        self._record_now(None, self._started_event())
        if self._watch is not None:
            self.watching = Watching(self.workspace, self._zmq, self._watch)
            self.watching.start()  # first, so nothing slips between the check and the watch
            self.watching.at_startup(self.state, self._record_outside)
            self._commit()
        write_endpoint(
            self.state_dir,
            make_endpoint(self.workspace.root, self.address, self.info.events_socket, VERSION),
        )
        log.info("serving %s on %s (pid %d)", self.workspace.root, self.address, self.info.pid)
        on_ready()
        try:
            self._loop()
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
        self.router.close()
        if self.watching is not None:
            self.watching.stop()
        self._record_stop(reason)
        if self.publisher is not None:
            self.publisher.close()
        self._zmq.term()
        remove_run_files(self.state_dir, self.workspace.root, self.sock_path, self.events_path)
        self.journal.close()
        os.close(self._lock_fd)
        log.info("stopped (%s)", reason)

    # --- the loop -------------------------------------------------------------------------

    def _loop(self) -> None:
        poller = zmq.Poller()
        poller.register(self.router, zmq.POLLIN)
        if self.watching is not None:
            poller.register(self.watching.socket, zmq.POLLIN)
        while self._stopping is None:
            ready = dict(poller.poll(POLL_MS))
            if self.watching is not None:
                self._watch_tick(self.watching, ready)
            if self.router not in ready:
                continue
            batch = _Batch()
            for _ in range(MAX_BATCH):
                try:
                    frames = self.router.recv_multipart(zmq.NOBLOCK)
                except zmq.Again:
                    break
                if self._handle_frames(frames, batch):
                    self._flush(batch)
                    batch = _Batch()
            self._flush(batch)

    def _watch_tick(self, watching: Watching, ready: dict[Any, int]) -> None:
        """Outside changes first, so requests in the same turn see them."""
        if watching.socket in ready:
            watching.drain(self.state, self._record_outside)
        watching.check(self.state, self._record_outside)
        try:
            self._commit()
        except JournalError:
            watching.rescan_later("outside changes could not be journaled")

    def _record_outside(self, observation: Observation) -> None:
        """Stage and apply at once: the next path is compared with the state this left."""
        for event in observation.events:
            self.state.apply(self.journal.stage(None, event, observation.blobs))

    def _commit(self) -> None:
        """Make staged events durable, then tell the terminal, the log and subscribers.

        When the journal refuses (another process holds a write lock past the busy
        timeout, the disk is full, ...), the staged events are dropped, the state is
        folded again from what the journal really holds, and JournalError is raised
        for the caller to answer with `journal_unavailable`: nothing is half-recorded,
        and the daemon keeps serving.
        """
        try:
            records = self.journal.commit()
        except JournalError as e:
            log.error("%s; the state is rebuilt from the journal", e)
            self.state = fold(self.journal.records())
            raise
        if events_log.isEnabledFor(logging.DEBUG):  # no summary() built for nothing
            for record in records:
                events_log.debug(
                    "%d %s %s", record.seq, record.agent or "-", record.event.summary()
                )
        if self.publisher is not None:
            self.publisher.publish(records)

    def _flush(self, batch: _Batch) -> None:
        """Commit staged events, then reply: a reply never outruns its commit."""
        replies = batch.replies
        try:
            self._commit()
        except JournalError as e:
            replies = [(route, _unrecorded(response, e)) for route, response in replies]
        for route, response in replies:
            self.router.send_multipart([*route, _RESPONSE_ENCODER.encode(response)])

    def _handle_frames(self, frames: list[bytes], batch: _Batch) -> bool:
        """Handle one request into the batch; True when it wrote files (ends the batch).

        A write is prepared (temp file written and fsynced) before its event is
        staged, committed with it, and only then renamed into place: a failed
        write journals nothing, and a journaled write is on disk before the reply.
        """
        route, payload = frames[:-1], frames[-1]
        response, prepared = self._dispatch(payload)
        if prepared:
            try:
                self._commit()
            except JournalError as e:
                for write in prepared:
                    write.discard()
                batch.replies.append((route, _unrecorded(response, e)))
                return True
            response = self._publish(prepared, response)
        batch.replies.append((route, response))
        return bool(prepared)

    def _publish(self, prepared: list[PreparedWrite], response: Response) -> Response:
        try:
            for write in prepared:
                write.publish()
        except ToolError as e:  # after commit: the journal is ahead of the disk
            log.error("journaled write (seq %s) could not be renamed: %s", response.seq, e)
            for write in prepared:
                write.discard()
            error = ToolError(
                ErrorCode.INTERNAL_ERROR,
                f"the change was journaled (seq {response.seq}) but not written: {e.message}",
                {"seq": response.seq, **e.details},
            )
            return Response(id=response.id, ok=False, error=error.to_wire(), seq=response.seq)
        return response

    def _dispatch(self, payload: bytes) -> tuple[Response, list[PreparedWrite]]:
        try:
            request = self._decode(payload)
            handler, params = self._route(request)
        except ToolError as e:
            return _error_response(_loose_id(payload), e.to_wire()), []
        outcome, prepared = self._decide(handler, request, params)
        records = self._record(request.agent, outcome)
        seq = records[-1].seq if records else None
        if outcome.error is not None:
            error = outcome.error.to_wire()
            return Response(
                id=request.id, ok=False, error=error, seq=seq, warnings=outcome.warnings
            ), prepared
        result = outcome.result
        return Response(
            id=request.id, ok=True, result=result, warnings=outcome.warnings, seq=seq
        ), prepared

    def _decide(
        self, handler: Handler, request: Request, params: Any
    ) -> tuple[Outcome, list[PreparedWrite]]:
        """Run the handler and prepare its writes. If a file it read changed on disk
        meanwhile (someone appending while an edit is computed), nothing has been
        recorded yet: the handler runs again on the new content — which journals
        the outside change and rebases the edit over it, or refuses it as stale."""
        for _ in range(WRITE_ATTEMPTS):
            outcome = self._run(handler, request, params)
            if not outcome.writes or outcome.error is not None:
                return outcome, []
            outcome, prepared = self._prepare(outcome)
            if not prepared or self._unchanged_since_read(outcome.writes):
                return outcome, prepared
            for write in prepared:
                write.discard()
        paths = sorted({w.path for w in outcome.writes})
        error = ToolError(
            ErrorCode.FILE_CHANGING,
            f"{', '.join(paths)} kept changing on disk while the edit was being written"
            f" ({WRITE_ATTEMPTS} attempts); nothing was written",
            {"paths": paths, "attempts": WRITE_ATTEMPTS},
        )
        return Outcome(error=error, warnings=outcome.warnings), []

    def _unchanged_since_read(self, writes: list[Write]) -> bool:
        """Every file is still what its handler based the new content on."""
        for write in writes:
            if write.based_on is None:
                continue
            found = self.workspace.fingerprint(write.path)
            if (found.sha256 if found is not None else ABSENT) != write.based_on:
                log.info("%s changed on disk during a write; planning it again", write.path)
                return False
        return True

    def _prepare(self, outcome: Outcome) -> tuple[Outcome, list[PreparedWrite]]:
        """Temp files for every write, or an error outcome that journals nothing."""
        prepared: list[PreparedWrite] = []
        try:
            for write in outcome.writes:
                if write.data is None:
                    prepared.append(self.workspace.prepare_delete(write.path))
                else:
                    prepared.append(self.workspace.prepare_write(write.path, write.data))
        except ToolError as e:
            for done in prepared:
                done.discard()
            return Outcome(error=e, warnings=outcome.warnings), []
        return outcome, prepared

    def _decode(self, payload: bytes) -> Request:
        try:
            request = _REQUEST_DECODER.decode(payload)
        except (msgspec.DecodeError, msgspec.ValidationError) as e:
            raise ToolError(ErrorCode.BAD_REQUEST, f"undecodable request envelope: {e}") from e
        if not request.agent or len(request.agent) > MAX_AGENT_LEN:
            raise ToolError(
                ErrorCode.BAD_REQUEST,
                f"agent must be a non-empty string of at most {MAX_AGENT_LEN} characters"
                " - at `$.agent`",
            )
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
            return handler, self.decoders[request.method].decode(request.params)
        except (msgspec.DecodeError, msgspec.ValidationError) as e:
            message = str(e).replace("- at `$", "- at `$.params")
            if "- at `$" not in message:
                message += " - at `$.params`"
            details: dict[str, Any] = {"method": request.method}
            hint = explain_validation(request.method, message)
            if hint:
                message, details["hint"] = f"{message} ({hint})", hint
            raise ToolError(ErrorCode.INVALID_PARAMS, message, details) from e

    def _run(self, handler: Handler, request: Request, params: Any) -> Outcome:
        ctx = Context(
            request.agent, self.state, self.workspace, self.journal, self.info, self.cache
        )
        try:
            return handler(ctx, params)
        except ToolError as e:
            return Outcome(error=e)
        except Exception as e:  # a bug of ours: report it, keep serving
            log.error("internal error in %s: %s", request.method, traceback.format_exc())
            return Outcome(
                error=ToolError(
                    ErrorCode.INTERNAL_ERROR,
                    f"{type(e).__name__}: {e}",
                    {"method": request.method},
                )
            )

    def _record(self, agent: str, outcome: Outcome) -> list[Record]:
        """Stage the outcome's events and fold them into state, in one order."""
        records = []
        for event in outcome.events:
            who = agent if event.caused_by_agent else None
            record = self.journal.stage(who, event, outcome.blobs)
            self.state.apply(record)
            records.append(record)
        return records

    def _record_now(self, agent: str | None, event: Any) -> Record:
        record = self.journal.stage(agent, event)
        self.state.apply(record)
        self._commit()
        return record

    def _record_stop(self, reason: str) -> None:
        """`daemon_stopped`, if the journal takes it: a stop must not fail on it."""
        try:
            self._record_now(None, DaemonStopped(pid=self.info.pid, reason=reason))
        except JournalError:
            log.error("daemon_stopped could not be journaled")


def _unclean_previous_run(journal: Journal) -> tuple[int | None, int] | None:
    """(pid, ts of its last event) of the previous run when its last event is not
    `daemon_stopped` — killed, crashed or cut off by a power loss; None after a clean
    stop or on a new journal. Read from the journal, not from leftover run files, so
    it holds even when the machine itself went down."""
    last = list(journal.records(newest_first=True, limit=1))
    if not last or isinstance(last[0].event, DaemonStopped):
        return None
    found = list(journal.records(kind="daemon_started", newest_first=True, limit=1))
    started = found[0].event if found else None
    return (started.pid if isinstance(started, DaemonStarted) else None), last[0].ts


def _loose_id(payload: bytes) -> int | str | None:
    """The request id, if the frame is a map that has a usable one."""
    try:
        value = _LOOSE_DECODER.decode(payload)
    except msgspec.DecodeError:
        return None
    rid = value.get("id") if isinstance(value, dict) else None
    return rid if isinstance(rid, (int, str)) and not isinstance(rid, bool) else None


def _error_response(rid: int | str | None, error: Error) -> Response:
    return Response(id=rid, ok=False, error=error)


def _unrecorded(response: Response, cause: JournalError) -> Response:
    """The reply to a request whose events the journal would not take."""
    error = ToolError(
        ErrorCode.JOURNAL_UNAVAILABLE,
        f"the journal could not record this request, so nothing was changed: {cause}",
        {"seq": response.seq} if response.seq is not None else {},
    )
    return _error_response(response.id, error.to_wire())
