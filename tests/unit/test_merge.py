"""Carrying a write over an outside change it met: the pure three-way merge."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from editjournal.daemon.text.merge import carry_over


def test_changes_to_different_lines_both_survive_and_theirs_are_marked_unseen():
    carried = carry_over(b"a\nb\nc\n", b"A\nb\nc\n", b"a\nb\nc\nd\n")
    assert carried is not None
    assert carried.data == b"A\nb\nc\nd\n"
    assert carried.theirs == [(4, 4)]


def test_changes_to_the_same_line_conflict():
    assert carry_over(b"a\nb\n", b"A\nb\n", b"a2\nb\n") is None


def test_both_appending_keeps_theirs_first_then_ours():
    carried = carry_over(b"a\n", b"a\nours\n", b"a\ntheirs\n")
    assert carried is not None and carried.data == b"a\ntheirs\nours\n"
    assert carried.theirs == [(2, 2)]


def test_an_unfinished_last_line_of_theirs_is_not_glued_to_ours():
    assert carry_over(b"a\n", b"a\nours\n", b"a\ntheir") is None


def test_line_endings_and_a_missing_final_newline_survive_byte_for_byte():
    carried = carry_over(b"a\r\nb\r\nc", b"A\r\nb\r\nc", b"a\r\nb\r\nC")
    assert carried is not None and carried.data == b"A\r\nb\r\nC"


def test_creation_and_removal_conflict_unless_the_other_side_agrees():
    assert carry_over(None, b"x\n", b"y\n") is None  # created twice
    assert carry_over(b"a\n", None, b"a\nb\n") is None  # removed here, changed there
    assert carry_over(b"a\n", b"a\nb\n", None) is None  # changed here, removed there
    same = carry_over(None, b"x\n", b"x\n")
    assert same is not None and same.data == b"x\n"


lines = st.lists(st.sampled_from(["x\n", "y\n", "z\n", "w\n"]), max_size=8)


@given(base=lines, ours_top=lines, theirs_tail=lines)
def test_a_change_at_the_top_and_one_at_the_bottom_always_both_survive(
    base: list[str], ours_top: list[str], theirs_tail: list[str]
) -> None:
    anchor = ["ANCHOR\n"]  # a line both keep between the two changes
    old = "".join(anchor + base + anchor).encode()
    ours = "".join(ours_top + anchor + base + anchor).encode()
    theirs = "".join(anchor + base + anchor + theirs_tail).encode()
    carried = carry_over(old, ours, theirs)
    assert carried is not None
    assert carried.data == "".join(ours_top + anchor + base + anchor + theirs_tail).encode()


def test_lines_appended_by_theirs_follow_any_change_of_ours():
    carried = carry_over(b"a\nb\n", b"A\n", b"a\nb\nc\nd\n")
    assert carried is not None and carried.data == b"A\nc\nd\n"
    assert carried.theirs == [(2, 3)]
