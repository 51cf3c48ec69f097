"""Incremental anchors (`AnchorIndex.derive`) equal anchors computed from scratch.

Random edit sequences over a pool of lines built to stress every rule: identical
twins, blank runs (contexts skip blanks), low-quality boilerplate crossing the
3-repeat threshold, two lines sharing a 6- and an 8-digit line-hash prefix, and a
line whose line-hash prefix is another line's context prefix (cross-table).

And what the writing path's O(change) shortcuts give is what a full recomputation
gives: `derive` with changes the caller verified (the lines between them are not
compared), the anchors an edit leaves valid (`anchors_kept_until`, which compares
only the lines a derive re-chose), and lookups that search the lines just written
first (`positions(near=...)`), each against its from-scratch or full-scan
counterpart.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

import pytest
import xxhash
from hypothesis import given, settings
from hypothesis import strategies as st

from editjournal.daemon.files.textcache import TextCache
from editjournal.daemon.text.anchorcounts import positions
from editjournal.daemon.text.anchors import AnchorIndex
from editjournal.daemon.text.linehashes import Change, context_hash, line_hash
from editjournal.daemon.text.lines import Document

# each example is a file and up to 5 edits, every index compared with a scratch one in
# full: 150 examples (300 before) keep the three heaviest within the suite's budget
EXAMPLES = 150


def _xxh(text: str) -> str:
    return xxhash.xxh3_64_hexdigest(text.encode())


@cache
def _line_collision(digits: int) -> tuple[str, str]:
    """Two different lines whose line hashes share `digits` hex digits (birthday search)."""
    seen: dict[str, str] = {}
    for i in range(2_000_000):
        body = f"c{digits} {i}"
        prefix = _xxh(body)[:digits]
        if prefix in seen:
            return seen[prefix], body
        seen[prefix] = body
    raise AssertionError("no collision found")


@cache
def _cross_collision() -> tuple[str, tuple[str, str, str]]:
    """A line, and a block of three lines whose middle line's context hash starts
    with the same 6 digits as that line's line hash."""
    lines = {_xxh(f"x {i}")[:6]: f"x {i}" for i in range(20_000)}
    for j in range(2_000_000):
        middle = f"y {j}"
        prefix = context_hash("open(", middle, "close)")[:6]
        if prefix in lines:
            return lines[prefix], ("open(", middle, "close)")
    raise AssertionError("no collision found")


def _pool() -> list[tuple[str, ...]]:
    """Blocks of lines that new content is drawn from."""
    a6, b6 = _line_collision(6)
    a8, b8 = _line_collision(8)
    single, block = _cross_collision()
    lines = ["", "  ", "}", "},", "return x", "x = 1", "def f():", "pass", a6, b6, a8, b8, single]
    return [(line,) for line in lines] + [block, ("return x", "", "return x")]


def _blocks() -> st.SearchStrategy[list[str]]:
    return st.lists(st.sampled_from(_pool()), max_size=6).map(lambda bs: [x for b in bs for x in b])


@st.composite
def _edit(draw: st.DrawFn, length: int) -> tuple[list[Change], list[list[str]]]:
    """Sorted, non-overlapping changes of a `length`-line file, with their new lines."""
    changes: list[Change] = []
    news: list[list[str]] = []
    at = 0
    for _ in range(draw(st.integers(1, 3))):
        start = draw(st.integers(at, length))
        end = draw(st.integers(start, min(length, start + 4)))
        new = draw(_blocks())
        changes.append((start, end, len(new)))
        news.append(new)
        at = end
    return changes, news


def _apply(lines: Sequence[str], changes: list[Change], news: list[list[str]]) -> list[str]:
    result: list[str] = []
    done = 0
    for (start, end, _), new in zip(changes, news, strict=True):
        result += [*lines[done:start], *new]
        done = end
    return result + list(lines[done:])


def _same(derived: AnchorIndex, lines: Sequence[str]) -> None:
    scratch = AnchorIndex(lines)
    assert list(derived.anchors()) == list(scratch.anchors())
    assert derived.render(1, len(lines)) == scratch.render(1, len(lines))
    assert derived.marks() == scratch.marks()
    for digest in {*scratch.hashes, *scratch.contexts}:
        for n in (4, 6, 7, 8, 16):
            assert derived.match(digest[:n]) == scratch.match(digest[:n])


@pytest.mark.slow
@settings(max_examples=EXAMPLES, deadline=None)
@given(st.data())
def test_incremental_equals_scratch(data: st.DataObject) -> None:
    lines = data.draw(_blocks()) + data.draw(_blocks())
    index = AnchorIndex(lines)
    for _ in range(data.draw(st.integers(1, 5))):
        changes, news = data.draw(_edit(len(lines)))
        lines = _apply(lines, changes, news)
        index = index.derive(lines, changes)
        _same(index, lines)


@settings(max_examples=50, deadline=None)
@given(st.data())
def test_an_older_version_still_answers_after_derive(data: st.DataObject) -> None:
    """`derive` takes the counts over; the older index rebuilds them when asked."""
    lines = data.draw(_blocks())
    index = AnchorIndex(lines)
    changes, news = data.draw(_edit(len(lines)))
    index.derive(_apply(lines, changes, news), changes)
    _same(index, lines)


def test_changes_that_do_not_fit_fall_back_to_scratch() -> None:
    old = ["a", "b", "c"]
    index = AnchorIndex(old)
    new = ["a", "B", "c", "d"]
    for changes in (None, [(1, 2, 1)], [(2, 1, 0)], [(1, 2, 2)], [(0, 9, 1)]):
        _same(AnchorIndex(old).derive(new, changes), new)
    _same(index.derive(new, [(1, 2, 1), (3, 3, 1)]), new)


def test_an_edit_makes_a_far_twin_unique_again() -> None:
    """Deleting one of two twins re-chooses the other, however far away it is."""
    lines = ["return x", *(f"line {i}" for i in range(200)), "return x"]
    index = AnchorIndex(lines)
    assert index.anchors()[0].kind == "context"
    derived = index.derive(lines[:-1], [(201, 202, 0)])
    assert derived.anchors()[0].anchor == line_hash("return x")[:6]
    _same(derived, lines[:-1])


def _kept_by_comparing(old: AnchorIndex, new: AnchorIndex, limit: int) -> int:
    i = 0
    while i < limit and old.anchor_strings[i] == new.anchor_strings[i]:
        i += 1
    return i


def _first_difference(old: Sequence[str], new: Sequence[str]) -> int:
    pairs = enumerate(zip(old, new, strict=False))  # up to the shorter one
    return next((i for i, (a, b) in pairs if a != b), min(len(old), len(new)))


@pytest.mark.slow
@settings(max_examples=EXAMPLES, deadline=None)
@given(st.data())
def test_deriving_through_verified_changes_equals_scratch(data: st.DataObject) -> None:
    lines = data.draw(_blocks()) + data.draw(_blocks())
    index = AnchorIndex(lines)
    for _ in range(data.draw(st.integers(1, 5))):
        changes, news = data.draw(_edit(len(lines)))
        lines = _apply(lines, changes, news)
        index = index.derive(lines, changes, verified=True)
        _same(index, lines)


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.data())
def test_anchors_kept_until_equals_a_full_comparison(data: st.DataObject) -> None:
    lines = data.draw(_blocks()) + data.draw(_blocks())
    old = AnchorIndex(lines)
    for _ in range(data.draw(st.integers(1, 4))):
        changes, news = data.draw(_edit(len(lines)))
        new_lines = _apply(lines, changes, news)
        new = old.derive(new_lines, changes, verified=True)
        first = _first_difference(lines, new_lines)
        for limit in {first, data.draw(st.integers(0, first))}:
            assert new.anchors_kept_until(old, limit) == _kept_by_comparing(old, new, limit)
            scratch = AnchorIndex(new_lines)  # not derived from `old`: the full comparison
            assert scratch.anchors_kept_until(old, limit) == _kept_by_comparing(old, new, limit)
        lines, old = new_lines, new


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from("abcde"), max_size=40),
    st.lists(st.tuples(st.integers(0, 45), st.integers(0, 45)), max_size=3),
)
def test_positions_searched_near_first_equal_a_full_scan(
    values: list[str], near: list[tuple[int, int]]
) -> None:
    for value in "abcdef":
        count = values.count(value)
        expected = [i for i, v in enumerate(values) if v == value]
        assert positions(values, value, count, near) == expected


def test_an_edited_content_in_the_cache_is_anchored_as_from_scratch() -> None:
    """The writing path's `TextCache.put(..., verified=True)`: the anchors of the new
    content, derived from the old one's, are the ones a read of it would compute."""
    lines = tuple(f"line {i}" if i % 7 else "return x" for i in range(500))
    cache = TextCache()
    old = cache.put("old", Document(lines, ("\n",) * len(lines)))
    new_lines = (*lines[:250], "return x", "changed", *lines[251:])
    new = cache.put("new", Document(new_lines, ("\n",) * len(new_lines)), old, [(250, 251, 2)])
    assert new is not old
    verified = TextCache().put(
        "new", Document(new_lines, ("\n",) * len(new_lines)), old, [(250, 251, 2)], verified=True
    )
    for parsed in (new, verified):
        _same(parsed.index, new_lines)
    assert verified.index.anchors_kept_until(old.index, 250) == _kept_by_comparing(
        old.index, verified.index, 250
    )
