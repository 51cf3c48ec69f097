"""The line map of two contents, in steps of bounded work. Pure.

`rebase.line_map` aligns the changed middle of two contents (their equal prefix
and suffix map as they are): by patience diff when it has more than
`PATIENCE_FROM` lines (the lines found exactly once on each side, in the longest
order both agree on, each gap between them aligned the same way, by difflib once
small), else by difflib's matching blocks. Done line by line in Python that took
~0.5 s for 200,000 lines, and seconds for a few thousand lines with many blank
ones (difflib), all of it on the daemon's thread (issue 40). Here the very same
map is computed with the per-line work done by C loops (counting by
`Counter.update`, the unique lines picked by `compress` over the counts, the equal
ends compared a chunk at a time, matched lines kept as runs written by slice
assignment), difflib's longest-match search without its walk over every place of
a repeated line, and as a generator that yields after each bounded piece of work,
so a job can stop between steps (`rebase.line_map` hands it to the index job,
daemon/handlers/indexjob.py, as a `Deferred`'s work). The pairs it matches are
exactly those of the line-by-line version (tests/unit/test_alignment.py checks
them against it, and against difflib, on random edits).

No clock and no I/O here: the caller decides when to stop.
"""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Generator, Sequence
from itertools import compress, islice, pairwise, repeat
from operator import and_, eq, ne, not_, or_, sub

from editjournal.daemon.text.region import changed_region

Run = tuple[int, int, int]  # a[i:i+n] matched to b[j:j+n]
Steps = Generator[None, None, None]
LineMap = list[int | None]  # old 0-based index -> new 0-based index, or None if gone

# Changed middles of more lines than this are aligned by patience: difflib finds each
# matching block by a pass over the whole range, and an outside change of 1,000 lines
# spread over a 200,000-line file held the daemon's thread for minutes (issue 40).
PATIENCE_FROM = 20_000
DIFFLIB_UP_TO = 2_000  # lines of a gap between two anchors still aligned by difflib
STEP_LINES = 16_384  # lines counted or compared between two yields: a few ms of work
_CHUNK = 256  # lines compared at once while trimming equal ends
_ONE, _TWO = 1, 2
_ONES = repeat(_ONE)  # endless: every `map(eq, ..., _ONES)` stops at its other input


def line_map_steps(old: Sequence[str], new: Sequence[str]) -> Generator[None, None, LineMap]:
    """Where each old line is in `new` (`rebase.line_map`), a step at a time: the equal
    prefix and suffix map as they are, the middle between them by patience when it has
    more than `PATIENCE_FROM` lines, else by difflib."""
    region = changed_region(old, new)
    mapping: LineMap = [None] * len(old)
    start, old_end, new_end = region.start, region.old_end, region.new_end
    mapping[:start] = range(start)
    mapping[old_end:] = range(new_end, new_end + len(old) - old_end)
    if patience_middle(old_end - start, new_end - start):
        runs: list[Run] = []
        yield from _aligned(old, new, start, old_end, start, new_end, runs)
    else:
        runs = yield from _difflib_runs(old, new, start, old_end, start, new_end)
    for k, (i, j, n) in enumerate(runs):
        mapping[i : i + n] = range(j, j + n)
        if k % STEP_LINES == STEP_LINES - 1:
            yield None
    return mapping


def patience_middle(old_lines: int, new_lines: int) -> bool:
    """Whether a changed middle of these many lines is aligned by patience."""
    return old_lines + new_lines > PATIENCE_FROM


def patience_runs(a: Sequence[str], b: Sequence[str]) -> Generator[None, None, list[Run]]:
    """The runs of matched lines of `a` and `b` (see the module), ascending; a step of
    bounded work per item yielded."""
    runs: list[Run] = []
    yield from _aligned(a, b, 0, len(a), 0, len(b), runs)
    return runs


def _aligned(
    a: Sequence[str], b: Sequence[str], alo: int, ahi: int, blo: int, bhi: int, runs: list[Run]
) -> Steps:
    """Append to `runs` the matched lines of a[alo:ahi] and b[blo:bhi]: equal ends first,
    then the unique lines in the order both agree on, each gap aligned the same way.
    Lines repeated on both sides with no unique line near them stay unmatched."""
    head = _equal_head(a, b, alo, ahi, blo, bhi)
    if head:
        runs.append((alo, blo, head))
        alo, blo = alo + head, blo + head
    tail = _equal_tail(a, b, alo, ahi, blo, bhi)
    ahi, bhi = ahi - tail, bhi - tail
    if alo < ahi and blo < bhi:
        if ahi - alo + bhi - blo <= DIFFLIB_UP_TO:
            runs.extend((yield from _difflib_runs(a, b, alo, ahi, blo, bhi)))
        else:
            yield from _anchored(a, b, alo, ahi, blo, bhi, runs)
    if tail:
        runs.append((ahi, bhi, tail))


def _anchored(
    a: Sequence[str], b: Sequence[str], alo: int, ahi: int, blo: int, bhi: int, runs: list[Run]
) -> Steps:
    """The unique lines' order as runs, each gap between two of them aligned again."""
    order = yield from _unique_order(a, b, alo, ahi, blo, bhi)
    is_, js = order
    if not is_:
        return
    breaks = yield from _breaks(a, b, is_, js)
    i0, j0 = alo, blo
    starts = [0, *breaks, len(is_)]
    for k, (first, end) in enumerate(pairwise(starts)):
        i, j = is_[first], js[first]
        if i > i0 and j > j0:  # lines on both sides between two anchors: align them
            if i - i0 == j - j0 and a[i0:i] == b[j0:j]:  # all equal (a blank line, say)
                runs.append((i0, j0, i - i0))
            else:
                yield from _aligned(a, b, i0, i, j0, j, runs)
        size = is_[end - 1] - i + 1  # the same on both sides (see `_breaks`)
        runs.append((i, j, size))
        i0, j0 = i + size, j + size
        if k % 256 == 255:
            yield None
    yield from _aligned(a, b, i0, ahi, j0, bhi, runs)


def _breaks(
    a: Sequence[str], b: Sequence[str], is_: list[int], js: list[int]
) -> Generator[None, None, list[int]]:
    """The positions k where anchor k does not follow anchor k-1 on both sides, nor
    with one equal line between them on each (a blank line, a closing brace: aligning
    that gap matches it, so the anchors and it make one run), a chunk a step."""
    found: list[int] = []
    for lo, hi in _chunks(1, len(is_)):
        now_a, now_b = is_[lo:hi], js[lo:hi]
        step_a = list(map(sub, now_a, is_[lo - 1 : hi - 1]))
        step_b = list(map(sub, now_b, js[lo - 1 : hi - 1]))
        apart = map(or_, map(ne, step_a, repeat(_ONE)), map(ne, step_b, repeat(_ONE)))
        far = list(compress(range(lo, hi), apart))
        yield None
        # of those, the anchors two lines on from the one before, on each side, with
        # equal lines between (any index read is a line: the step is at least 2)
        gap_a = map(step_a.__getitem__, map(sub, far, repeat(lo)))
        gap_b = map(step_b.__getitem__, map(sub, far, repeat(lo)))
        two = map(and_, map(eq, gap_a, repeat(_TWO)), map(eq, gap_b, repeat(_TWO)))
        above_a = map(a.__getitem__, map(sub, map(is_.__getitem__, far), repeat(_ONE)))
        above_b = map(b.__getitem__, map(sub, map(js.__getitem__, far), repeat(_ONE)))
        joined = map(and_, two, map(eq, above_a, above_b))
        found.extend(compress(far, map(not_, joined)))
        yield None
    return found


def _unique_order(
    a: Sequence[str], b: Sequence[str], alo: int, ahi: int, blo: int, bhi: int
) -> Generator[None, None, tuple[list[int], list[int]]]:
    """The lines found exactly once in a[alo:ahi] and once in b[blo:bhi], as their
    positions on each side: the longest run of them increasing on both sides (of
    several, the one patience sorting keeps)."""
    in_a = yield from _counted(a, alo, ahi)
    in_b = yield from _counted(b, blo, bhi)
    once_b = yield from _once(in_b, None)
    both = yield from _once(in_a, once_b)
    del in_a, in_b, once_b
    is_ = yield from _places(a, alo, ahi, both)
    js = yield from _places(b, blo, bhi, both)
    moved = yield from _moved(a, b, is_, js)
    if not moved:  # the k-th unique line of each side is the same line
        return is_, js
    where_b: dict[str, int] = {}
    for lo, hi in _chunks(0, len(js)):
        where_b.update(zip(map(b.__getitem__, js[lo:hi]), js[lo:hi], strict=True))
        yield None
    js = []
    for lo, hi in _chunks(0, len(is_)):
        js.extend(map(where_b.__getitem__, map(a.__getitem__, is_[lo:hi])))
        yield None
    chosen = yield from _longest_increasing(js)
    return list(map(is_.__getitem__, chosen)), list(map(js.__getitem__, chosen))


def _counted(lines: Sequence[str], lo: int, hi: int) -> Generator[None, None, Counter[str]]:
    """How many times each line occurs in lines[lo:hi], counted a chunk a step."""
    counts: Counter[str] = Counter()
    for start, end in _chunks(lo, hi):
        counts.update(lines[start:end])
        yield None
    return counts


def _once(counts: Counter[str], among: set[str] | None) -> Generator[None, None, set[str]]:
    """The lines counted once (and found in `among`, when given), a chunk a step: the
    counter is walked by C loops (`compress` over its values beside its keys)."""
    found: set[str] = set()
    keys, values = iter(counts), iter(counts.values())
    for _ in _chunks(0, len(counts)):
        once = compress(islice(keys, STEP_LINES), map(eq, islice(values, STEP_LINES), _ONES))
        found.update(once if among is None else filter(among.__contains__, once))
        yield None
    return found


def _places(
    lines: Sequence[str], lo: int, hi: int, wanted: set[str]
) -> Generator[None, None, list[int]]:
    """Where the lines of `wanted` are in lines[lo:hi], ascending, a chunk a step."""
    found: list[int] = []
    for start, end in _chunks(lo, hi):
        found.extend(compress(range(start, end), map(wanted.__contains__, lines[start:end])))
        yield None
    return found


def _moved(
    a: Sequence[str], b: Sequence[str], is_: list[int], js: list[int]
) -> Generator[None, None, bool]:
    """Whether the unique lines come in another order on each side (then the k-th of
    `a` is not the k-th of `b`), compared a chunk a step."""
    for lo, hi in _chunks(0, len(is_)):
        if list(map(a.__getitem__, is_[lo:hi])) != list(map(b.__getitem__, js[lo:hi])):
            return True
        yield None
    return False


def _longest_increasing(js: list[int]) -> Generator[None, None, list[int]]:
    """The positions of the longest increasing subsequence of `js` (distinct values)
    that patience sorting finds: each value placed on the leftmost pile whose top is
    not smaller, linked to the top of the pile before it."""
    tops: list[int] = []  # the smallest last j of an increasing run of each length
    ends: list[int] = []  # which position that is
    back: list[int] = [-1] * len(js)
    for k, j in enumerate(js):
        n = bisect.bisect_left(tops, j)
        back[k] = ends[n - 1] if n else -1
        if n == len(tops):
            tops.append(j)
            ends.append(k)
        else:
            tops[n], ends[n] = j, k
        if k % STEP_LINES == STEP_LINES - 1:
            yield None
    chosen: list[int] = []
    k = ends[-1] if ends else -1
    while k >= 0:
        chosen.append(k)
        k = back[k]
    return chosen[::-1]


def _difflib_runs(
    a: Sequence[str], b: Sequence[str], alo: int, ahi: int, blo: int, bhi: int
) -> Generator[None, None, list[Run]]:
    """difflib's matching blocks of a[alo:ahi] and b[blo:bhi] (`SequenceMatcher`, no junk,
    no autojunk), as runs of `a` and `b`."""
    blocks = yield from matching_blocks(a[alo:ahi], b[blo:bhi])
    return [(alo + i, blo + j, n) for i, j, n in blocks]


def within(steps: Generator[None, None, list[Run]], most: int) -> list[Run] | None:
    """A stepped search's runs, or None past `most` of its steps (counted, not timed: a
    caller with no job to hand it to bounds it so, and falls back to a coarser answer)."""
    for _ in range(most + 1):
        try:
            next(steps)
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]
    return None


def matching_blocks(a: Sequence[str], b: Sequence[str]) -> Generator[None, None, list[Run]]:
    """`SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks()` without its
    closing empty block (and adjacent blocks left uncollapsed: the same lines match),
    a step at a time: its loop, each longest match searched by `_longest_match`."""
    where: dict[str, list[int]] = {}
    for j, line in enumerate(b):
        where.setdefault(line, []).append(j)
    queue = [(0, len(a), 0, len(b))]
    blocks: list[Run] = []
    rows = 0  # of the searches since the last step: many small ones add up
    while queue:
        alo, ahi, blo, bhi = queue.pop()
        i, j, k = yield from _longest_match(a, b, where, alo, ahi, blo, bhi)
        rows += ahi - alo + 1
        if rows >= STEP_LINES:
            rows = 0
            yield None
        if k:
            blocks.append((i, j, k))
            if alo < i and blo < j:
                queue.append((alo, i, blo, j))
            if i + k < ahi and j + k < bhi:
                queue.append((i + k, ahi, j + k, bhi))
    blocks.sort()
    return blocks


def _longest_match(
    a: Sequence[str],
    b: Sequence[str],
    where: dict[str, list[int]],
    alo: int,
    ahi: int,
    blo: int,
    bhi: int,
) -> Generator[None, None, Run]:
    """`SequenceMatcher.find_longest_match(alo, ahi, blo, bhi)` with no junk: the longest
    equal block, the one ending first in `a` (then in `b`) of several.

    difflib walks every place in b[blo:bhi] of each line of a[alo:ahi], keeping the
    length of the block ending there: a blank line's row costs all the blank lines of
    `b`, and a file with many makes it quadratic (seconds for 10,000 lines). A block
    of 1 never becomes the best once one is found, so only the places where a block
    goes on from the row before are looked at (k >= 2): those of this line right after
    a place of the line before, found from whichever of the two lines has fewer places
    in range. The same blocks, met in the same order: the same best. A step every
    `STEP_LINES` places looked at."""
    besti, bestj, bestsize = alo, blo, 0
    longer: dict[int, int] = {}  # place in b -> length of the block ending there, if >= 2
    nothing: list[int] = []
    before: list[int] = nothing  # the places of the row before (a[i - 1])
    before_lo = before_hi = 0  # its places in [blo, bhi)
    work = 0
    for i in range(alo, ahi):
        line = a[i]
        places = where.get(line, nothing)
        lo, hi = bisect.bisect_left(places, blo), bisect.bisect_left(places, bhi)
        if bestsize == 0 and lo < hi:  # the first row with a place: a block of 1 is best
            besti, bestj, bestsize = i, places[lo], 1
        grown: dict[int, int] = {}
        if (
            hi - lo <= before_hi - before_lo
        ):  # from this line's places: after one of the row before?
            for j in places[lo:hi]:
                if j > blo and b[j - 1] == a[i - 1]:
                    k = grown[j] = longer.get(j - 1, 1) + 1
                    if k > bestsize:
                        besti, bestj, bestsize = i - k + 1, j - k + 1, k
            work += hi - lo + 1
        else:  # from the places of the row before: is this line right after one?
            for p in before[before_lo:before_hi]:
                if p + 1 < bhi and b[p + 1] == line:
                    k = grown[p + 1] = longer.get(p, 1) + 1
                    if k > bestsize:
                        besti, bestj, bestsize = i - k + 1, p + 2 - k, k
            work += before_hi - before_lo + 1
        longer, before, before_lo, before_hi = grown, places, lo, hi
        if work >= STEP_LINES:
            work = 0
            yield None
    # difflib then extends the best by equal lines on each end (none: with no junk
    # the loop above found them already); kept so the result is its by construction
    while besti > alo and bestj > blo and a[besti - 1] == b[bestj - 1]:
        besti, bestj, bestsize = besti - 1, bestj - 1, bestsize + 1
    while (
        besti + bestsize < ahi
        and bestj + bestsize < bhi
        and a[besti + bestsize] == b[bestj + bestsize]
    ):
        bestsize += 1
    return besti, bestj, bestsize


def _equal_head(a: Sequence[str], b: Sequence[str], alo: int, ahi: int, blo: int, bhi: int) -> int:
    """How many first lines of a[alo:ahi] and b[blo:bhi] are equal."""
    limit = min(ahi - alo, bhi - blo)
    n = 0
    while n + _CHUNK <= limit and a[alo + n : alo + n + _CHUNK] == b[blo + n : blo + n + _CHUNK]:
        n += _CHUNK
    while n < limit and a[alo + n] == b[blo + n]:
        n += 1
    return n


def _equal_tail(a: Sequence[str], b: Sequence[str], alo: int, ahi: int, blo: int, bhi: int) -> int:
    """How many last lines of a[alo:ahi] and b[blo:bhi] are equal."""
    limit = min(ahi - alo, bhi - blo)
    n = 0
    while n + _CHUNK <= limit and a[ahi - n - _CHUNK : ahi - n] == b[bhi - n - _CHUNK : bhi - n]:
        n += _CHUNK
    while n < limit and a[ahi - 1 - n] == b[bhi - 1 - n]:
        n += 1
    return n


def _chunks(lo: int, hi: int) -> list[tuple[int, int]]:
    return [(k, min(hi, k + STEP_LINES)) for k in range(lo, hi, STEP_LINES)]
