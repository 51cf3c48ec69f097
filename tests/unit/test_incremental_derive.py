"""What an edit's anchors cost O(change) for is still what a full recomputation gives.

`AnchorIndex.derive` with changes the caller verified (the writing path's own
splices: the lines between them are not compared), the anchors an edit leaves
valid (`anchors_kept_until`, which compares only the lines a derive re-chose),
and lookups that search the lines just written first (`positions(near=...)`):
each against its from-scratch or full-scan counterpart, on random edits of lines
with twins, blank runs and boilerplate.
"""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from editjournal.daemon.files.textcache import TextCache
from editjournal.daemon.text.anchorcounts import positions
from editjournal.daemon.text.anchors import AnchorIndex
from editjournal.daemon.text.linehashes import Change
from editjournal.daemon.text.lines import Document

# twins, blanks (contexts skip them), boilerplate that crosses 3 repeats, distinct lines
_POOL = ["", "  ", "}", "return x", "return x", "x = 1", "def f():", "pass", "a", "b", "c"]


def _lines() -> st.SearchStrategy[list[str]]:
    distinct = st.integers(0, 40).map(lambda i: f"line {i}")
    return st.lists(st.one_of(st.sampled_from(_POOL), distinct), max_size=30)


@st.composite
def _edit(draw: st.DrawFn, length: int) -> tuple[list[Change], list[list[str]]]:
    """Sorted, non-overlapping (possibly touching) changes of a `length`-line file."""
    changes: list[Change] = []
    news: list[list[str]] = []
    at = 0
    for _ in range(draw(st.integers(1, 3))):
        start = draw(st.integers(at, length))
        end = draw(st.integers(start, min(length, start + 4)))
        new = draw(st.lists(st.sampled_from([*_POOL, "new", "newer"]), max_size=4))
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
    assert derived.marks() == scratch.marks()
    for digest in {*scratch.hashes, *scratch.contexts}:
        for n in (4, 6, 8, 16):
            assert derived.match(digest[:n]) == scratch.match(digest[:n])
            assert derived.line_matches(digest[:n]) == scratch.line_matches(digest[:n])


def _kept_by_comparing(old: AnchorIndex, new: AnchorIndex, limit: int) -> int:
    i = 0
    while i < limit and old.anchor_strings[i] == new.anchor_strings[i]:
        i += 1
    return i


def _first_difference(old: Sequence[str], new: Sequence[str]) -> int:
    pairs = enumerate(zip(old, new, strict=False))  # up to the shorter one
    return next((i for i, (a, b) in pairs if a != b), min(len(old), len(new)))


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_deriving_through_verified_changes_equals_scratch(data: st.DataObject) -> None:
    lines = data.draw(_lines())
    index = AnchorIndex(lines)
    for _ in range(data.draw(st.integers(1, 5))):
        changes, news = data.draw(_edit(len(lines)))
        lines = _apply(lines, changes, news)
        index = index.derive(lines, changes, verified=True)
        _same(index, lines)


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_anchors_kept_until_equals_a_full_comparison(data: st.DataObject) -> None:
    lines = data.draw(_lines())
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
