"""What the blocking `Client` and the `AsyncClient` share: everything but the waiting.

A request's life has decisions (which daemon, is its answer really its own, may a
request be sent again, what error a reply means) and waits (connect, send, poll,
receive). The decisions live here, once, in `Exchange`; each client only supplies
the waits, blocking or awaited. Nothing here touches a socket.
"""

from __future__ import annotations

import functools
import itertools
import os
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from editjournal.client.library.connection import (
    live_endpoint,
    require_workspace,
    state_dir,
    workspace_root,
)
from editjournal.client.library.credentials import kept_credential
from editjournal.client.library.errors import (
    BadRequest,
    DaemonUnavailable,
    RequestError,
    RequestTimeout,
)
from editjournal.client.library.recovery import died_during
from editjournal.client.library.trust import Untrusted, is_our_daemon
from editjournal.schemas.endpoint import ENDPOINT_FILE, Endpoint
from editjournal.schemas.errors import ErrorCode
from editjournal.schemas.tools import TOOL_RESULTS, Params, Result
from editjournal.schemas.units import format_binary_size, format_size
from editjournal.schemas.wire import (
    PROTOCOL_VERSION,
    REQUEST_ENCODER,
    Request,
    Response,
    agent_problem,
    identity_of,
    new_credential,
)

R = TypeVar("R", bound=Result)
ParamsGiven = dict[str, Any] | msgspec.Struct | None
_PARAMS_ENCODER = msgspec.msgpack.Encoder()


def default_agent() -> str:
    return os.environ.get("EDITJOURNAL_AGENT") or "anonymous"


class Exchange:
    """One agent's conversation with one workspace's daemon, minus the I/O."""

    def __init__(
        self,
        workspace: str | os.PathLike[str] | None,
        agent: str | None,
        timeout: float,
        keep_identity: bool = False,
        credential: str | None = None,
    ) -> None:
        """The identity (schemas/wire.py): `credential` when given (a process that
        keeps its own, to be the same identity after it restarts); with `keep_identity`
        the credential this user keeps for the agent in this workspace
        (client/library/credentials.py: the CLI's, one process per command); else a
        fresh one for this object, kept across its reconnects."""
        self.root: Path = require_workspace(workspace_root(workspace))
        self.agent = agent or default_agent()
        problem = agent_problem(self.agent)
        if problem is not None:  # the daemon's rule, before anything is sent (even the
            # trust check's ping, which a refused name would make look like an impostor)
            message = f"{problem} - at `$.agent`"
            raise BadRequest.local(ErrorCode.BAD_REQUEST, message, agent=self.agent)
        self.timeout = timeout
        # what binds this agent's hunks, plain undo and idempotency keys to this client
        # (schemas/wire.py): the same for every request of this object, reconnects too
        if credential is None:
            kept = keep_identity
            credential = kept_credential(self.root, self.agent) if kept else new_credential()
        self.credential = credential
        self.last_response: Response | None = None
        self.started_daemon: Endpoint | None = None
        self.address = ""
        self.daemon_pid: int | None = None
        self.max_frame = 0  # the daemon's frame limit, once known (`use`)
        self._adopt_tried: int | None = None  # see adopt_serving_daemon
        self._ids = itertools.count(1)

    def frame(
        self, method: str, params: ParamsGiven, idempotency_key: str | None
    ) -> tuple[int, bytes]:
        """A new request's id and its frame."""
        rid = next(self._ids)
        body = msgspec.Raw(encoded_params(method, params))
        request = Request(
            id=rid,
            method=method,
            agent=self.agent,
            params=body,
            idempotency_key=idempotency_key,
            credential=self.credential,
        )
        frame = REQUEST_ENCODER.encode(request)
        if 0 < self.max_frame < len(frame):
            raise self.too_large(method, len(frame))
        return rid, frame

    def too_large(self, method: str, size: int) -> BadRequest:
        """The daemon's own refusal, made here: nothing is sent (a frame past twice the
        limit would be dropped unread and unanswered, the call waiting out its timeout)."""
        return BadRequest.local(
            ErrorCode.REQUEST_TOO_LARGE,
            f"the request is {format_size(size)}, over the daemon's"
            f" {format_binary_size(self.max_frame)} frame limit: nothing was sent",
            size=size,
            limit=self.max_frame,
            method=method,
        )

    @property
    def identity(self) -> str | None:
        """What the daemon journals as this client's identity (its credential's fingerprint)."""
        return identity_of(self.credential)

    def use(self, endpoint: Endpoint) -> None:
        """Talk to `endpoint` from now on: refused, before any socket, when its daemon
        speaks another protocol than this client (its run file says which)."""
        self._check_protocol(endpoint.protocol, endpoint.pid)
        self.address, self.daemon_pid = endpoint.socket, endpoint.pid
        self.max_frame = endpoint.max_frame

    def _check_protocol(self, protocol: object, pid: int | None) -> None:
        """A daemon of another protocol version may read a request otherwise than it was
        meant (schemas/wire.py says when the version goes up): nothing is sent to it."""
        if protocol == PROTOCOL_VERSION:
            return
        raise DaemonUnavailable.local(
            ErrorCode.DAEMON_UNAVAILABLE,
            f"the daemon serving {self.root} (pid {pid}) speaks protocol {protocol!r}, this"
            f" client protocol {PROTOCOL_VERSION}: nothing was sent to it; stop it"
            " (`editjournal stop`) so a daemon of this client's version serves, or use a"
            " client of the daemon's version",
            workspace=str(self.root),
            daemon_protocol=protocol,
            client_protocol=PROTOCOL_VERSION,
        )

    def no_daemon(self) -> DaemonUnavailable:
        return DaemonUnavailable.local(
            ErrorCode.DAEMON_UNAVAILABLE,
            f"no daemon serves {self.root}",
            workspace=str(self.root),
        )

    def confirmed(self, response: Response, endpoint: Endpoint) -> None:
        """Before anything else is sent: the socket is the daemon's own, which answers
        `ping` with the pid its endpoint file names (client/library/trust.py checked the files).
        Raises `Untrusted` otherwise; the caller closes the socket. And it speaks this
        client's protocol (its ping says which): `daemon_unavailable` otherwise."""
        result = response.result if isinstance(response.result, dict) else {}
        answered = result.get("pid")
        if response.ok and answered == endpoint.pid:
            self._check_protocol(result.get("protocol"), answered)
            return
        if response.ok and isinstance(answered, int) and is_our_daemon(answered, str(self.root)):
            self.daemon_pid = answered  # a new daemon, its endpoint file not yet rewritten
            self._check_protocol(result.get("protocol"), answered)
            return
        raise Untrusted(
            state_dir(self.root) / ENDPOINT_FILE,
            f"names pid {endpoint.pid}, but the process on {endpoint.socket} answers as"
            f" pid {answered}",
        )

    def adopt_serving_daemon(self) -> None:
        """A reply came though the daemon's pid is gone: another daemon (someone else
        started it) serves the same socket. Its pid, from its endpoint file, is the one
        to report and to check, so later calls need not probe the socket."""
        if self.daemon_pid == self._adopt_tried:
            return
        self._adopt_tried = self.daemon_pid  # once per pid: it may be of another namespace
        endpoint = live_endpoint(self.root)
        if endpoint is not None and endpoint.socket == self.address:
            self.daemon_pid = endpoint.pid

    def died(self, method: str) -> DaemonUnavailable:
        return died_during(method, self.daemon_pid, str(self.root))

    def timed_out(self, method: str) -> RequestTimeout:
        return RequestTimeout.local(
            ErrorCode.TIMEOUT,
            f"the daemon at {self.address} did not answer {method} within {self.timeout:g} s",
            method=method,
            address=self.address,
        )


def result_of(response: Response) -> Any:
    """A reply's result, or its error raised as the exception of its code's family."""
    if not response.ok:
        assert response.error is not None
        raise RequestError.from_wire(response.error, response.seq)
    return response.result


def typed(method: str, result: Any, result_type: type[R]) -> R:
    assert TOOL_RESULTS[method] is result_type
    return msgspec.convert(result, result_type)


def wire_params(params: Params) -> dict[str, Any]:
    """A params Struct as sent: the fields given, the defaults left for the daemon
    (omitted, not null), so a request reads as one written by hand."""
    given = {}
    for field in _fields(type(params)):
        value = getattr(params, field.name)
        if value is None or (not field.required and value == field.default):
            continue
        given[field.name] = value
    return given


@functools.cache
def _fields(params: type[Params]) -> tuple[msgspec.structs.FieldInfo, ...]:
    """A params type's fields, worked out once: `msgspec.structs.fields` evaluates the
    annotations on every call (~0.2 ms a request, a fifth of a small edit's client side)."""
    return msgspec.structs.fields(params)


def encoded_params(method: str, params: ParamsGiven) -> bytes:
    """The params as msgpack; what no frame can carry (an integer past 64 bits, an object
    msgpack has no type for) is the caller's `invalid_params`, never a bare exception."""
    if isinstance(params, Params):
        params = wire_params(params)
    try:
        return _PARAMS_ENCODER.encode(params if params is not None else {})
    except (OverflowError, TypeError, msgspec.EncodeError) as e:
        raise RequestError(
            ErrorCode.INVALID_PARAMS.value,
            f"{method}: params cannot be sent: {e} (integers fit 64 bits; seqs and line"
            " numbers far less, see the tool's schema)",
            {"method": method},
            "check the values against the tool's schema (editjournal tools --format mcp)",
        ) from None
