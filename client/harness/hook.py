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

import hashlib
import itertools
import json
import os
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar, NamedTuple

import msgspec
import zmq

from editjournal.client.harness import unserved
from editjournal.client.library.connection import choose_workspace, discover, live_endpoint
from editjournal.schemas.wire import REQUEST_ENCODER, RESPONSE_DECODER, Error, Request, Response

READ, EDIT, WRITE, SHELL, PROMPT = "read", "edit", "write", "shell", "prompt"
PATCH = "patch"  # Codex's apply_patch: files added, updated, moved, deleted
# the refusals a hook turns into a denial (the daemon's check_write sends no other)
DENIED = frozenset({"anchor_stale", "write_access_denied"})
REQUEST_TIMEOUT_S = 10.0  # one request to a serving daemon
START_TIMEOUT_S = 8.0  # starting a daemon when none serves (the harness waits on us)
REASON_LIMIT = 6000  # characters of a denial's reason: the model reads every one
PROJECT_ENV = ("CLAUDE_PROJECT_DIR", "GEMINI_PROJECT_DIR")  # set by the harnesses for hooks
# what parsing stdin can raise: invalid JSON or UTF-8 (ValueError), nesting deeper than
# the interpreter's recursion limit (json's decoder recurses), input beyond memory
PAYLOAD_ERRORS = (ValueError, RecursionError, MemoryError)
WARNING_LIMIT = 500  # characters of the one line a warning takes on stderr
# how long a shell command's window stays open without its Post (the session died)
WINDOW_ENV, WINDOW_DEFAULT_S = "EDITJOURNAL_SHELL_WINDOW_S", 600.0


class HookProblem(Exception):
    """Why the hook could not judge the call: it is allowed, and this said on stderr
    (unless `quiet`: the session was told already, client/harness/unserved.py)."""

    def __init__(self, message: str, quiet: bool = False) -> None:
        super().__init__(message)
        self.quiet = quiet


class PatchFile(NamedTuple):
    """One file of a Codex apply_patch: what the patch does to it (`parse_patch`)."""

    action: str  # "add" | "update" | "delete"
    path: str  # as the patch names it (relative to the session's cwd, or absolute)
    move_to: str | None = None  # update: the name it ends up with
    edits: tuple[dict[str, Any], ...] = ()  # update: old_string, new_string, replace_all
    content: str | None = None  # add: the whole new file
    claimable: bool = True  # False: only a shell window can credit it

    @property
    def paths(self) -> tuple[str, ...]:
        return (self.path,) if self.move_to is None else (self.path, self.move_to)


class Call(NamedTuple):
    """One harness tool call, as the hook judges it (harness-neutral)."""

    harness: str
    event: str  # "before" | "after"
    tool: str  # the harness's own tool name (Edit, replace, ...): the journaled writer
    kind: str  # READ | EDIT | WRITE | SHELL | PROMPT | PATCH
    session: str
    cwd: str
    path: str  # as the harness gives it (absolute, or relative to cwd); SHELL: the cwd
    edits: tuple[dict[str, Any], ...] = ()  # EDIT: old_string, new_string, replace_all
    content: str | None = None  # WRITE: the whole new file; PROMPT: the prompt's text
    lines: tuple[int, int | None] | None = None  # READ: first and last line shown (None: all)
    command: str = ""  # SHELL: the command line
    window: str = ""  # SHELL: what pairs the before and the after (Claude Code: tool_use_id)
    patch: tuple[PatchFile, ...] = ()  # PATCH: its files (the patch's text is `command`)

    @property
    def agent(self) -> str:
        return f"{self.harness}:{self.session}"

    @property
    def writer(self) -> str:
        return f"{self.harness}:{self.tool}"


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


def _payload_fields(payload: Any) -> tuple[dict[str, Any], str, str]:
    """tool_input, session_id and cwd of any harness's payload, or `HookProblem`."""
    if not isinstance(payload, dict):
        raise HookProblem("the hook payload is not a JSON object")
    tool_input, session = payload.get("tool_input"), payload.get("session_id")
    tool = payload.get("tool_name")
    if not isinstance(tool_input, dict) or not isinstance(session, str) or not session:
        raise HookProblem(f"the {tool} payload lacks tool_input or session_id")
    cwd = payload.get("cwd")
    cwd = cwd if isinstance(cwd, str) and cwd else os.getcwd()
    return tool_input, _agent_session(payload, session), cwd


def _agent_session(payload: dict[str, Any], session: str) -> str:
    """The session, or a subagent's own name under it. Claude Code (CLI 2.1.332) sends a
    subagent's tool calls with the parent's `session_id` and the subagent's `agent_id`
    (and `agent_type`): without it, a subagent's work would be its parent's, and could
    not be taken back alone (`undo --by claude-code:SESSION/AGENT_ID`)."""
    agent_id = payload.get("agent_id")
    return f"{session}/{agent_id}" if isinstance(agent_id, str) and agent_id else session


def _path_of(tool: str, tool_input: dict[str, Any]) -> str:
    path = tool_input.get("file_path")
    if not isinstance(path, str) or not path:
        raise HookProblem(f"the {tool} payload names no file_path")
    return path


def _text(tool: str, tool_input: dict[str, Any], key: str) -> str:
    value = tool_input.get(key)
    if not isinstance(value, str):
        raise HookProblem(f"the {tool} payload has no {key}")
    return value


def _replacement(tool: str, edit: Any, all_key: str) -> dict[str, Any]:
    if not isinstance(edit, dict):
        raise HookProblem(f"an edit of the {tool} payload is not an object")
    old, new = _text(tool, edit, "old_string"), _text(tool, edit, "new_string")
    return {"old_string": old, "new_string": new, "replace_all": bool(edit.get(all_key))}


class Adapter:
    """One harness's hook contract: its event and tool names, how its payload says what
    was edited and read, and how it takes a denial."""

    name: ClassVar[str]
    events: ClassVar[dict[str, str]]  # its hook event -> "before" | "after"
    kinds: ClassVar[dict[str, str]]  # its tool -> READ | EDIT | WRITE
    prompt_event: ClassVar[str]  # its hook event as a prompt is submitted

    @classmethod
    def call(cls, payload: Any) -> Call | None:
        """The call in a payload; None for one this hook does not judge (another tool,
        another event, a tool that failed); `HookProblem` for a malformed one."""
        if not isinstance(payload, dict):
            raise HookProblem("the hook payload is not a JSON object")
        if payload.get("hook_event_name") == cls.prompt_event:
            return cls.prompt(payload)
        event = cls.events.get(str(payload.get("hook_event_name")))
        tool = str(payload.get("tool_name"))
        kind = cls.kinds.get(tool)
        if event is None or kind is None or (event == "before" and kind == READ):
            return None
        if kind == SHELL:  # a failed command may have changed files all the same
            return cls.shell(payload, event, tool)
        if event == "after" and cls.failed(payload):
            return None
        tool_input, session, cwd = _payload_fields(payload)
        call = Call(cls.name, event, tool, kind, session, cwd, _path_of(tool, tool_input))
        if kind == EDIT and event == "before":
            return call._replace(edits=cls.edits(tool, tool_input))
        if kind == WRITE and event == "before":
            return call._replace(content=_text(tool, tool_input, "content"))
        if kind == READ:
            return call._replace(lines=cls.lines(tool_input, payload.get("tool_response")))
        return call

    @classmethod
    def shell(cls, payload: dict[str, Any], event: str, tool: str) -> Call:
        """A shell command's call: its command line and the key pairing its two hooks."""
        tool_input, session, cwd = _payload_fields(payload)
        command = _text(tool, tool_input, "command")
        call = Call(cls.name, event, tool, SHELL, session, cwd, cwd, command=command)
        return call._replace(window=cls.window(payload, command))

    @classmethod
    def prompt(cls, payload: dict[str, Any]) -> Call:
        """A submitted prompt: the session's next turn (its text, when it has one)."""
        session = payload.get("session_id")
        if not isinstance(session, str) or not session:
            raise HookProblem(f"the {cls.prompt_event} payload has no session_id")
        cwd = payload.get("cwd")
        cwd = cwd if isinstance(cwd, str) and cwd else os.getcwd()
        text = payload.get("prompt")
        text = text[:MAX_PROMPT] if isinstance(text, str) else None
        return Call(cls.name, "before", cls.prompt_event, PROMPT, session, cwd, cwd, content=text)

    @classmethod
    def window(cls, payload: dict[str, Any], command: str) -> str:
        raise NotImplementedError

    @classmethod
    def failed(cls, payload: dict[str, Any]) -> bool:
        return False

    @classmethod
    def edits(cls, tool: str, tool_input: dict[str, Any]) -> tuple[dict[str, Any], ...]:
        raise NotImplementedError

    @classmethod
    def lines(cls, tool_input: dict[str, Any], response: Any) -> tuple[int, int | None] | None:
        raise NotImplementedError

    @staticmethod
    def denial(reason: str) -> dict[str, Any]:
        raise NotImplementedError

    @classmethod
    def redo(cls, call: Call, path: str, shown: bool) -> str:
        """What to do after a denial, in this harness's tools; `shown`: the denial holds
        the changed lines as they are now."""
        raise NotImplementedError


class ClaudeCode(Adapter):
    """Claude Code (and Claude Agent SDK applications, which run the same tools):
    PreToolUse / PostToolUse; Read (offset, limit), Edit, MultiEdit, Write. Its
    PostToolUse comes only after a tool that succeeded."""

    name = "claude-code"
    prompt_event = "UserPromptSubmit"
    events: ClassVar[dict[str, str]] = {
        "PreToolUse": "before",
        "PostToolUse": "after",
        "PostToolUseFailure": "after",  # a Bash command that failed still closes its window
    }
    kinds: ClassVar[dict[str, str]] = {
        "Read": READ,
        "Edit": EDIT,
        "MultiEdit": EDIT,
        "Write": WRITE,
        "Bash": SHELL,
    }

    @classmethod
    def failed(cls, payload: dict[str, Any]) -> bool:
        return payload.get("hook_event_name") == "PostToolUseFailure"

    @classmethod
    def window(cls, payload: dict[str, Any], command: str) -> str:
        """`tool_use_id`: the same on a call's PreToolUse and PostToolUse."""
        found = payload.get("tool_use_id")
        if not isinstance(found, str) or not found:
            tool = payload.get("tool_name")
            raise HookProblem(f"the {tool} payload has no tool_use_id to pair its hooks by")
        return found

    @classmethod
    def edits(cls, tool: str, tool_input: dict[str, Any]) -> tuple[dict[str, Any], ...]:
        raw = tool_input.get("edits") if tool == "MultiEdit" else [tool_input]
        if not isinstance(raw, list):
            raise HookProblem(f"the {tool} payload has no edits")
        return tuple(_replacement(tool, e, "replace_all") for e in raw)

    @classmethod
    def lines(cls, tool_input: dict[str, Any], response: Any) -> tuple[int, int | None] | None:
        """The lines a Read showed: its response's (startLine, numLines, totalLines)
        when given, else its offset and limit; None when it showed the whole file."""
        shown = response.get("file") if isinstance(response, dict) else None
        shown = shown if isinstance(shown, dict) else {}
        start = _int(shown.get("startLine")) or _int(tool_input.get("offset")) or 1
        count = _int(shown.get("numLines")) or _int(tool_input.get("limit"))
        total = _int(shown.get("totalLines"))
        if start <= 1 and (count is None or (total is not None and count >= total)):
            return None
        return (start, None if count is None else start + count - 1)

    @classmethod
    def redo(cls, call: Call, path: str, shown: bool) -> str:
        """Claude Code's Read: the whole file after a Write's denial (a Write must not
        replace lines of it the session has not seen, and a paged Read shows part)."""
        if call.kind == WRITE:
            return f"Read {path}, all of it (no offset or limit), then redo your Write."
        return f"Read {path} again, then redo your {call.tool}."

    @staticmethod
    def denial(reason: str) -> dict[str, Any]:
        return {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": reason,
            }
        }


class GeminiCli(Adapter):
    """Gemini CLI: BeforeTool / AfterTool (also after a tool that failed: its response
    says so); read_file (start_line, end_line), replace (old_string, new_string,
    allow_multiple), write_file."""

    name = "gemini-cli"
    prompt_event = "BeforeAgent"
    events: ClassVar[dict[str, str]] = {"BeforeTool": "before", "AfterTool": "after"}
    kinds: ClassVar[dict[str, str]] = {
        "read_file": READ,
        "replace": EDIT,
        "write_file": WRITE,
        "run_shell_command": SHELL,
    }

    @classmethod
    def failed(cls, payload: dict[str, Any]) -> bool:
        response = payload.get("tool_response")
        return isinstance(response, dict) and bool(response.get("error"))

    @classmethod
    def window(cls, payload: dict[str, Any], command: str) -> str:
        """Gemini CLI's tool hooks carry no call id: its BeforeTool and AfterTool of one
        command are paired by the command line (within the session: the agent)."""
        digest = hashlib.sha256(command.encode("utf-8", "surrogatepass")).hexdigest()
        return f"run_shell_command:{digest[:32]}"

    @classmethod
    def edits(cls, tool: str, tool_input: dict[str, Any]) -> tuple[dict[str, Any], ...]:
        return (_replacement(tool, tool_input, "allow_multiple"),)

    @classmethod
    def lines(cls, tool_input: dict[str, Any], response: Any) -> tuple[int, int | None] | None:
        first, last = _int(tool_input.get("start_line")), _int(tool_input.get("end_line"))
        return None if first is None and last is None else (first or 1, last)

    @classmethod
    def redo(cls, call: Call, path: str, shown: bool) -> str:
        """Gemini CLI's replace needs no read first: the changed lines shown are enough
        to take its old_string from; a write_file wants the whole file read."""
        if call.kind == WRITE:
            return f"Call read_file on {path}, all of it, then redo your write_file."
        if shown:
            return (
                f"Redo your {call.tool} with old_string taken from the + lines above (the file"
                f" as it is now), or call read_file on {path} again first."
            )
        return f"Call read_file on {path} again, then redo your {call.tool}."

    @staticmethod
    def denial(reason: str) -> dict[str, Any]:
        return {"decision": "deny", "reason": reason}


class Codex(ClaudeCode):
    """Codex (codex-rs/hooks): PreToolUse / PostToolUse with Claude Code's payload
    fields and answers (`hookSpecificOutput.permissionDecision: "deny"`), fired for its
    shell tools (tool_name `Bash`, `tool_input.command`) and for `apply_patch` (the
    patch text as `tool_input.command`); `tool_use_id` pairs a call's two hooks. It
    has no read tool of its own (it reads through the shell): nothing journals its
    reads, so an apply_patch is judged against the session's own last write there, or,
    when it has none, the file as it is."""

    name = "codex"
    events: ClassVar[dict[str, str]] = {"PreToolUse": "before", "PostToolUse": "after"}
    kinds: ClassVar[dict[str, str]] = {"Bash": SHELL, "apply_patch": PATCH}

    @classmethod
    def call(cls, payload: Any) -> Call | None:
        if isinstance(payload, dict) and payload.get("tool_name") == "apply_patch":
            event = cls.events.get(str(payload.get("hook_event_name")))
            return None if event is None else cls.patch(payload, event)
        return super().call(payload)

    @classmethod
    def patch(cls, payload: dict[str, Any], event: str) -> Call:
        """An apply_patch call: its files, and its text as the window's command."""
        tool_input, session, cwd = _payload_fields(payload)
        text = _text("apply_patch", tool_input, "command")
        try:
            files = parse_patch(text)
        except ValueError as e:
            raise HookProblem(f"the apply_patch payload holds no patch it can read: {e}") from None
        call = Call(cls.name, event, "apply_patch", PATCH, session, cwd, cwd, command=text)
        return call._replace(window=cls.window(payload, text), patch=files)

    @classmethod
    def redo(cls, call: Call, path: str, shown: bool) -> str:
        """Codex reads through its shell; its patch needs the lines as they are now."""
        if call.kind == WRITE:
            return f"Read all of {path} again, then redo your apply_patch."
        if shown:
            return (
                f"Redo your apply_patch with its context and - lines taken from the + lines"
                f" above (the file as it is now), or read {path} again first."
            )
        return f"Read {path} again, then redo your apply_patch."


# --- Codex's apply_patch text, read as the files it changes -----------------------------
# The envelope (`*** Begin Patch`, `*** Add File: P` with + lines, `*** Delete File: P`,
# `*** Update File: P` with an optional `*** Move to: Q` and hunks of ' ', '-', '+'
# lines after optional `@@` headers, `*** End Patch`). The daemon's own reader
# (daemon/text/v4a.py) is the daemon's: the hook may not import it. This one only says
# which files change and how; it never applies a patch. A hunk is a replacement of whole
# lines (its context and - lines by its context and + lines). A file whose change
# cannot be said that way (deleted, moved, a hunk with no line to find) is not
# `claimable`: the hook credits it through a shell window around the tool.

PATCH_BEGIN, PATCH_END = "*** Begin Patch", "*** End Patch"
PATCH_ADD, PATCH_DELETE, PATCH_UPDATE = "*** Add File: ", "*** Delete File: ", "*** Update File: "
PATCH_MOVE, PATCH_EOF = "*** Move to: ", "*** End of File"
MAX_PATCH_FILES = 256


def parse_patch(text: str) -> tuple[PatchFile, ...]:
    """The files of a patch, in its order; `ValueError` when it is not one."""
    lines = text.strip().splitlines()
    if not lines or lines[0].strip() != PATCH_BEGIN:
        raise ValueError(f"the patch does not start with {PATCH_BEGIN!r}")
    if lines[-1].strip() != PATCH_END:
        raise ValueError(f"the patch does not end with {PATCH_END!r}")
    body, files, at = lines[1:-1], [], 0
    heads = (PATCH_ADD, PATCH_DELETE, PATCH_UPDATE)
    while at < len(body):
        end = next((i for i in range(at + 1, len(body)) if body[i].startswith(heads)), len(body))
        files.append(_patch_file(body[at], body[at + 1 : end]))
        at = end
    if len(files) > MAX_PATCH_FILES:
        raise ValueError(f"the patch names {len(files)} files, more than {MAX_PATCH_FILES}")
    return tuple(files)


def _patch_file(head: str, rows: list[str]) -> PatchFile:
    if head.startswith(PATCH_ADD):
        if any(not row.startswith("+") for row in rows):
            raise ValueError(f"{head!r}: every line of an added file starts with +")
        content = "".join(row[1:] + "\n" for row in rows)
        return PatchFile("add", _patch_name(head, PATCH_ADD), content=content)
    if head.startswith(PATCH_DELETE):
        return PatchFile("delete", _patch_name(head, PATCH_DELETE), claimable=False)
    if head.startswith(PATCH_UPDATE):
        return _patch_update(_patch_name(head, PATCH_UPDATE), rows)
    raise ValueError(f"{head!r} is not a file header of a patch")


def _patch_name(line: str, prefix: str) -> str:
    name = line[len(prefix) :].strip()
    if not name:
        raise ValueError(f"{line!r} names no file")
    return name


def _patch_update(path: str, rows: list[str]) -> PatchFile:
    """An updated file, one replacement per hunk; moved, or with a hunk of + lines
    only: not claimable, its edits not said."""
    move_to = None
    if rows and rows[0].startswith(PATCH_MOVE):
        move_to, rows = _patch_name(rows[0], PATCH_MOVE), rows[1:]
    hunks: list[list[str]] = []
    for row in rows:
        if row.startswith("@@") or not hunks:
            hunks.append([])
        if not row.startswith("@@") and row.strip() != PATCH_EOF:
            hunks[-1].append(row)
    edits = tuple(e for e in map(_hunk_edit, hunks) if e is not None)
    whole = move_to is None and len(edits) == len(hunks) and bool(edits)
    return PatchFile("update", path, move_to, edits if whole else (), claimable=whole)


def _hunk_edit(hunk: list[str]) -> dict[str, Any] | None:
    """A hunk as a replacement of whole lines; None when it has no line to find."""
    old: list[str] = []
    new: list[str] = []
    for row in hunk:
        mark, text = (row[:1], row[1:]) if row else (" ", "")  # a bare blank context line
        if mark not in " +-":
            raise ValueError(f"{row!r} is not a line of a hunk (' ', '-' or '+' first)")
        if mark != "+":
            old.append(text)
        if mark != "-":
            new.append(text)
    if not old:
        return None
    return {
        "old_string": "".join(line + "\n" for line in old),
        "new_string": "".join(line + "\n" for line in new),
        "replace_all": False,
    }


ADAPTERS: dict[str, type[Adapter]] = {
    ClaudeCode.name: ClaudeCode,
    GeminiCli.name: GeminiCli,
    Codex.name: Codex,
}
HARNESSES = tuple(ADAPTERS)


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
MAX_PROMPT = 1024 * 1024  # characters of a prompt's text sent (the schema takes no more)
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


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


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


def denial_reason(error: Error, call: Call, path: str, adapter: type[Adapter]) -> str:
    """What the model reads, in its harness's words: the tool it called (`Edit`,
    `replace`), the lines it relied on and who changed them since, those lines as they
    are now, and what to do next in that harness. Built from the refusal's details,
    never from its message: the message speaks the daemon's tools and fields
    ("operation 1 (edit_file)", "details.delta"), which this model has never seen."""
    details = error.details
    what = _what(call, details)
    if error.code == "write_access_denied":
        return (
            f"editjournal: your {what} of {path} was not made: this session may not write in"
            " this workspace (the [access] list of its editjournal config). Do not retry it;"
            " tell the user if the change is needed."
        )
    found = details.get("delta")
    diff = str(found.get("diff") or "") if isinstance(found, dict) else ""
    parts = [f"editjournal: your {what} of {path} was not made: {_why(call, details)}"]
    parts += [_who(c, call.agent) for c in details.get("conflicts") or [] if _is(c)]
    if diff:
        parts.append("The file there now (- as you last saw it, + as it is now):")
        parts.append(_plain_diff(diff))
        if isinstance(found, dict) and found.get("omitted"):
            parts.append("(other parts of the file changed too; they are not shown here)")
    parts.append(adapter.redo(call, path, shown=bool(diff)))
    text = "\n".join(parts)
    return text if len(text) <= REASON_LIMIT else text[: REASON_LIMIT - 1] + "…"


def _what(call: Call, details: dict[str, Any]) -> str:
    """The call as the model made it: `Edit`, `write_file`, "MultiEdit (its edit 2)"."""
    index = details.get("edit")
    if len(call.edits) > 1 and isinstance(index, int):
        return f"{call.tool} (its edit {index} of {len(call.edits)})"
    return call.tool


def _why(call: Call, details: dict[str, Any]) -> str:
    """Why, in one sentence: lines it relied on changed, lines it was not shown, or a
    whole file it has not seen as it is."""
    stale = [n for s in details.get("stale") or [] if _is(s) for n in s.get("lines") or []]
    if call.kind == EDIT and stale:
        return f"it relies on {_lines(stale)}, which changed since you read {_it(stale)}."
    unseen = details.get("unseen_lines")
    if call.kind == EDIT and unseen:
        return f"it relies on {_lines(unseen)}, which your last read did not show you."
    if "unseen" in details:  # its latest read showed part of the file
        shown = _span(details.get("read_lines"))
        part = f" ({_lines(list(range(shown[0], shown[1] + 1)))})" if shown else ""
        since = (  # explained from its last full view, when the journal holds one
            ", and the file changed since you last saw all of it."
            if "base_version" in details
            else ", and you have not been shown all of it."
        )
        return f"it would replace the whole file, but your last read showed part of it{part}{since}"
    if "base_version" in details:
        return "it would replace the whole file, which changed since you read it."
    return "it would replace the whole file, which you have not read."


def _span(value: Any) -> tuple[int, int] | None:
    """A `[first, last]` pair of line numbers, or None."""
    if isinstance(value, list) and len(value) == 2:
        first, last = _int(value[0]), _int(value[1])
        if first is not None and last is not None:
            return first, last
    return None


def _is(item: Any) -> bool:
    return isinstance(item, dict)


def _it(lines: list[Any]) -> str:
    return "it" if len(set(lines)) == 1 else "them"


def _who(conflict: dict[str, Any], agent: str) -> str:
    """One change, for the model: who made it, which lines, and its journal version."""
    by = conflict.get("agent")
    if not by:
        by = "Someone outside the journal (a person, or a program)"
    elif by == agent:
        by = "You (an earlier call of this session)"
    lines = [n for n in conflict.get("lines") or [] if isinstance(n, int)]
    where = _lines(lines) if lines else "it"
    return f"{by} changed {where} (version {conflict.get('seq')})."


def _lines(numbers: list[Any], most: int = 8) -> str:
    """`line 5`, `lines 5-7, 12`: runs of consecutive numbers, the first `most` runs."""
    found = sorted({n for n in numbers if isinstance(n, int)})
    runs: list[list[int]] = []
    for n in found:
        if runs and n == runs[-1][1] + 1:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    shown = [f"{a}" if a == b else f"{a}-{b}" for a, b in runs[:most]]
    more = ", …" if len(runs) > most else ""
    word = "line" if len(found) == 1 else "lines"
    return f"{word} {', '.join(shown)}{more}"


def _plain_diff(diff: str) -> str:
    """The daemon's delta without its anchors (` 12#a1b2c3|text` -> ` text`), each hunk
    headed by where it is now (`@@ -3,5 +3,6 @@` -> `at line 3:`)."""
    rows = []
    for row in diff.splitlines():
        if row.startswith("@@"):
            now = row.split("+", 1)[1].split(",", 1)[0].split(" ", 1)[0] if "+" in row else ""
            rows.append(f"  at line {now}:" if now.isdigit() else "  …")
            continue
        sign, rest = row[:1], row[1:]
        if sign in " +-" and "|" in rest and rest.split("|", 1)[0].split("#")[0].strip().isdigit():
            rest = rest.split("|", 1)[1]
        rows.append(f"    {sign}{rest}")
    return "\n".join(rows)


def _warn(message: str) -> None:
    """One line on stderr, however long or multi-line the message (an exception's text
    can be either): the harness shows it to a person beside the call."""
    line = " ".join(message.split())
    if len(line) > WARNING_LIMIT:
        line = line[:WARNING_LIMIT] + "..."
    sys.stderr.write(f"editjournal hook: {line}\n")
