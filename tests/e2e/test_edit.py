"""Every scenario of the anchored-edit spec (seed 000), through a real daemon.

Tests are named after the spec's scenarios. Each rejected edit is checked to
leave the file byte-for-byte unchanged (`rejected` asserts it).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from editjournal.client import Client
from editjournal.daemon.model.state import fold
from editjournal.daemon.text.linehashes import line_hash
from editjournal.schemas.tools import MAX_OPERATIONS
from tests.conftest import RunningDaemon
from tests.e2e.edit_support import anchors_of, cli_edit, colliding_lines, rejected
from tests.e2e.watch_support import not_sentinels, outside, settle

NUMBERED = "".join(f"line {n} has distinct text number {n}\n" for n in range(1, 13))


def put(daemon: RunningDaemon, path: str, text: str | bytes) -> Path:
    target = daemon.root / path
    target.write_bytes(text.encode() if isinstance(text, str) else text)
    return target


def lines_of(target: Path) -> list[str]:
    return target.read_text().splitlines()


# --- replace_line ---------------------------------------------------------------


def test_successful_single_line_replacement(daemon: RunningDaemon, client: Client):
    target = put(daemon, "f.js", "function f(x) {\n  let y = x;\n  return x;\n}\n")
    a = anchors_of(client, "f.js")
    result = client.edit(
        "f.js", [{"op": "replace_line", "hash": a[3], "content": " return x + 1;"}]
    )
    assert lines_of(target) == ["function f(x) {", "  let y = x;", " return x + 1;", "}"]
    assert result.message == "1 operation applied"


def test_replace_line_with_unknown_hash(daemon: RunningDaemon, client: Client):
    put(daemon, "f.txt", NUMBERED)
    error = rejected(client, "f.txt", [{"op": "replace_line", "hash": "abcdef", "content": "x"}])
    assert error.code == "anchor_stale"
    assert "abcdef" in error.message
    assert error.suggested_action == "re-read_file"  # the seed's token
    assert error.details["reason"] == "unknown_anchor"  # never read: no version had it
    assert error.hint == (
        'use anchors a read gave you; this one never was: read_file({"path": "f.txt",'
        ' "hashes": true})'
    )


def test_replace_line_with_ambiguous_hash_resolved_by_adaptive_length(
    daemon: RunningDaemon, client: Client
):
    three = colliding_lines(3)
    assert len({line_hash(xx)[:6] for xx in three}) == 1  # a real 6-hex collision
    target = put(daemon, "c.py", "header = 1\n" + "\n".join(three) + "\nfooter = 2\n")
    a = anchors_of(client, "c.py")
    assert len({a[2][:6], a[3][:6], a[4][:6]}) == 1  # one 6-hex prefix for 3 lines
    assert all(len(a[n]) == 8 for n in (2, 3, 4))  # so read_file showed 8-hex anchors
    client.edit("c.py", [{"op": "replace_line", "hash": a[3], "content": "middle = 0"}])
    assert lines_of(target)[2] == "middle = 0"
    assert lines_of(target)[1] == three[0] and lines_of(target)[3] == three[2]
    six = rejected(client, "c.py", [{"op": "replace_line", "hash": a[2][:6], "content": "x"}])
    assert six.code == "anchor_ambiguous"  # 6 hex alone matches two lines still


def test_replace_line_targeting_low_entropy_line_rejected(daemon: RunningDaemon, client: Client):
    put(daemon, "f.js", "function f() {\n  return 1;\n},\nconst a = 2;\n")
    a = anchors_of(client, "f.js")
    error = rejected(client, "f.js", [{"op": "replace_line", "hash": a[3], "content": "}"}])
    assert error.code == "anchor_low_entropy"
    assert error.details["line"] == 3 and error.details["content"] == "},"
    assert error.details["neighbor_anchors"] == [f"1#{a[1]}", f"2#{a[2]}", f"4#{a[4]}"]


# --- replace_range ----------------------------------------------------------------


def test_successful_range_replacement(daemon: RunningDaemon, client: Client):
    target = put(daemon, "f.txt", NUMBERED)
    a = anchors_of(client, "f.txt")
    op = {"op": "replace_range", "start_hash": a[5], "end_hash": a[8], "content": "a\nb\nc"}
    client.edit("f.txt", [op])
    lines = lines_of(target)
    assert lines[4:7] == ["a", "b", "c"]
    assert lines[3] == "line 4 has distinct text number 4"
    assert lines[7] == "line 9 has distinct text number 9"
    assert len(lines) == 11


def test_replace_range_with_ambiguous_start_hash_after_all_resolution_levels(
    daemon: RunningDaemon, client: Client
):
    # "shared_call(x)" at 3 and 8 sits between identical neighbours: no level separates them
    text = "first = 1\nend_marker = 0\nshared_call(x)\nend_marker = 0\nsecond = 2\n" * 2
    put(daemon, "r.py", text + "last = 9\n")
    a = anchors_of(client, "r.py")
    op = {"op": "replace_range", "start_hash": a[3], "end_hash": a[11], "content": "x"}
    error = rejected(client, "r.py", [op])
    assert error.code == "anchor_context_ambiguous"
    assert error.details["field"] == "start_hash"
    assert [c["line"] for c in error.details["candidates"]] == [3, 8]


def test_replace_range_with_ambiguous_end_hash_after_all_resolution_levels(
    daemon: RunningDaemon, client: Client
):
    block = "open_block()\nrepeat_me = True\nclose_block()\n"
    put(daemon, "r.py", "unique_start = 0\n" + block * 3)
    a = anchors_of(client, "r.py")
    op = {"op": "delete_range", "start_hash": a[1], "end_hash": a[3]}
    error = rejected(client, "r.py", [op])
    assert error.code == "anchor_context_ambiguous"
    assert error.details["field"] == "end_hash"
    candidates = error.details["candidates"]
    assert [c["line"] for c in candidates] == [3, 6, 9]
    assert {c["preview"] for c in candidates} == {"repeat_me = True"}


def test_replace_range_with_reversed_hashes_auto_corrected(daemon: RunningDaemon, client: Client):
    text = "".join(f"row {n} = {n * 7}\n" for n in range(1, 801))
    target = put(daemon, "big.py", text)
    a = anchors_of(client, "big.py")
    op = {"op": "replace_range", "start_hash": a[791], "end_hash": a[17], "content": "merged"}
    result = client.edit("big.py", [op])
    assert [(c.type, c.detail) for c in result.auto_corrections] == [
        ("range_order_swapped", "start_line (791) was after end_line (17). Swapped automatically.")
    ]
    lines = lines_of(target)
    assert lines[15:18] == ["row 16 = 112", "merged", "row 792 = 5544"]


def test_replace_range_with_reversed_hashes(daemon: RunningDaemon, client: Client):
    """The spec's second scenario of this name says `invalid_range_order`; its requirement
    text and the scenario above say swap. The requirement wins (shared/seeds/README.md):
    a reversed delete_range is swapped too, and `invalid_range_order` is only for a
    range whose two ends are the same line."""
    target = put(daemon, "f.txt", NUMBERED)
    a = anchors_of(client, "f.txt")
    result = client.edit("f.txt", [{"op": "delete_range", "start_hash": a[6], "end_hash": a[4]}])
    assert [c.type for c in result.auto_corrections] == ["range_order_swapped"]
    assert len(lines_of(target)) == len(NUMBERED.splitlines()) - 3
    assert lines_of(target)[3] == NUMBERED.splitlines()[6]


def test_replace_range_with_same_line_for_both_hashes_rejected(
    daemon: RunningDaemon, client: Client
):
    put(daemon, "f.txt", NUMBERED)
    a = anchors_of(client, "f.txt")
    op = {"op": "replace_range", "start_hash": a[4], "end_hash": a[4], "content": "x"}
    error = rejected(client, "f.txt", [op])
    assert error.code == "invalid_range_order"
    assert "no-op" in error.message and "start equals end" in error.message


# --- insert / delete ----------------------------------------------------------------


def test_successful_insert_after(daemon: RunningDaemon, client: Client):
    target = put(daemon, "f.txt", NUMBERED)
    a = anchors_of(client, "f.txt")
    content = " console.log('debug');\n return result;"
    client.edit("f.txt", [{"op": "insert_after", "hash": a[4], "content": content}])
    lines = lines_of(target)
    assert lines[4:6] == [" console.log('debug');", " return result;"]
    assert lines[6] == "line 5 has distinct text number 5"


def test_insert_after_targeting_low_entropy_line_rejected(daemon: RunningDaemon, client: Client):
    put(daemon, "f.py", "def f():\n    return 1\n\ndef g():\n    return 2\n")
    a = anchors_of(client, "f.py")
    error = rejected(client, "f.py", [{"op": "insert_after", "hash": a[3], "content": "# x"}])
    assert error.code == "anchor_low_entropy"


def test_successful_insert_before(daemon: RunningDaemon, client: Client):
    target = put(daemon, "f.txt", NUMBERED)
    a = anchors_of(client, "f.txt")
    client.edit("f.txt", [{"op": "insert_before", "hash": a[1], "content": "// Copyright 2024\n"}])
    lines = lines_of(target)
    assert lines[0] == "// Copyright 2024"
    assert lines[1] == "line 1 has distinct text number 1"
    assert len(lines) == 13


def test_successful_line_deletion(daemon: RunningDaemon, client: Client):
    target = put(daemon, "f.txt", NUMBERED)
    a = anchors_of(client, "f.txt")
    client.edit("f.txt", [{"op": "delete_line", "hash": a[3]}])
    lines = lines_of(target)
    assert lines[2] == "line 4 has distinct text number 4" and len(lines) == 11


def test_successful_range_deletion(daemon: RunningDaemon, client: Client):
    target = put(daemon, "f.txt", NUMBERED)
    a = anchors_of(client, "f.txt")
    client.edit("f.txt", [{"op": "delete_range", "start_hash": a[2], "end_hash": a[4]}])
    lines = lines_of(target)
    assert lines[1] == "line 5 has distinct text number 5" and len(lines) == 9


# --- batches -----------------------------------------------------------------------------


def test_all_or_nothing_batch_rejection_for_invalid_hash(daemon: RunningDaemon, client: Client):
    put(daemon, "f.txt", NUMBERED)
    a = anchors_of(client, "f.txt")
    ops = [
        {"op": "replace_line", "hash": a[1], "content": "one"},
        {"op": "delete_line", "hash": a[2]},
        {"op": "insert_after", "hash": "fedcba", "content": "three"},
    ]
    error = rejected(client, "f.txt", ops)
    assert error.code == "anchor_stale"
    assert "fedcba" in error.message
    assert error.details["operation"] == 3


def test_all_or_nothing_batch_rejection_for_ambiguous_hash(daemon: RunningDaemon, client: Client):
    put(daemon, "f.py", "a = 1\nx = compute()\nb = 2\nx = compute()\nc = 3\n")
    a = anchors_of(client, "f.py")
    line_hash_6 = a[1]
    twin = client.read_file("f.py", hashes=True).lines[1]
    assert twin.kind == "context"  # read_file shows a context anchor for the twin...
    ops = [
        {"op": "replace_line", "hash": line_hash_6, "content": "a = 10"},
        {"op": "replace_line", "hash": line_hash("x = compute()")[:6], "content": "y"},
    ]  # ...but the agent used the plain 6-hex line hash, which matches lines 2 and 4
    error = rejected(client, "f.py", ops)
    assert error.code == "anchor_ambiguous"
    assert [c["line"] for c in error.details["candidates"]] == [2, 4]


def test_sequential_operations_in_batch_use_initial_snapshot(daemon: RunningDaemon, client: Client):
    target = put(daemon, "f.txt", NUMBERED)
    a = anchors_of(client, "f.txt")
    ops = [
        {"op": "delete_line", "hash": a[2]},
        {"op": "insert_after", "hash": a[5], "content": "new"},
    ]
    client.edit("f.txt", ops)
    lines = lines_of(target)
    assert lines[3] == "line 5 has distinct text number 5"  # line 5 moved up by the delete
    assert lines[4] == "new"  # ...and the insert still followed original line 5


def test_two_operations_on_the_same_line_are_rejected(daemon: RunningDaemon, client: Client):
    put(daemon, "f.txt", NUMBERED)
    a = anchors_of(client, "f.txt")
    ops = [
        {"op": "replace_line", "hash": a[3], "content": "x"},
        {"op": "delete_range", "start_hash": a[2], "end_hash": a[4]},
    ]
    error = rejected(client, "f.txt", ops)
    assert error.code == "overlapping_operations"
    assert sorted(error.details["operations"]) == [1, 2]


# --- validation before modification --------------------------------------------------


def test_file_modified_externally_between_read_and_edit(daemon: RunningDaemon, client: Client):
    target = put(daemon, "f.txt", NUMBERED)
    a = anchors_of(client, "f.txt")
    target.write_text(NUMBERED.replace("number 3\n", "number three\n"))
    error = rejected(client, "f.txt", [{"op": "replace_line", "hash": a[3], "content": "x"}])
    assert error.code == "anchor_stale"
    assert "relies on line(s) 3 of version" in error.message and "changed since" in error.message
    assert error.suggested_action == "re-read_file"  # seed 000's scenario, word for word
    assert error.hint.endswith("no re-read needed")  # the delta has fresh anchors
    assert "reason" not in error.details  # the anchor was real: the line changed
    kinds = [r.kind for r in daemon.journal().records(path="f.txt")]
    assert kinds == ["file_read", "outside_change", "edit_rejected"]


def test_file_has_duplicate_content_causing_ambiguity_at_all_resolution_levels(
    daemon: RunningDaemon, client: Client
):
    put(daemon, "f.py", "same()\nrepeated_line = 1\nsame()\nrepeated_line = 1\nsame()\n")
    a = anchors_of(client, "f.py")
    error = rejected(client, "f.py", [{"op": "replace_line", "hash": a[2], "content": "x"}])
    assert error.code == "anchor_context_ambiguous"
    assert error.details["candidates"] == [
        {"line": 2, "preview": "repeated_line = 1"},
        {"line": 4, "preview": "repeated_line = 1"},
    ]


# --- summary and invalidation scope ---------------------------------------------------


def test_successful_edit_summary_with_invalidation_scope(daemon: RunningDaemon, client: Client):
    text = "".join(f"statement_{n} = {n}\n" for n in range(1, 21))
    put(daemon, "s.py", text)
    a = anchors_of(client, "s.py")
    ops = [
        {"op": "replace_line", "hash": a[12], "content": "first = 1\nsecond = 2"},
        {"op": "insert_after", "hash": a[15], "content": "third = 3"},
    ]
    result = client.edit("s.py", ops)
    assert result.message == "2 operations applied"
    assert (result.lines_before, result.lines_after, result.net_change) == (20, 22, 2)
    assert result.anchors_valid_through == 11 and result.must_refresh_from_line == 12
    assert result.details.anchors_valid_through == 11
    assert result.details.must_refresh_from_line == 12
    assert result.details.baseline_continuity == "clean"
    assert result.details.writer_type == "edit"
    added = {row.text: row for row in result.changed_lines}
    assert set(added) == {"first = 1", "second = 2", "third = 3"}
    assert all(len(row.hash) == 6 and row.quality == "high" for row in added.values())
    assert f"+12#{added['first = 1'].hash}|first = 1" in result.diff
    assert "-12|statement_12 = 12" in result.diff
    fresh = anchors_of(client, "s.py")
    assert fresh[12] == added["first = 1"].hash  # the diff's anchors are the real ones


def test_invalidation_scope_after_middle_of_file_edit(daemon: RunningDaemon, client: Client):
    put(daemon, "s.py", "".join(f"statement_{n} = {n}\n" for n in range(1, 41)))
    a = anchors_of(client, "s.py")
    op = {"op": "replace_range", "start_hash": a[20], "end_hash": a[22], "content": "x = 0"}
    result = client.edit("s.py", [op])
    assert (result.anchors_valid_through, result.must_refresh_from_line) == (19, 20)


def test_anchors_valid_through_stops_at_an_anchor_the_edit_made_ambiguous(
    daemon: RunningDaemon, client: Client
):
    put(daemon, "s.py", "alpha = 1\nbeta = 2\ngamma = 3\ndelta = 4\n")
    a = anchors_of(client, "s.py")
    result = client.edit("s.py", [{"op": "insert_after", "hash": a[3], "content": "alpha = 1"}])
    assert result.anchors_valid_through == 0  # line 1 now has a twin: its anchor changed


# --- occurrence and context resolution -------------------------------------------------


def occurrence_file(daemon: RunningDaemon) -> Path:
    lines = [f"filler_{n} = {n}" for n in range(1, 13)]
    for n in (2, 5, 7, 12):
        lines[n - 1] = "dup_target = 1"
    return put(daemon, "o.py", "\n".join(lines) + "\n")


@pytest.mark.parametrize("advisory", [{}, {"line": 7}], ids=["occurrence-alone", "with-line"])
def test_replace_line_with_occurrence_targets_correct_line(
    daemon: RunningDaemon, client: Client, advisory: dict
):
    target = occurrence_file(daemon)
    rows = client.read_file("o.py", hashes=True).lines
    op = {
        "op": "replace_line",
        "hash": line_hash("dup_target = 1")[:6],
        "occurrence": 3,
        **advisory,
        "content": "new content",
    }
    response = client.call("edit", {"path": "o.py", "operations": [op]})
    assert response.ok and not response.warnings
    assert [n for n, text in enumerate(lines_of(target), 1) if text == "new content"] == [7]
    assert rows[6].text == "dup_target = 1"


def test_delete_line_with_occurrence_1_targets_first_match(daemon: RunningDaemon, client: Client):
    target = occurrence_file(daemon)
    op = {"op": "delete_line", "hash": line_hash("dup_target = 1")[:6], "occurrence": 1}
    client.edit("o.py", [op])
    lines = lines_of(target)
    assert lines[1] == "filler_3 = 3" and lines.count("dup_target = 1") == 3


def test_occurrence_and_advisory_line_that_disagree_give_a_warning(
    daemon: RunningDaemon, client: Client
):
    target = occurrence_file(daemon)
    op = {"op": "delete_line", "hash": line_hash("dup_target = 1")[:6], "occurrence": 2, "line": 9}
    response = client.call("edit", {"path": "o.py", "operations": [op]})
    assert response.ok
    assert any("advisory line 9" in w for w in response.warnings)
    dups = [n for n, text in enumerate(lines_of(target), 1) if text == "dup_target = 1"]
    assert dups == [2, 6, 11]  # occurrence 2 (line 5) went, not the advisory line 9


def test_context_augmented_resolution_succeeds(daemon: RunningDaemon, client: Client):
    lines = [f"unique_{n} = {n}" for n in range(1, 31)]
    lines[9] = lines[24] = "twin = compute()"
    target = put(daemon, "t.py", "\n".join(lines) + "\n")
    rows = client.read_file("t.py", hashes=True).lines
    assert rows[9].kind == rows[24].kind == "context"
    client.edit("t.py", [{"op": "replace_line", "hash": rows[24].hash, "content": "resolved()"}])
    after = lines_of(target)
    assert after[24] == "resolved()" and after[9] == "twin = compute()"


def test_low_entropy_rejection_with_neighbor_suggestions(daemon: RunningDaemon, client: Client):
    lines = [f"entry_{n}: value_{n}" for n in range(1, 131)]
    lines[117] = "},"
    put(daemon, "l.txt", "\n".join(lines) + "\n")
    a = anchors_of(client, "l.txt")
    error = rejected(client, "l.txt", [{"op": "replace_line", "hash": a[118], "content": "}"}])
    assert error.code == "anchor_low_entropy"
    assert error.details["line"] == 118
    assert error.details["neighbor_anchors"] == [
        f"{n}#{a[n]}" for n in (115, 116, 117, 119, 120, 121)
    ]


def test_anchor_copied_with_its_line_prefix_is_accepted(daemon: RunningDaemon, client: Client):
    target = put(daemon, "f.txt", NUMBERED)
    row = client.read_file("f.txt", hashes=True).rendered.split("\n")[2]
    copied = row.split("|")[0]  # "3#a1b2c3"
    client.edit("f.txt", [{"op": "replace_line", "hash": copied, "content": "third"}])
    assert lines_of(target)[2] == "third"


# --- safety check -------------------------------------------------------------------------


def test_clean_edit_commits_checkpoint(daemon: RunningDaemon, client: Client):
    target = put(daemon, "f.py", "def f():\n    return 1\n")
    a = anchors_of(client, "f.py")
    result = client.edit("f.py", [{"op": "replace_line", "hash": a[2], "content": "    return 2"}])
    assert result.safety_check == "clean"
    assert target.read_text() == "def f():\n    return 2\n"


def test_suspicious_edit_rolls_back(daemon: RunningDaemon, client: Client):
    original = "def f(x):\n    if x:\n        return 1\n    return 0\n"
    target = put(daemon, "f.py", original)
    a = anchors_of(client, "f.py")
    dup = {"op": "insert_after", "hash": a[2], "content": "    if x:\n        log(x)"}
    error = rejected(client, "f.py", [dup])
    assert error.code == "safety_check_failed"
    kinds = {w["kind"] for w in error.details["safety_warnings"]}
    assert kinds == {"duplicate_boundary_line"}
    unbalanced = {"op": "replace_line", "hash": a[1], "content": "def f(x:"}
    error = rejected(client, "f.py", [unbalanced])
    assert {w["kind"] for w in error.details["safety_warnings"]} == {"bracket_balance_changed"}
    assert target.read_text() == original
    rejections = list(daemon.journal().records(kind="edit_rejected"))
    assert [r.event.code for r in rejections] == ["safety_check_failed"] * 2


def test_skip_safety_check_writes_and_is_journaled(daemon: RunningDaemon, client: Client):
    target = put(daemon, "f.py", "def f(x):\n    return x\n")
    a = anchors_of(client, "f.py")
    op = {"op": "replace_line", "hash": a[1], "content": "def f(x:"}
    response = client.call("edit", {"path": "f.py", "operations": [op], "skip_safety_check": True})
    assert response.ok and response.result["safety_check"] == "overridden"
    assert any("safety check overridden" in w for w in response.warnings)
    assert target.read_text().startswith("def f(x:\n")
    applied = list(daemon.journal().records(kind="edit_applied"))[-1].event
    assert applied.safety_check == "overridden" and applied.safety_warnings


def test_skip_safety_check_is_journaled_even_when_the_check_finds_nothing(
    daemon: RunningDaemon, client: Client
):
    put(daemon, "f.py", "def f(x):\n    return x\n")
    a = anchors_of(client, "f.py")
    op = {"op": "replace_line", "hash": a[2], "content": "    return x + 1"}
    response = client.call("edit", {"path": "f.py", "operations": [op], "skip_safety_check": True})
    assert response.ok and response.result["safety_check"] == "skipped"
    applied = list(daemon.journal().records(kind="edit_applied"))[-1].event
    assert applied.safety_check == "skipped" and applied.safety_warnings == []


# --- writer tracking --------------------------------------------------------------------


def test_edit_on_file_previously_modified_by_another_writer_reports_mixed(
    daemon: RunningDaemon, client: Client
):
    target = put(daemon, "w.py", "alpha = 1\nbeta = 2\n")
    client.read_file("w.py")
    target.write_text("alpha = 1\nbeta = 3\n")  # an outside writer (write_file is not built yet)
    a = anchors_of(client, "w.py")
    result = client.edit("w.py", [{"op": "replace_line", "hash": a[1], "content": "alpha = 9"}])
    assert result.details.baseline_continuity == "mixed"  # reported, never blocking
    assert target.read_text() == "alpha = 9\nbeta = 3\n"


def test_edit_on_file_only_modified_by_edit_reports_clean(daemon: RunningDaemon, client: Client):
    put(daemon, "w.py", "alpha = 1\nbeta = 2\n")
    a = anchors_of(client, "w.py")
    client.edit("w.py", [{"op": "replace_line", "hash": a[1], "content": "alpha = 5"}])
    a = anchors_of(client, "w.py")
    result = client.edit("w.py", [{"op": "replace_line", "hash": a[2], "content": "beta = 5"}])
    assert result.details.baseline_continuity == "clean"


# --- path parameter -----------------------------------------------------------------------


def test_edit_called_with_path_parameter(daemon: RunningDaemon, client: Client):
    target = put(daemon, "foo.ts", "const a = 1;\n")
    a = anchors_of(client, str(target))  # an absolute path inside the workspace
    client.edit(str(target), [{"op": "replace_line", "hash": a[1], "content": "const a = 2;"}])
    assert target.read_text() == "const a = 2;\n"


def test_edit_called_without_path_parameter(daemon: RunningDaemon, client: Client):
    response = client.call("edit", {"operations": [{"op": "delete_line", "hash": "abcdef"}]})
    assert response.error.code == "invalid_params"
    assert "`path`" in response.error.message


def test_edit_called_with_deprecated_file_path(daemon: RunningDaemon, client: Client):
    target = put(daemon, "foo.ts", "const a = 1;\n")
    a = anchors_of(client, "foo.ts")
    op = {"op": "replace_line", "hash": a[1], "content": "const a = 3;"}
    response = client.call("edit", {"file_path": "foo.ts", "operations": [op]})
    assert response.ok and target.read_text() == "const a = 3;\n"
    assert any("file_path is deprecated" in w and "use path" in w for w in response.warnings)


def test_edit_called_with_both_path_and_file_path(daemon: RunningDaemon, client: Client):
    foo = put(daemon, "foo.ts", "const foo = 1;\n")
    bar = put(daemon, "bar.ts", "const bar = 1;\n")
    a = anchors_of(client, "foo.ts")
    op = {"op": "replace_line", "hash": a[1], "content": "const foo = 2;"}
    response = client.call("edit", {"path": "foo.ts", "file_path": "bar.ts", "operations": [op]})
    assert response.ok
    assert foo.read_text() == "const foo = 2;\n" and bar.read_text() == "const bar = 1;\n"


@pytest.mark.parametrize(
    ("op", "fragment"),
    [
        ({"op": "replace_line", "start_hash": "abcdef", "content": "x"}, "take `hash`"),
        (
            {"op": "replace_range", "hash": "abcdef", "end_hash": "abcdef", "content": "x"},
            "start_hash",
        ),
        ({"op": "replace_line", "hash": "zzz", "content": "x"}, "4-16 hex digits"),
        ({"op": "rename_line", "hash": "abcdef"}, "$.params.operations[0].op"),
        ({"op": "delete_line", "hash": "abcdef", "occurrence": 0}, "occurrence"),
    ],
)
def test_malformed_operations_are_validation_errors(
    daemon: RunningDaemon, client: Client, op: dict, fragment: str
):
    put(daemon, "f.txt", NUMBERED)
    response = client.call("edit", {"path": "f.txt", "operations": [op]})
    assert response.error.code == "invalid_params"
    assert fragment in response.error.message


# --- files, journal, CLI ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "inserted"),
    [
        (b"alpha = 1\r\nbeta = 2\r\n", b"alpha = 1\r\nnew = 0\r\nbeta = 2\r\n"),
        (b"\xef\xbb\xbfalpha = 1\nbeta = 2\n", b"\xef\xbb\xbfalpha = 1\nnew = 0\nbeta = 2\n"),
        (b"alpha = 1\nbeta = 2", b"alpha = 1\nnew = 0\nbeta = 2"),
        (b"alpha = 1\rbeta = 2\r", b"alpha = 1\rnew = 0\rbeta = 2\r"),
    ],
    ids=["crlf", "bom", "no-final-newline", "cr"],
)
def test_line_endings_bom_and_final_newline_survive_an_edit(
    daemon: RunningDaemon, client: Client, raw: bytes, inserted: bytes
):
    target = put(daemon, "e.py", raw)
    a = anchors_of(client, "e.py")
    client.edit("e.py", [{"op": "insert_after", "hash": a[1], "content": "new = 0"}])
    assert target.read_bytes() == inserted


def test_appending_after_a_last_line_without_newline_keeps_no_final_newline(
    daemon: RunningDaemon, client: Client
):
    target = put(daemon, "e.py", "alpha = 1\nbeta = 2")
    a = anchors_of(client, "e.py")
    client.edit("e.py", [{"op": "insert_after", "hash": a[2], "content": "gamma = 3"}])
    assert target.read_bytes() == b"alpha = 1\nbeta = 2\ngamma = 3"


def test_every_edit_is_journaled_and_becomes_the_agents_snapshot(
    daemon: RunningDaemon, client: Client
):
    target = put(daemon, "j.py", "alpha = 1\nbeta = 2\n")
    a = anchors_of(client, "j.py")
    result = client.edit("j.py", [{"op": "replace_line", "hash": a[1], "content": "alpha = 2"}])
    rejected(client, "j.py", [{"op": "delete_line", "hash": "abcdef"}])
    journal = daemon.journal()
    applied = next(journal.records(kind="edit_applied"))
    assert applied.seq == result.version
    assert journal.blob(applied.event.before_sha256) == b"alpha = 1\nbeta = 2\n"
    assert journal.blob(applied.event.after_sha256) == target.read_bytes()
    assert applied.event.operations == [
        {
            "op": "replace_line",
            "hash": a[1],
            "content": "alpha = 2",
            "occurrence": None,
            "line": None,
        }
    ]
    rejection = next(journal.records(kind="edit_rejected"))
    assert rejection.event.code == "anchor_stale"
    state = fold(journal.records())
    assert state.snapshots[("agent-a", "j.py")].sha256 == result.sha256
    assert state.files["j.py"].writers == ("edit",)
    assert fold(journal.records()).digest() == client.status().state_digest


def test_daemon_does_not_record_its_own_write_as_an_outside_change(
    daemon: RunningDaemon, client: Client
):
    put(daemon, "s.py", "alpha = 1\nbeta = 2\n")
    for n in range(5):
        a = anchors_of(client, "s.py")
        client.edit("s.py", [{"op": "replace_line", "hash": a[1], "content": f"alpha = {n}0"}])
    settle(client, daemon.root)  # the watcher has looked at everything written so far
    assert not_sentinels(outside(client)) == []


def test_cli_edit_with_ops_file(daemon: RunningDaemon, client: Client):
    target = put(daemon, "c.py", "alpha = 1\nbeta = 2\n")
    a = anchors_of(client, "c.py")
    done = cli_edit(daemon.root, "c.py", [{"op": "delete_line", "hash": a[2]}])
    assert done.returncode == 0, done.stderr
    assert "1 operation applied" in done.stdout and "-2|beta = 2" in done.stdout
    assert target.read_text() == "alpha = 1\n"
    stale = cli_edit(daemon.root, "c.py", [{"op": "delete_line", "hash": a[2]}])
    assert stale.returncode == 1 and "anchor_stale" in stale.stderr


def test_a_10000_line_file_every_anchored_line_is_targetable(daemon: RunningDaemon, client: Client):
    pool = [f"common_{k} = shared({k})" for k in range(40)]
    lines = [pool[n % 40] if n % 3 == 0 else f"line_{n} = unique({n})" for n in range(10_000)]
    lines[5000:5003] = colliding_lines(3)
    target = put(daemon, "big.py", "\n".join(lines) + "\n")
    rows = client.read_file("big.py", hashes=True, max_lines=10_000).lines
    assert len(rows) == 10_000
    targetable = [r for r in rows if r.unique]
    assert len(targetable) == 10_000  # repeated lines get context anchors
    assert sum(r.kind == "context" for r in rows) > 3_000
    assert sum(len(r.hash) == 8 for r in rows) >= 3  # the 6-hex collisions
    for start in range(0, 10_000, MAX_OPERATIONS):  # one edit takes at most 1,000 operations
        fresh = client.read_file("big.py", hashes=True, max_lines=10_000).lines
        batch = fresh[start : start + MAX_OPERATIONS]
        ops = [{"op": "replace_line", "hash": r.hash, "content": r.text + "  # hit"} for r in batch]
        client.edit("big.py", ops)
    after = lines_of(target)
    for row in targetable:
        assert after[row.line - 1] == row.text + "  # hit"


def test_emptying_the_last_line_of_a_file_without_final_newline_is_reported_and_true(
    daemon: RunningDaemon, client: Client
):
    target = put(daemon, "n.txt", "alpha = 1\nbeta = 2\ngamma = 3")
    a = anchors_of(client, "n.txt")
    result = client.edit("n.txt", [{"op": "replace_line", "hash": a[3], "content": ""}])
    assert target.read_bytes() == b"alpha = 1\nbeta = 2\n\n"
    assert result.lines_after == 3 == client.read_file("n.txt").line_count
    [correction] = result.auto_corrections
    assert correction.type == "final_newline_added"
