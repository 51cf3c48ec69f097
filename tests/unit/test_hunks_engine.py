"""The pure planning of prepared hunks (daemon.text.hunks): places, styles, normalisation."""

from __future__ import annotations

import pytest

from editjournal.daemon.text.anchors import anchor_lines as anchors_of
from editjournal.daemon.text.hunks import (
    append_found,
    blankline_style,
    block_found,
    content_lines,
    insert_found,
    looks_like_diff,
    normalization,
    range_found,
    spliced,
    unified,
)
from editjournal.daemon.text.lines import parse
from editjournal.schemas.errors import ErrorCode, ToolError

DOC = parse("def f():\n    return 1\n\n\ndef g():\n    return 2\n")


def code(call) -> ErrorCode:
    with pytest.raises(ToolError) as caught:
        call()
    return caught.value.code


@pytest.mark.parametrize(
    ("anchor", "match", "line"),
    [
        ("def g", "contains", 5),
        ("def g():", "exact", 5),
        (r"^def g\(", "regex", 5),
        ("    return 2", "exact", 6),
    ],
)
def test_insert_after_and_before_find_the_anchor_line(anchor: str, match: str, line: int):
    after = insert_found(DOC, anchor, match, None, "x\n", after=True)
    before = insert_found(DOC, anchor, match, None, "x\n", after=False)
    assert (after.first, after.splice.start) == (line, line)
    assert (before.first, before.splice.start) == (line, line - 1)
    assert spliced(DOC.lines, after.splice)[line] == "x"
    assert spliced(DOC.lines, before.splice)[line - 1] == "x"


def test_exact_does_not_match_part_of_a_line():
    assert code(lambda: insert_found(DOC, "def g", "exact", None, "x", True)) is ErrorCode.NO_MATCH


def test_several_matches_need_an_occurrence():
    with pytest.raises(ToolError) as error:
        insert_found(DOC, "return", "contains", None, "x", True)
    assert error.value.code is ErrorCode.MULTIPLE_MATCHES and error.value.details["lines"] == [2, 6]
    assert insert_found(DOC, "return", "contains", 2, "x", True).first == 6
    assert code(lambda: insert_found(DOC, "return", "contains", 3, "x", True)) is ErrorCode.NO_MATCH


def test_a_line_anchor_is_resolved_like_edit():
    anchor = anchors_of(DOC.lines)[4].hash[:6]
    found = insert_found(DOC, f"5#{anchor}", "contains", None, "x", after=True)
    assert found.first == 5


def test_a_bad_regex_is_invalid_params():
    assert (
        code(lambda: insert_found(DOC, "(", "regex", None, "x", True)) is ErrorCode.INVALID_PARAMS
    )


def test_block_replace_with_occurrences():
    found = block_found(DOC, "    return", "    yield", 2)
    assert (found.first, found.last, found.occurrences) == (6, 6, 2)
    assert spliced(DOC.lines, found.splice)[5] == "    yield 2"
    with pytest.raises(ToolError) as error:
        block_found(DOC, "    return", "x", None)
    assert error.value.code is ErrorCode.MULTIPLE_MATCHES
    whole = block_found(DOC, "def f():\n    return 1\n", "def f():\n    return 10\n", None)
    assert (whole.first, whole.last) == (1, 2)


def test_range_must_lie_within_the_file():
    assert range_found(DOC, 2, 2, "").splice.new_lines == ()  # "" deletes the range
    assert code(lambda: range_found(DOC, 6, 7, "x")) is ErrorCode.INVALID_RANGE
    assert code(lambda: range_found(DOC, 3, 2, "x")) is ErrorCode.INVALID_RANGE


def test_blank_line_style_flags_double_blank_lines():
    between = insert_found(DOC, "    return 1", "exact", None, "\nh = 1\n\n", True)
    style = blankline_style(DOC.lines, between.splice)
    assert (style.above, style.below) == (1, 3)
    assert style.warning is not None and "3 blank lines below" in style.warning
    kept = insert_found(DOC, "def g", "contains", None, "# g\n", False)  # the file's own two
    kept_style = blankline_style(DOC.lines, kept.splice)
    assert (kept_style.above, kept_style.below, kept_style.warning) == (2, 0, None)
    end = append_found(DOC, "\n\nx\n")
    assert "above" in (blankline_style(DOC.lines, end.splice).warning or "")


def test_eof_newline_normalisation_is_reported():
    raw = parse("a\nb")
    assert normalization(raw, "c") == normalization(raw, "c")
    assert normalization(raw, "c").file_eof_newline_added
    assert normalization(raw, "c").content_eof_newline_added
    assert not normalization(DOC, "c\n").file_eof_newline_added
    assert not normalization(DOC, "c\r\n").content_eof_newline_added
    assert content_lines("a\r\nb\r\n") == ("a", "b") and content_lines("") == ()


@pytest.mark.parametrize(
    "text",
    [
        "--- a/x.py\n+++ b/x.py\n",
        "@@ -1,2 +1,3 @@\n a\n",
        "diff --git a/x b/x\n",
        "*** Begin Patch\n*** Update File: x\n",
    ],
)
def test_diff_looking_content_is_detected(text: str):
    assert looks_like_diff(text) is not None


@pytest.mark.parametrize(
    "text", ["- a list item\n+ another\n", "--- \ntitle\n", "a -- b ++ c\n", "# @@ not a hunk\n"]
)
def test_ordinary_text_is_not_a_diff(text: str):
    assert looks_like_diff(text) is None


def test_unified_diff_of_a_plan():
    found = append_found(DOC, "h\n")
    diff = unified("m.py", DOC.lines, spliced(DOC.lines, found.splice))
    assert diff.startswith("--- a/m.py\n+++ b/m.py\n@@ -4,3 +4,4 @@\n")
    assert diff.endswith("+h\n")
    assert unified("m.py", DOC.lines, DOC.lines) == ""
