"""The blocking `Client`: one connection to a workspace's daemon, on behalf of one agent.

Exported as `editjournal.client.Client` (client/__init__.py exports lazily, so a
module that needs only part of the client, such as the harness hook, does not pay
for the whole of it).
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from typing import Any, TypeVar

import zmq

from editjournal.client.library.calls import ToolCalls
from editjournal.client.library.connection import is_listening, live_endpoint, start_daemon
from editjournal.client.library.errors import (
    DaemonUnavailable,
)
from editjournal.client.library.exchange import Exchange, ParamsGiven, result_of, typed
from editjournal.client.library.recovery import (
    POLL_SLICE_S,
    DaemonDied,
    daemon_alive,
    may_retry,
    pid_gone,
    stopping,
    wait_gone,
)
from editjournal.client.library.subscription import Subscription
from editjournal.client.library.trust import Untrusted
from editjournal.schemas.endpoint import Endpoint
from editjournal.schemas.errors import ErrorCode
from editjournal.schemas.tools import CheckpointRestoreResult, HunkPlanResult, Params, Result
from editjournal.schemas.wire import RESPONSE_DECODER, Response

R = TypeVar("R", bound=Result)


class Client(Exchange, ToolCalls):
    """A connection to one workspace's daemon on behalf of one agent (blocking).

    One typed method per tool (`ToolCalls`, generated from the params Structs),
    `request` for any method by name, `call` for the whole reply envelope."""

    def __init__(
        self,
        workspace: str | os.PathLike[str] | None = None,
        agent: str | None = None,
        *,
        autostart: bool = True,
        timeout: float = 30.0,
        start_timeout: float = 15.0,
        daemon_options: Sequence[str] = (),
        keep_identity: bool = False,
        credential: str | None = None,
    ) -> None:
        """`daemon_options`: command-line options for a daemon this client starts.
        `keep_identity`, `credential`: which identity this client is (`Exchange`): by
        default one of this object's own."""
        super().__init__(workspace, agent, timeout, keep_identity, credential)
        self._start = (autostart, start_timeout, tuple(daemon_options))
        self._zmq: zmq.Context[zmq.Socket[bytes]] = zmq.Context.instance()
        endpoint = self._find_daemon()
        self._socket = self._connect(endpoint)
        self._confirm(endpoint)

    def _find_daemon(self) -> Endpoint:
        """The serving daemon's endpoint, starting one when allowed."""
        autostart, start_timeout, daemon_options = self._start
        endpoint = live_endpoint(self.root)
        if endpoint is None and autostart:
            endpoint = start_daemon(self.root, start_timeout, daemon_options)
            self.started_daemon = endpoint
        if endpoint is None:
            raise self.no_daemon()
        return endpoint

    def _revive(self) -> None:
        """After the daemon died: find or start a new one and connect to it afresh
        (closing the old socket drops whatever was queued for the dead one)."""
        endpoint = self._find_daemon()
        self._socket.close(linger=0)
        self._socket = self._connect(endpoint)
        self._confirm(endpoint)

    def _confirm(self, endpoint: Endpoint) -> None:
        try:
            self.confirmed(self.call("ping"), endpoint)
        except Untrusted:
            self._socket.close(linger=0)
            raise

    def _connect(self, endpoint: Endpoint) -> zmq.Socket[bytes]:
        self.use(endpoint)
        sock = self._zmq.socket(zmq.DEALER)
        sock.setsockopt(zmq.LINGER, 0)
        sock.connect(endpoint.socket)
        return sock

    # --- the envelope ---------------------------------------------------------------------

    def call(
        self,
        method: str,
        params: ParamsGiven = None,
        *,
        idempotency_key: str | None = None,
    ) -> Response:
        """Send one request and return the whole response envelope, ok or not.

        With `idempotency_key`, a retry (same key, method and params) returns the first
        reply instead of applying twice. A daemon found dead is replaced (a new one is
        started unless `autostart=False`); a request it died while handling is sent
        again only when that is safe (read-only, or keyed)."""
        rid, frame = self.frame(method, params, idempotency_key)
        stale_pid = pid_gone(self.daemon_pid)  # gone, yet something may serve its socket
        if stale_pid and not is_listening(self.address):
            self._revive()
            stale_pid = False
        self._socket.send(frame)
        try:
            response = self._await(rid, method)
        except DaemonDied:
            if not may_retry(method, idempotency_key):
                raise self.died(method) from None
            response = self._resend(frame, rid, method)
        if stopping(response):  # not run: any request may go to the daemon after it
            response = self._after_stop(frame, rid, method, response)
        if stale_pid:
            self.adopt_serving_daemon()
        self.last_response = response
        return response

    def _resend(self, frame: bytes, rid: int, method: str) -> Response:
        """Once, to a new daemon, a request its dead predecessor never answered."""
        self._revive()
        return self._resend_here(frame, rid, method)

    def _after_stop(self, frame: bytes, rid: int, method: str, refused: Response) -> Response:
        """Once, to the daemon serving after the stopping one has gone (started unless
        `autostart=False`); with none, the `daemon_stopping` reply stands."""
        if not wait_gone(self.daemon_pid, self.address, self.timeout):
            return refused
        try:
            self._revive()
        except DaemonUnavailable:
            return refused
        return self._resend_here(frame, rid, method)

    def _resend_here(self, frame: bytes, rid: int, method: str) -> Response:
        self._socket.send(frame)
        try:
            return self._await(rid, method)
        except DaemonDied:
            raise self.died(method) from None

    def _await(self, rid: int, method: str) -> Response:
        """The reply with our id; replies to requests that timed out earlier are dropped."""
        deadline = time.monotonic() + self.timeout
        while (remaining := deadline - time.monotonic()) > 0:
            if not self._socket.poll(max(1, int(min(remaining, POLL_SLICE_S) * 1000))):
                if not daemon_alive(self.daemon_pid, self.address, thorough=True):
                    raise DaemonDied(method)
                continue
            response = RESPONSE_DECODER.decode(self._socket.recv())
            if response.id == rid:
                return response
        raise self.timed_out(method)

    def request(
        self,
        method: str,
        params: ParamsGiven = None,
        *,
        idempotency_key: str | None = None,
    ) -> Any:
        """Call `method`; return its result, or raise `RequestError` for an error reply."""
        return result_of(self.call(method, params, idempotency_key=idempotency_key))

    def _tool(self, method: str, params: Params, result_type: type[R]) -> R:
        return typed(method, self.request(method, params), result_type)

    # --- conveniences over the generated calls ------------------------------------------------

    def prepare_file_insert(
        self, path: str, anchor: str, content: str, *, after: bool = True, **more: Any
    ) -> HunkPlanResult:
        """Plan inserting `content` after (or, `after=False`, before) the line `anchor`
        finds; `more`: match, occurrence, existing_hunk_id."""
        insert = self.prepare_file_insert_after if after else self.prepare_file_insert_before
        return insert(path, anchor, content, **more)

    def checkpoint_restore(
        self,
        id_or_name: int | str,
        *,
        paths: Sequence[str] | None = None,
        remove_new: bool = False,
    ) -> CheckpointRestoreResult:
        """Write a checkpoint's contents back (all or nothing); an id may be an int."""
        return super().checkpoint_restore(str(id_or_name), paths=paths, remove_new=remove_new)

    def subscribe(self, paths: Sequence[str] | None = None) -> Subscription:
        """Committed events as they happen (all, or only those about `paths`)."""
        endpoint = live_endpoint(self.root)
        if endpoint is None or not endpoint.events:
            raise DaemonUnavailable.local(
                ErrorCode.DAEMON_UNAVAILABLE, f"no daemon publishes events for {self.root}"
            )
        return Subscription(self._zmq, endpoint.events, paths)

    # --- lifecycle ------------------------------------------------------------------------

    def close(self) -> None:
        self._socket.close(linger=0)

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
