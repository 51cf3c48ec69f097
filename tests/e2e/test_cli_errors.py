"""Errors shown to a person carry what they refer to, and suggest real commands.

Each error is made for real, through a real daemon, and printed by the real
command: a stale edit (another agent changed the line), a low-entropy target,
an ambiguous anchor, and, with --json, one JSON object on stdout.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import xxhash

from editjournal.client import Client
from tests.conftest import RunningDaemon
from tests.e2e.cli_support import cli

SOURCE = "def total(a, b):\n    first = a\n    second = b\n    return first + second\n}\n"


def edit_ops(root: Path, agent: str, ops: list[dict], *flags: str):
    return cli(root, "edit", "t.py", *flags, stdin=json.dumps(ops), agent=agent)


def stale_setup(daemon: RunningDaemon) -> tuple[Client, str]:
    """alice reads t.py, then bob changes line 2: alice's anchor for line 2 is stale."""
    (daemon.root / "t.py").write_text(SOURCE)
    alice, bob = daemon.client("alice"), daemon.client("bob")
    seen = alice.read_file("t.py", hashes=True)
    fresh = bob.read_file("t.py", hashes=True)
    bob.edit("t.py", [{"op": "replace_line", "hash": fresh.lines[1].hash, "content": "    x = a"}])
    return bob, seen.lines[1].hash


def test_a_stale_edit_prints_the_conflicts_and_the_delta_with_fresh_anchors(
    daemon: RunningDaemon,
):
    bob, stale_anchor = stale_setup(daemon)
    bob_seq = bob.log(path="t.py", kind="edit_applied").events[-1].seq
    fresh = {row.text: f"{row.line}#{row.hash}" for row in bob.read_file("t.py", hashes=True).lines}
    done = edit_ops(
        daemon.root, "alice", [{"op": "replace_line", "hash": stale_anchor, "content": "    y = a"}]
    )
    assert done.returncode == 1
    err = done.stderr
    assert err.startswith(
        "editjournal: anchor_stale: operation 1 (replace_line) relies on line(s) 2"
    )
    assert "which changed since — by bob" in err
    assert re.search(rf"conflicts.*\n\s+seq {bob_seq}  bob  edit_applied  line\(s\) 2\n", err)
    assert re.search(r"delta from version \d+ to \d+", err)
    assert f"+{fresh['    x = a']}|    x = a" in err  # the changed line with its fresh anchor
    assert re.search(r"suggested action: .*\S+ read t\.py --since \d+", err)
    assert "details." not in err and "re-read_file" not in err  # no wire names
    assert (daemon.root / "t.py").read_text() == SOURCE.replace("first = a", "x = a")


def test_a_stale_edit_with_json_is_one_object_on_stdout(daemon: RunningDaemon):
    _bob, stale_anchor = stale_setup(daemon)
    done = edit_ops(
        daemon.root,
        "alice",
        [{"op": "replace_line", "hash": stale_anchor, "content": "    y = a"}],
        "--json",
    )
    assert done.returncode == 1 and done.stderr == ""
    error = json.loads(done.stdout)
    assert set(error) == {"code", "message", "details", "suggested_action", "hint"}
    assert error["code"] == "anchor_stale"
    assert [c["agent"] for c in error["details"]["conflicts"]] == ["bob"]
    assert error["suggested_action"] == "re-read_file"  # the seed's token, as on the wire
    assert "--since" in error["hint"]  # the hint in the CLI's words: its commands


def test_a_low_entropy_target_prints_the_neighbour_anchors(daemon: RunningDaemon):
    (daemon.root / "t.py").write_text(SOURCE)
    rows = daemon.client("alice").read_file("t.py", hashes=True).lines
    brace = rows[4]
    assert brace.quality == "low"
    done = edit_ops(daemon.root, "alice", [{"op": "delete_line", "hash": brace.hash}])
    assert done.returncode == 1
    assert "anchor_low_entropy" in done.stderr
    shown = re.search(r"neighbour anchors: (.+)", done.stderr)
    assert shown is not None, done.stderr
    assert shown.group(1).split() == [f"{r.line}#{r.hash}" for r in rows[1:4]]
    assert "neighbor_anchors" not in done.stderr


def test_an_ambiguous_anchor_prints_the_candidates(daemon: RunningDaemon):
    (daemon.root / "t.py").write_text("a = 1\nsame line here\nb = 2\nsame line here\nc = 3\n")
    daemon.client("alice").read_file("t.py", hashes=True)
    line_hash = xxhash.xxh3_64_hexdigest(b"same line here")[:6]
    done = edit_ops(
        daemon.root, "alice", [{"op": "replace_line", "hash": line_hash, "content": "x"}]
    )
    assert done.returncode == 1
    assert "anchor_ambiguous" in done.stderr
    assert "line 2: 'same line here'" in done.stderr
    assert "line 4: 'same line here'" in done.stderr
    assert '"occurrence"' in done.stderr  # the field of the operation a person writes


def test_a_refused_unsafe_edit_names_the_real_flag(daemon: RunningDaemon):
    (daemon.root / "t.py").write_text(SOURCE)
    rows = daemon.client("alice").read_file("t.py", hashes=True).lines
    done = edit_ops(
        daemon.root, "alice", [{"op": "replace_line", "hash": rows[0].hash, "content": "def t(a:"}]
    )
    assert done.returncode == 1 and "safety_check_failed" in done.stderr
    assert "--skip-safety-check" in done.stderr and "skip_safety_check" not in done.stderr


def test_no_daemon_with_json_is_an_error_object_and_exit_2(workspace: Path):
    done = cli(workspace, "status", "--json")
    assert done.returncode == 2
    error = json.loads(done.stdout)
    assert error["code"] == "daemon_unavailable"
    assert error["message"] == f"no daemon serves {workspace.resolve()}"
    assert " start" in error["suggested_action"]


def test_bad_input_says_stdin_and_exits_2(workspace: Path):
    done = cli(workspace, "edit", "t.py", stdin="[{op:")
    assert done.returncode == 2
    assert "operations on stdin are not JSON" in done.stderr
    as_json = cli(workspace, "--json", "edit", "t.py", stdin="[{op:")
    assert as_json.returncode == 2
    assert json.loads(as_json.stdout)["code"] == "invalid_params"
    assert not (workspace / ".editjournal").exists()  # refused before any daemon was asked
