"""The pure plans behind restore and undo (`daemon.text.revert`)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from editjournal.daemon.text.edit import EditPlan, apply_plan
from editjournal.daemon.text.lines import Document
from editjournal.daemon.text.rebase import exact_map, line_map
from editjournal.daemon.text.revert import diff_plan, refined, revert_plan

small_lines = st.lists(st.sampled_from(["a", "b", "c", "", "}", "x = 1"]), max_size=12)


def doc(lines: list[str] | tuple[str, ...]) -> Document:
    return Document(tuple(lines), tuple("\n" for _ in lines))


def changes_of(plan: EditPlan) -> list[tuple[int, int, int]]:
    return [(s.start, s.end, len(s.new_lines)) for s in plan.splices]


@given(small_lines, small_lines)
def test_diff_plan_turns_old_into_new(old: list[str], new: list[str]):
    assert apply_plan(doc(old), diff_plan(old, new, "restore")).lines == tuple(new)


@given(small_lines, small_lines)
def test_undo_with_nothing_since_gives_back_the_lines_before(before: list[str], after: list[str]):
    changes = refined(before, after, changes_of(diff_plan(before, after, "w")))
    identity = list(range(len(after)))
    revert = revert_plan(before, len(after), changes, identity, len(after))
    assert revert.broken == []
    assert apply_plan(doc(after), revert.plan).lines == tuple(before)


def test_refined_narrows_a_whole_file_write_to_the_lines_that_differ():
    before, after = ["a", "b", "c", "d"], ["a", "B", "c", "d"]
    assert refined(before, after, [(0, 4, 4)]) == [(1, 2, 1)]


def test_an_undo_is_carried_over_a_change_elsewhere():
    before, after = ["one", "two", "three", "four"], ["one", "TWO", "three", "four"]
    changes = refined(before, after, [(1, 2, 1)])
    current = ["zero", "one", "TWO", "three", "four", "five"]
    revert = revert_plan(before, len(after), changes, line_map(after, current), len(current))
    assert revert.broken == []
    assert apply_plan(doc(current), revert.plan).lines == (
        "zero", "one", "two", "three", "four", "five",
    )  # fmt: skip


def test_an_undo_whose_lines_changed_since_is_broken():
    before, after = ["one", "two", "three"], ["one", "TWO", "three"]
    changes = refined(before, after, [(1, 2, 1)])
    mapping = exact_map(3, [(1, 2, 1)])  # someone rewrote line 2 again
    revert = revert_plan(before, 3, changes, mapping, 3)
    assert revert.broken == [(2,)] and revert.plan.splices == ()


def test_lines_deleted_go_back_only_where_the_gap_is_still_closed():
    before, after = ["one", "two", "three"], ["one", "three"]
    changes = refined(before, after, [(1, 2, 0)])
    filled = exact_map(2, [(1, 1, 1)])  # someone inserted a line into the gap
    assert revert_plan(before, 2, changes, filled, 3).broken == [(1, 2)]
    moved = exact_map(2, [(0, 0, 2)])  # two lines added above: the gap only moved
    revert = revert_plan(before, 2, changes, moved, 4)
    current = ["x", "y", "one", "three"]
    assert apply_plan(doc(current), revert.plan).lines == ("x", "y", "one", "two", "three")
