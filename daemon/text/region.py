"""Where two versions of a text differ: their common first and last lines trimmed at C
speed. Pure. Its own module so that the alignment (daemon.text.alignment), which the
diffs use for big changes, and the diffs (daemon.text.diff) both build on it.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from operator import ne
from typing import Any

_CHUNK = 256  # lines compared at once while trimming the common prefix and suffix


@dataclass(frozen=True, slots=True)
class ChangedRegion:
    """Where two versions differ: 0-based [start, old_end) and [start, new_end)."""

    start: int
    old_end: int
    new_end: int

    @property
    def empty(self) -> bool:
        return self.old_end == self.start and self.new_end == self.start


def changed_region(
    old: Sequence[str], new: Sequence[str], known: tuple[int, int] = (0, 0)
) -> ChangedRegion:
    """Trim the common prefix and suffix (skipping equal chunks at C speed first).
    `known`: how many first and last lines the caller knows are equal (an edit's
    lines before its first splice and after its last), so they are not compared."""
    limit = min(len(old), len(new))
    start = min(known[0], limit)
    while start + _CHUNK <= limit and old[start : start + _CHUNK] == new[start : start + _CHUNK]:
        start += _CHUNK
    while start < limit and old[start] == new[start]:
        start += 1
    tail = min(known[1], limit - start)
    while tail + _CHUNK <= limit - start and _tail(old, tail) == _tail(new, tail):
        tail += _CHUNK
    while tail < limit - start and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    return ChangedRegion(start, len(old) - tail, len(new) - tail)


def _tail(lines: Sequence[str], skip: int) -> Sequence[str]:
    """The `_CHUNK` lines before the last `skip` ones."""
    return lines[len(lines) - skip - _CHUNK : len(lines) - skip]


def differing_runs(a: Sequence[Any], b: Sequence[Any]) -> list[tuple[int, int]]:
    """[start, end) of each run of lines that differ at the same place, of two sides as
    long: lines changed in place, found by C loops (a Python loop over 200,000 lines
    was 37 ms; a diff and a line delta of a big file both ask)."""
    runs: list[tuple[int, int]] = []
    for i in itertools.compress(itertools.count(), map(ne, a, b)):
        if runs and runs[-1][1] == i:
            runs[-1] = (runs[-1][0], i + 1)
        else:
            runs.append((i, i + 1))
    return runs
