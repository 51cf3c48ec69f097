"""`editjournal hook gemini-cli`: Gemini CLI's built-in tools, journal-aware.

Payloads in Gemini CLI's hook shape (BeforeTool / AfterTool; `read_file` with
`start_line`/`end_line`, `replace` with `old_string`/`new_string`/`allow_multiple`,
`write_file` with `content`; a relative `file_path` is relative to `cwd`) fed to the
real command against a real daemon; a denial is `{"decision": "deny", "reason"}`.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from tests.conftest import RunningDaemon
from tests.e2e.cli_support import SCRIPT, cli, cli_env
from tests.e2e.hook_support import APP, run_hook


def hook(payload: Any) -> subprocess.CompletedProcess[str]:
    return run_hook("gemini-cli", payload)


def payload(root: Path, session: str, event: str, tool: str, **tool_input: Any) -> dict[str, Any]:
    response = tool_input.pop("response", None)
    found: dict[str, Any] = {
        "session_id": session,
        "transcript_path": f"/tmp/{session}.json",
        "cwd": str(root),
        "hook_event_name": event,
        "timestamp": "2026-11-26T10:02:11.412Z",
        "tool_name": tool,
        "tool_input": {"file_path": "app.py", **tool_input},  # relative to cwd
    }
    if response is not None:
        found["tool_response"] = response
    return found


def quiet(done: subprocess.CompletedProcess[str]) -> None:
    assert (done.returncode, done.stdout) == (0, ""), done.stderr


def test_a_replace_over_another_sessions_lines_is_denied_in_gemini_clis_words(
    served: RunningDaemon,
):
    root = served.root
    shown = {"llmContent": "...", "returnDisplay": "Read lines 3-12 of 20 from app.py"}
    quiet(
        hook(
            payload(root, "g1", "AfterTool", "read_file", start_line=3, end_line=12, response=shown)
        )
    )
    quiet(hook(payload(root, "g2", "AfterTool", "read_file", response={"llmContent": APP})))
    edit = {"old_string": "v5 = 5\n", "new_string": "v5 = 50\n", "allow_multiple": False}
    quiet(hook(payload(root, "g2", "BeforeTool", "replace", **edit)))
    (root / "app.py").write_text(APP.replace("v5 = 5\n", "v5 = 50\n"))
    quiet(hook(payload(root, "g2", "AfterTool", "replace", **edit, response={"llmContent": "ok"})))

    apart = {"old_string": "v10 = 10", "new_string": "v10 = 100"}
    quiet(hook(payload(root, "g1", "BeforeTool", "replace", **apart)))
    over = {"old_string": "v4 = 4\nv5 = 5", "new_string": "v4 = 4\nv5 = 55"}
    done = hook(payload(root, "g1", "BeforeTool", "replace", **over))
    answer = json.loads(done.stdout)
    assert done.returncode == 0 and answer["decision"] == "deny"
    reason = answer["reason"]
    assert reason.startswith("editjournal: your replace of app.py was not made: it relies on")
    assert "gemini-cli:g2 changed line 5" in reason and "    +v5 = 50" in reason.splitlines()
    assert reason.endswith(  # Gemini CLI's replace needs no read: the lines shown do
        "Redo your replace with old_string taken from the + lines above (the file as it is"
        " now), or call read_file on app.py again first."
    )

    journal = served.journal()
    [first, second] = journal.records(kind="file_read")
    assert (first.agent, first.event.lines) == ("gemini-cli:g1", (3, 12))
    assert (second.agent, second.event.lines) == ("gemini-cli:g2", None)
    [applied] = journal.records(kind="edit_applied")
    assert (applied.agent, applied.event.writer) == ("gemini-cli:g2", "gemini-cli:replace")


def test_a_failed_tool_records_nothing(served: RunningDaemon):
    failed = {"llmContent": "", "returnDisplay": "", "error": {"message": "no such file"}}
    quiet(hook(payload(served.root, "g1", "AfterTool", "read_file", response=failed)))
    assert list(served.journal().records(kind="file_read")) == []


def test_install_writes_gemini_clis_hooks(workspace: Path):
    """The project's file, with `editjournal` on PATH (the command that travels: without
    one, the install goes to the user's file, tests/e2e/test_hooks_install.py)."""
    path = f"{SCRIPT.parent}{os.pathsep}{os.environ.get('PATH', '')}"
    done = cli(workspace, "hooks", "install", "gemini-cli", env=cli_env(PATH=path))
    assert done.returncode == 0, done.stderr
    settings = json.loads((workspace / ".gemini" / "settings.json").read_text())
    before = settings["hooks"]["BeforeTool"]
    after = settings["hooks"]["AfterTool"]
    shell = "^run_shell_command$"  # the command's shell window
    assert [e["matcher"] for e in before] == ["^(replace|write_file)$", shell]
    assert [e["matcher"] for e in after] == ["^(read_file|replace|write_file)$", shell]
    [ours] = before[0]["hooks"]
    assert ours["command"].endswith("hook gemini-cli") and ours["timeout"] == 30_000
