"""Stale anchors from the journal: many agents on one file, no lost update."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
import zmq

from editjournal.client import Client, RequestError
from editjournal.client.library.connection import live_endpoint
from editjournal.client.library.subscription import Subscription
from editjournal.daemon.model.state import fold
from editjournal.schemas.wire import PublishedEvent
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
    assert error.suggested_action == "re-read_file"  # the seed's token, for programs
    assert error.hint == (  # the delta below has the fresh anchors
        "retry at once with the fresh anchors of details.delta: no re-read needed"
    )
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
    # A's snapshot is now its own edit (which holds the outside change); its last read
    # still explains who changed line 2:
    [conflict] = error.details["conflicts"]
    assert (conflict["kind"], conflict["agent"], conflict["lines"]) == ("outside_change", None, [2])
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


def test_read_since_version_returns_only_the_changes(daemon: RunningDaemon):
    target, a, b = setup(daemon)
    first = a.read_file("shared.py")
    assert a.read_file("shared.py", since_version=first.version).unchanged is True
    seen_by_b = anchors_of(b, "shared.py")
    b.edit("shared.py", [{"op": "replace_line", "hash": seen_by_b[8], "content": "    return 8"}])
    delta = a.read_file("shared.py", since_version=first.version)
    assert delta.unchanged is False and delta.content == ""
    assert [(row.line, row.text) for row in delta.lines] == [(8, "    return 8")]
    assert "-8|    return state + 3" in delta.delta and f"+8#{delta.lines[0].hash}|" in delta.delta
    assert daemon.journal().blob(delta.sha256) == target.read_bytes()
    # A's snapshot advanced: the fresh anchor works without a rebase
    result = a.edit("shared.py", [{"op": "delete_line", "hash": delta.lines[0].hash}])
    assert result.rebased_from_version is None
    assert "    return 8\n" not in target.read_text()


def test_read_since_an_unknown_version_returns_the_whole_file_with_a_warning(
    daemon: RunningDaemon,
):
    _, a, _ = setup(daemon)
    response = a.call("read_file", {"path": "shared.py", "since_version": 1})
    assert response.ok and response.result["content"] == FILE
    assert any("no content" in w for w in response.warnings)


def test_agent_status_says_which_files_went_stale_and_why(daemon: RunningDaemon):
    _, a, b = setup(daemon)
    (daemon.root / "other.py").write_text("x = 1\ny = 2\n")
    a.read_file("shared.py")
    a.read_file("other.py", range="1-1")
    seen_by_b = anchors_of(b, "shared.py")
    done = b.edit("shared.py", [{"op": "delete_line", "hash": seen_by_b[2]}])
    status = a.agent_status()
    assert status.agent == "agent-a" and status.stale_files == 1
    by_path = {f.path: f for f in status.files}
    assert by_path["other.py"].current and by_path["other.py"].lines_seen == (1, 1)
    assert by_path["other.py"].unseen_lines == [(2, 2)]  # the ranged read left line 2 out
    assert by_path["shared.py"].unseen_lines == []
    shared = by_path["shared.py"]
    assert not shared.current
    assert [(c["seq"], c["agent"], c["kind"]) for c in shared.changed_since] == [
        (done.version, "agent-b", "edit_applied")
    ]
    assert b.agent_status("agent-a").stale_files == 1  # anyone may ask about anyone
    assert b.agent_status().stale_files == 0


def test_subscribers_learn_of_changes_without_polling(daemon: RunningDaemon):
    _, a, b = setup(daemon)
    (daemon.root / "elsewhere.txt").write_text("noise\n")
    with a.subscribe(["shared.py"]) as events:
        events.wait_ready(lambda: b.read_file("shared.py"))
        b.read_file("elsewhere.txt")  # another path: filtered out
        seen_by_b = anchors_of(b, "shared.py")
        done = b.edit("shared.py", [{"op": "delete_line", "hash": seen_by_b[2]}])
        received = []
        while (event := events.next_event(10)) is not None:
            received.append(event)
            if event.kind == "edit_applied":
                break
    assert {e.path for e in received} == {"shared.py"}
    edit = received[-1]
    assert (edit.seq, edit.agent, edit.kind) == (done.version, "agent-b", "edit_applied")
    assert "1 operation" in edit.summary


def test_a_changed_target_is_not_matched_to_an_identical_line_elsewhere(daemon: RunningDaemon):
    """A line diff from A's snapshot to now would align A's `a = 1` with the `a = 1`
    B wrote further down; the journal knows B replaced line 1, so A's edit is stale."""
    target = daemon.root / "twins.py"
    target.write_text("a = 1\nx = 0\nb = 2\nc = 3\nx = 0\nd = 4\n")
    a, b = daemon.client("agent-a"), daemon.client("agent-b")
    seen_by_a, seen_by_b = anchors_of(a, "twins.py"), anchors_of(b, "twins.py")
    b_done = b.edit(
        "twins.py",
        [
            {"op": "replace_line", "hash": seen_by_b[1], "content": "a = 10"},
            {"op": "replace_line", "hash": seen_by_b[4], "content": "a = 1"},
            {"op": "replace_line", "hash": seen_by_b[6], "content": "b = 2"},
        ],
    )
    after_b = target.read_text()
    assert after_b == "a = 10\nx = 0\nb = 2\na = 1\nx = 0\nb = 2\n"
    error = rejected(
        a, "twins.py", [{"op": "replace_line", "hash": seen_by_a[1], "content": "a = 2"}]
    )
    assert error.code == "anchor_stale"
    assert [(c["seq"], c["agent"]) for c in error.details["conflicts"]] == [
        (b_done.version, "agent-b")
    ]
    assert target.read_text() == after_b  # B's `a = 1` on line 4 is untouched


def test_a_context_anchor_kept_from_a_read_never_lands_on_a_twin_after_an_own_write(
    daemon: RunningDaemon,
):
    """A's own rebased write moves its snapshot to content with B's changes, which give
    the `x = 0` on line 15 the neighbours A's line 2 had: the anchor A kept from its read
    would match line 15 there, through lines A was never shown. A meant line 2: the edit
    is refused, nothing changes."""
    lines = ["a = 1", "x = 0", "", "", "", "b = 2", "u1 = 1", "u2 = 2", "u3 = 3", "u4 = 4"]
    lines += ["c = 3", "", "", "", "x = 0", "", "", "", "d = 4", "tail = 9"]
    target = daemon.root / "ctx.py"
    target.write_text("\n".join(lines) + "\n")
    a, b = daemon.client("agent-a"), daemon.client("agent-b")
    seen_by_a, seen_by_b = anchors_of(a, "ctx.py"), anchors_of(b, "ctx.py")
    b.edit(
        "ctx.py",
        [
            {"op": "replace_line", "hash": seen_by_b[6], "content": "b = 20"},
            {"op": "replace_line", "hash": seen_by_b[11], "content": "a = 1"},
            {"op": "replace_line", "hash": seen_by_b[19], "content": "b = 2"},
        ],
    )
    own = a.edit("ctx.py", [{"op": "replace_line", "hash": seen_by_a[20], "content": "tail = 10"}])
    assert own.rebased_from_version is not None
    before = target.read_text()
    error = rejected(
        a, "ctx.py", [{"op": "replace_line", "hash": seen_by_a[2], "content": "x = 99"}]
    )
    assert error.code == "anchor_stale"
    # the twin on line 15 matched only through B's lines around it, which A never saw
    assert error.details["unseen_lines"] == [11, 19]
    assert error.details["stale"] == [{"operation": 1, "op": "replace_line", "lines": [11, 19]}]
    assert "delta" in error.details  # from A's full read: B's changes, with fresh anchors
    assert target.read_text() == before
    fresh = anchors_of(a, "ctx.py")  # a full read: the fresh anchor works
    a.edit("ctx.py", [{"op": "replace_line", "hash": fresh[2], "content": "x = 99"}])
    assert target.read_text().splitlines()[1] == "x = 99"


# --- ranges, inserts, partial reads, published events -----------------------------------


def delta_anchors(delta: dict[str, Any]) -> dict[int, str]:
    """line -> fresh anchor, from the context and added rows of a rejection's delta."""
    anchors = {}
    for row in delta["diff"].splitlines():
        if row[:1] in (" ", "+") and "#" in row and "|" in row:
            number, anchor = row[1:].split("|", 1)[0].split("#")
            anchors[int(number)] = anchor.rstrip("~?")
    return anchors


def next_of_kind(events: Subscription, kind: str, timeout: float = 10.0) -> PublishedEvent:
    """The next published event of `kind`, waiting at most `timeout` seconds in all."""
    deadline = time.monotonic() + timeout
    while (left := deadline - time.monotonic()) > 0:
        event = events.next_event(left)
        if event is not None and event.kind == kind:
            return event
    raise AssertionError(f"no {kind} event published within {timeout:g} s")


def only_conflict(error: RequestError, seq: int, agent: str) -> dict[str, Any]:
    """The one event `error` names as the change that made it stale: `agent`'s edit."""
    [conflict] = error.details["conflicts"]
    assert (conflict["seq"], conflict["agent"], conflict["kind"]) == (seq, agent, "edit_applied")
    return conflict


def test_range_whose_interior_line_another_agent_replaced_is_stale_and_the_delta_retry_applies(
    daemon: RunningDaemon,
):
    target, a, b = setup(daemon)
    seen_by_a = anchors_of(a, "shared.py")
    seen_by_b = anchors_of(b, "shared.py")
    b_done = b.edit(
        "shared.py", [{"op": "replace_line", "hash": seen_by_b[5], "content": "    return -2  # B"}]
    )
    after_b = target.read_bytes()
    op = {
        "op": "replace_range",
        "start_hash": seen_by_a[4],  # def step_2 ... def step_3: lines 4-7, both ends untouched
        "end_hash": seen_by_a[7],
        "content": "def step_2(state):\n    return state - 2\n\ndef step_3(state):",
    }
    error = rejected(a, "shared.py", [op])
    assert error.code == "anchor_stale"
    assert error.details["stale"] == [
        {"operation": 1, "op": "replace_range", "lines": [4, 5, 6, 7]}
    ]
    conflict = only_conflict(error, b_done.version, "agent-b")
    assert 5 in conflict["lines"] and conflict["ts"] > 0
    assert "-5|    return state + 2" in error.details["delta"]["diff"]
    assert target.read_bytes() == after_b  # B's line survives byte for byte
    fresh = delta_anchors(error.details["delta"])
    assert [row["text"] for row in error.details["delta"]["changed_lines"]] == [
        "    return -2  # B"
    ]
    retry = a.edit("shared.py", [{**op, "start_hash": fresh[4], "end_hash": fresh[7]}])
    assert retry.rebased_from_version is None  # the delta advanced A's snapshot
    assert target.read_text() == FILE.replace("state + 2\n", "state - 2\n")


def test_range_whose_interior_line_another_agent_deleted_is_stale_and_the_delta_retry_applies(
    daemon: RunningDaemon,
):
    target, a, b = setup(daemon)
    seen_by_a = anchors_of(a, "shared.py")
    seen_by_b = anchors_of(b, "shared.py")
    b_done = b.edit("shared.py", [{"op": "delete_line", "hash": seen_by_b[5]}])
    after_b = target.read_bytes()
    assert b"    return state + 2\n" not in after_b
    op = {
        "op": "replace_range",
        "start_hash": seen_by_a[4],
        "end_hash": seen_by_a[7],
        "content": "def step_2(state):\n    return state - 2\n\ndef step_3(state):",
    }
    error = rejected(a, "shared.py", [op])
    assert error.code == "anchor_stale"
    assert error.details["stale"] == [
        {"operation": 1, "op": "replace_range", "lines": [4, 5, 6, 7]}
    ]
    conflict = only_conflict(error, b_done.version, "agent-b")
    assert 5 in conflict["lines"]
    assert "-5|    return state + 2" in error.details["delta"]["diff"]
    assert target.read_bytes() == after_b  # B's deletion is not undone
    fresh = delta_anchors(error.details["delta"])
    # the file is one line shorter now: step_3's header is line 6
    retry = a.edit(
        "shared.py",
        [{"op": "replace_range", "start_hash": fresh[4], "end_hash": fresh[6], "content": ""}],
    )
    assert retry.rebased_from_version is None
    assert target.read_text().splitlines()[3:5] == ["", "    return state + 3"]


def test_delete_range_whose_interior_another_agent_changed_is_stale(daemon: RunningDaemon):
    target, a, b = setup(daemon)
    seen_by_a = anchors_of(a, "shared.py")
    seen_by_b = anchors_of(b, "shared.py")
    b_done = b.edit(
        "shared.py", [{"op": "replace_line", "hash": seen_by_b[8], "content": "    return 3  # B"}]
    )
    after_b = target.read_bytes()
    error = rejected(
        a,
        "shared.py",
        [{"op": "delete_range", "start_hash": seen_by_a[7], "end_hash": seen_by_a[10]}],
    )
    assert error.code == "anchor_stale"
    assert error.details["stale"] == [
        {"operation": 1, "op": "delete_range", "lines": [7, 8, 9, 10]}
    ]
    conflict = only_conflict(error, b_done.version, "agent-b")
    assert 8 in conflict["lines"]
    assert target.read_bytes() == after_b


@pytest.mark.parametrize("op", ["insert_after", "insert_before"])
def test_insert_anchored_on_a_line_another_agent_changed_is_stale(daemon: RunningDaemon, op: str):
    target, a, b = setup(daemon)
    seen_by_a = anchors_of(a, "shared.py")
    seen_by_b = anchors_of(b, "shared.py")
    b_done = b.edit(
        "shared.py", [{"op": "replace_line", "hash": seen_by_b[5], "content": "    return -2  # B"}]
    )
    after_b = target.read_bytes()
    error = rejected(a, "shared.py", [{"op": op, "hash": seen_by_a[5], "content": "    # A"}])
    assert error.code == "anchor_stale"
    assert error.details["stale"] == [{"operation": 1, "op": op, "lines": [5]}]
    assert [(c["seq"], c["agent"]) for c in error.details["conflicts"]] == [
        (b_done.version, "agent-b")
    ]
    assert target.read_bytes() == after_b


@pytest.mark.parametrize(
    ("op", "a_anchor_line", "b_changed_line"),
    [("insert_after", 4, 5), ("insert_before", 5, 4)],
)
def test_insert_anchored_next_to_a_line_another_agent_changed_is_rebased(
    daemon: RunningDaemon, op: str, a_anchor_line: int, b_changed_line: int
):
    target, a, b = setup(daemon)
    read = a.read_file("shared.py", hashes=True)
    seen_by_a = {row.line: row.hash for row in read.lines or []}
    seen_by_b = anchors_of(b, "shared.py")
    b_done = b.edit(
        "shared.py",
        [
            {"op": "insert_before", "hash": seen_by_b[1], "content": "import math"},
            {"op": "replace_line", "hash": seen_by_b[b_changed_line], "content": "# B's line"},
        ],
    )
    result = a.edit(
        "shared.py", [{"op": op, "hash": seen_by_a[a_anchor_line], "content": "# A's line"}]
    )
    assert result.rebased_from_version is not None
    assert result.rebased_from_version >= read.version
    assert [(c["seq"], c["agent"]) for c in result.rebased_over] == [(b_done.version, "agent-b")]
    expected = FILE.splitlines()
    expected[b_changed_line - 1] = "# B's line"
    expected.insert(4, "# A's line")  # between lines 4 and 5 as A saw them
    expected.insert(0, "import math")
    assert target.read_text() == "\n".join(expected) + "\n"


NUMBERED = "".join(f"line_{n} = {n}\n" for n in range(1, 46))


def test_a_ranged_read_of_the_newer_version_makes_its_anchors_apply_without_a_rebase(
    daemon: RunningDaemon,
):
    target = daemon.root / "numbered.py"
    target.write_text(NUMBERED)
    a, b = daemon.client("agent-a"), daemon.client("agent-b")
    full = anchors_of(a, "numbered.py")
    seen_by_b = anchors_of(b, "numbered.py")
    b.edit(
        "numbered.py", [{"op": "replace_line", "hash": seen_by_b[30], "content": "line_30 = -30"}]
    )
    ranged = a.read_file("numbered.py", hashes=True, range="25-35")
    assert (ranged.start_line, ranged.end_line) == (25, 35)
    fresh = {row.line: row.hash for row in ranged.lines or []}
    assert set(fresh) == set(range(25, 36)) and fresh[30] != full[30]
    result = a.edit(
        "numbered.py", [{"op": "replace_line", "hash": fresh[30], "content": "line_30 = 300"}]
    )
    assert result.rebased_from_version is None  # the ranged read was A's snapshot
    assert target.read_text() == NUMBERED.replace("line_30 = 30\n", "line_30 = 300\n")


def test_after_a_ranged_read_an_earlier_anchor_on_a_line_nobody_changed_still_applies(
    daemon: RunningDaemon,
):
    target = daemon.root / "numbered.py"
    target.write_text(NUMBERED)
    a, b = daemon.client("agent-a"), daemon.client("agent-b")
    full = anchors_of(a, "numbered.py")
    seen_by_b = anchors_of(b, "numbered.py")
    b.edit(
        "numbered.py", [{"op": "replace_line", "hash": seen_by_b[30], "content": "line_30 = -30"}]
    )
    a.read_file("numbered.py", hashes=True, range="25-35")
    a.edit("numbered.py", [{"op": "replace_line", "hash": full[5], "content": "line_5 = 500"}])
    expected = NUMBERED.replace("line_5 = 5\n", "line_5 = 500\n")
    assert target.read_text() == expected.replace("line_30 = 30\n", "line_30 = -30\n")
    # the anchor A's full read gave line 30 is gone, ranged read or not:
    error = rejected(
        a, "numbered.py", [{"op": "replace_line", "hash": full[30], "content": "line_30 = 0"}]
    )
    assert error.code == "anchor_stale"


def test_subscribers_on_the_status_address_hear_of_rejections_and_outside_changes(
    daemon: RunningDaemon,
):
    target, a, b = setup(daemon)
    address = a.status().events_socket
    endpoint = live_endpoint(daemon.root)
    assert endpoint is not None and address and address == endpoint.events
    seen_by_a = anchors_of(a, "shared.py")
    seen_by_b = anchors_of(b, "shared.py")
    with Subscription(zmq.Context.instance(), address, ["shared.py"]) as events:
        events.wait_ready(lambda: b.read_file("shared.py"))
        b.edit("shared.py", [{"op": "delete_line", "hash": seen_by_b[2]}])
        rejected(a, "shared.py", [{"op": "delete_line", "hash": seen_by_a[2]}])
        refusal = next_of_kind(events, "edit_rejected")
        [logged] = a.log(path="shared.py", kind="edit_rejected").events
        assert (refusal.seq, refusal.agent, refusal.path) == (logged.seq, "agent-a", "shared.py")
        assert "anchor_stale" in refusal.summary
        target.write_text(target.read_text() + "# a person was here\n")  # no request made
        outside = next_of_kind(events, "outside_change")
        assert (outside.agent, outside.path) == (None, "shared.py")
        assert outside.seq > refusal.seq


def test_a_ranged_read_elsewhere_does_not_make_a_range_over_unseen_changes_current(
    daemon: RunningDaemon,
):
    target = daemon.root / "numbered.py"
    target.write_text(NUMBERED)
    a, b = daemon.client("agent-a"), daemon.client("agent-b")
    full = anchors_of(a, "numbered.py")
    seen_by_b = anchors_of(b, "numbered.py")
    b_done = b.edit(
        "numbered.py", [{"op": "replace_line", "hash": seen_by_b[5], "content": "line_5 = -5"}]
    )
    a.read_file("numbered.py", hashes=True, range="25-35")  # line 5 not among them
    op = {
        "op": "replace_range",
        "start_hash": full[3],
        "end_hash": full[7],
        "content": "line_3 = 0",
    }
    error = rejected(a, "numbered.py", [op])
    assert error.code == "anchor_stale"
    assert [(c["seq"], c["agent"]) for c in error.details["conflicts"]] == [
        (b_done.version, "agent-b")
    ]
    assert "line_5 = -5\n" in target.read_text()


def test_an_own_write_does_not_make_others_lines_it_was_carried_over_seen(
    daemon: RunningDaemon,
):
    """A's own edit elsewhere is rebased over B's line 5, so A's snapshot holds that line
    though A was never shown it: A's range over it is refused, and B's line survives."""
    target = daemon.root / "numbered.py"
    target.write_text(NUMBERED)
    a, b = daemon.client("agent-a"), daemon.client("agent-b")
    full = anchors_of(a, "numbered.py")
    seen_by_b = anchors_of(b, "numbered.py")
    b_done = b.edit(
        "numbered.py", [{"op": "replace_line", "hash": seen_by_b[5], "content": "line_5 = -5"}]
    )
    own = a.edit("numbered.py", [{"op": "replace_line", "hash": full[40], "content": "x = 40"}])
    assert own.rebased_from_version is not None
    op = {"op": "replace_range", "start_hash": full[3], "end_hash": full[7], "content": "y = 0"}
    error = rejected(a, "numbered.py", [op])
    assert error.code == "anchor_stale"
    assert [(c["seq"], c["agent"]) for c in error.details["conflicts"]] == [
        (b_done.version, "agent-b")
    ]
    assert "line_5 = -5\n" in target.read_text()
    fresh = {row["line"]: row["hash"] for row in error.details["delta"]["changed_lines"]}
    retry = {"op": "replace_range", "start_hash": full[3], "end_hash": full[7], "content": "y = 0"}
    assert 5 in fresh  # shown now: the same range applies, knowingly over B's line
    a.edit("numbered.py", [retry])
    assert "line_5 = -5\n" not in target.read_text()


def test_an_own_insert_inside_a_range_it_read_does_not_make_the_range_stale(
    daemon: RunningDaemon,
):
    target = daemon.root / "numbered.py"
    target.write_text(NUMBERED)
    a = daemon.client("agent-a")
    full = anchors_of(a, "numbered.py")
    a.edit("numbered.py", [{"op": "insert_after", "hash": full[4], "content": "mine = 1"}])
    op = {"op": "replace_range", "start_hash": full[3], "end_hash": full[6], "content": "z = 0"}
    a.edit("numbered.py", [op])
    assert target.read_text().splitlines()[2:4] == ["z = 0", "line_7 = 7"]
