"""A hook's denial in the harness's words (issue 39), and a Write after a ranged re-read.

The model behind Claude Code called `Edit` or `Write`; behind Gemini CLI, `replace`.
It has never seen the daemon's tools (`edit_file`), its operations or its reply
fields (`details.delta`): a denial names the tool it called, the lines and who changed
them, shows those lines as they are now, and ends with what to do in that harness.

Claude Code pages large files: a session that read the whole file, then re-reads only
a range, has a snapshot that is the current content with lines it was not shown. A
Write then is explained from the session's last full view — who changed which lines
since, and the lines — not "not read since" its latest read, where nothing changed.

The real `editjournal hook` command against a real daemon; the tool's own write is
made on disk by the test, as the harness makes it between its two hooks.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from tests.conftest import RunningDaemon
from tests.e2e.hook_support import APP, claude_payload, run_hook

# words of the daemon's own tools and reply fields that the harness's model never saw
WIRE_WORDS = ("operation", "edit_file", "write_file", "details", "delta", "anchor", "seq ")


def hook(payload: Any) -> subprocess.CompletedProcess[str]:
    return run_hook("claude-code", payload)


def read(root: Path, session: str, first: int = 1, count: int = 20) -> None:
    """A Read of `count` lines from `first` (Claude Code's response shape)."""
    file = {"filePath": str(root / "app.py"), "content": "", "numLines": count,
            "startLine": first, "totalLines": 20}  # fmt: skip
    response = {"type": "text", "file": file}
    done = hook(claude_payload(root, session, "PostToolUse", "Read", response=response))
    assert (done.returncode, done.stdout) == (0, ""), done.stderr


def edit(root: Path, session: str, old: str, new: str) -> None:
    """An Edit the hook allows, the tool's write, and its claim."""
    asked = {"old_string": old, "new_string": new, "replace_all": False}
    before = hook(claude_payload(root, session, "PreToolUse", "Edit", **asked))
    assert (before.returncode, before.stdout) == (0, ""), before.stderr
    (root / "app.py").write_text((root / "app.py").read_text().replace(old, new, 1))
    after = hook(claude_payload(root, session, "PostToolUse", "Edit", **asked, response={}))
    assert (after.returncode, after.stdout) == (0, ""), after.stderr


def denied(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, done.stderr
    output = json.loads(done.stdout)["hookSpecificOutput"]
    assert output["permissionDecision"] == "deny"
    reason = str(output["permissionDecisionReason"])
    assert not [w for w in WIRE_WORDS if w in reason], reason
    return reason


def test_a_stale_edit_is_denied_with_the_tool_the_lines_who_and_what_to_do(
    served: RunningDaemon,
):
    root = served.root
    read(root, "s1")
    read(root, "s2")
    edit(root, "s2", "v5 = 5\n", "v5 = 50\n")
    edits = [
        {"old_string": "v1 = 1", "new_string": "v1 = 10"},
        {"old_string": "v4 = 4\nv5 = 5", "new_string": "v4 = 4\nv5 = 55"},
    ]
    reason = denied(hook(claude_payload(root, "s1", "PreToolUse", "MultiEdit", edits=edits)))
    lines = reason.splitlines()
    assert lines[0] == (
        "editjournal: your MultiEdit (its edit 2 of 2) of app.py was not made: it relies on"
        " line 5, which changed since you read it."
    )
    assert lines[1].startswith("claude-code:s2 changed line") and "#" not in reason
    assert "    -v5 = 5" in lines and "    +v5 = 50" in lines  # the lines as they are now
    assert lines[-1] == "Read app.py again, then redo your MultiEdit."


def test_a_write_after_a_ranged_re_read_is_explained_from_the_last_full_view(
    served: RunningDaemon,
):
    root = served.root
    read(root, "s1")  # all of it
    read(root, "s2")
    edit(root, "s2", "v15 = 15\n", "v15 = 150\n")
    read(root, "s1", first=1, count=5)  # a page: its latest read, after the change
    reason = denied(hook(claude_payload(root, "s1", "PreToolUse", "Write", content="x\n")))
    lines = reason.splitlines()
    assert lines[0] == (
        "editjournal: your Write of app.py was not made: it would replace the whole file, but"
        " your last read showed part of it (lines 1-5), and the file changed since you"
        " last saw all of it."
    )
    assert lines[1].startswith("claude-code:s2 changed line 15 (version ")
    assert "    -v15 = 15" in lines and "    +v15 = 150" in lines
    assert lines[-1] == "Read app.py, all of it (no offset or limit), then redo your Write."
    assert "not read since" not in reason
    journal = served.journal()
    [first_read, *_] = journal.records(kind="file_read", agent="claude-code:s1")
    [refused] = journal.records(kind="edit_rejected")
    assert refused.event.details["base_version"] == first_read.seq  # from the full view
    assert [c["agent"] for c in refused.event.details["conflicts"]] == ["claude-code:s2"]

    read(root, "s1")  # all of it again: the Write is the session's to make
    write = hook(claude_payload(root, "s1", "PreToolUse", "Write", content="x\n"))
    assert (write.returncode, write.stdout) == (0, ""), write.stderr


def test_after_a_ranged_re_read_a_write_is_allowed_only_if_every_line_was_shown(
    served: RunningDaemon,
):
    """s1 saw every line at its full view, and none changed since: nothing to deny. s2
    was only ever shown a page: its Write is denied, and says so."""
    root = served.root
    read(root, "s1")
    read(root, "s1", first=6, count=5)
    write = hook(claude_payload(root, "s1", "PreToolUse", "Write", content="x\n"))
    assert (write.returncode, write.stdout, write.stderr) == (0, "", "")

    read(root, "s2", first=6, count=5)
    reason = denied(hook(claude_payload(root, "s2", "PreToolUse", "Write", content="x\n")))
    assert reason.splitlines()[0].endswith(
        "but your last read showed part of it (lines 6-10), and you have not been shown all of it."
    )


def test_a_session_that_may_not_write_is_told_so_and_not_to_retry(served: RunningDaemon):
    root = served.root
    (root / ".editjournal" / "config.toml").write_text('[access]\nread_only = ["claude-code:r"]\n')
    asked = {"old_string": "v1 = 1", "new_string": "v1 = 10"}
    reason = denied(hook(claude_payload(root, "r", "PreToolUse", "Edit", **asked)))
    assert reason.startswith("editjournal: your Edit of app.py was not made: this session may")
    assert reason.endswith("Do not retry it; tell the user if the change is needed.")
    assert (root / "app.py").read_text() == APP
