"""The stepped, C-looped line map is today's line map, pair for pair (issue 40).

`daemon.text.alignment` computes `rebase.line_map`'s alignment with its per-line work
in C loops and as a generator a job can stop between steps. Here it is checked
against the line-by-line version it replaced (kept below as `_reference_*`, as it
was): on random contents drawn from a few lines (so most are repeated) edited by
random replacements, insertions, deletions and moved blocks, with the thresholds
lowered so small inputs take every path (patience, its unique-line order, the
longest increasing run of a move, difflib for the gaps); and once at full size. A
map a job computed is the one `line_map` then returns, and only where a job may be
taken (`deferring`, contents that never change).
"""

from __future__ import annotations

import bisect
import difflib
import random
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from editjournal.daemon.text import alignment, rebase
from editjournal.daemon.text.alignment import line_map_steps, matching_blocks, patience_runs
from editjournal.daemon.text.deferral import Deferred, deferring
from editjournal.daemon.text.rebase import _finished, line_map
from editjournal.daemon.text.region import changed_region

Pairs = list[tuple[int, int]]


def _reference_line_map(
    old: Sequence[str], new: Sequence[str], patience_from: int, difflib_up_to: int
) -> list[int | None]:
    region = changed_region(old, new)
    mapping: list[int | None] = [None] * len(old)
    for i in range(region.start):
        mapping[i] = i
    shift = len(new) - len(old)
    for i in range(region.old_end, len(old)):
        mapping[i] = i + shift
    middle_old = old[region.start : region.old_end]
    middle_new = new[region.start : region.new_end]
    if len(middle_old) + len(middle_new) > patience_from:
        found = _reference_patience(
            middle_old, middle_new, 0, len(middle_old), 0, len(middle_new), difflib_up_to
        )
        for i, j in found:
            mapping[region.start + i] = region.start + j
        return mapping
    matcher = difflib.SequenceMatcher(None, middle_old, middle_new, autojunk=False)
    for block in matcher.get_matching_blocks():
        for k in range(block.size):
            mapping[region.start + block.a + k] = region.start + block.b + k
    return mapping


def _reference_patience(
    a: Sequence[str], b: Sequence[str], alo: int, ahi: int, blo: int, bhi: int, up_to: int
) -> Pairs:
    head: Pairs = []
    while alo < ahi and blo < bhi and a[alo] == b[blo]:
        head.append((alo, blo))
        alo, blo = alo + 1, blo + 1
    tail: Pairs = []
    while alo < ahi and blo < bhi and a[ahi - 1] == b[bhi - 1]:
        ahi, bhi = ahi - 1, bhi - 1
        tail.append((ahi, bhi))
    if alo == ahi or blo == bhi:
        return head + tail[::-1]
    if ahi - alo + bhi - blo <= up_to:
        matcher = difflib.SequenceMatcher(None, a[alo:ahi], b[blo:bhi], autojunk=False)
        middle = [
            (alo + block.a + k, blo + block.b + k)
            for block in matcher.get_matching_blocks()
            for k in range(block.size)
        ]
        return head + middle + tail[::-1]
    anchors = _reference_unique_order(a, b, alo, ahi, blo, bhi)
    middle = []
    i0, j0 = alo, blo
    for i, j in anchors:
        if i > i0 and j > j0:
            middle += _reference_patience(a, b, i0, i, j0, j, up_to)
        middle.append((i, j))
        i0, j0 = i + 1, j + 1
    if anchors:
        middle += _reference_patience(a, b, i0, ahi, j0, bhi, up_to)
    return head + middle + tail[::-1]


def _reference_unique_order(
    a: Sequence[str], b: Sequence[str], alo: int, ahi: int, blo: int, bhi: int
) -> Pairs:
    in_a = Counter(a[alo:ahi])
    in_b = Counter(b[blo:bhi])
    where_b = {b[j]: j for j in range(blo, bhi) if in_b[b[j]] == 1}
    pairs = [(i, where_b[a[i]]) for i in range(alo, ahi) if in_a[a[i]] == 1 and a[i] in where_b]
    js = [j for _, j in pairs]
    if js == sorted(js):
        return pairs
    tops: list[int] = []
    ends: list[int] = []
    back: list[int] = [-1] * len(pairs)
    for k, (_, j) in enumerate(pairs):
        n = bisect.bisect_left(tops, j)
        back[k] = ends[n - 1] if n else -1
        if n == len(tops):
            tops.append(j)
            ends.append(k)
        else:
            tops[n], ends[n] = j, k
    chosen: Pairs = []
    k = ends[-1] if ends else -1
    while k >= 0:
        chosen.append(pairs[k])
        k = back[k]
    return chosen[::-1]


@contextmanager
def _thresholds(patience_from: int, difflib_up_to: int) -> Iterator[None]:
    """Small inputs through every path: the thresholds lowered for a while."""
    saved = alignment.PATIENCE_FROM, alignment.DIFFLIB_UP_TO
    alignment.PATIENCE_FROM, alignment.DIFFLIB_UP_TO = patience_from, difflib_up_to
    try:
        yield
    finally:
        alignment.PATIENCE_FROM, alignment.DIFFLIB_UP_TO = saved


def _pairs(runs: list[tuple[int, int, int]]) -> Pairs:
    return [(i + k, j + k) for i, j, n in runs for k in range(n)]


_POOL = ["", "}", "x = 1", "return", *(f"line {k}" for k in range(12))]


@st.composite
def _edited(draw: st.DrawFn) -> tuple[list[str], list[str]]:
    """A content of pooled and unique lines, and that content after a few edits."""
    size = draw(st.integers(0, 80))
    old = [
        draw(st.sampled_from(_POOL)) if draw(st.booleans()) else f"only {k}" for k in range(size)
    ]
    new = list(old)
    for _ in range(draw(st.integers(0, 6))):
        at = draw(st.integers(0, len(new)))
        end = draw(st.integers(at, min(len(new), at + 8)))
        kind = draw(st.sampled_from(["replace", "insert", "delete", "move", "reverse"]))
        block = new[at:end]
        fresh = draw(st.lists(st.sampled_from([*_POOL, "new a", "new b"]), max_size=5))
        del new[at:end]
        if kind == "replace":
            new[at:at] = fresh
        elif kind == "insert":
            new[at:at] = [*block, *fresh]
        elif kind == "move":
            to = draw(st.integers(0, len(new)))
            new[to:to] = block
        elif kind == "reverse":
            new[at:at] = block[::-1]
    return old, new


@settings(max_examples=150, deadline=None)
@given(_edited(), st.integers(0, 40), st.integers(0, 30))
def test_the_line_map_is_the_line_by_line_ones_on_every_path(
    pair: tuple[list[str], list[str]], patience_from: int, difflib_up_to: int
) -> None:
    old, new = pair
    expected = _reference_line_map(old, new, patience_from, difflib_up_to)
    with _thresholds(patience_from, difflib_up_to):
        assert _finished(line_map_steps(old, new)) == expected
        assert sorted(_pairs(_finished(patience_runs(old, new)))) == sorted(
            _reference_patience(old, new, 0, len(old), 0, len(new), difflib_up_to)
        )


@settings(max_examples=150, deadline=None)
@given(_edited())
def test_the_stepped_matching_blocks_are_difflibs(pair: tuple[list[str], list[str]]) -> None:
    old, new = pair
    blocks = _finished(matching_blocks(old, new))
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    expected = [(b.a + k, b.b + k) for b in matcher.get_matching_blocks() for k in range(b.size)]
    assert _pairs(blocks) == expected


def _big(size: int, seed: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """A code-like content (blank and closing lines repeated), and it with a hundred
    lines changed, inserted or deleted here and there and a block moved."""
    rng = random.Random(seed)
    old = [rng.choice(["", "}", f"v{k} = f({k})", f"v{k} = f({k})"]) for k in range(size)]
    new = list(old)
    for at in sorted(rng.sample(range(size - 200), 100), reverse=True):
        new[at : at + rng.randrange(3)] = [f"changed {at}"] * rng.randrange(3)
    new[100:100] = new[size // 2 : size // 2 + 50]
    return tuple(old), tuple(new)


def test_a_big_change_is_mapped_as_before() -> None:
    old, new = _big(24_000, 1)
    assert line_map(old, new) == _reference_line_map(old, new, 20_000, 2_000)


def test_a_middle_of_repeated_lines_is_mapped_as_difflib_maps_it() -> None:
    """Under `PATIENCE_FROM` lines difflib's blocks are the map: the same ones, found
    without walking every blank line's places for every blank line."""
    old, new = _big(1_500, 4)
    assert line_map(old, new) == _reference_line_map(old, new, 20_000, 2_000)


def test_a_job_computes_the_map_where_the_request_may_wait_for_it() -> None:
    """Under `deferring`, a big map of two contents that never change stops the request
    (before it changed anything) with the work to do; once done, the map is there."""
    old, new = _big(24_000, 2)
    expected = _reference_line_map(old, new, 20_000, 2_000)
    with deferring(20_000):
        with pytest.raises(Deferred) as asked:
            line_map(old, new)
        work = asked.value.work
        assert work is not None
        steps = sum(1 for _ in work)
        assert steps > 3  # a step at a time, not the whole map at once
        kept = line_map(old, new)
        assert kept == expected
        kept[0] = -1  # a copy: the kept map is nobody's to change
        assert line_map(old, new) == expected
    assert line_map(list(old), list(new)) == expected  # lists: computed at once


def test_a_small_map_is_never_a_job() -> None:
    old, new = _big(900, 3)  # a changed middle of at most DIFFLIB_UP_TO lines
    rebase._LAST_MAPS.clear()
    with deferring(20_000):
        assert line_map(old, new) == _reference_line_map(old, new, 20_000, 2_000)
