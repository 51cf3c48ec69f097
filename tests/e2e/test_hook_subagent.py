"""A Claude Code subagent is an agent of its own: `claude-code:SESSION/AGENT_ID`.

The payloads have the shape the real CLI sends (2.1.332; tests/e2e/test_claude_code_real.py
runs it, under `make stress`): a subagent's PreToolUse / PostToolUse carry its parent's
`session_id` and its own `agent_id` and `agent_type`. They are fed to the real
`editjournal hook claude-code` against a real daemon; the Edit's write is made by the test,
as the CLI makes it between its two hooks. The subagent's read is its own snapshot (its
edit is allowed), its edit is blamed on it, and its parent's name stays the session's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.conftest import RunningDaemon
from tests.e2e.hook_support import claude_payload, run_hook

SUB = "a3cde5b95b7419aa6"  # an agent_id as the CLI makes them


def as_subagent(payload: dict[str, Any]) -> dict[str, Any]:
    return {**payload, "agent_id": SUB, "agent_type": "general-purpose"}


def silent(payload: dict[str, Any]) -> None:
    done = run_hook("claude-code", payload)
    assert done.returncode == 0 and done.stdout == "" and done.stderr == "", done


def test_a_subagents_read_and_edit_are_its_own_agent_under_the_session(served: RunningDaemon):
    root = served.root
    text = (root / "app.py").read_text()
    lines = text.count("\n")
    shown = {"filePath": str(root / "app.py"), "content": text, "numLines": lines}
    shown.update({"startLine": 1, "totalLines": lines})
    response = {"type": "text", "file": shown}
    silent(as_subagent(claude_payload(root, "s1", "PostToolUse", "Read", response=response)))
    asked: dict[str, Any] = {
        "old_string": "v3 = 3\n",
        "new_string": "v3 = 30\n",
        "replace_all": False,
    }
    silent(as_subagent(claude_payload(root, "s1", "PreToolUse", "Edit", **asked)))
    (root / "app.py").write_text(text.replace("v3 = 3\n", "v3 = 30\n"))
    silent(as_subagent(claude_payload(root, "s1", "PostToolUse", "Edit", response={}, **asked)))

    blamed = served.client("viewer").blame("app.py").lines
    assert (blamed[2].text, blamed[2].agent) == ("v3 = 30", f"claude-code:s1/{SUB}")
    reads = [r.agent for r in served.journal().records(kind="file_read")]
    assert reads == [f"claude-code:s1/{SUB}"]


def test_a_payload_without_agent_id_is_the_session_itself():
    from editjournal.client.harness.adapters import ClaudeCode

    payload = claude_payload(Path("/w"), "s1", "PostToolUse", "Read", response={})
    call = ClaudeCode.call(payload)
    assert call is not None and call.agent == "claude-code:s1"
    call = ClaudeCode.call({**payload, "agent_id": ""})
    assert call is not None and call.agent == "claude-code:s1"
    call = ClaudeCode.call(as_subagent(payload))
    assert call is not None and call.agent == f"claude-code:s1/{SUB}"
