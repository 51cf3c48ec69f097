"""Stale anchors from the journal: many agents on one file, no lost update."""

from __future__ import annotations

from pathlib import Path

from client import Client
from daemon.state import fold
from tests.conftest import RunningDaemon
from tests.e2e.edit_support import anchors_of, rejected

FILE = "".join(f"def step_{n}(state):\n    return state + {n}\n\n" for n in range(1, 11))


def setup(daemon: RunningDaemon) -> tuple[Path, Client, Client]:
    target = daemon.root / "shared.py"
    target.write_text(FILE)
    return target, daemon.client("agent-a"), daemon.client("agent-b")


def test_edit_below_another_agents_change_is_rebased(daemon: RunningDaemon):
    target, a, b = setup(daemon)
    seen_by_a = anchors_of(a, "shared.py")
    seen_by_b = anchors_of(b, "shared.py")
    b_done = b.edit(
        "shared.py", [{"op": "insert_before", "hash": seen_by_b[1], "content": "import math\n"}]
    )
    result = a.edit(
        "shared.py",
        [{"op": "replace_line", "hash": seen_by_a[29], "content": "    return state * 10"}],
    )
    assert result.rebased_from_version is not None
    assert [c["seq"] for c in result.rebased_over] == [b_done.version]
    assert [c["agent"] for c in result.rebased_over] == ["agent-b"]
    lines = target.read_text().splitlines()
    assert lines[0] == "import math"  # B's line survives
    assert lines[29] == "    return state * 10"  # A's edit landed on its line, moved down by one
    assert lines[28] == "def step_10(state):"


def test_anchor_on_a_line_another_agent_changed_is_stale_with_conflict_and_delta(
    daemon: RunningDaemon,
):
    target, a, b = setup(daemon)
    seen_by_a = anchors_of(a, "shared.py")
    seen_by_b = anchors_of(b, "shared.py")
    b_done = b.edit(
        "shared.py", [{"op": "replace_line", "hash": seen_by_b[5], "content": "    return -2"}]
    )
    error = rejected(
        a, "shared.py", [{"op": "replace_line", "hash": seen_by_a[5], "content": "    return 0"}]
    )
    assert error.code == "anchor_stale"
    assert error.suggested_action == "re-read_file"
    [conflict] = error.details["conflicts"]
    assert conflict["seq"] == b_done.version
    assert conflict["agent"] == "agent-b" and conflict["kind"] == "edit_applied"
    assert conflict["lines"] == [5] and conflict["ts"] > 0
    delta = error.details["delta"]
    assert "+5#" in delta["diff"] and "-5|    return state + 2" in delta["diff"]
    [fresh] = delta["changed_lines"]
    assert fresh["line"] == 5 and fresh["text"] == "    return -2"
    # one turn later, with the delta's anchor and no re-read:
    retry = a.edit(
        "shared.py", [{"op": "replace_line", "hash": fresh["hash"], "content": "    return 0"}]
    )
    assert retry.rebased_from_version is None  # the delta advanced A's snapshot
    assert target.read_text().splitlines()[4] == "    return 0"


def test_range_whose_inside_another_agent_changed_is_stale(daemon: RunningDaemon):
    target, a, b = setup(daemon)
    seen_by_a = anchors_of(a, "shared.py")
    seen_by_b = anchors_of(b, "shared.py")
    b.edit("shared.py", [{"op": "insert_after", "hash": seen_by_b[4], "content": "# B was here"}])
    op = {
        "op": "replace_range",
        "start_hash": seen_by_a[4],
        "end_hash": seen_by_a[5],
        "content": "def step_2(state):\n    return state - 2",
    }
    error = rejected(a, "shared.py", [op])
    assert error.code == "anchor_stale"
    assert error.details["stale"] == [{"operation": 1, "op": "replace_range", "lines": [4, 5]}]
    assert [c["agent"] for c in error.details["conflicts"]] == ["agent-b"]
    assert "# B was here" in target.read_text()  # B's line survives


def test_ambiguous_now_but_unique_in_the_agents_snapshot_resolves_through_it(
    daemon: RunningDaemon,
):
    target, a, b = setup(daemon)
    seen_by_a = anchors_of(a, "shared.py")
    seen_by_b = anchors_of(b, "shared.py")
    b.edit(
        "shared.py",
        [{"op": "insert_after", "hash": seen_by_b[29], "content": "    return state + 3"}],
    )  # now "    return state + 3" appears twice
    a.edit("shared.py", [{"op": "replace_line", "hash": seen_by_a[8], "content": "    return 333"}])
    lines = target.read_text().splitlines()
    assert lines[7] == "    return 333" and lines[29] == "    return state + 3"


def test_an_agent_that_never_read_the_file_gets_plain_resolution(daemon: RunningDaemon):
    target, _, b = setup(daemon)
    seen_by_b = anchors_of(b, "shared.py")
    fresh = daemon.client("agent-c")  # never read it, uses B's current anchors
    result = fresh.edit("shared.py", [{"op": "delete_line", "hash": seen_by_b[2]}])
    assert result.rebased_from_version is None
    assert "    return state + 1\n" not in target.read_text()


def test_outside_writer_follows_the_same_rules(daemon: RunningDaemon):
    target, a, _ = setup(daemon)
    seen = anchors_of(a, "shared.py")
    target.write_text(FILE.replace("state + 1\n", "state + 100\n", 1))  # a person edits line 2
    result = a.edit("shared.py", [{"op": "replace_line", "hash": seen[5], "content": "    pass"}])
    assert [c["kind"] for c in result.rebased_over] == ["outside_change"]
    assert [c["agent"] for c in result.rebased_over] == [None]
    error = rejected(a, "shared.py", [{"op": "delete_line", "hash": seen[2]}])
    # A's snapshot is now its own edit, which already contained the outside change:
    assert error.code == "anchor_stale" and "delta" not in error.details
    seen = anchors_of(a, "shared.py")
    target.write_text(target.read_text().replace("state + 3\n", "state + 300\n"))
    error = rejected(a, "shared.py", [{"op": "delete_line", "hash": seen[8]}])
    [conflict] = error.details["conflicts"]
    assert conflict["kind"] == "outside_change" and conflict["agent"] is None
    assert conflict["lines"] == [8]


def test_rejections_and_rebases_fold_to_the_live_state(daemon: RunningDaemon):
    target, a, b = setup(daemon)
    seen_by_a = anchors_of(a, "shared.py")
    seen_by_b = anchors_of(b, "shared.py")
    b.edit("shared.py", [{"op": "delete_line", "hash": seen_by_b[2]}])
    rejected(a, "shared.py", [{"op": "delete_line", "hash": seen_by_a[2]}])
    a.edit("shared.py", [{"op": "delete_line", "hash": seen_by_a[5]}])
    state = fold(daemon.journal().records())
    assert state.digest() == a.status().state_digest
    assert daemon.journal().blob(state.files["shared.py"].sha256) == target.read_bytes()
