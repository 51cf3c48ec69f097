"""Tests for daemon.text.edit: planning a batch of anchored operations and applying it.

The engine is pure, so everything here runs on strings and Documents: no daemon,
no files. Operations are always expressed with the anchors `anchor_lines` shows
for a line, exactly as an agent would copy them from `read_file(hashes: true)`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from editjournal.daemon.text.anchors import (
    AnchorIndex,
    LineAnchor,
    anchor_lines,
    classify_quality,
)
from editjournal.daemon.text.edit import (
    EditPlan,
    Splice,
    apply_plan,
    content_lines,
    neighbor_anchors,
    parse_anchor,
    plan_edit,
)
from editjournal.daemon.text.linehashes import line_hash
from editjournal.daemon.text.lines import BOM, Document, parse, render
from editjournal.schemas.errors import ErrorCode, ToolError
from editjournal.schemas.tools import (
    DeleteLine,
    DeleteRange,
    InsertAfter,
    InsertBefore,
    Operation,
    ReplaceLine,
    ReplaceRange,
)

# --- helpers -------------------------------------------------------------------------


def values(count: int, start: int = 1) -> list[str]:
    """Distinctive, high-quality lines: `value_1 = 1`, `value_2 = 2`, ..."""
    return [f"value_{n} = {n}" for n in range(start, start + count)]


def text_of(lines: Sequence[str], ending: str = "\n", final_newline: bool = True) -> str:
    text = ending.join(lines)
    return text + ending if final_newline and lines else text


def anchor(lines: Sequence[str], line: int) -> str:
    """The anchor read_file shows for 1-based `line`."""
    return anchor_lines(lines)[line - 1].anchor


def edit(text: str, operations: Sequence[Operation]) -> str:
    doc = parse(text)
    return render(apply_plan(doc, plan_edit(doc.lines, operations)))


def edited_lines(lines: Sequence[str], operations: Sequence[Operation]) -> list[str]:
    return list(parse(edit(text_of(lines), operations)).lines)


def rejection(lines: Sequence[str], operations: Sequence[Operation]) -> ToolError:
    with pytest.raises(ToolError) as caught:
        plan_edit(lines, operations)
    return caught.value


@cache
def colliding_groups(prefix_len: int, size: int, count: int) -> tuple[tuple[str, ...], ...]:
    """`count` groups of `size` distinct `line {i}` bodies whose line hashes share a
    `prefix_len`-hex prefix but all differ at 8 hex digits (brute force, birthday search)."""
    buckets: dict[str, list[str]] = {}
    found: list[tuple[str, ...]] = []
    for i in range(3_000_000):
        body = f"line {i}"
        bucket = buckets.setdefault(line_hash(body)[:prefix_len], [])
        bucket.append(body)
        if len(bucket) == size and len({line_hash(b)[:8] for b in bucket}) == size:
            found.append(tuple(bucket))
            if len(found) == count:
                return tuple(found)
    raise AssertionError("not enough hash collisions found")


# --- parse_anchor and content_lines --------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("a1b2c3", ("a1b2c3", None)),
        ("A1B2C3", ("a1b2c3", None)),
        ("12#a1b2c3", ("a1b2c3", 12)),
        ("12#a1b2c3~", ("a1b2c3", 12)),
        ("7#A1B2C3D4?", ("a1b2c3d4", 7)),
        ("  3#d41d  ", ("d41d", 3)),
    ],
)
def test_parse_anchor_accepts_every_copied_form(raw: str, expected: tuple[str, int | None]) -> None:
    assert parse_anchor(raw) == expected


@pytest.mark.parametrize("raw", ["", "abc", "xyz123", "12#", "#a1b2c3", "a1b2c3!", "1" * 17])
def test_parse_anchor_rejects_non_anchors_as_invalid_params(raw: str) -> None:
    with pytest.raises(ToolError) as caught:
        parse_anchor(raw)
    assert caught.value.code is ErrorCode.INVALID_PARAMS


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("a\nb", ("a", "b")),
        ("a\nb\n", ("a", "b")),
        ("a\r\nb\r\n", ("a", "b")),
        ("", ("",)),
        ("\n", ("",)),
        ("a\n\n", ("a", "")),
        ("// Copyright 2024\n", ("// Copyright 2024",)),
    ],
)
def test_content_lines_final_newline_adds_no_line_and_empty_is_one_line(
    content: str, expected: tuple[str, ...]
) -> None:
    assert content_lines(content) == expected


# --- splice positions ------------------------------------------------------------------


def test_each_operation_becomes_a_splice_in_initial_snapshot_positions() -> None:
    lines = values(10)
    a = anchor_lines(lines)
    plan = plan_edit(
        lines,
        [
            ReplaceLine(hash=a[1].anchor, content="r"),
            DeleteLine(hash=a[3].anchor),
            InsertAfter(hash=a[4].anchor, content="x\ny"),
            InsertBefore(hash=a[6].anchor, content="z"),
            ReplaceRange(start_hash=a[7].anchor, end_hash=a[8].anchor, content="q"),
        ],
    )
    assert [(s.op, s.start, s.end, s.new_lines, s.targets) for s in plan.splices] == [
        ("replace_line", 1, 2, ("r",), (2,)),
        ("delete_line", 3, 4, (), (4,)),
        ("insert_after", 5, 5, ("x", "y"), (5,)),
        ("insert_before", 6, 6, ("z",), (7,)),
        ("replace_range", 7, 9, ("q",), (8, 9)),
    ]
    assert plan.auto_corrections == ()
    assert plan.warnings == ()


def test_splices_apply_in_position_order_whatever_the_batch_order() -> None:
    lines = values(6)
    plan = plan_edit(
        lines,
        [
            DeleteLine(hash=anchor(lines, 5)),
            ReplaceLine(hash=anchor(lines, 1), content="first"),
            DeleteRange(start_hash=anchor(lines, 2), end_hash=anchor(lines, 3)),
        ],
    )
    assert [(s.start, s.index) for s in plan.splices] == [(0, 1), (1, 2), (4, 0)]


# --- spec scenarios ----------------------------------------------------------------------


def test_replace_line_replaces_only_line_3() -> None:
    lines = ["function add(x) {", "    let y = 0;", "    return x;", "}"]
    result = edited_lines(lines, [ReplaceLine(hash=anchor(lines, 3), content="    return x + 1;")])
    assert result == ["function add(x) {", "    let y = 0;", "    return x + 1;", "}"]


def test_unknown_hash_is_anchor_stale_naming_the_hash() -> None:
    lines = values(5)
    missing = "abcdef"
    assert AnchorIndex(lines).match(missing).level == "none"
    error = rejection(lines, [ReplaceLine(hash=missing, content="x")])
    assert error.code is ErrorCode.ANCHOR_STALE
    assert missing in error.message
    assert error.suggested_action == "re-read_file"  # seed 000's token
    assert "read_file" in error.hint
    assert error.details["anchor"] == missing
    assert error.details["field"] == "hash"
    assert error.details["operation"] == 1
    assert error.details["op"] == "replace_line"


def test_six_hex_collision_is_told_apart_by_the_eight_hex_anchor() -> None:
    (first, second) = colliding_groups(6, 2, 1)[0]
    lines = ["header = 1", first, "middle = 2", second, "footer = 3"]
    anchors = anchor_lines(lines)
    assert line_hash(first)[:6] == line_hash(second)[:6]
    assert anchors[1].anchor == line_hash(first)[:8]
    assert anchors[3].anchor == line_hash(second)[:8]
    assert edited_lines(lines, [ReplaceLine(hash=anchors[1].anchor, content="A")]) == [
        "header = 1",
        "A",
        "middle = 2",
        second,
        "footer = 3",
    ]
    assert edited_lines(lines, [DeleteLine(hash=anchors[3].anchor)]) == lines[:3] + lines[4:]


def test_six_hex_prefix_of_three_lines_is_ambiguous_but_each_eight_hex_anchor_resolves() -> None:
    trio = colliding_groups(6, 3, 1)[0]
    lines = ["start = 0", trio[0], "a = 1", trio[1], "b = 2", trio[2], "end = 3"]
    anchors = anchor_lines(lines)
    for line in (2, 4, 6):
        assert len(anchors[line - 1].anchor) == 8
        plan = plan_edit(lines, [ReplaceLine(hash=anchors[line - 1].anchor, content="x")])
        assert (plan.splices[0].start, plan.splices[0].end) == (line - 1, line)
    short = line_hash(trio[0])[:6]
    error = rejection(lines, [ReplaceLine(hash=short, content="x")])
    assert error.code is ErrorCode.ANCHOR_AMBIGUOUS
    assert [c["line"] for c in error.details["candidates"]] == [2, 4, 6]
    plan = plan_edit(lines, [ReplaceLine(hash=short, occurrence=2, content="x")])
    assert plan.splices[0].start == 3


def test_low_entropy_target_is_rejected_with_neighbour_suggestions() -> None:
    lines = values(120)
    lines[117] = "},"  # line 118
    anchors = anchor_lines(lines)
    error = rejection(lines, [ReplaceLine(hash=anchors[117].anchor, content="});")])
    assert error.code is ErrorCode.ANCHOR_LOW_ENTROPY
    assert error.details["line"] == 118
    assert error.details["content"] == "},"
    assert error.details["neighbor_anchors"] == [
        f"{n}#{anchors[n - 1].anchor}" for n in (115, 116, 117, 119, 120)
    ]


def test_neighbour_suggestions_skip_low_quality_and_non_unique_lines() -> None:
    lines = [
        "alpha = 1",  # 1  high, unique
        "gamma = 3",  # 2  low: occurs 4 times
        "twin = same",  # 3  identical twin of 9, identical neighbours: not unique
        "gamma = 3",  # 4
        "",  # 5
        "}",  # 6  the target
        "}",  # 7
        "gamma = 3",  # 8
        "twin = same",  # 9
        "gamma = 3",  # 10
        "omega = 9",  # 11
        "last = 10",  # 12
    ]
    anchors = anchor_lines(lines)
    assert not anchors[2].unique and not anchors[8].unique
    assert anchors[2].quality == "high"
    error = rejection(lines, [DeleteLine(hash=anchors[5].anchor)])
    assert error.code is ErrorCode.ANCHOR_LOW_ENTROPY
    assert error.details["neighbor_anchors"] == [
        f"{n}#{anchors[n - 1].anchor}" for n in (1, 11, 12)
    ]
    assert neighbor_anchors(anchors, 6) == error.details["neighbor_anchors"]


@pytest.mark.parametrize(
    "make_op",
    [
        lambda h: ReplaceLine(hash=h, content="x = 0"),
        lambda h: InsertAfter(hash=h, content="x = 0"),
        lambda h: InsertBefore(hash=h, content="x = 0"),
        lambda h: DeleteLine(hash=h),
    ],
    ids=["replace_line", "insert_after", "insert_before", "delete_line"],
)
@pytest.mark.parametrize("low", ["", "   ", "}", "},", "]);", "x"])
def test_every_single_line_op_refuses_a_low_quality_target(make_op, low: str) -> None:
    lines = [*values(3), low, *values(3, start=10)]
    error = rejection(lines, [make_op(anchor(lines, 4))])
    assert error.code is ErrorCode.ANCHOR_LOW_ENTROPY
    assert error.details["line"] == 4
    assert error.details["content"] == low


def test_boilerplate_picked_by_its_line_anchor_is_low_entropy() -> None:
    # Three copies differing only in indentation: each has its own line hash (so a
    # plain line-level anchor), but the stripped body repeats, so it is boilerplate.
    lines = ["a = 1", "display: flex;", "b = 2", "  display: flex;", "c = 3", "    display: flex;"]
    anchors = anchor_lines(lines)
    assert anchors[3].kind == "line" and anchors[3].quality == "low"
    error = rejection(lines, [ReplaceLine(hash=anchors[3].anchor, content="display: grid;")])
    assert error.code is ErrorCode.ANCHOR_LOW_ENTROPY
    assert error.details["line"] == 4


def test_boilerplate_picked_deliberately_by_context_anchor_or_occurrence_is_allowed() -> None:
    lines = ["a = 1", "display: flex;", "b = 2", "display: flex;", "c = 3", "display: flex;"]
    anchors = anchor_lines(lines)
    assert anchors[3].kind == "context" and anchors[3].quality == "low"
    by_context = [ReplaceLine(hash=anchors[3].anchor, content="display: grid;")]
    by_occurrence = [
        ReplaceLine(hash=line_hash("display: flex;")[:6], occurrence=2, content="display: grid;")
    ]
    for operations in (by_context, by_occurrence):
        assert edited_lines(lines, operations) == [*lines[:3], "display: grid;", *lines[4:]]


def test_blank_and_punctuation_lines_are_refused_even_when_picked_deliberately() -> None:
    lines = ["a = 1", "}", "b = 2", "}", "c = 3", "}"]
    anchors = anchor_lines(lines)
    for op in (
        ReplaceLine(hash=anchors[3].anchor, content="};"),
        ReplaceLine(hash=line_hash("}")[:6], occurrence=2, content="};"),
    ):
        assert rejection(lines, [op]).code is ErrorCode.ANCHOR_LOW_ENTROPY


def test_boilerplate_twice_is_fine_for_single_line_ops() -> None:
    lines = ["a = 1", "display: flex;", "b = 2", "display: flex;", "c = 3"]
    result = edited_lines(lines, [ReplaceLine(hash=anchor(lines, 4), content="display: grid;")])
    assert result == ["a = 1", "display: flex;", "b = 2", "display: grid;", "c = 3"]


def test_replace_range_5_to_8_with_three_lines() -> None:
    lines = values(10)
    result = edited_lines(
        lines,
        [
            ReplaceRange(
                start_hash=anchor(lines, 5), end_hash=anchor(lines, 8), content="n1\nn2\nn3"
            )
        ],
    )
    assert result == [*lines[:4], "n1", "n2", "n3", *lines[8:]]


def test_range_endpoints_may_be_low_quality_lines() -> None:
    lines = ["def f():", "    if x:", "        y()", "", "}", "z = 1"]
    result = edited_lines(
        lines, [DeleteRange(start_hash=anchor(lines, 4), end_hash=anchor(lines, 5))]
    )
    assert result == ["def f():", "    if x:", "        y()", "z = 1"]


def identical_twins_file() -> list[str]:
    """Line 3 and 7 are identical with identical neighbours; so are 11, 15 and 19."""
    return [
        "head = 0",  # 1
        "before = 1",  # 2
        "twin = 2",  # 3
        "after = 3",  # 4
        "gap = 4",  # 5
        "before = 1",  # 6
        "twin = 2",  # 7
        "after = 3",  # 8
        "sep = 5",  # 9
        "open_triplet()",  # 10
        "triplet = 6",  # 11
        "close_triplet()",  # 12
        "sep = 7",  # 13
        "open_triplet()",  # 14
        "triplet = 6",  # 15
        "close_triplet()",  # 16
        "sep = 8",  # 17
        "open_triplet()",  # 18
        "triplet = 6",  # 19
        "close_triplet()",  # 20
        "tail = 9",  # 21
    ]


def test_range_with_start_ambiguous_after_all_levels_is_context_ambiguous() -> None:
    lines = identical_twins_file()
    anchors = anchor_lines(lines)
    assert not anchors[2].unique
    error = rejection(
        lines, [ReplaceRange(start_hash=anchors[2].anchor, end_hash=anchors[8].anchor, content="")]
    )
    assert error.code is ErrorCode.ANCHOR_CONTEXT_AMBIGUOUS
    assert error.details["field"] == "start_hash"
    assert [c["line"] for c in error.details["candidates"]] == [3, 7]
    assert [c["preview"] for c in error.details["candidates"]] == ["twin = 2", "twin = 2"]


def test_range_with_end_ambiguous_among_three_is_context_ambiguous() -> None:
    lines = identical_twins_file()
    anchors = anchor_lines(lines)
    error = rejection(
        lines, [DeleteRange(start_hash=anchors[8].anchor, end_hash=anchors[10].anchor)]
    )
    assert error.code is ErrorCode.ANCHOR_CONTEXT_AMBIGUOUS
    assert error.details["field"] == "end_hash"
    assert [c["line"] for c in error.details["candidates"]] == [11, 15, 19]


def test_single_line_op_on_a_twin_identical_at_every_level_is_context_ambiguous() -> None:
    lines = identical_twins_file()
    anchors = anchor_lines(lines)
    error = rejection(lines, [ReplaceLine(hash=anchors[6].anchor, content="x")])
    assert error.code is ErrorCode.ANCHOR_CONTEXT_AMBIGUOUS
    assert error.details["candidates"] == [
        {"line": 3, "preview": "twin = 2"},
        {"line": 7, "preview": "twin = 2"},
    ]


def test_occurrence_picks_an_identical_twin() -> None:
    lines = identical_twins_file()
    a = anchor_lines(lines)[6].anchor
    assert edited_lines(lines, [ReplaceLine(hash=a, occurrence=2, content="twin = 22")])[6] == (
        "twin = 22"
    )
    assert edited_lines(lines, [ReplaceLine(hash=a, occurrence=1, content="twin = 22")])[2] == (
        "twin = 22"
    )


def test_reversed_range_is_swapped_and_reported() -> None:
    lines = values(10)
    plan = plan_edit(
        lines, [ReplaceRange(start_hash=anchor(lines, 8), end_hash=anchor(lines, 3), content="x")]
    )
    assert plan.auto_corrections == (
        ("range_order_swapped", "start_line (8) was after end_line (3). Swapped automatically."),
    )
    (splice,) = plan.splices
    assert (splice.start, splice.end) == (2, 8)
    assert render(apply_plan(parse(text_of(lines)), plan)) == text_of([*lines[:2], "x", *lines[8:]])


def test_range_with_start_equal_to_end_is_invalid_range_order() -> None:
    lines = values(5)
    a = anchor(lines, 3)
    for op in (ReplaceRange(start_hash=a, end_hash=f"3#{a}", content="x"), DeleteRange(a, a)):
        error = rejection(lines, [op])
        assert error.code is ErrorCode.INVALID_RANGE_ORDER
        assert error.details["line"] == 3
        assert "no-op" in error.message


def test_insert_after_line_4_adds_two_lines() -> None:
    lines = values(6)
    content = "    console.log('debug');\n    return result;"
    result = edited_lines(lines, [InsertAfter(hash=anchor(lines, 4), content=content)])
    assert result == [*lines[:4], "    console.log('debug');", "    return result;", *lines[4:]]


def test_insert_before_line_1_makes_a_new_first_line() -> None:
    lines = ["import os", "print(os.getcwd())"]
    result = edited_lines(
        lines, [InsertBefore(hash=anchor(lines, 1), content="// Copyright 2024\n")]
    )
    assert result == ["// Copyright 2024", "import os", "print(os.getcwd())"]


def test_delete_line_3() -> None:
    lines = values(5)
    assert edited_lines(lines, [DeleteLine(hash=anchor(lines, 3))]) == [*lines[:2], *lines[3:]]


def test_delete_range_2_to_4_makes_line_5_the_new_line_2() -> None:
    lines = values(6)
    result = edited_lines(
        lines, [DeleteRange(start_hash=anchor(lines, 2), end_hash=anchor(lines, 4))]
    )
    assert result == [lines[0], lines[4], lines[5]]


def test_batch_whose_third_op_is_invalid_is_rejected_naming_that_hash() -> None:
    lines = values(6)
    text = text_of(lines)
    doc = parse(text)
    bad = "0badc0"
    assert AnchorIndex(lines).match(bad).level == "none"
    error = rejection(
        doc.lines,
        [
            ReplaceLine(hash=anchor(lines, 1), content="x"),
            InsertAfter(hash=anchor(lines, 3), content="y"),
            DeleteLine(hash=bad),
        ],
    )
    assert error.code is ErrorCode.ANCHOR_STALE
    assert bad in error.message
    assert error.details["anchor"] == bad
    assert error.details["operation"] == 3
    assert render(doc) == text


def test_batch_whose_second_op_is_ambiguous_is_anchor_ambiguous() -> None:
    lines = ["def first():", "    return compute()", "def second():", "    return compute()"]
    by_line_hash = line_hash("    return compute()")[:6]
    error = rejection(
        lines,
        [
            ReplaceLine(hash=anchor(lines, 1), content="def one():"),
            DeleteLine(hash=by_line_hash),
        ],
    )
    assert error.code is ErrorCode.ANCHOR_AMBIGUOUS
    assert error.details["operation"] == 2
    assert error.details["candidates"] == [
        {"line": 2, "preview": "    return compute()"},
        {"line": 4, "preview": "    return compute()"},
    ]


def test_later_operations_use_the_initial_snapshot() -> None:
    lines = ["alpha = 1", "beta = 2", "gamma = 3", "delta = 4", "epsilon = 5"]
    result = edited_lines(
        lines,
        [DeleteLine(hash=anchor(lines, 2)), InsertAfter(hash=anchor(lines, 4), content="new")],
    )
    assert result == ["alpha = 1", "gamma = 3", "delta = 4", "new", "epsilon = 5"]


def test_an_operation_may_target_a_line_another_operation_moves() -> None:
    lines = values(6)
    result = edited_lines(
        lines,
        [
            InsertAfter(hash=anchor(lines, 1), content="a\nb\nc"),
            ReplaceLine(hash=anchor(lines, 5), content="five"),
            DeleteRange(start_hash=anchor(lines, 2), end_hash=anchor(lines, 3)),
        ],
    )
    assert result == [lines[0], "a", "b", "c", lines[3], "five", lines[5]]


def four_way_prefix_file() -> tuple[list[str], str]:
    """Four distinct lines sharing a 4-hex line-hash prefix, at lines 2, 5, 7 and 12."""
    group = colliding_groups(4, 4, 1)[0]
    lines = values(12, start=100)
    for line, body in zip((2, 5, 7, 12), group, strict=True):
        lines[line - 1] = body
    prefix = line_hash(group[0])[:4]
    assert AnchorIndex(lines).line_matches(prefix) == (2, 5, 7, 12)
    return lines, prefix


def test_occurrence_3_among_lines_2_5_7_12_targets_line_7() -> None:
    lines, prefix = four_way_prefix_file()
    result = edited_lines(lines, [ReplaceLine(hash=prefix, occurrence=3, content="new content")])
    assert result == [*lines[:6], "new content", *lines[7:]]


def test_occurrence_1_targets_the_first_match() -> None:
    lines, prefix = four_way_prefix_file()
    assert edited_lines(lines, [DeleteLine(hash=prefix, occurrence=1)]) == [lines[0], *lines[2:]]


def test_prefix_of_several_lines_without_occurrence_is_ambiguous() -> None:
    lines, prefix = four_way_prefix_file()
    error = rejection(lines, [ReplaceLine(hash=prefix, content="x")])
    assert error.code is ErrorCode.ANCHOR_AMBIGUOUS
    assert [c["line"] for c in error.details["candidates"]] == [2, 5, 7, 12]


def test_occurrence_beyond_the_matches_is_stale() -> None:
    lines, prefix = four_way_prefix_file()
    error = rejection(lines, [ReplaceLine(hash=prefix, occurrence=5, content="x")])
    assert error.code is ErrorCode.ANCHOR_STALE
    assert "occurrence 5" in error.message


def test_occurrence_disagreeing_with_the_advisory_line_warns_and_uses_the_occurrence() -> None:
    lines, prefix = four_way_prefix_file()
    plan = plan_edit(lines, [ReplaceLine(hash=prefix, occurrence=3, line=5, content="x")])
    assert plan.splices[0].start == 6
    assert len(plan.warnings) == 1
    assert "line 7" in plan.warnings[0] and "advisory line 5" in plan.warnings[0]
    quiet = plan_edit(lines, [ReplaceLine(hash=f"7#{prefix}", occurrence=3, content="x")])
    assert quiet.warnings == ()


def test_context_anchor_resolves_a_twin_line() -> None:
    lines = values(30)
    lines[9] = lines[24] = "    return compute()"  # lines 10 and 25
    anchors = anchor_lines(lines)
    twin = anchors[24]
    assert twin.kind == "context" and twin.unique
    assert twin.anchor == twin.context[:6]
    plan = plan_edit(lines, [ReplaceLine(hash=twin.anchor, content="    return 25")])
    assert (plan.splices[0].start, plan.splices[0].end) == (24, 25)
    result = edited_lines(lines, [ReplaceLine(hash=anchors[9].anchor, content="    return 10")])
    assert result[9] == "    return 10" and result[24] == "    return compute()"


# --- overlaps ------------------------------------------------------------------------------


def test_two_operations_on_the_same_line_overlap() -> None:
    lines = values(5)
    a = anchor(lines, 3)
    error = rejection(lines, [ReplaceLine(hash=a, content="x"), DeleteLine(hash=a)])
    assert error.code is ErrorCode.OVERLAPPING_OPERATIONS
    assert error.details == {"operations": [1, 2], "line": 3}


def test_line_inside_a_range_overlaps() -> None:
    lines = values(8)
    error = rejection(
        lines,
        [
            DeleteLine(hash=anchor(lines, 4)),
            ReplaceRange(start_hash=anchor(lines, 3), end_hash=anchor(lines, 6), content="x"),
        ],
    )
    assert error.code is ErrorCode.OVERLAPPING_OPERATIONS
    assert error.details == {"operations": [2, 1], "line": 4}


def test_ranges_sharing_an_endpoint_overlap() -> None:
    lines = values(8)
    error = rejection(
        lines,
        [
            DeleteRange(start_hash=anchor(lines, 2), end_hash=anchor(lines, 4)),
            DeleteRange(start_hash=anchor(lines, 4), end_hash=anchor(lines, 6)),
        ],
    )
    assert error.code is ErrorCode.OVERLAPPING_OPERATIONS
    assert error.details["line"] == 4


def test_adjacent_ranges_do_not_overlap() -> None:
    lines = values(8)
    result = edited_lines(
        lines,
        [
            DeleteRange(start_hash=anchor(lines, 5), end_hash=anchor(lines, 7)),
            ReplaceRange(start_hash=anchor(lines, 2), end_hash=anchor(lines, 4), content="x"),
        ],
    )
    assert result == [lines[0], "x", lines[7]]


@pytest.mark.parametrize(
    "make_insert",
    [
        lambda lines: InsertAfter(hash=anchor(lines, 3), content="in"),
        lambda lines: InsertAfter(hash=anchor(lines, 5), content="in"),
        lambda lines: InsertBefore(hash=anchor(lines, 4), content="in"),
        lambda lines: InsertBefore(hash=anchor(lines, 6), content="in"),
    ],
    ids=["after-start", "after-middle", "before-middle", "before-end"],
)
def test_insert_strictly_inside_a_replaced_range_overlaps(make_insert) -> None:
    lines = values(8)
    error = rejection(
        lines,
        [
            ReplaceRange(start_hash=anchor(lines, 3), end_hash=anchor(lines, 6), content="x"),
            make_insert(lines),
        ],
    )
    assert error.code is ErrorCode.OVERLAPPING_OPERATIONS


def test_inserts_at_the_boundaries_of_a_range_are_allowed() -> None:
    lines = values(8)
    result = edited_lines(
        lines,
        [
            InsertAfter(hash=anchor(lines, 6), content="after"),
            DeleteRange(start_hash=anchor(lines, 3), end_hash=anchor(lines, 6)),
            InsertBefore(hash=anchor(lines, 3), content="before"),
            InsertAfter(hash=anchor(lines, 2), content="after 2"),
            InsertBefore(hash=anchor(lines, 7), content="before 7"),
        ],
    )
    assert result == [*lines[:2], "before", "after 2", "after", "before 7", *lines[6:]]


def test_inserts_next_to_a_replaced_line_are_allowed() -> None:
    lines = values(5)
    a = anchor(lines, 3)
    result = edited_lines(
        lines,
        [
            InsertAfter(hash=a, content="after"),
            ReplaceLine(hash=a, content="three"),
            InsertBefore(hash=a, content="before"),
        ],
    )
    assert result == [*lines[:2], "before", "three", "after", *lines[3:]]


@pytest.mark.parametrize("reverse", [False, True])
def test_inserts_at_the_same_gap_keep_batch_order(reverse: bool) -> None:
    lines = values(4)
    batch: list[Operation] = [
        InsertAfter(hash=anchor(lines, 2), content="first"),
        InsertBefore(hash=anchor(lines, 3), content="second"),
        InsertAfter(hash=anchor(lines, 2), content="third"),
    ]
    if reverse:
        batch.reverse()
    middle = ["first", "second", "third"]
    expected = [*lines[:2], *(reversed(middle) if reverse else middle), *lines[2:]]
    assert edited_lines(lines, batch) == expected


# --- several problems ---------------------------------------------------------------------


def test_several_problems_carry_the_first_code_and_list_every_problem() -> None:
    lines = ["def first():", "    return compute()", "def second():", "    return compute()"]
    lines += ["}", *values(3)]
    ambiguous = line_hash("    return compute()")[:6]
    error = rejection(
        lines,
        [
            ReplaceLine(hash=anchor(lines, 1), content="ok"),
            DeleteLine(hash=ambiguous),
            ReplaceLine(hash="abcdef", content="x"),
            InsertAfter(hash=anchor(lines, 5), content="y"),
        ],
    )
    assert error.code is ErrorCode.ANCHOR_AMBIGUOUS
    assert error.details["operation"] == 2
    problems = error.details["problems"]
    assert [(p["code"], p["operation"], p["op"]) for p in problems] == [
        ("anchor_ambiguous", 2, "delete_line"),
        ("anchor_stale", 3, "replace_line"),
        ("anchor_low_entropy", 4, "insert_after"),
    ]
    assert "and 2 more problem(s)" in error.message


def test_a_range_with_both_endpoints_stale_reports_start_first_with_its_operation() -> None:
    lines = values(4)
    error = rejection(lines, [DeleteRange(start_hash="abcdef", end_hash="fedcba")])
    assert error.code is ErrorCode.ANCHOR_STALE
    assert error.details["field"] == "start_hash"
    assert error.details["anchor"] == "abcdef"
    problems = error.details["problems"]
    assert [(p["field"], p.get("operation"), p.get("op")) for p in problems] == [
        ("start_hash", 1, "delete_range"),
        ("end_hash", 1, "delete_range"),
    ]


# --- line endings, BOM, final newline -----------------------------------------------------


def test_crlf_file_keeps_crlf_on_every_new_and_kept_line() -> None:
    text = "alpha = 1\r\nbeta = 2\r\ngamma = 3\r\ndelta = 4\r\n"
    lines = parse(text).lines
    out = edit(
        text,
        [
            ReplaceLine(hash=anchor(lines, 2), content="B1\nB2"),
            InsertAfter(hash=anchor(lines, 3), content="inserted\n"),
            DeleteLine(hash=anchor(lines, 4)),
        ],
    )
    assert out.encode() == b"alpha = 1\r\nB1\r\nB2\r\ngamma = 3\r\ninserted\r\n"


def test_cr_file_keeps_cr() -> None:
    text = "alpha = 1\rbeta = 2\r"
    out = edit(text, [InsertBefore(hash=anchor(parse(text).lines, 2), content="x\r\ny")])
    assert out.encode() == b"alpha = 1\rx\ry\rbeta = 2\r"


def test_bom_is_kept() -> None:
    text = BOM + "alpha = 1\nbeta = 2\n"
    out = edit(text, [InsertBefore(hash=anchor(["alpha = 1", "beta = 2"], 1), content="top")])
    assert out.encode("utf-8") == b"\xef\xbb\xbftop\nalpha = 1\nbeta = 2\n"


def test_bom_is_kept_when_every_line_is_deleted() -> None:
    text = BOM + "alpha = 1\r\nbeta = 2\r\n"
    lines = parse(text).lines
    out = edit(text, [DeleteRange(start_hash=anchor(lines, 1), end_hash=anchor(lines, 2))])
    assert out == BOM


@pytest.mark.parametrize(
    ("make_op", "expected"),
    [
        (
            lambda a: ReplaceLine(hash=a[2].anchor, content="C\nD"),
            "alpha = 1\r\nbeta = 2\r\nC\r\nD",
        ),
        (
            lambda a: InsertAfter(hash=a[2].anchor, content="x\n"),
            "alpha = 1\r\nbeta = 2\r\ngamma = 3\r\nx",
        ),
        (lambda a: DeleteLine(hash=a[2].anchor), "alpha = 1\r\nbeta = 2"),
        (lambda a: DeleteLine(hash=a[0].anchor), "beta = 2\r\ngamma = 3"),
    ],
    ids=["replace-last", "insert-after-last", "delete-last", "delete-first"],
)
def test_missing_final_newline_stays_missing(make_op, expected: str) -> None:
    text = "alpha = 1\r\nbeta = 2\r\ngamma = 3"
    assert edit(text, [make_op(anchor_lines(parse(text).lines))]).encode() == expected.encode()


def test_crlf_bom_no_final_newline_round_trip_is_byte_exact() -> None:
    text = BOM + "first = 1\r\nsecond = 2\r\nthird = 3"
    lines = parse(text).lines
    out = edit(
        text,
        [
            InsertBefore(hash=anchor(lines, 1), content="zero = 0\n"),
            ReplaceLine(hash=anchor(lines, 2), content="second = 22"),
            InsertAfter(hash=anchor(lines, 3), content="fourth = 4"),
        ],
    )
    assert out.encode("utf-8") == (
        b"\xef\xbb\xbfzero = 0\r\nfirst = 1\r\nsecond = 22\r\nthird = 3\r\nfourth = 4"
    )
    after = parse(out)
    assert after.bom and not after.final_newline and after.eol_style == "crlf"


def test_mixed_endings_replacements_keep_their_line_ending_and_inserts_take_the_dominant() -> None:
    text = "one = 1\r\ntwo = 2\nthree = 3\nfour = 4\r\nfive = 5\n"  # dominant: "\n"
    lines = parse(text).lines
    out = edit(
        text,
        [
            ReplaceLine(hash=anchor(lines, 4), content="4a\n4b"),
            InsertAfter(hash=anchor(lines, 1), content="ins"),
            ReplaceRange(start_hash=anchor(lines, 2), end_hash=anchor(lines, 3), content="r"),
        ],
    )
    assert out == "one = 1\r\nins\nr\n4a\r\n4b\r\nfive = 5\n"


def test_the_engine_never_changes_the_document_it_was_given() -> None:
    text = "alpha = 1\r\nbeta = 2"
    doc = parse(text)
    plan = plan_edit(doc.lines, [ReplaceLine(hash=anchor(doc.lines, 1), content="x")])
    apply_plan(doc, plan)
    assert render(doc) == text


# --- property: valid random batches match a reference implementation ---------------------

POOL = ("", "   ", "}", "},", "pass", "return None", "x = 1", "display: flex;", "# note", "end")
ENDING_STYLES = {"lf": "\n", "crlf": "\r\n", "cr": "\r"}

file_line = st.one_of(st.sampled_from(POOL), st.integers(0, 40).map(lambda n: f"value_{n} = {n}"))
content_line = st.one_of(st.sampled_from(POOL), st.integers(0, 20).map(lambda n: f"new_{n}()"))


@st.composite
def documents(draw: st.DrawFn) -> tuple[str, Document]:
    """A text (its bytes matter) and its parse, over every ending style and BOM state."""
    bodies = draw(st.lists(file_line, min_size=1, max_size=30))
    if len(bodies) >= 3 and draw(st.booleans()):  # a copied block: twins with equal neighbours
        start = draw(st.integers(0, len(bodies) - 3))
        bodies += bodies[start : start + draw(st.integers(3, 6))]
    style = draw(st.sampled_from(["lf", "crlf", "cr", "mixed"]))
    if style == "mixed":
        endings = draw(
            st.lists(
                st.sampled_from(list(ENDING_STYLES.values())),
                min_size=len(bodies),
                max_size=len(bodies),
            )
        )
    else:
        endings = [ENDING_STYLES[style]] * len(bodies)
    if not draw(st.booleans()):  # no final newline
        endings[-1] = ""
    text = (BOM if draw(st.booleans()) else "") + "".join(
        b + e for b, e in zip(bodies, endings, strict=True)
    )
    return text, parse(text)


@st.composite
def contents(draw: st.DrawFn) -> tuple[str, tuple[str, ...]]:
    """An operation's content and the lines it must become."""
    new = draw(st.lists(content_line, min_size=1, max_size=4))
    sep = draw(st.sampled_from(["\n", "\r\n", "\r"]))
    trailing = draw(st.booleans()) or (len(new) > 1 and new[-1] == "")
    return sep.join(new) + (sep if trailing else ""), tuple(new)


@dataclass(frozen=True)
class Expected:
    """What one operation must do, by 0-based original positions (as `Splice`)."""

    start: int
    end: int
    new: tuple[str, ...]


def reference_edit(doc: Document, expected: Sequence[Expected]) -> str:
    """Apply splices by line numbers, bottom of the file first, on (body, ending, written)
    rows; then the two shapes that would not survive a re-parse are settled."""
    dominant = doc.dominant_ending
    rows = [(body, ending, False) for body, ending in zip(doc.lines, doc.endings, strict=True)]
    by_position = sorted(enumerate(expected), key=lambda p: (p[1].start, p[1].end, p[0]))
    for _, e in reversed(by_position):
        replaced_ending = doc.endings[e.end - 1] if e.end > e.start else ""
        rows[e.start : e.end] = [(body, replaced_ending or dominant, True) for body in e.new]
    endings = [ending or dominant for _, ending, _ in rows]  # a kept last line may gain one
    if rows and not doc.final_newline and rows[-1][0] != "":
        endings[-1] = ""  # an empty last line keeps its ending, or it would be no line
    for i in range(1, len(rows)):
        if endings[i - 1] == "\r" and rows[i][0] == "" and endings[i] == "\n":
            if rows[i - 1][2] and not rows[i][2]:
                endings[i - 1] = "\r\n"  # "\r" + "\n" would merge: one side changes
            else:
                endings[i] = "\r"
    out = [body + ending for (body, _, _), ending in zip(rows, endings, strict=True)]
    return (BOM if doc.bom else "") + "".join(out)


def copied(draw: st.DrawFn, a: LineAnchor) -> str:
    """The anchor in one of the forms an agent might copy from a rendered row."""
    mark = "~" if a.quality == "low" else ("?" if not a.unique else "")
    return draw(
        st.sampled_from(
            [a.anchor, a.anchor.upper(), f"{a.line}#{a.anchor}", f"{a.line}#{a.anchor}{mark}"]
        )
    )


@st.composite
def valid_batches(
    draw: st.DrawFn, doc: Document
) -> tuple[list[Operation], list[Expected], list[tuple[str, str]]]:
    """A random batch of non-overlapping operations, and what each must do."""
    index = AnchorIndex(doc.lines)
    anchors = index.anchors()
    n = len(doc.lines)

    def single_ok(line: int) -> bool:
        return anchors[line - 1].quality == "high"

    def endpoint_ok(line: int) -> bool:
        return anchors[line - 1].unique

    def occurrence(line: int) -> int | None:
        a = anchors[line - 1]
        return None if a.unique else index.line_matches(a.anchor).index(line) + 1

    items: list[tuple[Operation, Expected, tuple[str, str] | None]] = []
    ranges: list[tuple[int, int]] = []  # 0-based [start, end) of range splices
    line = 1
    while line <= n:
        kind = draw(st.sampled_from(["skip", "skip", "replace_line", "delete_line", "range"]))
        if kind in ("replace_line", "delete_line") and single_ok(line):
            h, occ = copied(draw, anchors[line - 1]), occurrence(line)
            if kind == "replace_line":
                text, new = draw(contents())
                items.append(
                    (
                        ReplaceLine(hash=h, content=text, occurrence=occ),
                        Expected(line - 1, line, new),
                        None,
                    )
                )
            else:
                items.append(
                    (DeleteLine(hash=h, occurrence=occ), Expected(line - 1, line, ()), None)
                )
            line += 1
            continue
        ends = [e for e in range(line + 1, min(n, line + 5) + 1) if endpoint_ok(e)]
        if kind == "range" and endpoint_ok(line) and ends:
            end = draw(st.sampled_from(ends))
            first, last = copied(draw, anchors[line - 1]), copied(draw, anchors[end - 1])
            swapped = draw(st.booleans())
            correction = None
            if swapped:
                first, last = last, first
                correction = (
                    "range_order_swapped",
                    f"start_line ({end}) was after end_line ({line}). Swapped automatically.",
                )
            if draw(st.booleans()):
                text, new = draw(contents())
                op: Operation = ReplaceRange(start_hash=first, end_hash=last, content=text)
            else:
                op, new = DeleteRange(start_hash=first, end_hash=last), ()
            items.append((op, Expected(line - 1, end, new), correction))
            ranges.append((line - 1, end))
            line = end + 1
            continue
        line += 1

    gaps = [
        (kind, t)
        for t in range(1, n + 1)
        if single_ok(t)
        for kind, gap in (("insert_after", t), ("insert_before", t - 1))
        if not any(s < gap < e for s, e in ranges)
    ]
    for _ in range(draw(st.integers(0, 3)) if gaps else 0):
        kind, t = draw(st.sampled_from(gaps))
        text, new = draw(contents())
        h, occ = copied(draw, anchors[t - 1]), occurrence(t)
        if kind == "insert_after":
            items.append(
                (InsertAfter(hash=h, content=text, occurrence=occ), Expected(t, t, new), None)
            )
        else:
            items.append(
                (
                    InsertBefore(hash=h, content=text, occurrence=occ),
                    Expected(t - 1, t - 1, new),
                    None,
                )
            )

    order = draw(st.permutations(range(len(items))))
    shuffled = [items[i] for i in order]
    return (
        [op for op, _, _ in shuffled],
        [e for _, e, _ in shuffled],
        [c for _, _, c in shuffled if c is not None],
    )


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_random_valid_batches_match_the_reference_implementation(data: st.DataObject) -> None:
    text, doc = data.draw(documents())
    operations, expected, corrections = data.draw(valid_batches(doc))
    plan = plan_edit(doc.lines, operations)
    edited = apply_plan(doc, plan)
    assert render(edited) == reference_edit(doc, expected)
    assert parse(render(edited)) == edited  # what is reported is what is written
    assert sorted(plan.auto_corrections) == sorted(corrections)
    assert plan.warnings == ()
    assert render(doc) == text


def test_reference_implementation_agrees_with_a_hand_worked_example() -> None:
    doc = parse("a = 1\r\nb = 2\r\nc = 3")
    expected = [Expected(1, 2, ("B",)), Expected(3, 3, ("d",)), Expected(0, 0, ("z",))]
    assert reference_edit(doc, expected) == "z\r\na = 1\r\nB\r\nc = 3\r\nd"


# --- property: an invalid anchor rejects the whole batch, leaving the input alone ---------


@st.composite
def stale_operations(
    draw: st.DrawFn, index: AnchorIndex, anchors: Sequence[LineAnchor]
) -> tuple[Operation, str]:
    bad = draw(st.text("0123456789abcdef", min_size=6, max_size=8))
    assume(index.match(bad).level == "none")
    kind = draw(
        st.sampled_from(["replace_line", "delete_line", "insert_after", "insert_before", "range"])
    )
    if kind == "replace_line":
        return ReplaceLine(hash=bad, content="x"), bad
    if kind == "delete_line":
        return DeleteLine(hash=bad), bad
    if kind == "insert_after":
        return InsertAfter(hash=bad, content="x"), bad
    if kind == "insert_before":
        return InsertBefore(hash=bad, content="x"), bad
    uniques = [a.anchor for a in anchors if a.unique]
    other = draw(st.sampled_from(uniques)) if uniques else bad
    if draw(st.booleans()):
        return ReplaceRange(start_hash=bad, end_hash=other, content="x"), bad
    return DeleteRange(start_hash=other, end_hash=bad), bad


def mentioned_anchors(error: ToolError) -> set[str]:
    problems = error.details.get("problems", [error.details])
    return {error.details["anchor"]} | {p["anchor"] for p in problems}


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_a_batch_with_an_unknown_anchor_is_rejected_whole_and_touches_nothing(
    data: st.DataObject,
) -> None:
    text, doc = data.draw(documents())
    index = AnchorIndex(doc.lines)
    anchors = index.anchors()
    operations, _, _ = data.draw(valid_batches(doc))
    stale = data.draw(st.lists(stale_operations(index, anchors), min_size=1, max_size=3))
    for op, _ in stale:
        operations.insert(data.draw(st.integers(0, len(operations))), op)

    outcome: Document | EditPlan | None = None
    with pytest.raises(ToolError) as caught:
        outcome = apply_plan(doc, plan_edit(doc.lines, operations))
    assert outcome is None
    error = caught.value
    assert error.code is ErrorCode.ANCHOR_STALE
    assert error.suggested_action == "re-read_file" and "read_file" in error.hint
    assert {bad for _, bad in stale} <= mentioned_anchors(error)
    assert render(doc) == text
    assert doc == parse(text)


# --- every line of a big, repetitive file can be targeted by its shown anchor --------------


def big_repetitive_file() -> list[str]:
    """10,000 lines: every third from a pool of 50 (boilerplate), twins with distinct and
    with identical neighbours, and 6-hex colliding pairs; the rest distinctive."""
    pool = ["", "}", "},", "    pass", "    return None", "end", "])", "*/"]
    pool += [f"    self.field_{k} = None" for k in range(50 - len(pool))]
    lines = [pool[(i // 3) % 50] if i % 3 == 0 else f"value_{i} = {i}" for i in range(10_000)]
    for k in range(20):
        block = [f"before_twin_{k}()", f"twin_{k} = shared", f"after_twin_{k}()"]
        for base in (50 + k * 480, 250 + k * 480):
            lines[base : base + 3] = block  # identical neighbours: needs an occurrence
        lines[400 + k * 480] = lines[440 + k * 480] = f"context_twin_{k} = 1"  # context anchors
    for j, (first, second) in enumerate(colliding_groups(6, 2, 10)):
        lines[9_600 + j * 40] = first
        lines[9_620 + j * 40] = second
    return lines


def test_every_line_of_a_big_repetitive_file_is_reachable_by_its_shown_anchor() -> None:
    lines = big_repetitive_file()
    index = AnchorIndex(lines)
    anchors = index.anchors()
    kinds = {
        "context": sum(a.kind == "context" for a in anchors),
        "needs occurrence": sum(not a.unique for a in anchors),
        "eight hex": sum(len(a.anchor) == 8 for a in anchors),
        "low": sum(a.quality == "low" for a in anchors),
    }
    assert kinds["context"] >= 40 + 3000
    assert kinds["needs occurrence"] == 40
    assert kinds["eight hex"] >= 20
    assert kinds["low"] >= 3000

    for a in anchors:
        n = a.line
        line_level = index.line_matches(a.anchor)
        if a.unique:
            assert index.match(a.anchor).candidates == (n,), n
        else:
            assert index.match(a.anchor).level == "line", n
            assert n in line_level, n
        if classify_quality(lines[n - 1], 1) == "low":
            continue  # blank or punctuation: never a single-line target
        occurrence = None if a.unique else line_level.index(n) + 1
        plan = plan_edit(
            lines,
            [ReplaceLine(hash=a.anchor, content="x", occurrence=occurrence)],
            index=index,
            anchors=anchors,
        )
        (splice,) = plan.splices
        assert (splice.start, splice.end) == (n - 1, n), n


def test_low_quality_lines_of_a_big_file_are_refused_but_work_as_range_endpoints() -> None:
    lines = big_repetitive_file()
    index = AnchorIndex(lines)
    anchors = index.anchors()
    low = [a for a in anchors if classify_quality(lines[a.line - 1], 1) == "low"][::13]
    assert len(low) > 20
    for a in low:
        with pytest.raises(ToolError) as caught:
            plan_edit(lines, [DeleteLine(hash=a.anchor)], index=index, anchors=anchors)
        assert caught.value.code is ErrorCode.ANCHOR_LOW_ENTROPY
        assert caught.value.details["line"] == a.line
        neighbour = next(b for b in anchors[a.line :] if b.unique and b.quality == "high")
        plan = plan_edit(
            lines,
            [DeleteRange(start_hash=a.anchor, end_hash=neighbour.anchor)],
            index=index,
            anchors=anchors,
        )
        assert plan.splices == (
            Splice(
                0,
                "delete_range",
                a.line - 1,
                neighbour.line,
                (),
                tuple(range(a.line, neighbour.line + 1)),
            ),
        )


# --- what is reported is what is written: shapes that would not survive a re-parse -------


def edited(text: str, *operations: Operation) -> Document:
    doc = parse(text)
    result = apply_plan(doc, plan_edit(doc.lines, list(operations)))
    assert parse(render(result)) == result
    return result


def test_an_empty_last_line_in_a_file_without_final_newline_keeps_an_ending() -> None:
    doc = parse("alpha = 1\nbeta = 2\ngamma = 3")
    gamma = AnchorIndex(doc.lines).anchors()[2].anchor
    result = edited(render(doc), ReplaceLine(hash=gamma, content=""))
    assert result.line_count == 3
    assert render(result) == "alpha = 1\nbeta = 2\n\n"


def test_an_empty_line_inserted_after_a_bare_cr_does_not_merge_into_crlf() -> None:
    doc = parse("one = 1\ntwo = 2\rthree = 3\nfour = 4\n")
    two = AnchorIndex(doc.lines).anchors()[1].anchor
    result = edited(render(doc), InsertAfter(hash=two, content=""))
    assert result.lines == ("one = 1", "two = 2", "", "three = 3", "four = 4")
    assert result.endings[1] == "\r"  # the old line's bytes are kept


def test_a_deletion_that_joins_a_bare_cr_and_an_empty_lf_line_keeps_both() -> None:
    doc = parse("a = 1\rb = 2\n\nc = 3\n")
    b = AnchorIndex(doc.lines).anchors()[1].anchor
    result = edited(render(doc), DeleteLine(hash=b))
    assert result.lines == ("a = 1", "", "c = 3")


def test_a_written_line_ending_in_bare_cr_before_an_old_empty_line_takes_crlf() -> None:
    doc = parse("a = 1\rb = 2\r\n\nc = 3\r")  # "\r" is the file's most common ending
    assert doc.dominant_ending == "\r" and doc.lines[2] == ""
    c = AnchorIndex(doc.lines).anchors()[3].anchor
    result = edited(render(doc), InsertBefore(hash=c, content="x = 0", line=4))
    assert result.lines == ("a = 1", "b = 2", "", "x = 0", "c = 3")
    empty = AnchorIndex(doc.lines).anchors()[1].anchor  # insert right before the empty line
    result = edited(render(doc), InsertAfter(hash=empty, content="n = 9"))
    assert result.lines == ("a = 1", "b = 2", "n = 9", "", "c = 3")
    assert result.endings[2:4] == ("\r\n", "\n")  # the old empty line keeps its bytes


@pytest.mark.parametrize(
    ("content", "lines"),
    [
        ("\ufeffx = 1", ("\ufeffx = 1",)),
        ("\ufeffx = 1\ny = 2\n", ("\ufeffx = 1", "y = 2")),
        ("\ufeff", ("\ufeff",)),
        ("\ufeff\n", ("\ufeff",)),
    ],
)
def test_a_leading_bom_in_new_content_is_kept_as_text_of_the_first_line(
    content: str, lines: tuple[str, ...]
) -> None:
    assert content_lines(content) == lines
