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

from editjournal.daemon.text.alignment import matching_blocks, within
from editjournal.daemon.text.anchors import Anchors, LineAnchor
from editjournal.daemon.text.region import ChangedRegion, changed_region, differing_runs

FEW_CHANGES = 16  # up to this many changes, difflib also finds lines they left as they were
CONTEXT = 3
NEAR = 10  # a refusal's delta shows the hunks this close to the lines it is about
ROWS_EACH = 8  # and of each such hunk at most this many new (and removed) lines
FOCUSED_CONTEXT = 2  # unchanged lines (with their anchors) around each hunk it shows
DIFFLIB_WORK = 250_000  # line pairs of a changed middle given to difflib as it is (500 x 500)
MAX_STEPS = 16  # of the stepped search past that (a few ms each; a plain change takes none)
SEARCHED_UP_TO = 40_000  # lines of a changed middle searched at all; past it, one change
# rows of a write's diff rendered; the rest counted in one last row (a 200,000-line
# rewrite's diff: 200,000 rows, 0.6 s of a turn and a 15 MB reply)
MAX_ROWS = 10_000
MAX_CHANGED_LINES = 2_000  # a write's reply lists this many added lines with their anchors


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
    rows: list[str] = []
    added: list[int] = []
    for group in _groups(old, new, region, changes):
        _render(group, old, new, new_anchors, rows, added)
    if len(rows) >= MAX_ROWS:  # rows past it were not rendered (`_render`)
        del rows[MAX_ROWS:]
        hidden = len(added) - sum(row.startswith("+") for row in rows)
        if hidden:
            rows.append(
                f"... {hidden:,} more added lines not shown (a diff shows {MAX_ROWS:,} rows)"
            )
    return "\n".join(rows), added


Group = list[tuple[str, int, int, int, int]]  # difflib opcodes, in absolute positions


def _groups(
    old: Sequence[str],
    new: Sequence[str],
    region: ChangedRegion | None,
    changes: Sequence[tuple[int, int, int]] | None,
    context: int = CONTEXT,
) -> list[Group]:
    """The changed hunks with `context` lines around each, in absolute line positions."""
    region = changed_region(old, new) if region is None else region
    if region.empty:
        return []
    matcher: difflib.SequenceMatcher[str]
    if changes is not None and len(changes) > FEW_CHANGES:
        # difflib finds the matching blocks between many changes in quadratic time:
        # the writer's own changes are the opcodes
        lo, matcher = 0, _Known(splice_opcodes(changes, len(old), len(new)))
    else:
        lo = max(0, region.start - CONTEXT)
        old_hi = min(len(old), region.old_end + CONTEXT)
        new_hi = min(len(new), region.new_end + CONTEXT)
        matcher = _matcher(
            old[lo:old_hi], new[lo:new_hi], region.start - lo, old_hi - region.old_end
        )
    return [
        [(tag, lo + i1, lo + i2, lo + j1, lo + j2) for tag, i1, i2, j1, j2 in group]
        for group in matcher.get_grouped_opcodes(context)
    ]


def _matcher(
    a: Sequence[str], b: Sequence[str], head: int, tail: int
) -> difflib.SequenceMatcher[str]:
    """difflib's matcher of a changed middle and its context; past `DIFFLIB_WORK` line
    pairs, its very blocks found by the stepped search (daemon.text.alignment, without
    difflib's walk over every occurrence of a repeated line: a stale refusal's diff of
    a reversed 20,000-line file held the thread for minutes), and past `MAX_STEPS` of
    that, or `SEARCHED_UP_TO` lines, the middle as one change between its equal `head`
    and `tail` lines (a refusal's diff shows the changed lines near its focus)."""
    if not a or not b:  # all added or all removed (a new file): no search to make
        return _Known(_opcodes([], len(a), len(b)))
    if len(a) * len(b) <= DIFFLIB_WORK:
        return difflib.SequenceMatcher(None, a, b, autojunk=False)
    searched = len(a) + len(b) <= SEARCHED_UP_TO
    runs = within(matching_blocks(a, b), MAX_STEPS) if searched else None
    if runs is None and len(a) == len(b):  # lines changed in place, found by C loops
        runs = _same_lines(a, b)
    if runs is None:
        runs = [(0, 0, head), (len(a) - tail, len(b) - tail, tail)]
    return _Known(_opcodes(runs, len(a), len(b)))


def _same_lines(a: Sequence[str], b: Sequence[str]) -> list[tuple[int, int, int]]:
    """The runs of lines equal at the same place, of two sides as long: a big file's
    lines changed in place (every hundredth of 200,000 lines was shown as one change
    of all of them, and a `since_version` read listed every line)."""
    runs: list[tuple[int, int, int]] = []
    start = 0
    for changed, end in [*differing_runs(a, b), (len(a), len(a))]:
        if changed > start:
            runs.append((start, start, changed - start))
        start = end
    return runs


def _opcodes(runs: Sequence[tuple[int, int, int]], n: int, m: int) -> list[Opcode]:
    """difflib's `get_opcodes` from matched runs (ascending; adjacent ones joined)."""
    opcodes: list[Opcode] = []
    i = j = 0
    for ai, bj, k in [*runs, (n, m, 0)]:
        if ai > i or bj > j:
            tag: Tag = "replace" if ai > i and bj > j else ("delete" if ai > i else "insert")
            opcodes.append((tag, i, ai, j, bj))
        if k and opcodes and opcodes[-1][0] == "equal" and opcodes[-1][2] == ai:
            _, i1, _, j1, _ = opcodes.pop()
            opcodes.append(("equal", i1, ai + k, j1, bj + k))
        elif k:
            opcodes.append(("equal", ai, ai + k, bj, bj + k))
        i, j = ai + k, bj + k
    return opcodes


def _render(
    group: Group,
    old: Sequence[str],
    new: Sequence[str],
    new_anchors: Sequence[LineAnchor],
    rows: list[str],
    added: list[int],
) -> None:
    rows.append(_hunk_header(group, 0))
    # an index's rows straight from its state: a `LineAnchor` per row cost a 1,000-hunk
    # write most of its diff
    index = new_anchors.anchor_index if isinstance(new_anchors, Anchors) else None
    for tag, i1, i2, j1, j2 in group:
        if tag != "equal":  # every line it adds, shown or not: they are the write's
            added.extend(range(j1 + 1, j2 + 1))
        if tag in ("replace", "delete"):
            room = max(0, MAX_ROWS - len(rows))
            rows.extend(f"-{i + 1}|{old[i]}" for i in range(i1, min(i2, i1 + room)))
        sign = " " if tag == "equal" else "+"
        for j in range(j1, min(j2, j1 + max(0, MAX_ROWS - len(rows)))):
            if index is not None:
                rows.append(index.diff_row(j, sign))
            else:
                rows.append(_row(new_anchors[j], new[j], sign))


@dataclass(frozen=True)
class Focused:
    """The hunks of a diff near some lines, each clipped; what was left out, counted."""

    text: str
    added: list[int]
    hunks_omitted: int
    lines_omitted: int  # changed lines of the shown hunks that were clipped away


def focused_diff(
    old: Sequence[str],
    new: Sequence[str],
    new_anchors: Sequence[LineAnchor],
    focus: Sequence[int],
    near: int = NEAR,
    rows_each: int = ROWS_EACH,
) -> Focused:
    """`anchored_diff` limited to the hunks within `near` lines of the 1-based `focus`
    lines of `old` (the nearest hunk when none is), each clipped to the changed lines
    closest to them: what a refusal must show, at a cost that follows the conflict
    rather than everything that changed in the file. No `focus`: every hunk, clipped."""
    groups = _groups(old, new, None, None, FOCUSED_CONTEXT)
    if not groups:
        return Focused("", [], 0, 0)
    spots = sorted({n - 1 for n in focus})
    kept = groups
    if spots:
        distance = [min(_distance(g, p) for p in spots) for g in groups]
        kept = [g for g, d in zip(groups, distance, strict=True) if d <= near]
        kept = kept or [groups[distance.index(min(distance))]]
    rows: list[str] = []
    added: list[int] = []
    clipped = 0
    for group in kept:
        clipped += _render_clipped(_clip(group, spots, rows_each), group, old, new, new_anchors,
                                   rows, added)  # fmt: skip
    return Focused("\n".join(rows), added, len(groups) - len(kept), clipped)


def _distance(group: Group, at: int) -> int:
    """Lines between old line `at` (0-based) and a hunk's changes."""
    first = min(i1 for tag, i1, _, _, _ in group if tag != "equal")
    last = max(i2 for tag, _, i2, _, _ in group if tag != "equal")
    if first <= at < max(last, first + 1):
        return 0
    return first - at if at < first else at - last + 1


def _clip(group: Group, spots: Sequence[int], rows_each: int) -> tuple[int, int]:
    """The window of new lines [lo, hi) of a hunk that is shown: all of them when few,
    else `rows_each` centred on the focus line nearest to the hunk."""
    j_lo, j_hi = group[0][3], group[-1][4]
    if j_hi - j_lo <= rows_each:
        return j_lo, j_hi
    i_lo = group[0][1]
    nearest = min(spots or [i_lo], key=lambda p: abs(p - i_lo))
    centre = j_lo + max(0, nearest - i_lo)
    lo = max(j_lo, min(centre - rows_each // 2, j_hi - rows_each))
    return lo, lo + rows_each


def _render_clipped(
    window: tuple[int, int],
    group: Group,
    old: Sequence[str],
    new: Sequence[str],
    new_anchors: Sequence[LineAnchor],
    rows: list[str],
    added: list[int],
) -> int:
    """Render a hunk, keeping its new lines inside `window` (removed rows beside them);
    return how many changed lines were left out."""
    lo, hi = window
    kept: Group = []
    left_out = 0
    for tag, i1, i2, j1, j2 in group:
        a, b = max(j1, lo), min(j2, hi)
        if tag == "equal":
            if a < b:
                kept.append((tag, i1 + a - j1, i1 + b - j1, a, b))
            continue
        inside = j1 == j2 and lo <= j1 <= hi
        if a < b or inside:
            removed_end = min(i2, i1 + (hi - lo))  # removed rows are clipped alike
            kept.append((tag, i1, removed_end, max(a, j1) if a < b else j1, b if a < b else j1))
            left_out += (j2 - j1) - max(0, b - a) + (i2 - removed_end)
        else:
            left_out += max(j2 - j1, i2 - i1)
    if kept:
        _render(kept, old, new, new_anchors, rows, added)
    return left_out


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
