"""Mapping an edit planned on an agent's snapshot forward to the current content. Pure.

The journal knows which version of a file each agent last saw. Its anchors are
resolved in *that* version, then carried to the current content step by step,
one recorded change at a time: a line nobody changed maps to its new position;
a changed or deleted line maps to nothing. A change made by one of our tools
records exactly which lines it replaced (`line_changes`), and its step uses
that; only changes whose lines are unknown (outside writers) fall back to a
line-level diff — which, on repetitive text, can match a line to an identical
one elsewhere, so the exact record is preferred wherever there is one.
An operation applies only when every line it relies on maps — and, for a
range, maps to a contiguous block, so a line someone else inserted inside the
range is never silently overwritten. This is the only relocation there is:
never by hash alone, failing closed when the map breaks.
The lines an agent was not shown are carried through the same changes by
`daemon.text.ranges`, as ranges.
"""

from __future__ import annotations

import difflib
import itertools
from collections.abc import Sequence
from dataclasses import dataclass, replace

from editjournal.daemon.text.diff import changed_region
from editjournal.daemon.text.edit import EditPlan, Splice

LineMap = list[int | None]  # old 0-based index -> new 0-based index, or None if gone
LineChange = tuple[int, int, int]  # lines [start, end) (0-based) became `inserted` new lines


@dataclass(frozen=True, slots=True)
class Step:
    """One recorded change: the content it left, and (when its writer knows them)
    exactly which lines of the content before it replaced."""

    lines: Sequence[str]
    before_sha256: str | None = None
    sha256: str | None = None
    line_changes: Sequence[LineChange] | None = None


def line_map(old: Sequence[str], new: Sequence[str]) -> LineMap:
    """Where each old line is in `new`; unchanged prefix and suffix cost nothing to align."""
    region = changed_region(old, new)
    mapping: LineMap = [None] * len(old)
    for i in range(region.start):
        mapping[i] = i
    shift = len(new) - len(old)
    for i in range(region.old_end, len(old)):
        mapping[i] = i + shift
    middle_old = old[region.start : region.old_end]
    middle_new = new[region.start : region.new_end]
    matcher = difflib.SequenceMatcher(None, middle_old, middle_new, autojunk=False)
    for block in matcher.get_matching_blocks():
        for k in range(block.size):
            mapping[region.start + block.a + k] = region.start + block.b + k
    return mapping


def exact_map(old_len: int, changes: Sequence[LineChange]) -> LineMap:
    """The map a change with known `line_changes` (sorted, not overlapping) makes:
    replaced lines are gone, every other line shifts by what came before it."""
    mapping: LineMap = [None] * old_len
    shift, position = 0, 0
    for start, end, inserted in changes:
        for i in range(position, start):
            mapping[i] = i + shift
        shift += inserted - (end - start)
        position = max(position, end)
    for i in range(position, old_len):
        mapping[i] = i + shift
    return mapping


def step_map(previous: Sequence[str], previous_sha: str | None, step: Step) -> LineMap:
    """Exact when the step's record fits the content before it, else a line diff."""
    if step.line_changes is not None and step.before_sha256 == previous_sha:
        inserted = sum(n - (end - start) for start, end, n in step.line_changes)
        if len(previous) + inserted == len(step.lines):
            return exact_map(len(previous), step.line_changes)
    return line_map(previous, step.lines)


def chain_map(
    base: Sequence[str], base_sha: str | None, steps: Sequence[Step], current: Sequence[str]
) -> LineMap:
    """`base` carried through every step, then (if the steps do not end there, e.g. a
    change whose content was never stored) diffed against `current`."""
    mapping: LineMap = list(range(len(base)))
    previous, previous_sha = base, base_sha
    for step in steps:
        mapping = _compose(mapping, step_map(previous, previous_sha, step))
        previous, previous_sha = step.lines, step.sha256
    if list(previous) != list(current):
        mapping = _compose(mapping, line_map(previous, current))
    return mapping


def _compose(first: LineMap, then: LineMap) -> LineMap:
    return [None if p is None else then[p] for p in first]


@dataclass(frozen=True, slots=True)
class BrokenSpan:
    """Lines an operation relied on that did not survive into the current content."""

    operation: int  # 1-based position in the batch
    op: str
    lines: tuple[int, ...]  # 1-based lines of the snapshot


def span_survives(mapping: LineMap, lines: Sequence[int]) -> bool:
    """Every 1-based snapshot line maps, and consecutive lines stay consecutive."""
    positions = [mapping[n - 1] for n in lines]
    if any(p is None for p in positions):
        return False
    return all(b == a + 1 for a, b in itertools.pairwise(positions))  # type: ignore[operator]


def map_plan(plan: EditPlan, mapping: LineMap) -> tuple[EditPlan, list[BrokenSpan]]:
    """The plan in current coordinates, or the spans that broke (then the plan is unusable)."""
    broken = [
        BrokenSpan(s.index + 1, s.op, s.targets)
        for s in plan.splices
        if not span_survives(mapping, s.targets)
    ]
    if broken:
        return plan, broken
    moved = tuple(_moved(s, mapping) for s in plan.splices)
    ordered = tuple(sorted(moved, key=lambda s: (s.start, s.end, s.index)))
    return replace(plan, splices=ordered), []


def _moved(splice: Splice, mapping: LineMap) -> Splice:
    """Carry one splice over; its targets survived, so their positions exist."""
    if splice.end > splice.start:  # replaces or deletes lines start..end-1
        first, last = mapping[splice.start], mapping[splice.end - 1]
        assert first is not None and last is not None
        return replace(splice, start=first, end=last + 1)
    anchor = splice.targets[0]  # an insertion beside its anchor line
    position = mapping[anchor - 1]
    assert position is not None
    at = position + 1 if splice.op == "insert_after" else position
    return replace(splice, start=at, end=at)


def first_breaks(
    base: Sequence[str],
    base_sha: str | None,
    steps: Sequence[Step],
    spans: Sequence[Sequence[int]],
) -> list[int | None]:
    """For each span of 1-based `base` lines, the index of the step that broke it.

    None: no single step broke the span (only their combination did).
    """
    alive: dict[int, list[int]] = {i: list(span) for i, span in enumerate(spans)}
    breaks: list[int | None] = [None] * len(spans)
    previous, previous_sha = base, base_sha
    for k, step in enumerate(steps):
        mapping = step_map(previous, previous_sha, step)
        for i, positions in list(alive.items()):
            if span_survives(mapping, positions):
                alive[i] = [mapping[p - 1] + 1 for p in positions]  # type: ignore[operator]
            else:
                breaks[i] = k
                del alive[i]
        previous, previous_sha = step.lines, step.sha256
    return breaks
