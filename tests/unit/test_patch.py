"""The pure patch engine: parsing, locating hunks by their text, planning, strict check."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from editjournal.daemon.text.edit import apply_plan
from editjournal.daemon.text.lines import parse, render
from editjournal.daemon.text.patch import (
    context_lines,
    final_newline,
    locate,
    parse_patch,
    to_plan,
    verify,
    with_final_newline,
)
from editjournal.daemon.text.rebase import line_map, map_plan
from editjournal.schemas.errors import ErrorCode, ToolError
from tests.patch_support import shifted, unified

TEXT = "".join(f"line {n}\n" for n in range(1, 21))


def apply(text: str, diff: str) -> str:
    """What the daemon writes, without the daemon: locate, splice, final newline, check."""
    doc = parse(text)
    placed = locate(doc.lines, parse_patch(diff))
    wanted = final_newline(placed, doc.line_count)
    new = apply_plan(doc, to_plan(placed))
    new = new if wanted is None else with_final_newline(new, wanted, doc.dominant_ending)
    verify(placed, new.lines, wanted, new.final_newline)
    return render(new)


def refused(code: ErrorCode, text: str, diff: str) -> ToolError:
    with pytest.raises(ToolError) as info:
        apply(text, diff)
    assert info.value.code is code, info.value
    return info.value


def test_a_correct_diff_applies():
    new = TEXT.replace("line 5\n", "line five\n")
    assert apply(TEXT, unified(TEXT, new)) == new


def test_wrong_line_numbers_with_right_context_are_relocated():
    new = TEXT.replace("line 15\n", "line fifteen\n").replace("line 3\n", "")
    diff = shifted(unified(TEXT, new), 4)
    assert apply(TEXT, diff) == new
    placed = locate(parse(TEXT).lines, parse_patch(diff))
    assert [(p.start, p.offset) for p in placed] == [(0, -4), (11, -4)]


def test_a_repeated_block_takes_the_occurrence_nearest_the_stated_line():
    text = "x = 1\ny = 2\n" * 5
    diff = "@@ -7,2 +7,2 @@\n x = 1\n-y = 2\n+y = 3\n"
    assert apply(text, diff) == "x = 1\ny = 2\n" * 3 + "x = 1\ny = 3\n" + "x = 1\ny = 2\n"


def test_a_hunk_that_matches_nowhere_names_its_first_wrong_row():
    diff = "@@ -4,3 +4,3 @@\n line 4\n-line 5 (sic)\n+line 5!\n line 6\n"
    error = refused(ErrorCode.INVALID_DIFF, TEXT, diff)
    assert error.message.startswith("Invalid Diff: The provided diff content does not match")
    assert error.details["hunk"] == 1 and error.details["row"] == 2
    assert error.details["expected"] == "line 5 (sic)" and error.details["found"] == "line 5"
    assert error.details["at_line"] == 5


def test_hunks_out_of_order_or_overlapping_are_invalid():
    diff = "@@ -10,1 +10,1 @@\n-line 10\n+ten\n@@ -9,2 +9,2 @@\n line 9\n-line 10\n+TEN\n"
    error = refused(ErrorCode.INVALID_DIFF, TEXT, diff)
    assert "overlaps" in error.message and error.details["hunk"] == 2


def test_miscounted_headers_are_recounted_with_a_warning():
    diff = "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n line 1\n-line 2\n+two\n line 3\n line 4\n"
    patch = parse_patch(diff)
    assert len(patch.hunks[0].old) == 4  # unidiff alone would stop after "+two"
    assert patch.warnings and "body was used" in patch.warnings[0]
    assert apply(TEXT, diff) == TEXT.replace("line 2\n", "two\n")


def test_unparseable_and_multi_file_diffs_are_invalid():
    assert "no hunks" in refused(ErrorCode.INVALID_DIFF, TEXT, "just words\n").message
    two = unified("a\n", "b\n", "x") + unified("a\n", "b\n", "y")
    assert "2 files" in refused(ErrorCode.INVALID_DIFF, TEXT, two).message


def test_no_newline_markers_add_and_remove_the_final_newline():
    assert apply("a\nb", unified("a\nb", "a\nb\n")) == "a\nb\n"
    assert apply("a\nb\n", unified("a\nb\n", "a\nc")) == "a\nc"
    assert apply("a\nb", unified("a\nb", "a\n")) == "a\n"


def test_crlf_file_keeps_its_endings_with_an_lf_diff():
    text = "one\r\ntwo\r\nthree\r\n"
    diff = "@@ -1,3 +1,4 @@\n one\n-two\n+2\n+2.5\n three\n"
    assert apply(text, diff) == "one\r\n2\r\n2.5\r\nthree\r\n"


def test_a_diff_no_text_can_satisfy_fails_the_strict_check():
    # the new side ends in an empty line "without a newline": that is no line at all
    diff = "@@ -1,1 +1,2 @@\n a\n+\n\\ No newline at end of file\n"
    error = refused(ErrorCode.PATCH_FAILED, "a\n", diff)
    assert error.message.startswith("Internal Error: The corrected patch failed to apply.")


def test_the_strict_check_refuses_a_result_without_the_hunks_new_lines():
    placed = locate(parse(TEXT).lines, parse_patch(unified(TEXT, TEXT.replace("line 9", "9"))))
    with pytest.raises(ToolError) as info:
        verify(placed, parse(TEXT).lines, None, True)  # the unchanged text: not applied
    assert info.value.code is ErrorCode.PATCH_FAILED and info.value.details["hunk"] == 1


def test_creation_from_dev_null_and_deletion_to_dev_null_are_recognised():
    created = parse_patch(unified("", "x\ny\n").replace("a/f", "/dev/null"))
    assert created.creates and apply("", unified("", "x\ny\n")) == "x\ny\n"
    deleted = parse_patch(unified("x\n", "").replace("b/f", "/dev/null"))
    assert deleted.deletes


def test_a_hunk_relies_on_the_lines_it_changes_its_context_only_finds_the_place():
    base = parse(TEXT).lines
    patch = parse_patch(unified(TEXT, TEXT.replace("line 5\n", "five\n")))
    placed = locate(base, patch)
    assert context_lines(placed) == (2, 3, 4, 6, 7, 8)
    above = parse("new first\n" + TEXT).lines
    moved, broken = map_plan(to_plan(placed), line_map(base, above))
    assert not broken and moved.splices[0].start == 5  # line 5 is now line 6 (0-based 5)
    context_changed = parse(TEXT.replace("line 6\n", "six\n")).lines
    moved, broken = map_plan(to_plan(placed), line_map(base, context_changed))
    assert not broken and moved.splices[0].start == 4
    touched = parse(TEXT.replace("line 5\n", "FIVE\n")).lines
    _, broken = map_plan(to_plan(placed), line_map(base, touched))
    assert broken[0].lines == (5,)


def test_an_added_line_goes_between_its_neighbours_or_beside_the_one_left():
    base = parse(TEXT).lines
    patch = parse_patch(unified(TEXT, TEXT.replace("line 5\n", "line 5\nadded\n")))
    plan = to_plan(locate(base, patch))
    [splice] = plan.splices
    assert (splice.start, splice.end, splice.targets) == (5, 5, ())
    above_changed = parse(TEXT.replace("line 5\n", "five\n")).lines
    moved, broken = map_plan(plan, line_map(base, above_changed))
    assert not broken and moved.splices[0].start == 5  # after "five", before "line 6"
    both_changed = parse(TEXT.replace("line 5\nline 6\n", "five\nsix\n")).lines
    _, broken = map_plan(plan, line_map(base, both_changed))
    assert broken[0].lines == (5, 6)
    filled = parse(TEXT.replace("line 5\n", "line 5\ntheirs\n")).lines
    _, broken = map_plan(plan, line_map(base, filled))  # which side of theirs? refused
    assert broken[0].lines == (5, 6)


LINES = st.sampled_from(["a", "b", "c", "x = 1", "", "  y", "}"])
WORDS = st.from_regex(r"[a-z]{1,8}", fullmatch=True)


@st.composite
def pairs(draw: st.DrawFn, lines: st.SearchStrategy[str], unique: bool = False) -> tuple[str, str]:
    """Texts A and B with one line ending (a file keeps its own: the engine never
    changes endings), B being A's lines in another arrangement."""
    sep = draw(st.sampled_from(["\n", "\r\n"]))
    a_lines = draw(st.lists(lines, max_size=30, unique=unique))
    b_lines = draw(st.lists(lines, max_size=30))
    a = sep.join(a_lines) + (sep if draw(st.booleans()) and a_lines else "")
    b = sep.join(b_lines) + (sep if draw(st.booleans()) and b_lines else "")
    return a, b


def fits(a: str, b: str) -> bool:
    """Lines a diff adds take the file's ending: "\n" when A has none at all."""
    return a != b and ("\r\n" not in b or "\n" in a)


@settings(max_examples=300, deadline=None)
@given(texts=pairs(LINES), context=st.integers(0, 4))
def test_any_diff_of_a_to_b_applied_to_a_gives_b(texts: tuple[str, str], context: int):
    a, b = texts
    if fits(a, b):
        assert apply(a, unified(a, b, context=context)) == b


@settings(max_examples=200, deadline=None)
@given(texts=pairs(WORDS, unique=True), offset=st.integers(-40, 40))
def test_shifted_headers_still_give_b_when_blocks_are_unique(texts: tuple[str, str], offset: int):
    a, b = texts
    if a and fits(a, b):
        assert apply(a, shifted(unified(a, b), offset)) == b
