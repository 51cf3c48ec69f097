"""`rebase.ambiguous_seams`: a change beside an identical line, carried over others' edits."""

from __future__ import annotations

from editjournal.daemon.text.edit import EditPlan, Splice
from editjournal.daemon.text.rebase import ambiguous_seams

LINES = ["import os", "", "# pyright: strict", "", "def main():"]
# the pragma and the blank below it removed (the narrowing's choice; the blank above
# would make the same content)
REMOVAL = EditPlan((Splice(0, "edit_file", 2, 4, (), (3, 4)),))


def test_a_seam_whose_other_alignment_relies_on_a_changed_line_is_ambiguous() -> None:
    [span] = ambiguous_seams(REMOVAL, LINES, [0, None, 2, 3, 4])  # the blank above changed
    assert (span.operation, span.lines) == (1, (2, 3))


def test_a_seam_nobody_touched_is_not_ambiguous() -> None:
    assert ambiguous_seams(REMOVAL, LINES, [0, 1, 2, 3, 4]) == []
    assert ambiguous_seams(REMOVAL, LINES, [0, 1, 2, 3, None]) == []  # far enough


def test_lines_written_between_the_twins_make_it_ambiguous() -> None:
    [span] = ambiguous_seams(REMOVAL, LINES, [0, 1, 3, 4, 5])  # one line came after line 2
    assert span.lines == (2, 3)  # the other alignment's range now has a line inside it


def test_a_change_with_no_identical_neighbour_never_is() -> None:
    plan = EditPlan((Splice(0, "edit_file", 2, 3, ("# pyright: basic",), (3,)),))
    assert ambiguous_seams(plan, LINES, [0, None, 2, 3, 4]) == []
