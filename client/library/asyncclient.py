"""The asyncio client: the blocking `Client`'s conversation, awaited instead of waited.

For harnesses that run on an event loop (the MCP server among them): every call
yields to the loop while the daemon works, so one process can talk for many
agents at once without a thread each. It shares every decision with the blocking
`Client` (`client.exchange`): how a request is framed, whether an answer is the
daemon's own, when a request may be sent again after the daemon died, what an
error reply raises. Starting a daemon (a process spawn and a wait for its
endpoint) runs in a worker thread so the loop keeps serving.

    async with AsyncClient("ws", "agent-a") as client:
        read = await client.read_file("app.py", hashes=True)

One AsyncClient serves one task at a time (calls are serialised by a lock, so
tasks sharing one wait their turn rather than interleave on the socket).
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Sequence
from typing import Any, TypeVar

import zmq
import zmq.asyncio

from editjournal.client.library.calls import AsyncToolCalls
from editjournal.client.library.connection import is_listening, live_endpoint, start_daemon
from editjournal.client.library.errors import DaemonUnavailable
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
from editjournal.client.library.trust import Untrusted
from editjournal.schemas.endpoint import Endpoint
from editjournal.schemas.tools import CheckpointRestoreResult, Params, Result
from editjournal.schemas.wire import RESPONSE_DECODER, Response

R = TypeVar("R", bound=Result)


class AsyncClient(Exchange, AsyncToolCalls):
    """A connection to one workspace's daemon on behalf of one agent (asyncio).

    Connects on `connect()`, `async with`, or the first call."""

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
        super().__init__(workspace, agent, timeout, keep_identity, credential)
        self._start = (autostart, start_timeout, tuple(daemon_options))
        self._zmq = zmq.asyncio.Context.instance()
        self._socket: zmq.asyncio.Socket | None = None
        self._turn = asyncio.Lock()

    async def connect(self) -> AsyncClient:
        """Find (or start) the daemon and confirm it; a second call does nothing."""
        if self._socket is None:
            await self._open(await self._find_daemon())
        return self

    async def _find_daemon(self) -> Endpoint:
        autostart, start_timeout, daemon_options = self._start
        endpoint = live_endpoint(self.root)
        if endpoint is None and autostart:
            endpoint = await asyncio.to_thread(
                start_daemon, self.root, start_timeout, daemon_options
            )
            self.started_daemon = endpoint
        if endpoint is None:
            raise self.no_daemon()
        return endpoint

    async def _open(self, endpoint: Endpoint) -> zmq.asyncio.Socket:
        """A socket to `endpoint`, confirmed to be the daemon's own (see Exchange)."""
        if self._socket is not None:
            self._socket.close(linger=0)
        self.use(endpoint)
        sock = self._socket = self._zmq.socket(zmq.DEALER)
        sock.setsockopt(zmq.LINGER, 0)
        sock.connect(endpoint.socket)
        try:
            self.confirmed(await self._converse("ping", None, None), endpoint)
        except Untrusted:
            self.close()
            raise
        return sock

    async def _revive(self) -> None:
        await self._open(await self._find_daemon())

    # --- the envelope ---------------------------------------------------------------------

    async def call(
        self, method: str, params: ParamsGiven = None, *, idempotency_key: str | None = None
    ) -> Response:
        """Send one request and return the whole response envelope (as `Client.call`)."""
        async with self._turn:
            await self.connect()
            return await self._converse(method, params, idempotency_key)

    async def _converse(
        self, method: str, params: ParamsGiven, idempotency_key: str | None
    ) -> Response:
        rid, frame = self.frame(method, params, idempotency_key)
        stale_pid = pid_gone(self.daemon_pid)
        if stale_pid and not is_listening(self.address):
            await self._revive()
            stale_pid = False
        try:
            response = await self._send_and_await(frame, rid, method)
        except DaemonDied:
            if not may_retry(method, idempotency_key):
                raise self.died(method) from None
            response = await self._resend(frame, rid, method)
        if stopping(response):  # not run: any request may go to the daemon after it
            response = await self._after_stop(frame, rid, method, response)
        if stale_pid:
            self.adopt_serving_daemon()
        self.last_response = response
        return response

    async def _resend(self, frame: bytes, rid: int, method: str) -> Response:
        """Once, to a new daemon (found or started), a request the last one did not run."""
        await self._revive()
        return await self._send_once(frame, rid, method)

    async def _send_once(self, frame: bytes, rid: int, method: str) -> Response:
        try:
            return await self._send_and_await(frame, rid, method)
        except DaemonDied:
            raise self.died(method) from None

    async def _after_stop(self, frame: bytes, rid: int, method: str, refused: Response) -> Response:
        """As `Client._after_stop`: once, to the daemon serving after the stopping one."""
        gone = await asyncio.to_thread(wait_gone, self.daemon_pid, self.address, self.timeout)
        if not gone:
            return refused
        try:
            await self._revive()
        except DaemonUnavailable:  # none serves, and this client may not start one
            return refused
        return await self._send_once(frame, rid, method)

    async def _send_and_await(self, frame: bytes, rid: int, method: str) -> Response:
        """The reply with our id; replies to requests that timed out earlier are dropped."""
        sock = self._socket
        assert sock is not None
        await sock.send(frame)
        deadline = time.monotonic() + self.timeout
        while (remaining := deadline - time.monotonic()) > 0:
            if not await sock.poll(max(1, int(min(remaining, POLL_SLICE_S) * 1000))):
                if not daemon_alive(self.daemon_pid, self.address, thorough=True):
                    raise DaemonDied(method)
                continue
            response = RESPONSE_DECODER.decode(await sock.recv())
            if response.id == rid:
                return response
        raise self.timed_out(method)

    async def request(
        self, method: str, params: ParamsGiven = None, *, idempotency_key: str | None = None
    ) -> Any:
        """Call `method`; return its result, or raise `RequestError` for an error reply."""
        return result_of(await self.call(method, params, idempotency_key=idempotency_key))

    async def _tool(self, method: str, params: Params, result_type: type[R]) -> R:
        return typed(method, await self.request(method, params), result_type)

    async def checkpoint_restore(
        self,
        id_or_name: int | str,
        *,
        paths: Sequence[str] | None = None,
        remove_new: bool = False,
    ) -> CheckpointRestoreResult:
        """Write a checkpoint's contents back (all or nothing); an id may be an int."""
        return await super().checkpoint_restore(str(id_or_name), paths=paths, remove_new=remove_new)

    # --- lifecycle ------------------------------------------------------------------------

    def close(self) -> None:
        if self._socket is not None:
            self._socket.close(linger=0)
            self._socket = None

    async def __aenter__(self) -> AsyncClient:
        return await self.connect()

    async def __aexit__(self, *exc: object) -> None:
        self.close()
