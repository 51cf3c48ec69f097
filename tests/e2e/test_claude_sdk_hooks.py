"""Hook callbacks for Claude Agent SDK applications, against a real daemon.

The callbacks are the ones `hook_matchers()` hands the SDK (checked to be the SDK's own
`HookMatcher`s), called as the SDK calls them: `(input_data, tool_use_id, context)`,
with `input_data` in the SDK's `PreToolUseHookInput` / `PostToolUseHookInput` /
`PostToolUseFailureHookInput` / `UserPromptSubmitHookInput` shape. No model and no
Claude Code process run; a Bash command's change is made by a real `sed -i`.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from editjournal.client.claude_sdk_hooks import callback, hook_matchers
from tests.conftest import RunningDaemon
from tests.e2e.hook_support import APP, claude_payload


def sdk() -> ModuleType:
    """The SDK, imported when a test runs, not when each xdist worker collects the
    module (1.3 s of CPU: it brings the MCP SDK)."""
    return pytest.importorskip("claude_agent_sdk")


REPO = Path(__file__).resolve().parents[2]


input_data = claude_payload


def ask(root: Path, data: dict[str, Any]) -> dict[str, Any]:
    hook = callback(root)
    context = sdk().HookContext(signal=None)
    return asyncio.run(hook(data, data.get("tool_use_id"), context))


def test_the_matchers_are_the_sdks(tmp_path: Path):
    hooks = hook_matchers(tmp_path)
    assert set(hooks) == {"PreToolUse", "PostToolUse", "PostToolUseFailure", "UserPromptSubmit"}
    for matchers in hooks.values():
        assert all(isinstance(m, sdk().HookMatcher) for m in matchers)
    assert [m.matcher for m in hooks["PreToolUse"]] == ["Edit|MultiEdit|Write", "Bash"]
    assert [m.matcher for m in hooks["PostToolUseFailure"]] == ["Bash"]
    assert [m.matcher for m in hooks["UserPromptSubmit"]] == [None]
    options = sdk().ClaudeAgentOptions(cwd=str(tmp_path), hooks=hooks)
    assert options.hooks is hooks


def test_a_session_reads_another_edits_the_first_is_denied_on_those_lines(served: RunningDaemon):
    root = served.root
    full = {"type": "text", "file": {"filePath": str(root / "app.py"), "content": APP,
                                     "numLines": 20, "startLine": 1, "totalLines": 20}}  # fmt: skip
    assert ask(root, input_data(root, "a", "PostToolUse", "Read", response=full)) == {}
    assert ask(root, input_data(root, "b", "PostToolUse", "Read", response=full)) == {}
    edit = {"old_string": "v6 = 6\n", "new_string": "v6 = 60\n", "replace_all": False}
    assert ask(root, input_data(root, "b", "PreToolUse", "Edit", **edit)) == {}
    (root / "app.py").write_text(APP.replace("v6 = 6\n", "v6 = 60\n"))
    assert ask(root, input_data(root, "b", "PostToolUse", "Edit", **edit, response={})) == {}

    apart = {"old_string": "v16 = 16", "new_string": "v16 = 160", "replace_all": False}
    assert ask(root, input_data(root, "a", "PreToolUse", "Edit", **apart)) == {}
    over = {"old_string": "v6 = 6\nv7 = 7", "new_string": "v6 = 66\nv7 = 7", "replace_all": False}
    answer = ask(root, input_data(root, "a", "PreToolUse", "Edit", **over))["hookSpecificOutput"]
    assert answer["hookEventName"] == "PreToolUse" and answer["permissionDecision"] == "deny"
    reason = answer["permissionDecisionReason"]
    assert "claude-sdk:b changed line 6" in reason  # the command hook's words, as they are
    assert reason.endswith("Read app.py again, then redo your Edit.")

    journal = served.journal()
    assert [r.agent for r in journal.records(kind="file_read")] == ["claude-sdk:a", "claude-sdk:b"]
    [applied] = journal.records(kind="edit_applied")
    assert (applied.agent, applied.event.writer) == ("claude-sdk:b", "claude-sdk:Edit")


def bash(root: Path, event: str, command: str, call: str) -> dict[str, Any]:
    """The SDK's input for a Bash call of session s1 (its Post carries the response)."""
    data = input_data(root, "s1", event, "Bash")
    data["tool_input"] = {"command": command, "description": "edit it"}
    data["tool_use_id"] = call
    if event == "PostToolUse":
        data["tool_response"] = {"stdout": "", "stderr": "", "interrupted": False}
    if event == "PostToolUseFailure":
        data["error"], data["is_interrupt"] = "Exit code 1", False
    return data


def sed(root: Path, command: str) -> None:
    subprocess.run(["bash", "-c", command], cwd=root, timeout=60)


def test_a_prompt_and_bash_commands_a_checkpoint_and_the_sessions_lines(served: RunningDaemon):
    root = served.root
    prompt = {
        "session_id": "s1", "transcript_path": "/tmp/s1.jsonl", "cwd": str(root),
        "permission_mode": "default", "hook_event_name": "UserPromptSubmit", "prompt": "go",
    }  # fmt: skip
    assert ask(root, prompt) == {}
    lister = served.client("lister")
    assert [c.name for c in lister.checkpoint_list().checkpoints] == ["claude-sdk:s1/turn-1"]

    command = "sed -i 's/^v7 = 7$/v7 = 70/' app.py"
    assert ask(root, bash(root, "PreToolUse", command, "toolu_1")) == {}
    sed(root, command)
    assert ask(root, bash(root, "PostToolUse", command, "toolu_1")) == {}
    failing = "sed -i 's/^v9 = 9$/v9 = 90/' app.py && false"
    assert ask(root, bash(root, "PreToolUse", failing, "toolu_2")) == {}
    sed(root, failing)  # it changed the file, then failed: its window closes all the same
    assert ask(root, bash(root, "PostToolUseFailure", failing, "toolu_2")) == {}

    blamed = [(line.text, line.agent) for line in lister.blame("app.py").lines]
    mine = [text for text, who in blamed if who == "claude-sdk:s1"]
    assert mine == ["v7 = 70", "v9 = 90"]  # line by line: the rest keep their author
    edits = served.journal().records(kind="edit_applied")
    assert [(r.agent, r.event.writer) for r in edits] == [("claude-sdk:s1", "claude-sdk:Bash")] * 2


def test_a_malformed_input_is_allowed(served: RunningDaemon):
    bad = {"hook_event_name": "PreToolUse", "tool_name": "Edit", "tool_use_id": "x"}
    assert ask(served.root, bad) == {}


APPLICATION = """
from claude_agent_sdk import ClaudeAgentOptions, HookCallback
from editjournal.client.claude_sdk_hooks import callback, hook_matchers

options = ClaudeAgentOptions(cwd="/project", hooks=hook_matchers("/project"))
hook: HookCallback = callback("/project")
"""


@pytest.mark.stress  # a cold mypy over the SDK's types: ~9 s of CPU
def test_an_applications_mypy_accepts_the_matchers_as_the_sdks_hooks(tmp_path: Path):
    """`make lint` checks hook_matchers() against the SDK's types; this is the same
    promise from the other side: an application's own `mypy --strict`."""
    app = tmp_path / "app.py"
    app.write_text(APPLICATION)
    package = tmp_path / "typed" / "editjournal"  # the installed layout, as `make lint` links it
    package.mkdir(parents=True)
    for part in ("daemon", "client", "schemas"):
        (package / part).symlink_to(REPO / part)
    for name in ("__init__.py", "py.typed"):
        (package / name).symlink_to(REPO / "editjournal" / name)
    cache = str(tmp_path / "cache")
    command = [sys.executable, "-m", "mypy", "--strict", "--cache-dir", cache, str(app)]
    env = {**os.environ, "MYPYPATH": str(package.parent)}
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env
    )
    assert done.returncode == 0, done.stdout + done.stderr
