"""Identical lines (issue 39): how they are marked, and how the line number given with
their shared anchor picks one. Pure: strings, indexes and line maps, no daemon.

An anchor names identical twins (a blank run, a closing brace between the same
neighbours) alike; the number copied with it (`7#2d0680`) says which one in the
numbering the agent holds. The handler hands the engine that numbering and a map
to the version planned in; here the maps are written out by hand.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from editjournal.daemon.text.anchors import (
    AnchorIndex,
    Numbering,
    anchor_lines,
    meant_line,
    render_rows,
)
from editjournal.daemon.text.edit import Pick, plan_edit
from editjournal.daemon.text.linehashes import line_hash
from editjournal.schemas.anchorrows import SHOWN, rendered_rows
from editjournal.schemas.errors import ErrorCode, ToolError
from editjournal.schemas.tools import DeleteRange, ReplaceLine, ReplaceRange

BLANK = line_hash("")[:6]
# blank lines 6, 7, 8 between the same neighbours: one anchor, one context, three lines
READ = ("int f() {", "  a();", "}", "int g() {", "}", "", "", "", "int h() {", "}")
ABOVE = ("// one", "// two", "// three")  # what another agent inserted at the top since
NOW = ABOVE + READ
SHIFTED = [n + len(ABOVE) for n in range(len(READ))]  # READ's lines in NOW (0-based)


def same_numbering(lines: Sequence[str]) -> Pick:
    """The agent's numbers are those of the version planned in."""
    here = Numbering(AnchorIndex(lines), range(len(lines)))
    return lambda anchor, line, candidates: meant_line(anchor, line, candidates, here)


def refused(lines: Sequence[str], op: object, pick: Pick | None) -> ToolError:
    with pytest.raises(ToolError) as caught:
        plan_edit(lines, [op], pick=pick)  # type: ignore[list-item]
    return caught.value


# --- the mark ---------------------------------------------------------------------------


def test_blank_twins_are_marked_question_mark_not_tilde() -> None:
    rows = render_rows(anchor_lines(READ), READ).splitlines()
    assert rows[5:8] == [f"6#{BLANK}?|", f"7#{BLANK}?|", f"8#{BLANK}?|"]
    assert rows[4].endswith("~|}")  # a unique closing brace stays merely low


def test_every_rendering_of_a_low_twin_shows_the_same_mark() -> None:
    index = AnchorIndex(READ)
    assert index.marks()[5:8] == "!!!"  # the wire keeps kind and quality apart
    assert SHOWN["!"] == "?"
    client = rendered_rows(1, index.anchor_strings, index.marks(), list(READ))
    assert client == index.render(1, len(READ)) == render_rows(anchor_lines(READ), READ)


# --- the engine: the number picks among twins ----------------------------------------------


def test_a_range_between_blank_twins_resolves_by_its_line_numbers() -> None:
    op = DeleteRange(start_hash=f"7#{BLANK}", end_hash=f"8#{BLANK}")
    plan = plan_edit(READ, [op], pick=same_numbering(READ))
    assert [(s.start, s.end) for s in plan.splices] == [(6, 8)]


def test_without_a_numbering_a_shared_anchor_stays_ambiguous() -> None:
    op = DeleteRange(start_hash=f"7#{BLANK}", end_hash=f"8#{BLANK}")
    error = refused(READ, op, None)  # an agent that never read the file
    assert error.code is ErrorCode.ANCHOR_CONTEXT_AMBIGUOUS
    assert [c["line"] for c in error.details["candidates"]] == [6, 7, 8]


def test_a_number_that_is_no_twin_singles_none_out() -> None:
    op = DeleteRange(start_hash=f"9#{BLANK}", end_hash="10#" + line_hash("}")[:6])
    error = refused(READ, op, same_numbering(READ))
    assert error.code is ErrorCode.ANCHOR_CONTEXT_AMBIGUOUS
    assert "line 9 does not single one out" in error.message


def test_a_high_twin_picked_by_its_number_may_be_a_single_line_target() -> None:
    lines = ["same()", "repeated_line = 1", "same()", "repeated_line = 1", "same()"]
    op = ReplaceLine(hash="4#" + line_hash("repeated_line = 1")[:6], content="x = 2")
    plan = plan_edit(lines, [op], pick=same_numbering(lines))
    assert [(s.start, s.end, s.new_lines) for s in plan.splices] == [(3, 4, ("x = 2",))]


def test_a_blank_twin_picked_by_its_number_is_still_no_single_line_target() -> None:
    op = ReplaceLine(hash=f"7#{BLANK}", content="x = 2")
    error = refused(READ, op, same_numbering(READ))
    assert error.code is ErrorCode.ANCHOR_LOW_ENTROPY
    assert error.details["line"] == 7


# --- meant_line: numbers in the agent's numbering, followed to the version planned in ------


def test_a_number_from_the_read_follows_its_line_after_lines_were_inserted_above() -> None:
    # planned in the file now (the agent's snapshot after a write of its own), where
    # lines 6-8 are no blanks: only the read's numbering names them
    read = Numbering(AnchorIndex(READ), SHIFTED)
    now = Numbering(AnchorIndex(NOW), range(len(NOW)))
    twins = (9, 10, 11)  # the blanks in NOW
    assert [meant_line(BLANK, n, twins, now, [read]) for n in (6, 7, 8)] == [9, 10, 11]
    # planned in the read itself, the number is its own line (the writing path carries it)
    assert meant_line(BLANK, 7, (6, 7, 8), read) == 7


def test_a_number_whose_line_was_replaced_since_refuses() -> None:
    changed = (*READ[:6], "x = 1", *READ[7:])  # line 7 of the read is no blank any more
    to_changed = [None if n == 6 else n for n in range(len(READ))]
    read = Numbering(AnchorIndex(READ), to_changed)
    now = Numbering(AnchorIndex(changed), range(len(changed)))
    assert meant_line(BLANK, 7, (6, 8), now, [read]) is None  # planned in the file now
    # planned in the read, the line is its own: carrying the edit refuses it as stale
    assert meant_line(BLANK, 7, (6, 7, 8), read) == 7


def test_numberings_that_disagree_single_none_out() -> None:
    # the agent's own edit's reply numbered the file as it is now; its read did not
    now_lines = ("", "", *READ)  # line 8 is a blank twin in both, but not the same one
    read = Numbering(AnchorIndex(READ), [n + 2 for n in range(len(READ))])
    now = Numbering(AnchorIndex(now_lines), range(len(now_lines)))
    twins = tuple(n for n, text in enumerate(now_lines, 1) if text == "")
    assert meant_line(BLANK, 8, twins, now, [read]) is None
    assert meant_line(BLANK, 8, twins, now) == 8  # either numbering alone would pick
    assert meant_line(BLANK, 8, (6, 7, 8), read) == 8


def test_other_numberings_are_asked_only_when_needed() -> None:
    def never() -> list[Numbering]:
        raise AssertionError("asked")

    here = Numbering(AnchorIndex(READ), range(len(READ)))
    assert meant_line(BLANK, 7, (6, 7, 8), here, iter([here])) == 7
    with pytest.raises(AssertionError, match="asked"):
        meant_line(BLANK, 7, (6, 7, 8), here, never())


def test_names_is_false_beyond_the_file_and_for_other_lines() -> None:
    index = AnchorIndex(READ)
    assert index.names(7, BLANK) and not index.names(4, BLANK)
    assert not index.names(0, BLANK) and not index.names(len(READ) + 1, BLANK)


def test_range_endpoints_both_picked_by_the_read_numbering_in_the_shifted_file() -> None:
    read = Numbering(AnchorIndex(READ), SHIFTED)
    now = Numbering(AnchorIndex(NOW), range(len(NOW)))

    def pick(anchor: str, line: int, candidates: tuple[int, ...]) -> int | None:
        return meant_line(anchor, line, candidates, now, [read])

    op = ReplaceRange(start_hash=f"7#{BLANK}", end_hash=f"8#{BLANK}", content="x = 1")
    plan = plan_edit(NOW, [op], pick=pick)
    assert [(s.start, s.end) for s in plan.splices] == [(9, 11)]
