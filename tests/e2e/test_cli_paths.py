"""What the CLI prints names each file as the person types it from where they stand.

A real daemon on a workspace with `pkg/m.py` and `lib/x.py`; the real `editjournal`
command run in `pkg/` (found from there, no --workspace): a path the daemon gives as
`pkg/m.py` prints `m.py`, `lib/x.py` prints `../lib/x.py` — in the log and its
`--path` filter, history, blame, show, agent-status, the hunk table, the checkpoint
lists and the reads' headers. `--json` keeps the wire's workspace-relative paths.
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from editjournal.client import Client
from tests.conftest import RunningDaemon
from tests.e2e.cli_support import cli

AGENT = "cli-test"
MOVE = "*** Begin Patch\n*** Update File: pkg/old.py\n*** Move to: pkg/new.py\n*** End Patch\n"


@pytest.fixture
def ws(daemon: RunningDaemon) -> RunningDaemon:
    for path, text in {"pkg/m.py": "def f():\n    return 1\n", "lib/x.py": "x = 1\n"}.items():
        (daemon.root / path).parent.mkdir(exist_ok=True)
        (daemon.root / path).write_text(text)
    return daemon


def in_pkg(
    daemon: RunningDaemon, *args: str, ok: bool = True, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    """`editjournal ARGS` typed in `pkg/`."""
    done = cli(None, *args, agent=AGENT, cwd=daemon.root / "pkg", stdin=stdin)
    assert done.returncode == (0 if ok else 1), done.stderr
    return done


def edited(client: Client, path: str, content: str) -> int:
    """`path`'s second line replaced by `content`: the write's version."""
    rows = client.read_file(path, hashes=True).lines
    return client.edit(
        path, [{"op": "replace_line", "hash": rows[1].hash, "content": content}]
    ).version


def test_log_path_from_a_subdirectory_finds_the_files_events(ws: RunningDaemon):
    in_pkg(ws, "read", "m.py")
    in_pkg(ws, "read", "../lib/x.py")
    mine = in_pkg(ws, "log", "--path", "m.py").stdout  # (the watcher may have seen it made)
    assert "  read m.py (all of 2)" in mine and "x.py" not in mine and "pkg/" not in mine
    beside = in_pkg(ws, "log", "--path", "../lib/x.py").stdout
    assert "read ../lib/x.py" in beside and "m.py" not in beside
    everything = in_pkg(ws, "log").stdout
    assert "read m.py" in everything and "read ../lib/x.py" in everything
    wire = json.loads(in_pkg(ws, "log", "--path", "m.py", "--json").stdout)
    assert {e["path"] for e in wire["events"]} == {"pkg/m.py"}


def test_history_and_blame_from_a_subdirectory_name_the_file_as_typed(ws: RunningDaemon):
    bob = ws.client("bob")
    version = edited(bob, "pkg/m.py", "    return 2")
    history = in_pkg(ws, "history", "m.py").stdout
    assert f"{version:>6}" in history and "bob" in history
    blame = in_pkg(ws, "blame", "m.py").stdout.splitlines()
    assert "bob" in blame[1] and blame[1].endswith("|     return 2")
    (ws.root / "pkg" / "old.py").write_text("a = 1\n")
    bob.read_file("pkg/old.py")
    bob.apply_patch(MOVE)
    moved = in_pkg(ws, "history", "new.py").stdout
    assert "old.py" in moved and "pkg/" not in moved, moved
    from_root = cli(ws.root, "history", "pkg/new.py", agent=AGENT).stdout
    assert "pkg/old.py" in from_root  # outside the workspace: its root's paths


def test_show_and_agent_status_name_the_file_as_typed(ws: RunningDaemon):
    me = ws.client(AGENT)
    me.read_file("lib/x.py")
    seq = edited(me, "pkg/m.py", "    return 3")
    shown = in_pkg(ws, "show", str(seq)).stdout
    assert "path:    m.py" in shown and "edit m.py:" in shown
    status = in_pkg(ws, "agent-status").stdout
    assert "  m.py  saw version" in status and "  ../lib/x.py  saw version" in status


def test_hunks_and_checkpoints_list_files_as_typed(ws: RunningDaemon):
    prepared = in_pkg(ws, "prepare-file-append", "../lib/x.py", "--content", "y = 2")
    assert "for ../lib/x.py (nothing written)" in prepared.stdout
    table = in_pkg(ws, "list-hunks").stdout
    assert "../lib/x.py" in table and " lib/x.py" not in table
    in_pkg(ws, "checkpoint", "create", "before")
    (ws.root / "lib" / "x.py").write_text("x = 9\n")
    (ws.root / "pkg" / "m.py").write_text("gone = True\n")
    diff = in_pkg(ws, "checkpoint", "diff", "before", "--stat").stdout
    assert "  M ../lib/x.py" in diff and "  M m.py" in diff
    restored = in_pkg(ws, "checkpoint", "restore", "before", "--path", ".").stdout
    assert "restored m.py" in restored and "x.py" not in restored
    assert (ws.root / "lib" / "x.py").read_text() == "x = 9\n"  # --path . : pkg/ only


def test_json_keeps_the_wire_paths_and_errors_name_the_file_as_typed(ws: RunningDaemon):
    read = json.loads(in_pkg(ws, "read", "m.py", "--json").stdout)
    assert read["file_path"] == "pkg/m.py"
    missing = in_pkg(ws, "read", "nope.py", "--json", ok=False)
    error = json.loads(missing.stdout)
    assert error["details"]["path"] == "pkg/nope.py" and "pkg/nope.py" in error["message"]
    said = in_pkg(ws, "read", "nope.py", ok=False).stderr
    assert "file_not_found: nope.py" in said and "pkg/" not in said


def test_a_base_prefix_of_no_version_names_the_file_as_typed(ws: RunningDaemon):
    """The CLI's own refusal (no daemon words) follows the rule too."""
    diff = "--- a/m.py\n+++ b/m.py\n@@ -1 +1 @@\n-def f():\n+def g():\n"
    done = in_pkg(ws, "patch", "m.py", "-", "--base", "0000000", ok=False, stdin=diff)
    assert "sha256 of m.py the journal knows" in done.stderr, done.stderr


def test_a_hard_linked_file_names_the_shell_commands_for_here(ws: RunningDaemon):
    os.link(ws.root / "pkg" / "m.py", ws.root / "pkg" / "link.py")
    done = in_pkg(ws, "append-to-file", "m.py", "--content", "x = 2", ok=False)
    assert "hard_linked" in done.stderr
    assert "(cp m.py m.py.new && mv m.py.new m.py)" in done.stderr, done.stderr
