"""Hook callbacks for Claude Agent SDK applications, against a real daemon.

The callbacks are the ones `hook_matchers()` hands the SDK (checked to be the SDK's own
`HookMatcher`s), called as the SDK calls them: `(input_data, tool_use_id, context)`,
with `input_data` in the SDK's `PreToolUseHookInput` / `PostToolUseHookInput` shape.
No model and no Claude Code process run.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from editjournal.client.claude_sdk_hooks import callback, hook_matchers
from tests.conftest import RunningDaemon
from tests.e2e.hook_support import APP, claude_payload

claude_agent_sdk = pytest.importorskip("claude_agent_sdk")
REPO = Path(__file__).resolve().parents[2]


input_data = claude_payload


def ask(root: Path, data: dict[str, Any]) -> dict[str, Any]:
    hook = callback(root)
    context = claude_agent_sdk.HookContext(signal=None)
    return asyncio.run(hook(data, data["tool_use_id"], context))


def test_the_matchers_are_the_sdks(tmp_path: Path):
    hooks = hook_matchers(tmp_path)
    assert set(hooks) == {"PreToolUse", "PostToolUse"}
    for matchers in hooks.values():
        assert all(isinstance(m, claude_agent_sdk.HookMatcher) for m in matchers)
    assert hooks["PreToolUse"][0].matcher == "Edit|MultiEdit|Write"
    options = claude_agent_sdk.ClaudeAgentOptions(cwd=str(tmp_path), hooks=hooks)
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
