"""Codex's hooks, against a real daemon: its shell tool in a window, its apply_patch
judged and claimed file by file, its prompt a checkpoint.

The payloads are Codex's documented ones (codex-rs/hooks/schema/generated:
pre-tool-use / post-tool-use / user-prompt-submit `.command.input.schema.json`; the
apply_patch text as `tool_input.command`, codex-rs/core/src/tools/handlers/
apply_patch.rs), fed to the real `editjournal hook codex` command. What the tool does
between its two hooks is done for real: `sed -i` in a shell, and the patch's files
written, created, moved and removed as Codex's apply_patch leaves them.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from editjournal.client.harness.codexpatch import parse_patch as parse
from editjournal.client.harness.hook_settings import CODEX
from tests.conftest import RunningDaemon
from tests.e2e.cli_support import SCRIPT, TIMEOUT, cli, cli_env
from tests.e2e.hook_support import APP, run_hook


def codex(
    root: Path, session: str, event: str, tool: str, command: str, call: str
) -> dict[str, Any]:
    """A PreToolUse / PostToolUse payload as Codex sends it."""
    found: dict[str, Any] = {
        "session_id": session,
        "turn_id": "turn-1",
        "transcript_path": None,
        "cwd": str(root),
        "hook_event_name": event,
        "model": "gpt-5.1-codex",
        "permission_mode": "default",
        "tool_name": tool,
        "tool_input": {"command": command},
        "tool_use_id": call,
    }
    if event == "PostToolUse":
        found["tool_response"] = "Success. Updated the following files:"
    return found


def allowed(payload: dict[str, Any]) -> str:
    """The hook's stderr; it must allow the call silently on stdout."""
    done = run_hook("codex", payload)
    assert done.returncode == 0 and done.stdout == "", (done.stdout, done.stderr)
    return done.stderr


def owners(running: RunningDaemon, path: str) -> list[tuple[str, str]]:
    blamed = running.client("lister").blame(path).lines
    return [(line.text, line.agent or "outside") for line in blamed]


def by(running: RunningDaemon, writer: str) -> list[Any]:
    records = running.journal().records(kind="edit_applied")
    return [r for r in records if r.event.writer == writer]


def test_a_prompt_then_bash_commands_a_checkpoint_and_the_sessions_and_subagents_lines(
    served: RunningDaemon,
):
    root = served.root
    prompt = {
        "session_id": "s1", "turn_id": "turn-1", "transcript_path": None, "cwd": str(root),
        "hook_event_name": "UserPromptSubmit", "model": "gpt-5.1-codex",
        "permission_mode": "default", "prompt": "make v7 seventy",
    }  # fmt: skip
    assert allowed(prompt) == ""
    checkpoints = served.client("lister").checkpoint_list().checkpoints
    assert [c.name for c in checkpoints] == ["codex:s1/turn-1"]

    command = "sed -i 's/^v7 = 7$/v7 = 70/' app.py"
    assert allowed(codex(root, "s1", "PreToolUse", "Bash", command, "call_sed")) == ""
    subprocess.run(["bash", "-c", command], cwd=root, check=True, timeout=TIMEOUT)
    assert allowed(codex(root, "s1", "PostToolUse", "Bash", command, "call_sed")) == ""
    # a subagent's call carries its agent_id (codex-rs/hooks/src/events/pre_tool_use.rs)
    other = "sed -i 's/^v8 = 8$/v8 = 80/' app.py"
    for event in ("PreToolUse", "PostToolUse"):
        call = {**codex(root, "s1", event, "Bash", other, "call_sub"), "agent_id": "sub-1"}
        assert allowed(call | {"agent_type": "worker"}) == ""
        if event == "PreToolUse":
            subprocess.run(["bash", "-c", other], cwd=root, check=True, timeout=TIMEOUT)
    blamed = owners(served, "app.py")
    assert blamed[6] == ("v7 = 70", "codex:s1") and blamed[7] == ("v8 = 80", "codex:s1/sub-1")
    assert all(not who.startswith("codex:") for i, (_, who) in enumerate(blamed) if i not in (6, 7))
    edits = by(served, "codex:Bash")
    assert [(e.agent, e.event.line_changes) for e in edits] == [
        ("codex:s1", [(6, 7, 1)]),
        ("codex:s1/sub-1", [(7, 8, 1)]),
    ]


PATCH = """*** Begin Patch
*** Update File: app.py
@@
 v5 = 5
-v6 = 6
+v6 = 66
 v7 = 7
@@ v15 = 15
-v16 = 16
+v16 = 160
*** Add File: notes/new.txt
+first
+second
*** Delete File: old.txt
*** Update File: mod.py
*** Move to: pkg/mod.py
@@
-x = 1
+x = 2
*** End Patch
"""


def apply_as_codex(root: Path) -> None:
    """What Codex's apply_patch leaves on disk for PATCH."""
    app = (root / "app.py").read_text()
    (root / "app.py").write_text(
        app.replace("v6 = 6\n", "v6 = 66\n").replace("v16 = 16\n", "v16 = 160\n")
    )
    (root / "notes").mkdir()
    (root / "notes" / "new.txt").write_text("first\nsecond\n")
    (root / "old.txt").unlink()
    (root / "pkg").mkdir()
    (root / "pkg" / "mod.py").write_text("x = 2\n")
    (root / "mod.py").unlink()


def test_apply_patch_updates_adds_deletes_and_moves_are_the_sessions(served: RunningDaemon):
    root = served.root
    (root / "old.txt").write_text("old\n")
    (root / "mod.py").write_text("x = 1\n")
    assert allowed(codex(root, "s1", "PreToolUse", "apply_patch", PATCH, "call_p1")) == ""
    apply_as_codex(root)
    assert allowed(codex(root, "s1", "PostToolUse", "apply_patch", PATCH, "call_p1")) == ""

    blamed = owners(served, "app.py")
    mine = [text for text, who in blamed if who == "codex:s1"]
    assert mine == ["v6 = 66", "v16 = 160"]  # line by line: the rest keep their author
    claimed = by(served, "codex:apply_patch")
    assert {r.agent for r in claimed} == {"codex:s1"}
    assert owners(served, "notes/new.txt") == [("first", "codex:s1"), ("second", "codex:s1")]
    assert owners(served, "pkg/mod.py") == [("x = 2", "codex:s1")]
    deleted = {r.event.path for r in claimed if r.event.deleted}
    assert deleted == {"old.txt", "mod.py"}  # through the window around the tool


def test_apply_patch_over_lines_changed_since_the_sessions_last_write_is_denied(
    served: RunningDaemon,
):
    root = served.root
    first = "*** Begin Patch\n*** Update File: app.py\n@@\n-v2 = 2\n+v2 = 22\n*** End Patch"
    allowed(codex(root, "s1", "PreToolUse", "apply_patch", first, "call_1"))
    (root / "app.py").write_text(APP.replace("v2 = 2\n", "v2 = 22\n"))
    allowed(codex(root, "s1", "PostToolUse", "apply_patch", first, "call_1"))
    served.client("agent-b").edit_file("app.py", "v6 = 6\n", "v6 = 60\n")

    over = "*** Begin Patch\n*** Update File: app.py\n@@\n v5 = 5\n-v6 = 6\n+v6 = 7\n*** End Patch"
    done = run_hook("codex", codex(root, "s1", "PreToolUse", "apply_patch", over, "call_2"))
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)["hookSpecificOutput"]
    assert answer["hookEventName"] == "PreToolUse" and answer["permissionDecision"] == "deny"
    reason = answer["permissionDecisionReason"]
    assert reason.startswith("editjournal: your apply_patch of app.py was not made")
    assert "agent-b changed line 6" in reason and "+v6 = 60" in reason
    assert reason.endswith("or read app.py again first.")


def test_a_patch_it_cannot_read_is_allowed_and_said(tmp_path: Path):
    payload = codex(tmp_path, "s1", "PreToolUse", "apply_patch", "diff --git a b", "call_x")
    said = allowed(payload)
    assert "no patch it can read" in said and "allowed" in said


def test_the_patch_reader_says_each_files_change():
    files = parse(PATCH)
    assert [(f.action, f.path, f.move_to, f.claimable) for f in files] == [
        ("update", "app.py", None, True),
        ("add", "notes/new.txt", None, True),
        ("delete", "old.txt", None, False),
        ("update", "mod.py", "pkg/mod.py", False),
    ]
    assert files[0].edits[0]["old_string"] == "v5 = 5\nv6 = 6\nv7 = 7\n"
    assert files[0].edits[1] == {
        "old_string": "v16 = 16\n", "new_string": "v16 = 160\n", "replace_all": False
    }  # fmt: skip
    assert files[1].content == "first\nsecond\n"
    with pytest.raises(ValueError, match="Begin Patch"):
        parse("--- a/app.py\n+++ b/app.py\n")


def test_codex_home_moves_the_user_scopes_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("CODEX_HOME", raising=False)
    assert CODEX.settings_file("user", None, tmp_path) == tmp_path / ".codex" / "hooks.json"
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "elsewhere"))
    assert CODEX.settings_file("user", None, tmp_path) == tmp_path / "elsewhere" / "hooks.json"


def test_hooks_install_status_and_uninstall_for_codex_keep_a_users_own(tmp_path: Path):
    ws, home = tmp_path / "ws", tmp_path / "home"
    (ws / ".git").mkdir(parents=True)
    home.mkdir()
    env = cli_env(PATH=f"{SCRIPT.parent}{os.pathsep}{os.environ.get('PATH', '')}", HOME=str(home))
    file = ws / ".codex" / "hooks.json"
    file.parent.mkdir()
    theirs = {"type": "command", "command": "./audit.sh", "timeout": 5}
    file.write_text(json.dumps({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [theirs]}]}}))

    done = cli(ws, "hooks", "install", "codex", "--json", env=env)
    assert done.returncode == 0, done.stderr
    ours = {"type": "command", "command": "editjournal hook codex", "timeout": 30}
    assert json.loads(file.read_text()) == {
        "hooks": {
            "PreToolUse": [
                {"matcher": "Bash", "hooks": [theirs, ours]},
                {"matcher": "apply_patch", "hooks": [ours]},
            ],
            "PostToolUse": [
                {"matcher": "apply_patch", "hooks": [ours]},
                {"matcher": "Bash", "hooks": [ours]},
            ],
            "UserPromptSubmit": [{"hooks": [ours]}],
        }
    }
    rows = json.loads(cli(ws, "hooks", "status", "codex", "--json", env=env).stdout)["hooks"]
    assert [(r["scope"], r["state"]) for r in rows] == [
        ("project", "installed"),
        ("user", "not installed"),
    ]
    assert cli(ws, "hooks", "uninstall", "codex", env=env).returncode == 0
    left = {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [theirs]}]}}
    assert json.loads(file.read_text()) == left
