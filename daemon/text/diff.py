"""A localized diff of an edit, with each line's new anchor. Pure.

The edit reply shows only the changed region with a few lines of context, so
an agent can keep editing from the new anchors without re-reading the file.
difflib does the alignment; the common prefix and suffix are trimmed first so
the cost follows the size of the change, not of the file.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from editjournal.daemon.text.anchors import LineAnchor

FEW_CHANGES = 16  # up to this many changes, difflib also finds lines they left as they were
CONTEXT = 3
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


def _row(anchor: LineAnchor, body: str, sign: str) -> str:
    mark = "~" if anchor.quality == "low" else ("?" if not anchor.unique else "")
    return f"{sign}{anchor.line}#{anchor.anchor}{mark}|{body}"


def anchored_diff(
    old: Sequence[str],
    new: Sequence[str],
    new_anchors: Sequence[LineAnchor],
    region: ChangedRegion | None = None,
    changes: Sequence[tuple[int, int, int]] | None = None,
) -> tuple[str, list[int]]:
    """Unified-style hunks: context and added rows carry new anchors; removed rows
    carry their old line number. Also returns the 1-based new lines added.
    `region`: `changed_region(old, new)` when the caller has it already. `changes`:
    the exact line changes, when the writer knows them (sorted, disjoint)."""
    region = changed_region(old, new) if region is None else region
    if region.empty:
        return "", []
    matcher: difflib.SequenceMatcher[str]
    if changes is not None and len(changes) > FEW_CHANGES:
        # difflib finds the matching blocks between many changes in quadratic time:
        # the writer's own changes are the opcodes
        lo, matcher = 0, _Known(splice_opcodes(changes, len(old), len(new)))
    else:
        lo = max(0, region.start - CONTEXT)
        old_hi = min(len(old), region.old_end + CONTEXT)
        new_hi = min(len(new), region.new_end + CONTEXT)
        matcher = difflib.SequenceMatcher(None, old[lo:old_hi], new[lo:new_hi], autojunk=False)
    rows: list[str] = []
    added: list[int] = []
    for group in matcher.get_grouped_opcodes(CONTEXT):
        rows.append(_hunk_header(group, lo))
        for tag, i1, i2, j1, j2 in group:
            for i in range(lo + i1, lo + i2) if tag in ("replace", "delete") else ():
                rows.append(f"-{i + 1}|{old[i]}")
            for j in range(lo + j1, lo + j2):
                sign = " " if tag == "equal" else "+"
                rows.append(_row(new_anchors[j], new[j], sign))
                if sign == "+":
                    added.append(j + 1)
    return "\n".join(rows), added


Tag = Literal["replace", "delete", "insert", "equal"]
Opcode = tuple[Tag, int, int, int, int]


class _Known(difflib.SequenceMatcher):  # type: ignore[type-arg]
    """A matcher whose opcodes are known: difflib only groups them into hunks."""

    def __init__(self, opcodes: list[Opcode]) -> None:
        super().__init__(None, (), ())
        self._known = opcodes

    def get_opcodes(self) -> list[Opcode]:
        return self._known


def splice_opcodes(
    changes: Sequence[tuple[int, int, int]], old_len: int, new_len: int
) -> list[Opcode]:
    """difflib-style opcodes of a content made by `changes` (old lines [start, end)
    became `count` new lines; sorted, disjoint): O(changes), not a diff."""
    opcodes: list[Opcode] = []
    i = j = 0
    for start, end, count in changes:
        if start > i:
            opcodes.append(("equal", i, start, j, j + start - i))
            j += start - i
        if end > start or count:
            tag: Tag = (
                "replace" if end > start and count else ("delete" if end > start else "insert")
            )
            opcodes.append((tag, start, end, j, j + count))
        i, j = max(i, end), j + count
    if i < old_len or not opcodes:
        opcodes.append(("equal", i, old_len, j, new_len))
    return opcodes


def _tag(removes: bool, adds: bool) -> Tag:
    if removes:
        return "replace" if adds else "delete"
    return "insert"


def _hunk_header(group: list[tuple[str, int, int, int, int]], lo: int) -> str:
    i1, i2 = group[0][1], group[-1][2]
    j1, j2 = group[0][3], group[-1][4]
    return f"@@ -{lo + i1 + 1},{i2 - i1} +{lo + j1 + 1},{j2 - j1} @@"
