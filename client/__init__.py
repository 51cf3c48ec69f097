"""The editjournal client: one method per tool, over ZeroMQ, to the workspace's daemon.

`Client(workspace=..., agent=...)` finds the daemon through
`.editjournal/daemon.json`, starts one when none serves (unless
`autostart=False`; `started_daemon` then holds the endpoint of the daemon it
started, so a CLI can say so), and raises `RequestError` for error replies. A
workspace that does not exist raises `WorkspaceNotFound`; nothing is created. It depends
only on pyzmq, msgspec and `schemas` — never on the daemon package. A Client
is not thread-safe: use one per thread or process.
"""

from __future__ import annotations

import itertools
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeVar

import msgspec
import zmq

from editjournal.client.connection import (
    is_listening,
    live_endpoint,
    require_workspace,
    start_daemon,
    state_dir,
    workspace_root,
)
from editjournal.client.errors import (
    AnchorProblem,
    ApplyRejected,
    BadRequest,
    ChangeRefused,
    CheckpointProblem,
    DaemonProblem,
    DaemonUnavailable,
    FileRefused,
    HunkProblem,
    JournalProblem,
    NoMatch,
    RequestError,
    RequestTimeout,
    StaleAnchor,
    StaleWrite,
    StateMismatch,
    UndoConflict,
    WorkspaceNotFound,
)
from editjournal.client.recovery import (
    POLL_SLICE_S,
    DaemonDied,
    daemon_alive,
    died_during,
    may_retry,
    pid_gone,
)
from editjournal.client.subscription import Subscription
from editjournal.client.trust import Untrusted, is_our_daemon
from editjournal.schemas.endpoint import ENDPOINT_FILE, Endpoint
from editjournal.schemas.errors import ErrorCode
from editjournal.schemas.tools import (
    TOOL_RESULTS,
    AgentStatusResult,
    ApplyResult,
    AtomicResult,
    BlameResult,
    CheckpointCreateResult,
    CheckpointListResult,
    CheckpointRestoreResult,
    DiscardHunkResult,
    EditResult,
    HistoryResult,
    HunkPlanResult,
    ListHunksResult,
    LogResult,
    Op,
    OverwriteResult,
    PingResult,
    ReadFileResult,
    ReadManyFilesResult,
    Result,
    SafePatchResult,
    ShowResult,
    StatsResult,
    StatusResult,
    UndoResult,
)
from editjournal.schemas.wire import REQUEST_ENCODER, RESPONSE_DECODER, Request, Response

__all__ = [
    "AnchorProblem",
    "ApplyRejected",
    "BadRequest",
    "ChangeRefused",
    "CheckpointProblem",
    "Client",
    "DaemonProblem",
    "DaemonUnavailable",
    "FileRefused",
    "HunkProblem",
    "JournalProblem",
    "NoMatch",
    "RequestError",
    "RequestTimeout",
    "StaleAnchor",
    "StaleWrite",
    "StateMismatch",
    "Subscription",
    "UndoConflict",
    "WorkspaceNotFound",
]

R = TypeVar("R", bound=Result)
_PARAMS_ENCODER = msgspec.msgpack.Encoder()


def default_agent() -> str:
    return os.environ.get("EDITJOURNAL_AGENT") or "anonymous"


class Client:
    """A connection to one workspace's daemon on behalf of one agent."""

    def __init__(
        self,
        workspace: str | os.PathLike[str] | None = None,
        agent: str | None = None,
        *,
        autostart: bool = True,
        timeout: float = 30.0,
        start_timeout: float = 15.0,
        daemon_options: Sequence[str] = (),
    ) -> None:
        """`daemon_options`: command-line options for a daemon this client starts."""
        self.root: Path = require_workspace(workspace_root(workspace))
        self.agent = agent or default_agent()
        self.timeout = timeout
        self.last_response: Response | None = None
        self.started_daemon: Endpoint | None = None
        self._start = (autostart, start_timeout, tuple(daemon_options))
        endpoint = self._find_daemon()
        self.address = endpoint.socket
        self.daemon_pid = endpoint.pid
        self._adopt_tried: int | None = None  # see _adopt_serving_daemon
        self._ids = itertools.count(1)
        self._zmq: zmq.Context[zmq.Socket[bytes]] = zmq.Context.instance()
        self._socket = self._connect()
        self._confirm(endpoint)

    def _find_daemon(self) -> Endpoint:
        """The serving daemon's endpoint, starting one when allowed."""
        autostart, start_timeout, daemon_options = self._start
        endpoint = live_endpoint(self.root)
        if endpoint is None and autostart:
            endpoint = self.started_daemon = start_daemon(self.root, start_timeout, daemon_options)
        if endpoint is None:
            raise DaemonUnavailable.local(
                ErrorCode.DAEMON_UNAVAILABLE,
                f"no daemon serves {self.root}",
                workspace=str(self.root),
            )
        return endpoint

    def _revive(self) -> None:
        """After the daemon died: find or start a new one and connect to it afresh
        (closing the old socket drops whatever was queued for the dead one)."""
        endpoint = self._find_daemon()
        self._socket.close(linger=0)
        self.address, self.daemon_pid = endpoint.socket, endpoint.pid
        self._socket = self._connect()
        self._confirm(endpoint)

    def _confirm(self, endpoint: Endpoint) -> None:
        """Before anything else is sent: the socket is the daemon's own, which answers
        `ping` with the pid its endpoint file names (client/trust.py checked the files)."""
        response = self.call("ping")
        answered = response.result.get("pid") if isinstance(response.result, dict) else None
        if response.ok and answered == endpoint.pid:
            return
        if response.ok and isinstance(answered, int) and is_our_daemon(answered, str(self.root)):
            self.daemon_pid = answered  # a new daemon, its endpoint file not yet rewritten
            return
        self._socket.close(linger=0)
        raise Untrusted(
            state_dir(self.root) / ENDPOINT_FILE,
            f"names pid {endpoint.pid}, but the process on {endpoint.socket} answers as"
            f" pid {answered}",
        )

    def _connect(self) -> zmq.Socket[bytes]:
        sock = self._zmq.socket(zmq.DEALER)
        sock.setsockopt(zmq.LINGER, 0)
        sock.connect(self.address)
        return sock

    # --- the envelope ---------------------------------------------------------------------

    def call(
        self,
        method: str,
        params: dict[str, Any] | msgspec.Struct | None = None,
        *,
        idempotency_key: str | None = None,
    ) -> Response:
        """Send one request and return the whole response envelope, ok or not.

        With `idempotency_key`, a retry (same key, method and params) returns the first
        reply instead of applying twice. A daemon found dead is replaced (a new one is
        started unless `autostart=False`); a request it died while handling is sent
        again only when that is safe (read-only, or keyed)."""
        rid = next(self._ids)
        body = msgspec.Raw(_encoded_params(method, params))
        request = Request(
            id=rid, method=method, agent=self.agent, params=body, idempotency_key=idempotency_key
        )
        frame = REQUEST_ENCODER.encode(request)
        stale_pid = pid_gone(self.daemon_pid)  # gone, yet something may serve its socket
        if stale_pid and not is_listening(self.address):
            self._revive()
            stale_pid = False
        self._socket.send(frame)
        try:
            response = self._await(rid, method)
        except DaemonDied:
            if not may_retry(method, idempotency_key):
                raise died_during(method, self.daemon_pid, str(self.root)) from None
            response = self._resend(frame, rid, method)
        if stale_pid and self.daemon_pid != self._adopt_tried:
            self._adopt_serving_daemon()
        self.last_response = response
        return response

    def _adopt_serving_daemon(self) -> None:
        """A reply came though the daemon's pid is gone: another daemon (someone else
        started it) serves the same socket. Its pid, from its endpoint file, is the one
        to report and to check, so later calls need not probe the socket."""
        self._adopt_tried = self.daemon_pid  # once per pid: it may be of another pid namespace
        endpoint = live_endpoint(self.root)
        if endpoint is not None and endpoint.socket == self.address:
            self.daemon_pid = endpoint.pid

    def _resend(self, frame: bytes, rid: int, method: str) -> Response:
        """Once, to a new daemon, a request its dead predecessor never answered."""
        self._revive()
        self._socket.send(frame)
        try:
            return self._await(rid, method)
        except DaemonDied:
            raise died_during(method, self.daemon_pid, str(self.root)) from None

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
        raise RequestTimeout.local(
            ErrorCode.TIMEOUT,
            f"the daemon at {self.address} did not answer {method} within {self.timeout:g} s",
            method=method,
            address=self.address,
        )

    def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        idempotency_key: str | None = None,
    ) -> Any:
        """Call `method`; return its result, or raise `RequestError` for an error reply."""
        response = self.call(method, params, idempotency_key=idempotency_key)
        if not response.ok:
            assert response.error is not None
            raise RequestError.from_wire(response.error, response.seq)
        return response.result

    def _typed(self, method: str, params: dict[str, Any], result_type: type[R]) -> R:
        assert TOOL_RESULTS[method] is result_type
        return msgspec.convert(self.request(method, _drop_none(params)), result_type)

    # --- one method per tool --------------------------------------------------------------

    def ping(self) -> PingResult:
        return self._typed("ping", {}, PingResult)

    def status(self) -> StatusResult:
        return self._typed("status", {}, StatusResult)

    def log(
        self,
        *,
        path: str | None = None,
        agent: str | None = None,
        kind: str | None = None,
        after_seq: int = 0,
        limit: int = 50,
        until_seq: int | None = None,
        since_ts: int | None = None,
        patch: bool = False,
    ) -> LogResult:
        """The newest `limit` matching events, oldest first; `since_ts` in ms since the
        epoch; with `patch`, each content change's diff."""
        params = {"path": path, "agent": agent, "kind": kind, "after_seq": after_seq}
        more = {"until_seq": until_seq, "since_ts": since_ts, "patch": patch}
        return self._typed("log", {**params, **more, "limit": limit}, LogResult)

    def read_file(
        self,
        path: str,
        *,
        hashes: bool = False,
        range: str | None = None,
        offset: int | None = None,
        limit: int | None = None,
        max_lines: int | None = None,
        since_version: int | None = None,
        at_version: int | None = None,
    ) -> ReadFileResult:
        """A versioned read; with `since_version`, only what changed since (a delta);
        with `at_version`, the file as the journal stored it then (records nothing)."""
        params = {"path": path, "hashes": hashes, "range": range, "offset": offset}
        more = {"limit": limit, "max_lines": max_lines, "since_version": since_version}
        more["at_version"] = at_version
        return self._typed("read_file", {**params, **more}, ReadFileResult)

    def read_many_files(
        self, paths: list[str], *, hashes: bool = False, max_lines: int | None = None
    ) -> ReadManyFilesResult:
        params = {"paths": paths, "hashes": hashes, "max_lines": max_lines}
        return self._typed("read_many_files", params, ReadManyFilesResult)

    def edit(
        self,
        path: str,
        operations: Sequence[dict[str, Any] | Op],
        *,
        skip_safety_check: bool = False,
    ) -> EditResult:
        """Apply anchored operations atomically; raise `RequestError` when rejected."""
        ops = [msgspec.to_builtins(op) for op in operations]
        params = {"path": path, "operations": ops, "skip_safety_check": skip_safety_check}
        return self._typed("edit", params, EditResult)

    def safe_patch(
        self,
        path: str,
        unified_diff: str,
        base_content_sha256: str,
        *,
        rebase: bool = False,
        include_content: bool = True,
        skip_safety_check: bool = False,
    ) -> SafePatchResult:
        """Apply a unified diff made from the content whose SHA-256 is `base_content_sha256`;
        raise `RequestError` when refused (`details.latest_file_state` has the file now)."""
        params = {"path": path, "unified_diff": unified_diff}
        more = {"rebase": rebase, "include_content": include_content}
        lock = {"base_content_sha256": base_content_sha256, "skip_safety_check": skip_safety_check}
        return self._typed("safe_patch", {**params, **more, **lock}, SafePatchResult)

    def edit_file(
        self,
        path: str,
        old_string: str,
        new_string: str,
        *,
        expected_replacements: int | None = None,
        skip_safety_check: bool = False,
    ) -> AtomicResult:
        """Replace the exact text `old_string` (once, or `expected_replacements` times)."""
        params = {"path": path, "old_string": old_string, "new_string": new_string}
        more = {"expected_replacements": expected_replacements}
        return self._typed(
            "edit_file", {**params, **more, "skip_safety_check": skip_safety_check}, AtomicResult
        )

    def append_to_file(
        self, path: str, content: str, *, skip_safety_check: bool = False
    ) -> AtomicResult:
        """Add `content` at the end of the file, creating it when missing."""
        params = {"path": path, "content": content, "skip_safety_check": skip_safety_check}
        return self._typed("append_to_file", params, AtomicResult)

    def prepend_to_file(
        self, path: str, content: str, *, skip_safety_check: bool = False
    ) -> AtomicResult:
        """Add `content` at the start of the file, creating it when missing."""
        params = {"path": path, "content": content, "skip_safety_check": skip_safety_check}
        return self._typed("prepend_to_file", params, AtomicResult)

    def update_section(
        self, path: str, section_header: str, new_content: str, *, skip_safety_check: bool = False
    ) -> AtomicResult:
        """Replace the body of the markdown section `section_header` ("## Name")."""
        params = {"path": path, "section_header": section_header, "new_content": new_content}
        return self._typed(
            "update_section", {**params, "skip_safety_check": skip_safety_check}, AtomicResult
        )

    def write_file(self, path: str, content: str) -> AtomicResult:
        """Create (or fill) a file; over content you have not read, warns (see warnings)."""
        return self._typed("write_file", {"path": path, "content": content}, AtomicResult)

    # --- prepare first, apply once -----------------------------------------------------------

    def prepare_file_range_edit(
        self,
        path: str,
        content: str,
        *,
        range: str | None = None,
        start_line: int | None = None,
        end_line: int | None = None,
        existing_hunk_id: str | None = None,
    ) -> HunkPlanResult:
        """Plan replacing lines `range` "A-B" (or start_line..end_line); nothing is written."""
        params = {"path": path, "content": content, "range": range, "start_line": start_line}
        more = {"end_line": end_line, "existing_hunk_id": existing_hunk_id}
        return self._typed("prepare_file_range_edit", {**params, **more}, HunkPlanResult)

    def prepare_file_append(
        self, path: str, content: str, *, existing_hunk_id: str | None = None
    ) -> HunkPlanResult:
        """Plan adding `content` at the end of the file; nothing is written."""
        params = {"path": path, "content": content, "existing_hunk_id": existing_hunk_id}
        return self._typed("prepare_file_append", params, HunkPlanResult)

    def prepare_file_insert(
        self,
        path: str,
        anchor: str,
        content: str,
        *,
        after: bool = True,
        match: str | None = None,
        occurrence: int | None = None,
        existing_hunk_id: str | None = None,
    ) -> HunkPlanResult:
        """Plan inserting `content` after (or before) the line `anchor` finds."""
        method = "prepare_file_insert_after" if after else "prepare_file_insert_before"
        params = {"path": path, "anchor": anchor, "content": content, "match": match}
        more = {"occurrence": occurrence, "existing_hunk_id": existing_hunk_id}
        return self._typed(method, {**params, **more}, HunkPlanResult)

    def prepare_file_block_replace(
        self,
        path: str,
        old_block: str,
        new_block: str,
        *,
        occurrence: int | None = None,
        existing_hunk_id: str | None = None,
    ) -> HunkPlanResult:
        """Plan replacing the exact text `old_block` with `new_block`; nothing is written."""
        params = {"path": path, "old_block": old_block, "new_block": new_block}
        more = {"occurrence": occurrence, "existing_hunk_id": existing_hunk_id}
        return self._typed("prepare_file_block_replace", {**params, **more}, HunkPlanResult)

    def apply_file_modification(self, hunk_id: str) -> ApplyResult:
        """Write a prepared hunk; raise `RequestError` when refused."""
        return self._typed("apply_file_modification", {"hunk_id": hunk_id}, ApplyResult)

    def overwrite_entire_file(
        self, path: str, content: str, *, content_format: str | None = None
    ) -> OverwriteResult:
        """Replace the whole file; diff-looking content needs content_format="text"."""
        params = {"path": path, "content": content, "content_format": content_format}
        return self._typed("overwrite_entire_file", params, OverwriteResult)

    def list_hunks(self, path: str | None = None) -> ListHunksResult:
        """This agent's pending hunks (of one file, or all)."""
        return self._typed("list_hunks", {"path": path}, ListHunksResult)

    def discard_hunk(self, hunk_id: str) -> DiscardHunkResult:
        return self._typed("discard_hunk", {"hunk_id": hunk_id}, DiscardHunkResult)

    def agent_status(self, agent: str | None = None) -> AgentStatusResult:
        """Every file `agent` (default: this client's) has seen, and what changed since."""
        return self._typed("agent_status", {"agent": agent}, AgentStatusResult)

    # --- checkpoints and undo ------------------------------------------------------------------

    def checkpoint_create(
        self, name: str | None = None, paths: Sequence[str] | None = None
    ) -> CheckpointCreateResult:
        """Record the content of `paths` (default: every known file); its id is a seq."""
        params = {"name": name, "paths": list(paths) if paths is not None else None}
        return self._typed("checkpoint_create", params, CheckpointCreateResult)

    def checkpoint_list(self) -> CheckpointListResult:
        return self._typed("checkpoint_list", {}, CheckpointListResult)

    def checkpoint_restore(
        self,
        id_or_name: int | str,
        paths: Sequence[str] | None = None,
        *,
        remove_new: bool = False,
    ) -> CheckpointRestoreResult:
        """Write a checkpoint's contents back (all or nothing); reports what it overwrote."""
        params = {"id_or_name": str(id_or_name), "remove_new": remove_new}
        more = {"paths": list(paths) if paths is not None else None}
        return self._typed("checkpoint_restore", {**params, **more}, CheckpointRestoreResult)

    def undo(self, path: str, *, agent: str | None = None, seq: int | None = None) -> UndoResult:
        """Revert `agent`'s (default: this client's) latest write to `path`, or the one at
        `seq`; raises `RequestError` (undo_conflict) when its lines changed since."""
        return self._typed("undo", {"path": path, "agent": agent, "seq": seq}, UndoResult)

    # --- audit ---------------------------------------------------------------------------

    def show(self, seq: int) -> ShowResult:
        """Event `seq`, every field, with the diff of the content it changed."""
        return self._typed("show", {"seq": seq}, ShowResult)

    def history(self, path: str) -> HistoryResult:
        """Every version of `path`: seq, agent, kind, time, lines +/-."""
        return self._typed("history", {"path": path}, HistoryResult)

    def blame(self, path: str, *, at_version: int | None = None) -> BlameResult:
        """Each line of `path` with the event that last wrote it ("outside" included)."""
        return self._typed("blame", {"path": path, "at_version": at_version}, BlameResult)

    def stats(self, agent: str | None = None) -> StatsResult:
        """Per agent: reads, writes, rejections by code, rebased edits, recovery."""
        return self._typed("stats", {"agent": agent}, StatsResult)

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


def _drop_none(params: dict[str, Any]) -> dict[str, Any]:
    """Omitted, not null: the daemon's defaults apply."""
    return {k: v for k, v in params.items() if v is not None}


def _encoded_params(method: str, params: dict[str, Any] | msgspec.Struct | None) -> bytes:
    """The params as msgpack; what no frame can carry (an integer past 64 bits, an object
    msgpack has no type for) is the caller's `invalid_params`, never a bare exception."""
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
