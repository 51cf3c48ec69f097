"""Carrying line positions across recorded changes: exact maps from `line_changes`,
a line diff only where a change's lines are unknown."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from editjournal.daemon.text.anchors import AnchorIndex
from editjournal.daemon.text.edit import plan_edit, relied_lines
from editjournal.daemon.text.rebase import (
    LineChange,
    Step,
    chain_map,
    exact_map,
    first_breaks,
    line_map,
)
from editjournal.schemas.tools import ReplaceLine, ReplaceRange


@st.composite
def changed(draw: st.DrawFn, old: list[str], tag: str) -> tuple[list[str], list[LineChange]]:
    """Random sorted, non-overlapping replacements of `old`, new lines uniquely named."""
    cuts = sorted(draw(st.lists(st.integers(0, len(old)), max_size=6)))
    changes: list[LineChange] = []
    position = 0
    for a, b in zip(cuts[::2], cuts[1::2], strict=False):
        start = max(a, position)
        end = max(start, b)
        inserted = draw(st.integers(0 if end > start else 1, 3))
        changes.append((start, end, inserted))
        position = end
    new: list[str] = []
    position = 0
    for k, (start, end, inserted) in enumerate(changes):
        new += old[position:start] + [f"{tag}{k}.{i}" for i in range(inserted)]
        position = max(position, end)
    return new + old[position:], changes


def truth(old: list[str], new: list[str]) -> list[int | None]:
    where = {line: i for i, line in enumerate(new)}
    return [where.get(line) for line in old]


@given(st.data(), st.integers(0, 30))
def test_exact_maps_follow_every_untouched_line(data: st.DataObject, size: int) -> None:
    old = [f"line {i}" for i in range(size)]
    new, changes = data.draw(changed(old, "n"))
    assert exact_map(len(old), changes) == truth(old, new)


@given(st.data(), st.integers(0, 20))
def test_a_chain_composes_its_steps(data: st.DataObject, size: int) -> None:
    base = [f"line {i}" for i in range(size)]
    middle, first = data.draw(changed(base, "m"))
    final, second = data.draw(changed(middle, "f"))
    steps = [Step(middle, "base", "middle", first), Step(final, "middle", "final", second)]
    assert chain_map(base, "base", steps, final) == truth(base, final)


def test_a_twin_line_written_elsewhere_does_not_inherit_the_replaced_line() -> None:
    base = ["a = 1", "x = 0", "b = 2", "c = 3", "x = 0", "d = 4"]
    after = ["a = 10", "x = 0", "b = 2", "a = 1", "x = 0", "b = 2"]
    assert line_map(base, after)[0] == 3  # what a diff alone guesses
    step = Step(after, "s0", "s1", [(0, 1, 1), (3, 4, 1), (5, 6, 1)])
    assert chain_map(base, "s0", [step], after)[0] is None
    assert first_breaks(base, "s0", [step], [[1]]) == [0]


def test_a_record_that_does_not_fit_its_content_falls_back_to_the_diff() -> None:
    base = ["one", "two", "three"]
    after = ["zero", "one", "two", "three"]
    wrong_base = Step(after, "other", "s1", [(0, 1, 1)])  # recorded against other content
    assert chain_map(base, "s0", [wrong_base], after) == [1, 2, 3]
    wrong_size = Step(after, "s0", "s1", [(0, 1, 1)])  # claims no net change: cannot be
    assert chain_map(base, "s0", [wrong_size], after) == [1, 2, 3]


def test_content_past_the_last_step_is_diffed_to_the_current_lines() -> None:
    base = ["a", "b"]
    step = Step(["a", "b", "c"], "s0", "s1", [(2, 2, 1)])
    assert chain_map(base, "s0", [step], ["new", "a", "b", "c"]) == [1, 2]


def test_relied_lines_of_a_range_are_its_whole_inside() -> None:
    lines = ["alpha = 1", "beta = 2", "gamma = 3", "delta = 4"]
    anchors = AnchorIndex(lines).anchors()
    op = ReplaceRange(start_hash=anchors[0].anchor, end_hash=anchors[2].anchor, content="x")
    [splice] = plan_edit(lines, [op]).splices
    assert relied_lines(splice, op, lines, anchors) == {1, 2, 3}


def test_a_context_anchor_relies_on_the_neighbours_its_hash_covers() -> None:
    lines = ["head = 0", "twin = 1", "", "mid = 2", "twin = 1", "", "", "tail = 3"]
    anchors = AnchorIndex(lines).anchors()
    assert anchors[4].kind == "context"  # a twin: only its neighbours tell it apart
    op = ReplaceLine(hash=anchors[4].anchor, content="x")
    [splice] = plan_edit(lines, [op]).splices
    assert relied_lines(splice, op, lines, anchors) == {4, 5, 8}  # blank lines skipped
    by_line_hash = ReplaceLine(hash=anchors[3].anchor, content="x")
    [plain] = plan_edit(lines, [by_line_hash]).splices
    assert relied_lines(plain, by_line_hash, lines, anchors) == {4}
