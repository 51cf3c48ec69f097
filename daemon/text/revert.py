"""Plans that put lines back: a restore's splices and an undo's revert. Pure.

A restore replaces a file's content with a checkpoint's, but as splices only
where the two differ, so other agents' anchors on the lines it leaves alone
stay good and the journal records exactly what it changed. An undo reverts one
recorded write: each of the write's changes (its `line_changes`, narrowed to
the lines that really differ) is carried from the write's result to the current
content through the same line map as stale anchors (`daemon.text.rebase`). A
change whose lines are still what the write left is put back where they are now;
one whose lines differ now (or a gap someone filled) is reported, never guessed at.
Whether a line is still the write's is a matter of content, not of events: a later
write that was undone, or two that cancel out, leave the line as it was
(`content_maps`), and a refusal names the writes whose changes are still there
(`culprits`), never one that was taken back, so undoing them in turn ends.
Text in, plan out: no journal, no files.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from editjournal.daemon.text.edit import EditPlan, Splice
from editjournal.daemon.text.rebase import (
    LineChange,
    LineMap,
    Step,
    line_map,
    span_survives,
    step_map,
)
from editjournal.daemon.text.region import changed_region

Opcode = tuple[int, int, int, int]  # old [i1, i2) became new [j1, j2)


def differing(old: Sequence[str], new: Sequence[str]) -> Iterator[Opcode]:
    """Where `old` and `new` differ; the common prefix and suffix cost nothing."""
    region = changed_region(old, new)
    if region.empty:
        return
    lo = region.start
    middle_old, middle_new = old[lo : region.old_end], new[lo : region.new_end]
    matcher = difflib.SequenceMatcher(None, middle_old, middle_new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            yield lo + i1, lo + i2, lo + j1, lo + j2


def diff_plan(old: Sequence[str], new: Sequence[str], op: str) -> EditPlan:
    """Splices that turn `old` into `new`, only where they differ."""
    return EditPlan(
        tuple(
            Splice(k, op, i1, i2, tuple(new[j1:j2]), ())
            for k, (i1, i2, j1, j2) in enumerate(differing(old, new))
        )
    )


def refined(
    before: Sequence[str], after: Sequence[str], changes: Sequence[LineChange]
) -> list[LineChange]:
    """A write's changes narrowed to the lines that differ (a `write_file` records the
    whole file as one change); a write that recorded none is diffed whole."""
    if not changes:
        return [(i1, i2, j2 - j1) for i1, i2, j1, j2 in differing(before, after)]
    narrowed: list[LineChange] = []
    shift = 0
    for start, end, inserted in changes:
        at = start + shift
        for i1, i2, j1, j2 in differing(before[start:end], after[at : at + inserted]):
            narrowed.append((start + i1, start + i2, j2 - j1))
        shift += inserted - (end - start)
    return narrowed


@dataclass(frozen=True)
class Revert:
    """The undo as splices of the current content, or the changes it cannot put back."""

    plan: EditPlan
    broken: list[tuple[int, ...]]  # per change that cannot be reverted: 1-based lines of
    # the write's result it relied on (the lines it wrote, or a deletion's neighbours)


def revert_plan(
    before: Sequence[str],
    after_len: int,
    changes: Sequence[LineChange],
    mapping: LineMap,
    current_len: int,
) -> Revert:
    """Put `before`'s lines back for each change (`changes` in `before` coordinates, as
    `refined` gives them; `mapping`: the write's result -> the current content)."""
    splices: list[Splice] = []
    broken: list[tuple[int, ...]] = []
    shift = 0
    for k, (start, end, inserted) in enumerate(changes):
        at = start + shift
        shift += inserted - (end - start)
        old = tuple(before[start:end])
        if inserted:
            span = tuple(range(at + 1, at + inserted + 1))
            if not span_survives(mapping, span):
                broken.append(span)
                continue
            first, last = mapping[at], mapping[at + inserted - 1]
            assert first is not None and last is not None
            splices.append(Splice(k, "undo", first, last + 1, old, ()))
            continue
        gap = _gap(mapping, at, after_len, current_len)
        if gap is None:
            broken.append(tuple(n for n in (at, at + 1) if 1 <= n <= after_len))
        else:
            splices.append(Splice(k, "undo", gap, gap, old, ()))
    ordered = tuple(sorted(splices, key=lambda s: (s.start, s.end, s.index)))
    return Revert(EditPlan(ordered), broken)


def _gap(mapping: LineMap, at: int, after_len: int, current_len: int) -> int | None:
    """Where lines a write deleted before its result's line `at` (0-based) go back: after
    the line before the gap, still followed by the line after it (nobody wrote between);
    at the top or the end, beside the one neighbour there is."""
    before = mapping[at - 1] if at > 0 else None
    after = mapping[at] if at < after_len else None
    if (at > 0 and before is None) or (at < after_len and after is None):
        return None
    if before is not None:
        return before + 1 if after is None or after == before + 1 else None
    if after is not None:
        return after
    return 0 if current_len == 0 else None


def content_maps(
    base: Sequence[str], base_sha: str | None, steps: Sequence[Step], current: Sequence[str]
) -> Iterator[LineMap]:
    """`base` carried through each step in turn, then to `current` (`len(steps) + 1`
    maps, the last one to `current`), each found again by content (`repaired`): a
    line a step changed comes back when a later one puts the same text in its place."""
    mapping: LineMap = list(range(len(base)))
    seen = _Seen(base_sha, mapping)
    previous, previous_sha = base, base_sha
    for step in steps:
        mapping = seen.get(step.sha256) or repaired(
            _then(mapping, step_map(previous, previous_sha, step)), base, step.lines
        )
        seen.put(step.sha256, mapping)
        previous, previous_sha = step.lines, step.sha256
        yield mapping
    if list(previous) != list(current):
        mapping = repaired(_then(mapping, line_map(previous, current)), base, current)
    yield mapping


SEEN_VERSIONS = 64  # the latest contents whose maps are kept, to be found again


class _Seen:
    """The maps to the latest contents, by their sha256: a content the file held before
    (a write and its undo, two writes that cancel out) gets the map it had then, whatever
    the line diffs between say (on repeated lines they may pair a line with a twin)."""

    def __init__(self, base_sha: str | None, identity: LineMap) -> None:
        self._maps: dict[str, LineMap] = {}
        self.put(base_sha, identity)

    def get(self, sha: str | None) -> LineMap | None:
        return None if sha is None else self._maps.get(sha)

    def put(self, sha: str | None, mapping: LineMap) -> None:
        if sha is None:
            return
        self._maps.pop(sha, None)
        self._maps[sha] = mapping  # the newest last: the oldest goes first
        if len(self._maps) > SEEN_VERSIONS:
            del self._maps[next(iter(self._maps))]


def content_map(
    base: Sequence[str], base_sha: str | None, steps: Sequence[Step], current: Sequence[str]
) -> LineMap:
    """Where each line of `base` is in `current`, by the steps and by content."""
    *_, last = content_maps(base, base_sha, steps, current)
    return last


def repaired(mapping: LineMap, old: Sequence[str], new: Sequence[str]) -> LineMap:
    """`mapping` (old -> new, in order) with lost lines found again by content. A run of
    old lines mapped to nothing lies between two that map (or a file's end); when their
    place in `new` holds as many lines, each line that reads the same there is back.
    Never by text alone: only inside the place the surviving neighbours pin down, line
    for line, so a twin elsewhere, or a block that grew or shrank, is never taken."""
    fixed = list(mapping)
    for start, end in _lost_runs(mapping):
        above = mapping[start - 1] if start > 0 else -1
        below = mapping[end] if end < len(mapping) else len(new)
        assert above is not None and below is not None  # a run is bounded by survivors
        if below - above - 1 != end - start:
            continue
        for k in range(end - start):
            if old[start + k] == new[above + 1 + k]:
                fixed[start + k] = above + 1 + k
    return fixed


def _lost_runs(mapping: LineMap) -> Iterator[tuple[int, int]]:
    """Each maximal run [start, end) of lines mapped to nothing."""
    start: int | None = None
    for i, at in enumerate(mapping):
        if at is None and start is None:
            start = i
        elif at is not None and start is not None:
            yield start, i
            start = None
    if start is not None:
        yield start, len(mapping)


def _then(first: LineMap, then: LineMap) -> LineMap:
    return [None if p is None else then[p] for p in first]


def culprits(maps: Iterable[LineMap], spans: Sequence[Sequence[int]]) -> dict[int, set[int]]:
    """Which map (its index in `maps`, as `content_maps` yields them) lost each span of
    1-based base lines for good, and the lines it is to blame for: per line lost at the
    end, the map after which it never came back; for a span whose lines all came back
    but not side by side, the one after which they never stood together again. A step
    that was undone, or cancelled by a later one, is never named: its lines came back."""
    lines = {n for span in spans for n in span}
    alive_until = dict.fromkeys(lines, -1)  # the last map where the line maps (-1: base)
    held_until = [-1] * len(spans)
    last: LineMap = []
    for k, mapping in enumerate(maps):
        for n in lines:
            if mapping[n - 1] is not None:
                alive_until[n] = k
        for i, span in enumerate(spans):
            if span_survives(mapping, span):
                held_until[i] = k
        last = mapping
    blamed: dict[int, set[int]] = {}
    for i, span in enumerate(spans):
        lost = [n for n in span if last[n - 1] is None]
        for n in lost:
            blamed.setdefault(alive_until[n] + 1, set()).add(n)
        if not lost:
            blamed.setdefault(held_until[i] + 1, set()).update(span)
    return blamed
