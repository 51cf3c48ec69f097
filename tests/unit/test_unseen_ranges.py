"""Unseen lines as ranges (daemon.text.ranges, daemon.writing.seen) equal the former
sets of line numbers on random inputs: same lines moved, dropped and added, for
every change a writer records and every line map a diff makes."""

from __future__ import annotations

import itertools
from collections.abc import Iterable

from hypothesis import given
from hypothesis import strategies as st

from editjournal.daemon.text.ranges import (
    LineRanges,
    carried_unseen,
    covered,
    from_ranges,
    intersection,
    kept_by_changes,
    moved,
    subtract,
    to_ranges,
)
from editjournal.daemon.text.rebase import LineChange, LineMap, exact_map, line_map
from editjournal.daemon.writing.seen import after_own_write, after_showing

# --- the former set version, kept as the reference ---------------------------------------


def set_moved(lines: Iterable[int], mapping: LineMap) -> set[int]:
    found: set[int] = set()
    for n in lines:
        if 0 < n <= len(mapping) and (p := mapping[n - 1]) is not None:
            found.add(p + 1)
    return found


def set_carried(unseen: Iterable[int], mapping: LineMap, new_count: int) -> set[int]:
    image = {p for p in mapping if p is not None}
    fresh = {n for n in range(1, new_count + 1) if n - 1 not in image}
    return set_moved(unseen, mapping) | fresh


def set_after_showing(unseen: set[int] | None, shown: Iterable[int], count: int) -> set[int]:
    before = set(range(1, count + 1)) if unseen is None else unseen
    return before - set(shown)


# --- random inputs -------------------------------------------------------------------------

SIZE = 40
lines_of = st.sets(st.integers(1, SIZE))


@st.composite
def changes(draw: st.DrawFn, old_len: int) -> list[LineChange]:
    """Sorted, non-overlapping replacements and insertions (what writers record)."""
    cuts = sorted(draw(st.lists(st.integers(0, old_len), max_size=8)))
    found: list[LineChange] = []
    position = 0
    for a, b in zip(cuts[::2], cuts[1::2], strict=False):
        start, end = max(a, position), max(a, position, b)
        found.append((start, end, draw(st.integers(0, 4))))
        position = end
    return found


@st.composite
def line_maps(draw: st.DrawFn) -> tuple[LineMap, int]:
    """A diff's map between two random texts over a tiny alphabet (many twins)."""
    old = draw(st.lists(st.sampled_from("abcde"), max_size=SIZE))
    new = draw(st.lists(st.sampled_from("abcdef"), max_size=SIZE))
    return line_map(old, new), len(new)


@st.composite
def any_maps(draw: st.DrawFn) -> tuple[LineMap, int]:
    """Any map at all, not even monotonic: the range version must not rely on order."""
    new_count = draw(st.integers(0, SIZE))
    targets = st.none() | st.integers(0, max(new_count + 2, 1))
    return draw(st.lists(targets, max_size=SIZE)), new_count


def canonical(ranges: LineRanges) -> bool:
    return all(a <= b for a, b in ranges) and all(
        b1 + 1 < a2 for (_, b1), (a2, _) in itertools.pairwise(ranges)
    )


# --- properties ---------------------------------------------------------------------------


@given(lines_of)
def test_ranges_round_trip_and_are_canonical(lines: set[int]) -> None:
    ranges = to_ranges(lines)
    assert from_ranges(ranges) == lines
    assert canonical(ranges)


@given(st.integers(1, SIZE), st.integers(0, SIZE))
def test_a_range_object_converts_in_one_step(start: int, length: int) -> None:
    shown = range(start, start + length)
    assert to_ranges(shown) == to_ranges(list(shown))


@given(lines_of, st.integers(0, SIZE), st.data())
def test_own_write_moves_unseen_lines_as_the_set_version(
    unseen: set[int], old_len: int, data: st.DataObject
) -> None:
    found = data.draw(changes(old_len))
    got = after_own_write(to_ranges(unseen), found, old_len)
    assert from_ranges(got) == set_moved(unseen, exact_map(old_len, found))
    assert canonical(got)


@given(lines_of, st.one_of(line_maps(), any_maps()))
def test_carried_unseen_equals_the_set_version(
    unseen: set[int], mapped: tuple[LineMap, int]
) -> None:
    mapping, new_count = mapped
    got = carried_unseen(to_ranges(unseen), mapping, new_count)
    assert from_ranges(got) == set_carried(unseen, mapping, new_count)
    assert canonical(got)


@given(st.none() | lines_of, lines_of, st.integers(0, SIZE))
def test_after_showing_equals_the_set_version(
    unseen: set[int] | None, shown: set[int], count: int
) -> None:
    before = None if unseen is None else to_ranges(unseen)
    got = after_showing(before, shown, count)
    assert from_ranges(got) == set_after_showing(unseen, shown, count)
    assert canonical(got)


@given(lines_of, lines_of)
def test_set_operations_equal_the_set_version(a: set[int], b: set[int]) -> None:
    ra, rb = to_ranges(a), to_ranges(b)
    assert from_ranges(subtract(ra, rb)) == a - b
    assert from_ranges(intersection(ra, rb)) == a & b
    assert covered(b, ra) == sorted(a & b)


@given(st.lists(st.tuples(st.integers(-3, SIZE), st.integers(-3, SIZE)), max_size=8))
def test_ranges_need_not_be_canonical_on_input(ranges: list[tuple[int, int]]) -> None:
    lines = from_ranges(ranges)
    assert from_ranges(subtract(ranges, [])) == lines
    assert covered(range(-3, SIZE + 1), ranges) == sorted(lines)


# --- examples -----------------------------------------------------------------------------


def test_unseen_lines_move_with_the_file_and_changed_lines_become_unseen() -> None:
    old = ["a", "b", "c", "d"]
    new = ["a", "B", "x", "c", "d"]  # b replaced by two lines
    mapping = exact_map(len(old), [(1, 2, 2)])
    assert carried_unseen([(4, 4)], mapping, len(new)) == [(2, 3), (5, 5)]  # d moved; B, x new
    assert carried_unseen([(2, 2)], mapping, len(new)) == [(2, 3)]  # the unseen b is gone
    # own write: its new lines are seen, the unseen ones it kept move
    assert after_own_write([(1, 2), (4, 4)], [(1, 2, 2)], len(old)) == [(1, 1), (5, 5)]


def test_a_huge_unseen_file_stays_two_ranges_through_an_edit() -> None:
    """A one-line read of a 100,000-line file, then an edit of that line: the
    bookkeeping is a handful of tuples, whatever the file's size."""
    unseen = after_showing(None, range(50_000, 50_001), 100_000)
    assert unseen == [(1, 49_999), (50_001, 100_000)]
    assert after_own_write(unseen, [(49_999, 50_000, 3)], 100_000) == [
        (1, 49_999),
        (50_003, 100_002),
    ]
    assert moved(unseen, kept_by_changes(100_000, [])) == unseen
