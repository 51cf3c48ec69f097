"""`editjournal hook HARNESS`: a harness's built-in file tools, made journal-aware.

A harness runs this command around its own Read, Edit and Write tools with the
call as JSON on stdin (Claude Code: `session_id`, `cwd`, `hook_event_name`,
`tool_name`, `tool_input`, `tool_response`). After a Read it journals the read, as
the agent `claude-code:<session_id>`, so the daemon knows that session's snapshot;
before an Edit, MultiEdit or Write it asks the daemon (`check_write`) whether the
change would land on lines someone changed since that snapshot, and denies the
call with a reason the model acts on (who changed which lines, and the changes)
when it would; after one, it journals the content on disk as that session's edit
(`claim_write`). The same decisions serve the Claude Agent SDK's hook callbacks
(`client/claude_sdk_hooks.py`): `decide(payload)` is the whole of it.

A hook runs on every tool call, so it is lean: it imports neither the CLI framework
nor the typed client, speaks the wire protocol itself, and a daemon is started (by
the full client) only when none serves. It must never wedge the harness: anything
unexpected — a malformed payload, a path outside the workspace, no daemon within
the budget, an error of ours — allows the call and says why on stderr (exit 0).
"""

from __future__ import annotations

import itertools
import json
import os
import sys
from pathlib import Path
from typing import Any, NamedTuple

import msgspec
import zmq

from editjournal.client.connection import choose_workspace, discover, live_endpoint
from editjournal.schemas.wire import REQUEST_ENCODER, RESPONSE_DECODER, Request, Response

HARNESSES = ("claude-code",)
AGENT_PREFIX = {"claude-code": "claude-code"}
READ_TOOLS = frozenset({"Read"})
WRITE_TOOLS = frozenset({"Edit", "MultiEdit", "Write"})
# the refusals a hook turns into a denial (the daemon's check_write sends no other)
DENIED = frozenset({"anchor_stale", "write_access_denied"})
REQUEST_TIMEOUT_S = 10.0  # one request to a serving daemon
START_TIMEOUT_S = 8.0  # starting a daemon when none serves (the harness waits on us)
REASON_LIMIT = 6000  # characters of a denial's reason: the model reads every one


class HookProblem(Exception):
    """Why the hook could not judge the call: it is allowed, and this said on stderr."""


class Call(NamedTuple):
    """One harness tool call, as the hook sees it (harness-neutral)."""

    event: str  # "before" | "after"
    tool: str  # the harness's tool name: Read, Edit, MultiEdit, Write
    session: str
    cwd: str
    path: str  # absolute, as the harness gives it
    tool_input: dict[str, Any]
    tool_response: Any = None


def main(argv: list[str]) -> int:
    """The command: read the payload, decide, answer in the harness's contract."""
    if not argv or argv[0] not in HARNESSES:
        _warn(f"unknown harness {argv[0] if argv else '(none)'!r}; one of {', '.join(HARNESSES)}")
        return 0
    try:
        payload = json.loads(sys.stdin.read() or "null")
    except (ValueError, UnicodeDecodeError) as e:
        _warn(f"the hook payload is not JSON ({e}): the call is allowed")
        return 0
    try:
        output = decide(payload)
    except HookProblem as e:
        _warn(f"{e}: the call is allowed")
        return 0
    except Exception as e:  # never a traceback into the harness, never a wedged call
        _warn(f"unexpected {type(e).__name__}: {e}: the call is allowed")
        return 0
    if output is not None:
        sys.stdout.write(json.dumps(output) + "\n")
    return 0


def decide(payload: Any) -> dict[str, Any] | None:
    """The harness's answer to one hook payload (Claude Code's shape), or None: allow,
    and say nothing (an "allow" would skip the user's own permission prompts)."""
    call = claude_code_call(payload)
    if call is None:
        return None
    with Daemon(workspace_of(call), f"{AGENT_PREFIX['claude-code']}:{call.session}") as daemon:
        path = daemon.relative(call.path)
        if path is None:
            raise HookProblem(f"{call.path} is outside the workspace {daemon.root}")
        if call.event == "after" and call.tool in READ_TOOLS:
            daemon.request("read_file", _read_params(path, call))
            return None
        if call.event == "after":
            daemon.request("claim_write", {"path": path, "tool": f"claude-code:{call.tool}"})
            return None
        denied = daemon.check_write(path, call)
    return None if denied is None else claude_code_denial(denied)


def claude_code_call(payload: Any) -> Call | None:
    """The call in a Claude Code payload; None for one this hook does not judge (another
    tool, another event); `HookProblem` for a malformed one."""
    if not isinstance(payload, dict):
        raise HookProblem("the hook payload is not a JSON object")
    event = {"PreToolUse": "before", "PostToolUse": "after"}.get(
        str(payload.get("hook_event_name"))
    )
    tool = payload.get("tool_name")
    if event is None or tool not in READ_TOOLS | WRITE_TOOLS:
        return None
    if event == "before" and tool in READ_TOOLS:
        return None
    tool_input = payload.get("tool_input")
    session, cwd = payload.get("session_id"), payload.get("cwd")
    if not isinstance(tool_input, dict) or not isinstance(session, str) or not session:
        raise HookProblem(f"the {tool} payload lacks tool_input or session_id")
    path = tool_input.get("file_path")
    if not isinstance(path, str) or not path:
        raise HookProblem(f"the {tool} payload names no file_path")
    cwd = cwd if isinstance(cwd, str) and cwd else os.getcwd()
    return Call(event, tool, session, cwd, path, tool_input, payload.get("tool_response"))


def claude_code_denial(reason: str) -> dict[str, Any]:
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        }
    }


def workspace_of(call: Call) -> Path:
    """The workspace: the harness's project directory (Claude Code's
    CLAUDE_PROJECT_DIR), else EDITJOURNAL_WORKSPACE, else found from the call's cwd as
    every command finds it."""
    project = os.environ.get("CLAUDE_PROJECT_DIR")
    if project:
        return choose_workspace(project).root
    if os.environ.get("EDITJOURNAL_WORKSPACE"):
        return choose_workspace().root
    return discover(Path(call.cwd)).root


def _read_params(path: str, call: Call) -> dict[str, Any]:
    """The lines the Read showed: its response's (startLine, numLines, totalLines) when
    given, else its offset and limit; the whole file when it showed all of it."""
    shown = call.tool_response.get("file") if isinstance(call.tool_response, dict) else None
    shown = shown if isinstance(shown, dict) else {}
    start = _int(shown.get("startLine")) or _int(call.tool_input.get("offset")) or 1
    count = _int(shown.get("numLines")) or _int(call.tool_input.get("limit"))
    total = _int(shown.get("totalLines"))
    if count is None or (start <= 1 and total is not None and count >= total):
        return {"path": path} if start <= 1 and count is None else _ranged(path, start, count)
    return _ranged(path, start, count)


def _ranged(path: str, start: int, count: int | None) -> dict[str, Any]:
    end = "" if count is None else str(start + max(count, 1) - 1)
    return {"path": path, "range": f"{start}-{end}"}


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


class Daemon:
    """The workspace's daemon, spoken to directly (a DEALER socket, the wire protocol)
    on behalf of one agent; started by the full client only when none serves."""

    def __init__(self, root: Path, agent: str) -> None:
        self.root = root
        self.agent = agent
        self._ids = itertools.count(1)
        endpoint = live_endpoint(root) or self._started()
        self._socket: zmq.Socket[bytes] = zmq.Context.instance().socket(zmq.DEALER)
        self._socket.setsockopt(zmq.LINGER, 0)
        self._socket.connect(endpoint.socket)

    def _started(self) -> Any:
        from editjournal.client.connection import start_daemon
        from editjournal.client.errors import RequestError

        try:
            return start_daemon(self.root, START_TIMEOUT_S)
        except RequestError as e:
            why = f"no daemon serves {self.root} and none could be started: {e}"
            raise HookProblem(why) from None

    def relative(self, path: str) -> str | None:
        """`path` relative to the workspace root, or None when it is outside."""
        full = Path(path if os.path.isabs(path) else os.path.join(self.root, path))
        try:
            return Path(os.path.normpath(full)).relative_to(self.root).as_posix()
        except ValueError:
            return None

    def call(self, method: str, params: dict[str, Any]) -> Response:
        rid = next(self._ids)
        body = msgspec.Raw(msgspec.msgpack.encode(params))
        request = Request(id=rid, method=method, agent=self.agent, params=body)
        self._socket.send(REQUEST_ENCODER.encode(request))
        while self._socket.poll(int(REQUEST_TIMEOUT_S * 1000)):
            response = RESPONSE_DECODER.decode(self._socket.recv())
            if response.id == rid:
                return response
        raise HookProblem(f"the daemon of {self.root} did not answer {method} in time")

    def request(self, method: str, params: dict[str, Any]) -> Any:
        """The result; an error reply is a `HookProblem` (the call is allowed)."""
        response = self.call(method, params)
        if response.error is not None:
            raise HookProblem(f"{method}: {response.error.code}: {response.error.message}")
        return response.result

    def check_write(self, path: str, call: Call) -> str | None:
        """The denial's reason, or None: allowed (or not the journal's to judge)."""
        params: dict[str, Any] = {"path": path, "tool": f"claude-code:{call.tool}"}
        if call.tool == "Write":
            content = call.tool_input.get("content")
            if not isinstance(content, str):
                raise HookProblem("the Write payload has no content")
            params["content"] = content
        else:
            params["edits"] = _edits(call)
        response = self.call("check_write", params)
        error = response.error
        if error is None:
            return None
        if error.code not in DENIED:
            raise HookProblem(f"check_write: {error.code}: {error.message}")
        return denial_reason(error)

    def __enter__(self) -> Daemon:
        return self

    def __exit__(self, *exc: object) -> None:
        self._socket.close(linger=0)


def _edits(call: Call) -> list[dict[str, Any]]:
    """Edit's one replacement, or MultiEdit's list, as check_write takes them."""
    raw = call.tool_input.get("edits") if call.tool == "MultiEdit" else [call.tool_input]
    if not isinstance(raw, list):
        raise HookProblem(f"the {call.tool} payload has no edits")
    edits = []
    for edit in raw:
        if not isinstance(edit, dict):
            raise HookProblem(f"an edit of the {call.tool} payload is not an object")
        old, new = edit.get("old_string"), edit.get("new_string")
        if not isinstance(old, str) or not isinstance(new, str):
            raise HookProblem(f"an edit of the {call.tool} payload lacks old_string/new_string")
        edits.append(
            {"old_string": old, "new_string": new, "replace_all": bool(edit.get("replace_all"))}
        )
    return edits


def denial_reason(error: Any) -> str:
    """What the model reads: which lines it relied on changed, by whom, and the file
    there as it is now (the delta, as plain text lines) — enough to redo the edit."""
    details = error.details if isinstance(error.details, dict) else {}
    parts = [f"editjournal: {error.message}"]
    conflicts = details.get("conflicts") or []
    if conflicts:
        parts.append("Changed since your read by:")
        parts += [f"  {_who(c)}" for c in conflicts if isinstance(c, dict)]
    found = details.get("delta")
    if isinstance(found, dict) and found.get("diff"):
        parts.append("The changes since your read (the file as it is now):")
        parts.append(_plain_diff(str(found["diff"])))
        if found.get("omitted"):
            parts.append("(further changes elsewhere in the file are left out)")
    parts.append(
        "Your edit was not made. Redo it against the file as it is now: take the changed"
        " lines above into account (or read the file again)."
    )
    text = "\n".join(parts)
    return text if len(text) <= REASON_LIMIT else text[: REASON_LIMIT - 1] + "…"


def _who(conflict: dict[str, Any]) -> str:
    lines = conflict.get("lines") or []
    where = f", line(s) {', '.join(map(str, lines[:8]))}" if lines else ""
    return f"{conflict.get('agent') or 'an outside writer'} (seq {conflict.get('seq')}{where})"


def _plain_diff(diff: str) -> str:
    """The daemon's delta without its anchors: ` 12#a1b2c3|text` -> ` text`."""
    rows = []
    for row in diff.splitlines():
        sign, rest = row[:1], row[1:]
        if sign in " +-" and "|" in rest and rest.split("|", 1)[0].split("#")[0].strip().isdigit():
            rest = rest.split("|", 1)[1]
        rows.append(f"    {sign}{rest}")
    return "\n".join(rows)


def _warn(message: str) -> None:
    sys.stderr.write(f"editjournal hook: {message}\n")
