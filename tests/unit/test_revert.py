"""The pure plans behind restore and undo (`daemon.text.revert`)."""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Sequence

from hypothesis import given
from hypothesis import strategies as st

from editjournal.daemon.text.edit import EditPlan, apply_plan
from editjournal.daemon.text.lines import Document
from editjournal.daemon.text.rebase import Step, exact_map, line_map
from editjournal.daemon.text.revert import (
    content_map,
    content_maps,
    culprits,
    diff_plan,
    refined,
    repaired,
    revert_plan,
)

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


# --- content, not events (issue 34) -------------------------------------------------------


def sha(lines: Sequence[str]) -> str:
    """A content's hash, each line with its ending as in a file: [] and [""] differ."""
    return hashlib.sha256("".join(f"{line}\n" for line in lines).encode()).hexdigest()


def steps_through(*versions: Sequence[str]) -> list[Step]:
    """Steps to each version in turn, with no record of their lines (diffed, as outside
    changes are), each with its content's hash as the journal keeps it."""
    return [Step(tuple(v), sha256=sha(v)) for v in versions]


def test_a_line_changed_and_put_back_is_found_again():
    after = ["one", "TWO", "three"]
    changed, back = ["one", "2", "three"], ["one", "TWO", "three"]
    assert content_map(after, None, steps_through(changed, back), back) == [0, 1, 2]


def test_a_line_changed_is_not_found_again_in_a_twin_elsewhere():
    after = ["one", "TWO", "three"]
    now = ["TWO", "one", "2", "three"]  # the text is above, not where the line was
    assert content_map(after, None, steps_through(now), now)[1] is None


def test_a_place_that_grew_is_not_matched_line_for_line():
    after = ["one", "TWO", "three"]
    now = ["one", "TWO", "extra", "three"]  # written in one change with its twin
    mapping = repaired([0, None, 3], after, now)
    assert mapping == [0, None, 3]


def test_culprits_never_name_a_change_that_was_taken_back():
    after = ["a", "b", "c", "d"]
    versions = [
        ["a", "B2", "c", "d"],  # 0: changes line 2
        ["a", "b", "c", "d"],  # 1: puts it back (an undo)
        ["a", "b", "c", "D4"],  # 2: changes line 4
        ["a", "B5", "c", "D4"],  # 3: changes line 2 again
    ]
    maps = content_maps(after, None, steps_through(*versions), versions[-1])
    assert culprits(maps, [(2,), (4,)]) == {3: {2}, 2: {4}}


def test_culprits_of_lines_back_but_apart_name_what_came_between():
    after = ["a", "b", "c"]
    versions = [["a", "x", "c"], ["a", "b", "c"], ["a", "b", "new", "c"]]
    maps = content_maps(after, None, steps_through(*versions), versions[-1])
    assert culprits(maps, [(2, 3)]) == {2: {2, 3}}


@given(small_lines, small_lines, small_lines)
def test_a_write_taken_back_since_does_not_stand_in_an_undos_way(
    before: list[str], after: list[str], meanwhile: list[str]
):
    """W turned `before` into `after`; another write made `meanwhile`, and was undone:
    the file is `after` again, so W's undo gives `before` back, whatever the events."""
    changes = refined(before, after, changes_of(diff_plan(before, after, "w")))
    mapping = content_map(after, sha(after), steps_through(meanwhile, after), after)
    revert = revert_plan(before, len(after), changes, mapping, len(after))
    assert revert.broken == []
    assert apply_plan(doc(after), revert.plan).lines == tuple(before)


@given(small_lines, st.lists(small_lines, min_size=1, max_size=4))
def test_a_content_map_only_pairs_equal_lines_in_order(base: list[str], versions: list[list[str]]):
    """Found again by content never means found by text alone out of place: every line
    maps to the same text, and the map keeps the lines' order."""
    mapping = content_map(base, None, steps_through(*versions), versions[-1])
    pairs = [(i, j) for i, j in enumerate(mapping) if j is not None]
    assert all(base[i] == versions[-1][j] for i, j in pairs)
    assert all(j1 < j2 for (_, j1), (_, j2) in itertools.pairwise(pairs))
