"""A big file's index built a slice at a time is the index built at once (issue 40).

`IndexBuild` (daemon.text.indexbuild) does `AnchorIndex(lines)`'s work in steps; an
index that knows where each of its hashes is derives the next version's anchors by
moving those positions (O(change)), not by scanning the file; a `Deferred` stops a
handler before it changed anything; and the patch locators' position lookups
answer as a scan would. Each against its from-scratch or full-scan counterpart,
over the collision-laden pool of tests/unit/test_anchors_incremental.py.
"""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from editjournal.daemon.files.textcache import TextCache
from editjournal.daemon.text.anchorcounts import PrefixCounts
from editjournal.daemon.text.anchors import AnchorIndex
from editjournal.daemon.text.deferral import Deferred, deferring
from editjournal.daemon.text.indexbuild import IndexBuild
from editjournal.daemon.text.lines import parse
from editjournal.daemon.text.patch import line_positions
from editjournal.daemon.text.rebase import line_map
from editjournal.daemon.text.v4a_apply import seek
from tests.unit.test_anchors_incremental import _apply, _blocks, _edit, _same


def _built(asked: Deferred) -> AnchorIndex:
    build = IndexBuild(asked)
    for _ in build.steps():
        pass
    assert build.done and build.index is not None
    return build.index


def _positioned(lines: list[str]) -> AnchorIndex:
    return _built(Deferred(index=AnchorIndex(lines), positions=True))


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_an_index_built_in_steps_and_derived_by_positions_equals_scratch(
    data: st.DataObject,
) -> None:
    lines = data.draw(_blocks()) + data.draw(_blocks()) + data.draw(_blocks())
    index = _built(Deferred(lines=tuple(lines), positions=True))
    _same(index, lines)
    for _ in range(data.draw(st.integers(1, 3))):
        changes, news = data.draw(_edit(len(lines)))
        lines = _apply(lines, changes, news)
        index = _positioned(list(index._bodies)).derive(lines, changes)
        _same(index, lines)


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_a_derive_made_in_steps_equals_scratch_and_leaves_its_base_whole(
    data: st.DataObject,
) -> None:
    lines = data.draw(_blocks()) + data.draw(_blocks()) + data.draw(_blocks())
    base = AnchorIndex(lines)
    changes, news = data.draw(_edit(len(lines)))
    new = _apply(lines, changes, news)
    derived = _built(Deferred(index=base, lines=tuple(new), derive=tuple(changes)))
    _same(derived, new)
    _same(base, lines)  # its counts were copied, not taken over


def test_a_big_file_with_shared_prefixes_builds_the_same_in_steps() -> None:
    """40,000 lines: dozens of 6-digit prefixes shared by two hashes (`multi`)."""
    lines = [f"value_{i} = {i * 7}" if i % 5 else "" for i in range(40_000)]
    built = _built(Deferred(lines=tuple(lines)))
    scratch = AnchorIndex(lines)
    assert scratch.tables.line.multi and built.tables.line.multi == scratch.tables.line.multi
    assert built.anchor_strings == scratch.anchor_strings and built.marks() == scratch.marks()
    changes = [(i, i + 1, 1) for i in range(3, 40_000, 400)]
    new = list(lines)
    for start, _, _ in changes:
        new[start] = f"changed {start}"
    derived = _positioned(lines).derive(new, changes, verified=True)
    assert derived.anchor_strings == AnchorIndex(new).anchor_strings
    asked = Deferred(index=built, lines=tuple(new), derive=tuple(changes), verified=True)
    assert _built(asked).anchor_strings == derived.anchor_strings


@settings(max_examples=120, deadline=None)
@given(
    st.lists(st.sampled_from(["aa1", "aa2", "ab1", "bb1", "bb2"]), max_size=12),
    st.lists(st.sampled_from(["aa1", "aa2", "ab1", "bb1", "bb2", "ac9"]), max_size=6),
    st.data(),
)
def test_moving_counts_at_once_equals_adding_and_removing(
    values: list[str], added: list[str], data: st.DataObject
) -> None:
    """Short values stand in for hashes: "aa" is their shared 6-digit prefix here."""
    removed = data.draw(st.lists(st.sampled_from(values), unique=True)) if values else []
    one, other = PrefixCounts(values), PrefixCounts(values)
    b1: dict[str, int] = {}
    b2: dict[str, int] = {}
    one.move(removed, added, b1)
    for v in removed:
        other.remove(v, b2)
    for v in added:
        other.add(v, b2)
    assert one.counts == other.counts
    assert {k: b1[k] for k in b2} == b2 and set(b1) >= set(b2)
    for prefix in {v[:2] for v in values + added}:
        assert one.values_with(prefix) == other.values_with(prefix)


def test_a_deferred_index_is_asked_before_anything_changes() -> None:
    """Under `deferring`, a big content's index, and a many-span derive without positions,
    stop the caller with `Deferred`; the base keeps its counts; once built, all answer."""
    text = "".join(f"line {i}\n" for i in range(300))
    cache = TextCache()
    parsed = cache.parsed("a" * 64, text)
    with deferring(100), pytest.raises(Deferred) as asked:
        parsed.index  # noqa: B018
    _built(asked.value)
    base = parsed.index
    assert base.anchor_strings == AnchorIndex(parsed.doc.lines).anchor_strings
    lines = [f"LINE {i}" if i % 10 == 0 else f"line {i}" for i in range(300)]
    changes = [(i, i + 1, 1) for i in range(0, 300, 10)]
    new = cache.put("b" * 64, parse("".join(f"{x}\n" for x in lines)), parsed, changes, None)
    tables = base.tables
    assert base.has_positions()  # a fresh big index is built with them
    base._where.clear()  # as a derived version has none
    with deferring(100), pytest.raises(Deferred) as more:
        new.index  # noqa: B018
    assert base._tables is tables and more.value.positions
    _built(more.value)
    with deferring(100):
        assert new.index.anchor_strings == AnchorIndex(lines).anchor_strings


def test_line_positions_and_seek_answer_as_a_scan_does() -> None:
    lines = tuple(["a", "b", "a", "c", "a", "b", ""] * 3)
    where = line_positions(lines)
    for line in [*set(lines), "zz"]:
        assert list(where.get(line, ())) == [i for i, x in enumerate(lines) if x == line]
    assert line_positions(lines) is where  # kept for the content
    for pattern in (("a", "b"), ("b", ""), ("c",), ("a", "c", "a"), ("q",)):
        for start in range(len(lines)):
            scan = next(
                (
                    i
                    for i in range(start, len(lines) - len(pattern) + 1)
                    if lines[i : i + len(pattern)] == pattern
                ),
                None,
            )
            assert seek(lines, pattern, start) == scan or scan is None
    assert Counter(lines)["a"] == len(where.get("a"))


def test_a_big_outside_change_is_aligned_without_difflib_and_fails_closed() -> None:
    """A changed middle of more than `PATIENCE_FROM` lines is aligned by unique lines
    (difflib took minutes for 1,000 changes spread over 200,000 lines): every line
    nobody touched maps to itself shifted, every changed line to nothing."""
    old = [f"line {i}" if i % 7 else "}" for i in range(30_000)]
    new = list(old)
    for i in range(3, 30_000, 300):
        new[i] = f"changed {i}"
    new.insert(1000, "inserted")
    del new[20_001]  # old line 20,000
    mapping = line_map(old, new)
    for i, j in enumerate(mapping):
        changed = i % 300 == 3 or i == 20_000
        assert (j is None) == changed, i
        if j is not None:
            assert j == i + (i >= 1000) - (i > 20_000) and old[i] == new[j]
