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
range is never silently overwritten. An insertion that names no anchor line (a
diff's added lines, an `old_string`'s) relies on its position only: it goes
between its two neighbours while nobody wrote between them, and beside the one
that is left when the other was changed; it is refused when both changed, or
when someone inserted lines between them (which side would be a guess). Lines a
writer only used to find its place (a diff's context) are not relied on. This
is the only relocation there is: never by hash alone, failing closed when the
map breaks.
The lines an agent was not shown are carried through the same changes by
`daemon.text.ranges`, as ranges.
"""

from __future__ import annotations

import itertools
from collections.abc import Generator, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import TypeVar

from editjournal.daemon.text.alignment import (
    DIFFLIB_UP_TO,
    line_map_steps,
    patience_middle,
)
from editjournal.daemon.text.deferral import Deferred, too_big
from editjournal.daemon.text.edit import EditPlan, Splice
from editjournal.daemon.text.region import changed_region

T = TypeVar("T")
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
    """Where each old line is in `new`; unchanged prefix and suffix cost nothing to align.

    A big changed middle is a job's work where the request may be parked (see
    `daemon.text.deferral`): this stops the request before anything changed, a job
    computes the map a step at a time (`alignment.line_map_steps`) and keeps it, and
    the request, run again, finds it here."""
    for kept_old, kept_new, kept in _LAST_MAPS:
        if (kept_old is old or kept_old == old) and (kept_new is new or kept_new == new):
            return list(kept)
    if isinstance(old, tuple) and isinstance(new, tuple) and _worth_a_job(old, new):
        raise Deferred(work=_kept_map(old, new))
    return _finished(line_map_steps(old, new))


_LAST_MAPS: list[tuple[Sequence[str], Sequence[str], LineMap]] = []
_MAPS_KEPT = 2  # a request carries an agent's snapshot through a change or two
_DIFFLIB_COST = 200  # a difflib map of n lines costs about a pass over n * n / this lines


def _worth_a_job(old: tuple[str, ...], new: tuple[str, ...]) -> bool:
    """Whether the map's changed middle is big enough to be a job here: a patience
    alignment costs a few passes over its lines; difflib's, on repeated lines, more
    like its lines squared (~0.2 s for 2,000 lines of code, seconds for 10,000): a job
    from `DIFFLIB_UP_TO` lines on (one that fits its first slice answers at once)."""
    region = changed_region(old, new)
    size = region.old_end - region.start + region.new_end - region.start
    if patience_middle(region.old_end - region.start, region.new_end - region.start):
        return too_big(size)
    return size > DIFFLIB_UP_TO and too_big(size * size // _DIFFLIB_COST)


def _kept_map(old: tuple[str, ...], new: tuple[str, ...]) -> Iterator[None]:
    """The job's work: the map a step at a time, then kept for the request's next run."""
    mapping = yield from line_map_steps(old, new)
    _LAST_MAPS.insert(0, (old, new, mapping))
    del _LAST_MAPS[_MAPS_KEPT:]


def _finished(steps: Generator[None, None, T]) -> T:
    """Every step at once: the result, where no job may take it."""
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]


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


@dataclass(frozen=True)
class Carried:
    """A base carried through the first `taken` steps of a chain: where each base line
    is in the content those steps left (`lines`, `sha256`). A longer chain of the same
    steps resumes from it (`carry`'s `start`) instead of from the base."""

    mapping: LineMap
    lines: Sequence[str]
    sha256: str | None
    taken: int


def carry(
    base: Sequence[str], base_sha: str | None, steps: Sequence[Step], start: Carried | None = None
) -> Carried:
    """`base` carried through every step; from `start` (the same base through the first
    `start.taken` of these steps) when given."""
    if start is None:
        mapping: LineMap = list(range(len(base)))
        previous, previous_sha, taken = base, base_sha, 0
    else:
        mapping, previous, previous_sha, taken = (
            start.mapping,
            start.lines,
            start.sha256,
            start.taken,
        )
    for step in steps[taken:]:
        mapping = _compose(mapping, step_map(previous, previous_sha, step))
        previous, previous_sha = step.lines, step.sha256
    return Carried(mapping, previous, previous_sha, len(steps))


def mapped_to(carried: Carried, current: Sequence[str]) -> LineMap:
    """The carried map, then (if the steps do not end at `current`, e.g. a change whose
    content was never stored) a diff to `current`."""
    if list(carried.lines) != list(current):
        return _compose(carried.mapping, line_map(carried.lines, current))
    return carried.mapping


def chain_map(
    base: Sequence[str], base_sha: str | None, steps: Sequence[Step], current: Sequence[str]
) -> LineMap:
    """`base` carried through every step, then (if the steps do not end there, e.g. a
    change whose content was never stored) diffed against `current`."""
    return mapped_to(carry(base, base_sha, steps), current)


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
    moved: list[Splice] = []
    broken: list[BrokenSpan] = []
    for splice in plan.splices:
        carried = _moved(splice, mapping)
        if carried is None:
            broken.append(BrokenSpan(splice.index + 1, splice.op, relied(splice, len(mapping))))
        else:
            moved.append(carried)
    if broken:
        return plan, broken
    ordered = tuple(sorted(moved, key=lambda s: (s.start, s.end, s.index)))
    return replace(plan, splices=ordered), []


def relied(splice: Splice, old_len: int) -> tuple[int, ...]:
    """The 1-based lines a splice relies on: its targets, or an insertion's neighbours."""
    if splice.targets or splice.end > splice.start:
        return splice.targets
    return tuple(n for n in (splice.start, splice.start + 1) if 1 <= n <= old_len)


def _moved(splice: Splice, mapping: LineMap) -> Splice | None:
    """One splice carried over, or None when a line it relies on did not survive."""
    if splice.end == splice.start and not splice.targets:
        at = position(mapping, splice.start)
        return None if at is None else replace(splice, start=at, end=at)
    if not span_survives(mapping, splice.targets):
        return None
    if splice.end > splice.start:  # replaces or deletes lines start..end-1
        first, last = mapping[splice.start], mapping[splice.end - 1]
        if first is None or last is None or last - first != splice.end - splice.start - 1:
            return None  # a line between its targets changed, or was inserted into
        return replace(splice, start=first, end=last + 1)
    anchor = splice.targets[0]  # an insertion beside its anchor line
    at = mapping[anchor - 1]
    assert at is not None
    at = at + 1 if splice.op == "insert_after" else at
    return replace(splice, start=at, end=at)


def position(mapping: LineMap, at: int) -> int | None:
    """Where an insertion before old line `at` (0-based; `len(mapping)`: at the end)
    goes: between its neighbours while they are still adjacent; beside the one left
    when the other changed; None when both changed or lines came between them."""
    size = len(mapping)
    above = mapping[at - 1] if at > 0 else None
    below = mapping[at] if at < size else None
    if above is not None and below is not None:
        return below if below == above + 1 else None
    if above is not None:
        return above + 1
    if below is not None:
        return below
    if size == 0:
        return 0
    return None


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


SLIDE_LIMIT = 64  # alignments tried each way: a run of identical lines longer than this is rare


def ambiguous_seams(plan: EditPlan, lines: Sequence[str], mapping: LineMap) -> list[BrokenSpan]:
    """Splices found by text whose alignment is a guess that matters now.

    A removed or added line beside an identical one (a blank line between blanks, a
    closing line above its twin) can be placed on either: the text makes the same
    content both ways, so which line it "is" was the diff's choice, not the writer's.
    Once another writer changed a line one alignment relies on, the alignments no
    longer agree in the current content — one lands on the changed line, or lines came
    between the twins — and choosing one would be guessing. Each such splice is
    returned with the lines of the alignment that broke (empty: the alignments only
    moved apart)."""
    ambiguous = []
    for splice in plan.splices:
        carried = _moved(splice, mapping)
        if carried is None:
            continue  # broken as it is: the ordinary stale refusal says so
        for shift, other in _alignments(splice, lines):
            moved = _moved(other, mapping)
            if moved is None or moved.start - carried.start != shift:
                lines_of = relied(other, len(lines)) if moved is None else ()
                ambiguous.append(BrokenSpan(splice.index + 1, splice.op, lines_of))
                break
    return ambiguous


def _alignments(splice: Splice, lines: Sequence[str]) -> list[tuple[int, Splice]]:
    """The same change slid up and down over identical lines, with each one's shift."""
    found = []
    for step in (-1, 1):
        current = splice
        for k in range(1, SLIDE_LIMIT + 1):
            slid = _slid(current, lines, step)
            if slid is None:
                break
            found.append((step * k, slid))
            current = slid
    return found


def _slid(splice: Splice, lines: Sequence[str], step: int) -> Splice | None:
    """The splice one line up (step -1) or down (+1) making the same content, if it can."""
    start, end, new = splice.start, splice.end, splice.new_lines
    if start == end and not new:
        return None
    if step < 0:
        if start < 1:
            return None
        moved = (lines[start - 1], *new)
        if moved[-1] != lines[end - 1]:  # an insertion's `end - 1` is the line above it
            return None
        body = moved[:-1]
    else:
        if end >= len(lines):
            return None
        moved = (*new, lines[end])
        if moved[0] != lines[start]:
            return None
        body = moved[1:]
    start, end = start + step, end + step
    targets = tuple(range(start + 1, end + 1)) if splice.targets else ()
    return replace(splice, start=start, end=end, new_lines=body, targets=targets)
