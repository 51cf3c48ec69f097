"""The CLI reads a reply through the same view per result type as the MCP server's text
(`client.views.render`): a generated command's write says where the file stands, and a
checkpoint restore shows what it wrote back."""

from __future__ import annotations

from tests.conftest import RunningDaemon
from tests.e2e.cli_support import cli


def test_a_write_and_a_restore_read_as_their_views(daemon: RunningDaemon):
    done = cli(daemon.root, "write-file", "notes.md", "--content", "one\n")
    assert done.returncode == 0, done.stderr
    assert "notes.md version" in done.stdout and "lines 0 -> 1 (+1)" in done.stdout
    assert "1#" in done.stdout  # the diff with its new anchors
    client = daemon.client("agent-a")
    client.checkpoint_create("before")
    (daemon.root / "notes.md").write_text("two\n")
    done = cli(daemon.root, "checkpoint", "restore", "before")
    assert done.returncode == 0, done.stderr
    assert "--- notes.md (restored, version" in done.stdout and "+1#" in done.stdout
    assert (daemon.root / "notes.md").read_text() == "one\n"
