"""`editjournal hook claude-code`: Claude Code's built-in tools, journal-aware.

Payloads in Claude Code's documented hook shape (`session_id`, `cwd`,
`hook_event_name`, `tool_name`, `tool_input`, `tool_response`) are fed to the real
command (the console script, as the installed hook runs it) against a real daemon;
the tool's own write is made on disk by the test, as Claude Code would make it
between its PreToolUse and PostToolUse hooks. No model is called.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from editjournal.client import Client
from tests.conftest import RunningDaemon, wait_until
from tests.e2e.cli_support import SCRIPT, TIMEOUT, cli_env
from tests.e2e.hook_support import APP, claude_payload, run_hook


def hook(payload: Any, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return run_hook("claude-code", payload, cwd)


payload = claude_payload


def read(root: Path, session: str, name: str = "app.py", **shown: Any) -> None:
    text = (root / name).read_text()
    lines = text.count("\n")
    file = {"filePath": str(root / name), "content": text, "numLines": lines, "startLine": 1}
    file.update({"totalLines": lines, **shown})
    done = hook(
        payload(
            root, session, "PostToolUse", "Read", name=name, response={"type": "text", "file": file}
        )
    )
    assert done.returncode == 0 and done.stdout == "", done.stderr


def edit_cycle(root: Path, session: str, old: str, new: str, name: str = "app.py") -> None:
    """PreToolUse (allowed), the tool's own write, PostToolUse."""
    asked = {"old_string": old, "new_string": new, "replace_all": False}
    before = hook(payload(root, session, "PreToolUse", "Edit", name=name, **asked))
    assert before.returncode == 0 and before.stdout == "", (before.stdout, before.stderr)
    path = root / name
    path.write_text(path.read_text().replace(old, new, 1))
    after = hook(payload(root, session, "PostToolUse", "Edit", name=name, **asked, response={}))
    assert after.returncode == 0 and after.stdout == "", after.stderr


def denial(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, done.stderr
    output = json.loads(done.stdout)["hookSpecificOutput"]
    assert output["hookEventName"] == "PreToolUse" and output["permissionDecision"] == "deny"
    return str(output["permissionDecisionReason"])


def events(running: RunningDaemon, kind: str) -> list[Any]:
    return list(running.journal().records(kind=kind))


def test_two_sessions_one_edits_the_other_is_allowed_apart_and_denied_on_its_lines(
    served: RunningDaemon,
):
    root = served.root
    read(root, "s1")
    read(root, "s2")
    edit_cycle(root, "s2", "v5 = 5\n", "v5 = 50\n")

    apart = {"old_string": "v15 = 15", "new_string": "v15 = 150"}
    allowed = hook(payload(root, "s1", "PreToolUse", "Edit", **apart))
    assert allowed.returncode == 0 and allowed.stdout == "" and allowed.stderr == ""

    over = {"old_string": "v4 = 4\nv5 = 5\n", "new_string": "v4 = 4\nv5 = 55\n"}
    reason = denial(hook(payload(root, "s1", "PreToolUse", "Edit", **over)))
    assert "claude-code:s2 changed line 5" in reason  # who, and which line
    assert "    +v5 = 50" in reason.splitlines() and "#" not in reason  # as it is, no anchors
    assert reason.endswith("Read app.py again, then redo your Edit.")  # in Claude Code's tools
    assert (root / "app.py").read_text() == APP.replace("v5 = 5\n", "v5 = 50\n")

    reads = [(r.agent, r.event.path) for r in events(served, "file_read")]
    assert reads == [("claude-code:s1", "app.py"), ("claude-code:s2", "app.py")]
    [applied] = events(served, "edit_applied")
    assert (applied.agent, applied.event.writer) == ("claude-code:s2", "claude-code:Edit")
    assert applied.event.line_changes == [(4, 5, 1)]
    [rejected] = events(served, "edit_rejected")
    assert (rejected.agent, rejected.event.code) == ("claude-code:s1", "anchor_stale")
    assert events(served, "outside_change") == []  # the tool's write is the session's
    assert served.journal().verify().ok  # every blob its events name is held


def test_a_file_no_session_read_is_claimed_and_the_journal_stays_whole(served: RunningDaemon):
    root = served.root
    (root / "other.py").write_text("x = 1\n")
    with Client(root, "observer", autostart=False) as client:
        client.call("ping")
    wait_until(lambda: events(served, "outside_change"), what="other.py seen by the watcher")
    (root / "other.py").write_text("x = 2\n")  # a Write of a file never read (no Pre hook)
    asked = {"content": "x = 2\n", "name": "other.py"}
    assert hook(payload(root, "s1", "PostToolUse", "Write", **asked, response={})).returncode == 0
    (root / "fresh.py").write_text("y = 1\n")  # a new file, claimed
    asked = {"content": "y = 1\n", "name": "fresh.py"}
    assert hook(payload(root, "s1", "PostToolUse", "Write", **asked, response={})).returncode == 0
    assert served.journal().verify().ok


def test_agent_status_of_each_session(served: RunningDaemon):
    root = served.root
    read(root, "s1")
    read(root, "s2")
    edit_cycle(root, "s2", "v2 = 2\n", "v2 = 20\n")
    with Client(root, "observer", autostart=False) as client:
        mine = client.agent_status("claude-code:s2").files
        theirs = client.agent_status("claude-code:s1").files
    assert [(f.path, f.current) for f in mine] == [("app.py", True)]
    assert [(f.path, f.current) for f in theirs] == [("app.py", False)]
    assert [c["agent"] for c in theirs[0].changed_since] == ["claude-code:s2"]


def test_a_ranged_read_is_journaled_as_those_lines(served: RunningDaemon):
    root = served.root
    read(root, "s1", numLines=5, startLine=3, totalLines=20)
    [seen] = events(served, "file_read")
    assert seen.event.lines == (3, 7)


def test_an_edit_below_a_ranged_read_is_allowed_its_text_proves_the_session_knows_it(
    served: RunningDaemon,
):
    """Claude Code pages large files and Grep shows lines without any Read: an Edit that
    quotes line 20 exactly, after a Read of lines 1-5, is what Claude Code itself allows."""
    root = served.root
    read(root, "s1", numLines=5, startLine=1, totalLines=20)
    edit_cycle(root, "s1", "v20 = 20\n", "v20 = 200\n")
    assert (root / "app.py").read_text().endswith("v19 = 19\nv20 = 200\n")
    [edit] = [r for r in events(served, "edit_applied") if r.agent == "claude-code:s1"]
    assert edit.event.writer == "claude-code:Edit"


def test_multi_edit_is_denied_when_one_of_its_edits_is_stale(served: RunningDaemon):
    root = served.root
    read(root, "s1")
    read(root, "s2")
    edit_cycle(root, "s2", "v9 = 9\n", "v9 = 90\n")
    edits = [
        {"old_string": "v1 = 1", "new_string": "v1 = 10"},
        {"old_string": "v8 = 8\nv9 = 9", "new_string": "v8 = 8\nv9 = 99"},
    ]
    reason = denial(hook(payload(root, "s1", "PreToolUse", "MultiEdit", edits=edits)))
    assert "v9 = 90" in reason


def test_a_write_over_content_the_session_never_saw_is_denied(served: RunningDaemon):
    root = served.root
    read(root, "s2")
    edit_cycle(root, "s2", "v3 = 3\n", "v3 = 30\n")
    reason = denial(hook(payload(root, "s1", "PreToolUse", "Write", content="new\n")))
    assert "which you have not read" in reason and "claude-code:s2 changed it" in reason
    assert reason.endswith("Read app.py, all of it (no offset or limit), then redo your Write.")

    new = hook(payload(root, "s1", "PreToolUse", "Write", name="new.py", content="x = 1\n"))
    assert new.returncode == 0 and new.stdout == ""
    (root / "new.py").write_text("x = 1\n")
    claimed = hook(payload(root, "s1", "PostToolUse", "Write", name="new.py", content="x = 1\n"))
    assert claimed.returncode == 0
    created = [r for r in events(served, "edit_applied") if r.event.path == "new.py"]
    assert [(r.agent, r.event.writer) for r in created] == [("claude-code:s1", "claude-code:Write")]


def test_a_change_the_watcher_recorded_first_is_still_the_sessions_snapshot(
    served: RunningDaemon,
):
    root = served.root
    read(root, "s1")
    (root / "app.py").write_text(APP.replace("v7 = 7\n", "v7 = 70\n"))  # no PreToolUse
    wait_until(lambda: events(served, "outside_change"), what="the watcher's outside_change")
    asked = {"old_string": "v7 = 7", "new_string": "v7 = 70"}
    assert hook(payload(root, "s1", "PostToolUse", "Edit", **asked, response={})).returncode == 0
    with Client(root, "observer", autostart=False) as client:
        [seen] = client.agent_status("claude-code:s1").files
    assert seen.current  # it wrote that content: its snapshot is the file as it is


@pytest.mark.parametrize(
    "sent",
    [
        "not json at all",
        "[1, 2]",
        {"hook_event_name": "PreToolUse", "tool_name": "Edit"},
        {"hook_event_name": "PreToolUse", "tool_name": "Edit", "session_id": "s", "tool_input": {}},
    ],
)
def test_a_malformed_payload_is_allowed_with_a_warning(served: RunningDaemon, sent: Any):
    done = hook(sent, cwd=served.root)
    assert done.returncode == 0 and done.stdout == ""
    assert done.stderr.startswith("editjournal hook: ") and "allowed" in done.stderr
    assert "Traceback" not in done.stderr


def test_other_tools_and_paths_outside_the_workspace_are_allowed(
    served: RunningDaemon, tmp_path: Path
):
    root = served.root
    bash = {**payload(root, "s1", "PreToolUse", "Bash"), "tool_input": {"command": "ls"}}
    done = hook(bash)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    outside = payload(root, "s1", "PreToolUse", "Edit", old_string="a", new_string="b")
    outside["tool_input"]["file_path"] = str(tmp_path / "elsewhere.py")
    done = hook(outside)
    assert done.returncode == 0 and done.stdout == "" and "outside the workspace" in done.stderr


def test_with_no_daemon_the_hook_starts_one(workspace: Path):
    (workspace / "app.py").write_text(APP)
    try:
        read(workspace, "s1")
        with Client(workspace, "observer", autostart=False) as client:
            [seen] = client.agent_status("claude-code:s1").files
        assert seen.path == "app.py" and seen.current
    finally:
        stop = [str(SCRIPT), "--workspace", str(workspace), "stop"]
        subprocess.run(stop, env=cli_env(), timeout=TIMEOUT, capture_output=True)
