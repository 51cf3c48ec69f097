"""The harnesses' adapters: how each one's hook payload reads as a `Call`, and how a
denial and the advice after it are said in its words (Claude Code, Gemini CLI, Codex).
"""

from __future__ import annotations

import hashlib
import os
from typing import Any, ClassVar

from editjournal.client.harness.codexpatch import parse_patch
from editjournal.client.harness.hookcall import (
    EDIT,
    MAX_PROMPT,
    PATCH,
    PROMPT,
    READ,
    SHELL,
    WRITE,
    Call,
    HookProblem,
    positive_int,
)


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
        start = positive_int(shown.get("startLine")) or positive_int(tool_input.get("offset")) or 1
        count = positive_int(shown.get("numLines")) or positive_int(tool_input.get("limit"))
        total = positive_int(shown.get("totalLines"))
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
        first, last = (
            positive_int(tool_input.get("start_line")),
            positive_int(tool_input.get("end_line")),
        )
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


ADAPTERS: dict[str, type[Adapter]] = {
    ClaudeCode.name: ClaudeCode,
    GeminiCli.name: GeminiCli,
    Codex.name: Codex,
}
HARNESSES = tuple(ADAPTERS)
