"""`editjournal hook HARNESS`: a harness's built-in file tools, made journal-aware.

A harness runs this command around its own Read, Edit and Write tools with the
call as JSON on stdin (Claude Code: `session_id`, `cwd`, `hook_event_name`,
`tool_name`, `tool_input`, `tool_response`). After a Read it journals the read, as
the agent `claude-code:<session_id>`, so the daemon knows that session's snapshot;
before an Edit, MultiEdit or Write it asks the daemon (`check_write`) whether the
change would land on lines someone changed since that snapshot, and denies the
call when it would, with a reason in the harness's words (`denial_reason`: the tool
the model called, who changed which lines, those lines as they are now, and what to
do with that harness's tools; never the daemon's tool or field names); after one, it
claims the write (`claim_write`): the daemon journals as the session's edit the
change its checked edits made, and whatever else the file
holds as an outside change (a line on stderr says so). Around a shell command
(Claude Code's Bash, Gemini CLI's run_shell_command) it opens and closes a shell
window (`shell_window`): what the command changed is journaled as the session's,
line by line, unless another session's command ran at the same time (the changes
it could not credit, and why, are a line each on stderr). When a prompt is submitted
(Claude Code's UserPromptSubmit, Gemini CLI's BeforeAgent) it takes the session's
checkpoint of the workspace for that turn (`claude-code:<session_id>/turn-<n>`, n
counted by the journal), so `undo --by SESSION --since turn-N` rewinds to it; the
prompt's text goes to the daemon, which keeps it only when the workspace's config
says so. Codex's hooks carry Claude Code's fields: its shell tool (`Bash`) gets a
window, its `apply_patch` is judged and claimed file by file as an Edit or a Write
(`parse_patch` reads the patch), and a file it deletes or moves is
credited through a window around it. The same decisions serve the
Claude Agent SDK's hook callbacks (`client/harness/claude_sdk_hooks.py`):
`decide(payload)` is the whole of it.

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
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import zmq

from editjournal.client.harness import unserved
from editjournal.client.harness.adapters import ADAPTERS, Adapter
from editjournal.client.harness.denials import denial_reason
from editjournal.client.harness.hookcall import (
    DENIED,
    EDIT,
    PATCH,
    PAYLOAD_ERRORS,
    PROJECT_ENV,
    PROMPT,
    READ,
    REQUEST_TIMEOUT_S,
    SHELL,
    START_TIMEOUT_S,
    WARNING_LIMIT,
    WINDOW_DEFAULT_S,
    WINDOW_ENV,
    WRITE,
    Call,
    HookProblem,
    PatchFile,
)
from editjournal.client.library.connection import choose_workspace, discover, live_endpoint
from editjournal.schemas.wire import (
    PROTOCOL_VERSION,
    REQUEST_ENCODER,
    RESPONSE_DECODER,
    Error,
    Request,
    Response,
)


def main(argv: list[str]) -> int:
    """The command: read the payload, decide, answer in the harness's contract."""
    harness = argv[0] if argv else ""
    if harness not in ADAPTERS:
        _warn(f"unknown harness {harness or '(none)'!r}; one of {', '.join(ADAPTERS)}")
        return 0
    try:
        payload = json.loads(sys.stdin.read() or "null")
    except PAYLOAD_ERRORS as e:  # any bytes at all on stdin: allowed, never a traceback
        _warn(f"the hook payload is not JSON it can read ({_unreadable(e)}): the call is allowed")
        return 0
    try:
        output = decide(payload, harness)
    except HookProblem as e:
        if not e.quiet:
            _warn(f"{e}: the call is allowed")
        return 0
    except Exception as e:  # never a traceback into the harness, never a wedged call
        _warn(f"unexpected {type(e).__name__}: {e}: the call is allowed")
        return 0
    if output is not None:
        sys.stdout.write(json.dumps(output) + "\n")
    return 0


def _unreadable(error: BaseException) -> str:
    """Why the payload could not be parsed, for a person."""
    if isinstance(error, RecursionError):
        return "nested too deeply"
    if isinstance(error, MemoryError):
        return "too large to hold in memory"
    return str(error)


def decide(
    payload: Any,
    harness: str = "claude-code",
    workspace: Path | None = None,
    agent_prefix: str | None = None,
    note: Callable[[str], None] | None = None,
) -> dict[str, Any] | None:
    """The harness's answer to one hook payload, or None: allow, and say nothing (an
    explicit "allow" would skip the user's own permission prompts in Claude Code).
    `workspace`, `agent_prefix` (default: the harness's name) and `note` (where the
    daemon's warnings go; default: a line each on stderr) serve applications that call
    this in-process (client/harness/claude_sdk_hooks.py)."""
    adapter = ADAPTERS[harness]
    call = adapter.call(payload)
    if call is None:
        return None
    if agent_prefix is not None:
        call = call._replace(harness=agent_prefix)
    with Daemon(workspace or workspace_of(call), call.agent) as daemon:
        path = daemon.relative(call.path, call.cwd)
        if path is None and call.kind in (SHELL, PATCH):
            raise HookProblem(
                f"the command runs in {call.cwd}, outside the workspace {daemon.root}: no"
                " shell window is opened, nothing it changes is credited to the session"
            )
        if path is None and call.kind == PROMPT:
            raise HookProblem(
                f"the session runs in {call.cwd}, outside the workspace {daemon.root}:"
                " no checkpoint is taken for this prompt"
            )
        if path is None:
            raise HookProblem(f"{call.path} is outside the workspace {daemon.root}")
        if call.kind == PROMPT:
            daemon.prompt_checkpoint(call)
            return None
        if call.kind == SHELL:
            daemon.shell_window(call, note or _warn)
            return None
        if call.kind == PATCH:
            return _patch(daemon, call, adapter, note or _warn)
        if call.event == "after" and call.kind == READ:
            daemon.request("read_file", _read_params(path, call.lines))
            return None
        if call.event == "after":  # what was not the session's change, the reply says
            daemon.claim_write(path, call.writer, note or _warn)
            return None
        denied = daemon.check_write(path, call)
    return None if denied is None else adapter.denial(denial_reason(denied, call, path, adapter))


def _patch(
    daemon: Daemon, call: Call, adapter: type[Adapter], note: Callable[[str], None]
) -> dict[str, Any] | None:
    """Codex's apply_patch. Before: each file it adds or updates is judged as a Write or
    an Edit is (the first the journal refuses denies the whole patch); after: each is
    claimed. The files only a shell window can credit (deleted, moved, a hunk with no
    line to find) get one around the tool, paired by its tool_use_id."""
    claimed: list[tuple[str, PatchFile]] = []
    windowed: list[str] = []
    for found in call.patch:
        where = [daemon.relative(name, call.cwd) for name in found.paths]
        if None in where:
            note(f"{found.path}: outside the workspace {daemon.root}: not journaled as yours")
        elif found.claimable:
            claimed.append((str(where[0]), found))
        else:
            windowed += [str(name) for name in where]
    if call.event == "before":
        for path, found in claimed:
            kind = WRITE if found.action == "add" else EDIT
            one = call._replace(kind=kind, path=path, edits=found.edits, content=found.content)
            try:
                denied = daemon.check_write(path, one)
            except HookProblem as e:  # not judged: the others still are, the window opens
                note(f"{path}: {e}")
                continue
            if denied is not None:
                return adapter.denial(denial_reason(denied, one, path, adapter))
    else:
        for path, _ in claimed:  # one refused claim leaves the others to be made
            try:
                daemon.claim_write(path, call.writer, note)
            except HookProblem as e:
                note(f"{path}: {e}")
    if windowed:  # the files as they are, kept as the window opens
        present = [p for p in windowed if (daemon.root / p).is_file()]
        daemon.shell_window(call, note, paths=present)
    return None


def workspace_of(call: Call) -> Path:
    """The workspace: the harness's project directory (CLAUDE_PROJECT_DIR, or Gemini
    CLI's GEMINI_PROJECT_DIR), else EDITJOURNAL_WORKSPACE, else found from the call's
    cwd as every command finds it."""
    project = next((os.environ[k] for k in PROJECT_ENV if os.environ.get(k)), None)
    if project:
        return choose_workspace(project).root
    if os.environ.get("EDITJOURNAL_WORKSPACE"):
        return choose_workspace().root
    return discover(Path(call.cwd)).root


def _read_params(path: str, lines: tuple[int, int | None] | None) -> dict[str, Any]:
    if lines is None:
        return {"path": path}
    first, last = lines
    return {"path": path, "range": f"{first}-{'' if last is None else last}"}


MAX_COMMAND = 64 * 1024  # characters of a command sent (the daemon keeps no more)
MAX_NAMED = 64  # files of a command line whose content the daemon keeps as it opens
MAX_WORDS = 1000  # words of a command line looked at for them


def named_files(command: str, cwd: str, root: Path) -> list[str]:
    """The workspace files a command line names (`sed -i ... app.py`, `ruff format
    src/a.py`), workspace-relative: the daemon keeps their content as the window opens,
    so a change of one no agent had read can still be told line by line. A word is a
    name only when such a file exists; options and anything outside are passed over."""
    try:
        words = shlex.split(command)
    except ValueError:  # an unclosed quote: the words as they stand
        words = command.split()
    found: list[str] = []
    for word in words[:MAX_WORDS]:
        if not word or word.startswith("-") or len(found) >= MAX_NAMED:
            continue
        full = Path(os.path.normpath(os.path.join(cwd, word)))
        try:
            rel = full.relative_to(root).as_posix()
        except ValueError:
            continue
        if rel not in found and rel != "." and full.is_file():
            found.append(rel)
    return found


def _window_s() -> float:
    """EDITJOURNAL_SHELL_WINDOW_S, when it is a number of seconds in range, else 600."""
    try:
        found = float(os.environ.get(WINDOW_ENV, WINDOW_DEFAULT_S))
    except ValueError:
        return WINDOW_DEFAULT_S
    return found if 0 < found <= 86_400 else WINDOW_DEFAULT_S


def _kept_credential(root: Path, agent: str) -> str | None:
    """The session's credential, kept across hook processes (client/library/credentials.py):
    what binds the session's writes to it, not to anyone who names it. None when it cannot
    be kept (a runtime directory not this user's alone): the requests go by name only."""
    from editjournal.client.library.credentials import kept_credential
    from editjournal.client.library.errors import RequestError

    try:
        return kept_credential(root, agent)
    except (RequestError, OSError):
        return None


class Daemon:
    """The workspace's daemon, spoken to directly (a DEALER socket, the wire protocol)
    on behalf of one agent; started by the full client only when none serves."""

    def __init__(self, root: Path, agent: str) -> None:
        self.root = root
        self.agent = agent
        self._credential = _kept_credential(root, agent)  # one session, one identity
        self._ids = itertools.count(1)
        self._last_warnings: list[str] = []
        endpoint = live_endpoint(root) or self._started()
        if endpoint.protocol != PROTOCOL_VERSION:  # it may read a request otherwise
            raise HookProblem(
                f"the daemon serving {root} (pid {endpoint.pid}) speaks protocol"
                f" {endpoint.protocol!r}, this hook protocol {PROTOCOL_VERSION}: nothing was"
                " sent to it; stop it (`editjournal stop`) so a daemon of this version serves"
            )
        unserved.reached(root)  # the next time none serves, each session is told again
        self._socket: zmq.Socket[bytes] = zmq.Context.instance().socket(zmq.DEALER)
        self._socket.setsockopt(zmq.LINGER, 0)
        self._socket.connect(endpoint.socket)

    def _started(self) -> Any:
        from editjournal.client.library.connection import start_daemon
        from editjournal.client.library.errors import RequestError

        try:
            return start_daemon(self.root, START_TIMEOUT_S)
        except RequestError as e:
            why = f"no daemon serves {self.root} and none could be started: {e}"
            once = " (said once: this session's hooks allow every call without a word until"
            told = unserved.first_time(self.root, self.agent)
            raise HookProblem(why + once + " a daemon serves again)", quiet=not told) from None

    def relative(self, path: str, cwd: str) -> str | None:
        """`path` (absolute, or relative to the harness's cwd) relative to the workspace
        root, or None when it is outside."""
        full = Path(path if os.path.isabs(path) else os.path.join(cwd, path))
        try:
            return Path(os.path.normpath(full)).relative_to(self.root).as_posix()
        except ValueError:
            return None

    def call(self, method: str, params: dict[str, Any]) -> Response:
        rid = next(self._ids)
        body = msgspec.Raw(msgspec.msgpack.encode(params))
        request = Request(
            id=rid, method=method, agent=self.agent, params=body, credential=self._credential
        )
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
        self._last_warnings = list(response.warnings or ())
        return response.result

    def shell_window(
        self, call: Call, note: Callable[[str], None], paths: list[str] | None = None
    ) -> None:
        """Open (before) or close (after) the command's window; what the daemon could not
        credit to the session, and why, goes to `note`. `paths`: the files whose content
        the daemon keeps as the window opens (default: those the command line names)."""
        params: dict[str, Any] = {
            "window": call.window,
            "phase": "open" if call.event == "before" else "close",
            "tool": call.writer,
            "command": call.command[:MAX_COMMAND],
            "expires_s": _window_s(),
        }
        if call.event == "before":
            named = named_files(call.command, call.cwd, self.root) if paths is None else paths
            params["paths"] = named[:MAX_NAMED]
        result = self.request("shell_window", params)
        for warning in self._last_warnings:
            note(warning)
        for change in (result or {}).get("changes") or ():
            if isinstance(change, dict) and not change.get("credited"):
                note(f"{change.get('path')}: not credited to you: {change.get('why')}")

    def claim_write(self, path: str, tool: str, note: Callable[[str], None]) -> None:
        """Journal the tool's write as the session's; what was not its change (the
        reply's warnings) goes to `note`."""
        claimed = self.call("claim_write", {"path": path, "tool": tool})
        if claimed.error is not None:
            error = claimed.error
            raise HookProblem(f"claim_write: {error.code}: {error.message}")
        for warning in claimed.warnings or ():
            note(warning)

    def prompt_checkpoint(self, call: Call) -> None:
        """The session's checkpoint for this turn. A failure is a `HookProblem`: the
        prompt goes on (a turn without its checkpoint, said on stderr)."""
        params = {} if call.content is None else {"prompt": call.content}
        self.request("prompt_checkpoint", params)

    def check_write(self, path: str, call: Call) -> Error | None:
        """The daemon's refusal (`anchor_stale`, `write_access_denied`), or None: allowed
        (or not the journal's to judge)."""
        params: dict[str, Any] = {"path": path, "tool": call.writer}
        if call.kind == WRITE:
            params["content"] = call.content
        else:
            params["edits"] = list(call.edits)
        response = self.call("check_write", params)
        error = response.error
        if error is None:
            return None
        if error.code not in DENIED:
            raise HookProblem(f"check_write: {error.code}: {error.message}")
        return error

    def __enter__(self) -> Daemon:
        return self

    def __exit__(self, *exc: object) -> None:
        self._socket.close(linger=0)


def _warn(message: str) -> None:
    """One line on stderr, however long or multi-line the message (an exception's text
    can be either): the harness shows it to a person beside the call."""
    line = " ".join(message.split())
    if len(line) > WARNING_LIMIT:
        line = line[:WARNING_LIMIT] + "..."
    sys.stderr.write(f"editjournal hook: {line}\n")
