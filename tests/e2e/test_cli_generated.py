"""Commands made from the tools' schemas: every agent tool without a hand-written
command is `editjournal TOOL-NAME`, with its fields as options, through a real daemon."""

from __future__ import annotations

import json

from editjournal.client.cli.app import cli as group
from editjournal.client.cli.generated import HAND_WRITTEN, command_name, generated_methods
from editjournal.client.tools.guidance import DESCRIPTIONS
from editjournal.client.tools.tooldefs import agent_methods
from tests.conftest import RunningDaemon
from tests.e2e.cli_support import cli


def test_every_agent_tool_is_a_command_hand_written_or_generated():
    names = set(group.commands)
    for method in agent_methods():
        if method not in HAND_WRITTEN:
            assert command_name(method) in names, method
    assert {"edit-file", "append-to-file", "update-section", "write-file"} <= names


def test_a_generated_command_is_described_by_the_tools_guidance(daemon: RunningDaemon):
    for method in generated_methods():
        done = cli(daemon.root, command_name(method), "--help")
        assert done.returncode == 0, done.stderr
        shown = " ".join(done.stdout.split())  # as wrapped to any terminal's width
        assert "Example:" in shown and f"Tool: {method}." in shown
        first_words = " ".join(DESCRIPTIONS[method].split()[:6])
        assert first_words in shown


def test_append_update_and_edit_file_from_the_command_line(daemon: RunningDaemon):
    assert cli(daemon.root, "append-to-file", "notes.md", "--content", "# Notes").returncode == 0
    body = "## State\nstarting\n"
    done = cli(daemon.root, "append-to-file", "notes.md", "--content", "-", stdin=body)
    assert done.returncode == 0, done.stderr
    done = cli(
        daemon.root, "update-section", "notes.md", "--section-header", "## State",
        "--new-content", "running",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "notes.md version" in done.stdout and "+3#" in done.stdout  # the anchored diff
    done = cli(
        daemon.root, "edit-file", "notes.md", "--old-string", "running", "--new-string", "done"
    )
    assert done.returncode == 0, done.stderr
    assert (daemon.root / "notes.md").read_text() == "# Notes\n## State\ndone\n"


def test_write_file_creates_nested_paths_and_prints_json(daemon: RunningDaemon):
    done = cli(daemon.root, "write-file", "a/b/c.txt", "--content", "hello\n", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["file_path"] == "a/b/c.txt"
    assert (daemon.root / "a" / "b" / "c.txt").read_text() == "hello\n"


def test_no_match_shows_the_similar_lines_and_a_real_command(daemon: RunningDaemon):
    (daemon.root / "t.py").write_text("def greet():\n    return 'hello world'\n")
    done = cli(
        daemon.root, "edit-file", "t.py", "--old-string", "return 'hello wrld'",
        "--new-string", "return 'hi'",
    )  # fmt: skip
    assert done.returncode == 1
    assert "no_match: old_string not found in t.py" in done.stderr
    assert "closest similar lines" in done.stderr and "2#" in done.stderr
    assert "read t.py --hashes" in done.stderr and "details." not in done.stderr
    assert (daemon.root / "t.py").read_text() == "def greet():\n    return 'hello world'\n"


def test_repeatable_list_options_read_many_files(daemon: RunningDaemon):
    (daemon.root / "a.txt").write_text("alpha\n")
    (daemon.root / "b.txt").write_text("beta\n")
    done = cli(daemon.root, "read-many-files", "--paths", "a.txt", "--paths", "b.txt")
    assert done.returncode == 0, done.stderr
    files = json.loads(done.stdout)["files"]  # no message to show: the reply as JSON
    assert [f["result"]["content"] for f in files] == ["alpha\n", "beta\n"]
