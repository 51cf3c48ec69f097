"""Write access per agent (.editjournal/config.toml), enforced on the one writing path:
a read-only agent is refused by every writing tool, journaled, and the file is untouched."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from editjournal.client import Client
from tests.conftest import RunningDaemon
from tests.e2e.hunk_support import configure, events, refused

TEXT = "# Title\n\n## Status\nold\n"


def _calls(client: Client, root: Path) -> dict[str, Callable[[], Any]]:
    """One call of every writing tool, each of which would change notes.md."""
    sha = hashlib.sha256((root / "notes.md").read_bytes()).hexdigest()
    anchor = client.read_file("notes.md", hashes=True).lines[3].hash
    diff = "--- a/notes.md\n+++ b/notes.md\n@@ -4,1 +4,1 @@\n-old\n+new\n"
    return {
        "edit": lambda: client.edit(
            "notes.md", [{"op": "replace_line", "hash": anchor, "content": "new"}]
        ),
        "safe_patch": lambda: client.safe_patch("notes.md", diff, sha),
        "edit_file": lambda: client.edit_file("notes.md", "old", "new"),
        "append_to_file": lambda: client.append_to_file("notes.md", "more\n"),
        "prepend_to_file": lambda: client.prepend_to_file("notes.md", "first\n"),
        "update_section": lambda: client.update_section("notes.md", "## Status", "new\n"),
        "write_file": lambda: client.write_file("notes.md", "all new\n"),
        "overwrite_entire_file": lambda: client.overwrite_entire_file("notes.md", "x\n"),
        "apply_file_modification": lambda: client.apply_file_modification(
            client.prepare_file_append("notes.md", "planned\n").hunk_id
        ),
    }


WRITERS = [
    "edit", "safe_patch", "edit_file", "append_to_file", "prepend_to_file", "update_section",
    "write_file", "overwrite_entire_file", "apply_file_modification",
]  # fmt: skip


@pytest.fixture
def read_only(workspace: Path) -> Path:
    configure(workspace, '[access]\nread_only = ["reviewer"]\n')
    (workspace / "notes.md").write_text(TEXT)
    return workspace


@pytest.mark.parametrize("tool", WRITERS)
def test_a_read_only_agent_is_refused_by_every_writing_tool(
    read_only: Path, daemon: RunningDaemon, tool: str
):
    reviewer = daemon.client("reviewer")
    error = refused(_calls(reviewer, read_only)[tool])
    assert error.code == "write_access_denied" and "reviewer" in error.message
    assert (read_only / "notes.md").read_text() == TEXT
    rejected = events(read_only, "edit_rejected")[-1].event
    assert (rejected.writer, rejected.code) == (tool, "write_access_denied")


def test_other_agents_still_write(read_only: Path, daemon: RunningDaemon):
    writer = daemon.client("agent-a")
    writer.append_to_file("notes.md", "more\n")
    reviewer = daemon.client("reviewer")
    plan = reviewer.prepare_file_append("notes.md", "mine\n")  # planning is reading
    assert plan.hunk_id and reviewer.read_file("notes.md").content.endswith("more\n")


def test_a_writers_list_admits_only_those_agents(workspace: Path, daemon: RunningDaemon):
    (workspace / "a.md").write_text("a\n")
    configure(workspace, '[access]\nwriters = ["agent-a"]\n')  # read again when it changes
    daemon.client("agent-a").append_to_file("a.md", "b\n")
    error = refused(lambda: daemon.client("agent-b").append_to_file("a.md", "c\n"))
    assert error.code == "write_access_denied"
    assert (workspace / "a.md").read_text() == "a\nb\n"


def test_a_malformed_config_is_a_clear_error_not_a_crash(workspace: Path, daemon: RunningDaemon):
    (workspace / "a.md").write_text("a\n")
    client = daemon.client("agent-a")
    configure(workspace, "[access\nread_only = 1\n")
    error = refused(lambda: client.append_to_file("a.md", "b\n"))
    assert error.code == "config_invalid" and "not valid TOML" in error.message
    configure(workspace, "[access]\nread_only = 'reviewer'\n")
    error = refused(lambda: client.prepare_file_append("a.md", "b\n"))
    assert error.code == "config_invalid" and "list of agent names" in error.message
    assert client.ping().pong
    configure(workspace, "[access]\nread_only = []\n")
    client.append_to_file("a.md", "b\n")
    assert (workspace / "a.md").read_text() == "a\nb\n"
