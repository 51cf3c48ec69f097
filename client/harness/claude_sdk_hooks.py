"""Hook callbacks for Claude Agent SDK applications: Claude Code's tools, journal-aware.

An application built on the Claude Agent SDK (`claude-agent-sdk`, the `claude`
extra) runs Claude Code's own Read, Edit, MultiEdit, Write and Bash tools; its hooks
are Python callbacks, not commands. `hook_matchers()` gives the `HookMatcher`s to
pass as `ClaudeAgentOptions(hooks=...)`: after a Read the read is journaled as the
session's, before an edit the daemon judges it (denied, with who changed which
lines and the changes, when it would land on lines changed since the session read
them), after one the change is journaled as the session's; a Bash command runs in a
shell window (opened before it, closed after it, failed or not, paired by its
tool_use_id: what it changed is the session's, line by line), and each prompt
submitted takes the session's checkpoint of that turn. The decisions are the
command hook's (`client/harness/hook.py`, `decide`), run in a worker thread so the SDK's
event loop never waits on a socket; an allow is `{}` (the SDK reads None as a
failure), and nothing unexpected ever blocks a tool: it is logged and allowed.

    from claude_agent_sdk import ClaudeAgentOptions
    from editjournal.client.claude_sdk_hooks import hook_matchers

    options = ClaudeAgentOptions(cwd="/path/to/project", hooks=hook_matchers("/path/to/project"),
                                 setting_sources=[])  # not also the project's command hooks
"""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from editjournal.client.harness.hook import decide
from editjournal.client.harness.hookcall import HookProblem

if TYPE_CHECKING:  # the `claude` extra: typed against it, never imported without it
    from claude_agent_sdk import HookCallback, HookContext, HookInput, HookMatcher
    from claude_agent_sdk.types import HookEvent, SyncHookJSONOutput

log = logging.getLogger(__name__)
AGENT_PREFIX = "claude-sdk"  # sessions are journaled as claude-sdk:<session_id>
WRITES = "Edit|MultiEdit|Write"
READS_AND_WRITES = "Read|Edit|MultiEdit|Write"
SHELL = "Bash"  # its shell window: matchers of their own, as the command hooks have


def callback(workspace: str | os.PathLike[str] | None = None) -> HookCallback:
    """One hook callback for every event it is given (the payload says which), of the
    SDK's `HookCallback` type."""
    root = Path(workspace).resolve() if workspace is not None else None

    async def editjournal_hook(
        input_data: HookInput, tool_use_id: str | None, context: HookContext
    ) -> SyncHookJSONOutput:
        payload = dict(input_data)
        if tool_use_id and not payload.get("tool_use_id"):  # what pairs a Bash's two hooks
            payload["tool_use_id"] = tool_use_id
        try:
            answer = await asyncio.to_thread(
                decide, payload, "claude-code", root, AGENT_PREFIX, _note
            )
        except HookProblem as e:
            log.warning("editjournal hook: %s: the call is allowed", e)
            return {}
        except Exception as e:  # never a failed hook: the SDK could block the tool
            log.warning("editjournal hook: unexpected %s: %s: allowed", type(e).__name__, e)
            return {}
        return _answer(answer)

    return editjournal_hook


def _answer(found: dict[str, Any] | None) -> SyncHookJSONOutput:
    """The command hook's answer as the SDK's type: `{}` to allow, or PreToolUse's deny
    with its reason (the only answer `decide` gives Claude Code). Rebuilt field by field
    so mypy checks it against the SDK's `PreToolUseHookSpecificOutput`."""
    specific = (found or {}).get("hookSpecificOutput")
    if not isinstance(specific, dict) or specific.get("permissionDecision") != "deny":
        return {}
    reason = str(specific.get("permissionDecisionReason") or "")
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        }
    }


def _note(warning: str) -> None:
    """A daemon's warning about a claim (part of the file was not the session's change)."""
    log.warning("editjournal hook: %s", warning)


def hook_matchers(
    workspace: str | os.PathLike[str] | None = None,
) -> dict[HookEvent, list[HookMatcher]]:
    """`ClaudeAgentOptions(hooks=...)`: our callback before edits, after reads and edits,
    around Bash commands (after one that failed too) and as a prompt is submitted;
    the events and matchers of the command hooks (client/harness/hook_settings.py),
    typed as that field is, so an application's own mypy run accepts it."""
    from claude_agent_sdk import HookMatcher

    hook = callback(workspace)
    return {
        "PreToolUse": [
            HookMatcher(matcher=WRITES, hooks=[hook]),
            HookMatcher(matcher=SHELL, hooks=[hook]),
        ],
        "PostToolUse": [
            HookMatcher(matcher=READS_AND_WRITES, hooks=[hook]),
            HookMatcher(matcher=SHELL, hooks=[hook]),
        ],
        "PostToolUseFailure": [HookMatcher(matcher=SHELL, hooks=[hook])],
        "UserPromptSubmit": [HookMatcher(matcher=None, hooks=[hook])],
    }
