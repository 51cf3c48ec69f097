"""Sets of line numbers as sorted, disjoint, inclusive ranges, carried through changes. Pure.

An agent's snapshot is a whole version of the file, but it may have been shown
only part of it (a ranged read, or its own write carried over others' changes).
The lines it was not shown are kept as 1-based inclusive ranges: after a
one-line read of a 100,000-line file that is two ranges, not 99,999 numbers, so
every edit's bookkeeping costs O(ranges + changes), not O(unseen lines).

Canonical form (what every function here returns): sorted, each `start <= end`,
neither overlapping nor touching — `[(1, 3), (7, 7)]`, never `[(1, 2), (3, 3)]`.
Inputs need not be canonical; they are normalised first (cheap: a handful of
ranges, usually already sorted).

A change is described by the segments of old lines it keeps, each with the shift
it applies: `(start, end, shift)`, 0-based, `[start, end)` of the old lines now at
`i + shift`. `kept_by_changes` derives them from a writer's `line_changes` exactly
as `rebase.exact_map` maps lines; `kept_by_map` from any line map.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Iterable, Sequence

from editjournal.daemon.text.rebase import LineChange, LineMap

LineRanges = list[tuple[int, int]]
Segment = tuple[int, int, int]  # old 0-based [start, end) now at i + shift


def normalized(ranges: Iterable[tuple[int, int]]) -> LineRanges:
    """Sorted and merged; empty ranges dropped, overlapping and touching ones joined."""
    merged: LineRanges = []
    for start, end in sorted(r for r in ranges if r[0] <= r[1]):
        if merged and start <= merged[-1][1] + 1:
            if end > merged[-1][1]:
                merged[-1] = (merged[-1][0], end)
        else:
            merged.append((start, end))
    return merged


def to_ranges(lines: Iterable[int]) -> LineRanges:
    """1-based lines as ranges: {1, 2, 3, 7} -> [(1, 3), (7, 7)]; a `range` costs O(1)."""
    if isinstance(lines, range) and lines.step == 1:
        return [(lines.start, lines.stop - 1)] if len(lines) else []
    return normalized((n, n) for n in set(lines))


def from_ranges(ranges: Iterable[tuple[int, int]]) -> set[int]:
    """Every line in the ranges (tests and small sets only: this is O(lines))."""
    return {n for start, end in ranges for n in range(start, end + 1)}


def whole(line_count: int) -> LineRanges:
    """Every line of a file of `line_count` lines."""
    return [(1, line_count)] if line_count > 0 else []


def subtract(ranges: Iterable[tuple[int, int]], removed: Iterable[tuple[int, int]]) -> LineRanges:
    """The lines of `ranges` not in `removed`, in one merge pass."""
    out: LineRanges = []
    cuts = normalized(removed)
    j = 0
    for start, end in normalized(ranges):
        while j < len(cuts) and cuts[j][1] < start:
            j += 1
        k, low = j, start
        while k < len(cuts) and cuts[k][0] <= end:
            if cuts[k][0] > low:
                out.append((low, cuts[k][0] - 1))
            low = max(low, cuts[k][1] + 1)
            k += 1
        if low <= end:
            out.append((low, end))
    return out


def intersection(ranges: Iterable[tuple[int, int]], other: Iterable[tuple[int, int]]) -> LineRanges:
    """The lines in both."""
    canonical = normalized(ranges)
    return subtract(canonical, subtract(canonical, other))


def covered(lines: Iterable[int], ranges: Sequence[tuple[int, int]]) -> list[int]:
    """The given lines that fall in `ranges`, sorted (a binary search each)."""
    canonical = normalized(ranges)
    starts = [start for start, _ in canonical]
    hits = []
    for n in sorted(set(lines)):
        i = bisect.bisect_right(starts, n) - 1
        if i >= 0 and canonical[i][1] >= n:
            hits.append(n)
    return hits


def kept_by_changes(old_len: int, changes: Sequence[LineChange]) -> list[Segment]:
    """The old lines a change with known `line_changes` keeps, and where: the same
    arithmetic as `rebase.exact_map`, one segment per gap between changes."""
    segments: list[Segment] = []
    shift, position = 0, 0
    for start, end, inserted in changes:
        if min(start, old_len) > position:
            segments.append((position, min(start, old_len), shift))
        shift += inserted - (end - start)
        position = max(position, end)
    if old_len > position:
        segments.append((position, old_len, shift))
    return segments


def kept_by_map(mapping: LineMap) -> list[Segment]:
    """The runs of a line map: consecutive old lines that stay consecutive (O(len), in C
    where it can: a run is where `new - old` stays the same)."""
    shifts = [None if p is None else p - i for i, p in enumerate(mapping)]
    segments: list[Segment] = []
    position = 0
    for shift, run in itertools.groupby(shifts):
        length = len(list(run))
        if shift is not None:
            segments.append((position, position + length, shift))
        position += length
    return segments


def moved(ranges: Iterable[tuple[int, int]], segments: Sequence[Segment]) -> LineRanges:
    """Where 1-based `ranges` are after a change; lines it did not keep are dropped.
    O(ranges + segments) when the segments are sorted, as both `kept_by_*` make them."""
    pieces: LineRanges = []
    j = 0
    for start, end in normalized(ranges):
        low, high = start - 1, end  # 0-based [low, high)
        while j < len(segments) and segments[j][1] <= low:
            j += 1
        k = j
        while k < len(segments) and segments[k][0] < high:
            first, last, shift = segments[k]
            a, b = max(low, first), min(high, last)
            if a < b:
                pieces.append((a + shift + 1, b + shift))
            k += 1
    return normalized(pieces)


def fresh(segments: Sequence[Segment], new_count: int) -> LineRanges:
    """The 1-based lines of the new content nothing old maps onto (someone wrote them)."""
    image = [(first + shift + 1, last + shift) for first, last, shift in segments]
    return subtract(whole(new_count), image)


def carried_unseen(
    unseen: Iterable[tuple[int, int]], mapping: LineMap, new_count: int
) -> LineRanges:
    """What an agent has not been shown of newer content: its unseen lines that survived,
    and every line nothing maps onto (someone changed it since the agent looked)."""
    segments = kept_by_map(mapping)
    return normalized([*moved(unseen, segments), *fresh(segments, new_count)])
