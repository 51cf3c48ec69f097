"""An anchor index built a slice at a time: the same index, in steps of bounded work. Pure.

`AnchorIndex(lines)` hashes, counts and chooses every line in one go: about a
second for 200,000 lines. `IndexBuild` does the very same work, in the same
order, a chunk of lines per step (hashes, context hashes, counts, the hashes
that share a prefix, anchors; then, if asked, where each hash is), so a job can
stop between steps and let other requests in (daemon/handlers/indexjob.py). The
result is equal to the index built at once: the counts are `Counter.update`s of
the same values in the same order, the anchors chosen from the finished counts.

No clock here: the caller decides when to stop (`steps` yields after each chunk).
"""

from __future__ import annotations

from collections.abc import Generator, Iterator

from editjournal.daemon.text.anchorcounts import AnchorCounts, AnchorKind, Positions, count_into
from editjournal.daemon.text.anchors import AnchorIndex
from editjournal.daemon.text.deferral import Deferred
from editjournal.daemon.text.linehashes import context_range, line_hash

CHUNK = 4096  # lines per step: ~10-25 ms of work each here (8,192 made steps of 40-90 ms)


class IndexBuild:
    """What a `Deferred` asked for, built step by step; `index` once `steps` ran out."""

    def __init__(self, asked: Deferred) -> None:
        self.asked = asked
        self.index: AnchorIndex | None = asked.index
        self._steps = self._work()
        self.done = False

    def steps(self) -> Iterator[None]:
        """One item per step of work; exhausted when everything asked is built."""
        yield from self._steps
        self.done = True

    def _work(self) -> Iterator[None]:
        asked = self.asked
        if asked.work is not None:
            yield from asked.work
            return
        if asked.lines is not None and asked.derive is None:
            self.index = yield from _fresh(asked.lines)
            if asked.done is not None:
                asked.done(self.index)
        index = self.index
        assert index is not None
        yield from _completed(index, asked.positions)
        if asked.lines is not None and asked.derive is not None:
            tables = yield from _copied(index, asked.positions)
            steps = index.deriving(asked.lines, asked.derive, tables, asked.verified)
            derived = yield from steps
            self.index = derived
            if asked.done is not None:
                asked.done(derived)


def _copied(index: AnchorIndex, positions: bool) -> Generator[None, None, AnchorCounts]:
    """A copy of `index`'s counts made a step at a time. Another request may derive from
    `index` between two steps, taking its counts over and changing them: then they are
    rebuilt and copied again."""
    while True:
        source = index._tables
        assert source is not None
        copy = yield from source.copying()
        if index._tables is source:
            return copy
        yield from _completed(index, positions)


def _completed(index: AnchorIndex, positions: bool) -> Iterator[None]:
    """`index` with its counts (rebuilt when a later version took them over) and, with
    `positions`, where each of its hashes is."""
    if index._tables is None:
        index.counted((yield from _counts(index._bodies, index._hashes, index._contexts)))
    if positions:
        for table in ("line", "context"):
            if table not in index._where:
                where = yield from _positions(index.digests(table))  # type: ignore[arg-type]
                index.positioned(table, where)  # type: ignore[arg-type]


def _chunks(n: int) -> Iterator[tuple[int, int]]:
    for a in range(0, n, CHUNK):
        yield a, min(n, a + CHUNK)


def _fresh(lines: tuple[str, ...]) -> Generator[None, None, AnchorIndex]:
    """`AnchorIndex(lines)`, a chunk of lines per step."""
    n = len(lines)
    hashes: list[str] = []
    for a, b in _chunks(n):
        hashes.extend(map(line_hash, lines[a:b]))
        yield None
    contexts: list[str] = []
    for a, b in _chunks(n):
        contexts.extend(context_range(lines, a, b))
        yield None
    tables = yield from _counts(lines, hashes, contexts)
    index = AnchorIndex.assembled(lines, hashes, contexts, tables)
    for a, b in _chunks(n):
        index.choose(a, b)
        yield None
    return index


def _counts(
    bodies: tuple[str, ...], hashes: list[str], contexts: list[str]
) -> Generator[None, None, AnchorCounts]:
    """`AnchorCounts(bodies, hashes, contexts)`, a chunk of lines per step."""
    tables = AnchorCounts()
    for a, b in _chunks(len(bodies)):
        yield from tables.line.extending(hashes[a:b])
        yield from tables.context.extending(contexts[a:b])
        count_into(tables.repeats, map(str.strip, bodies[a:b]))
        yield None
    for counts in (tables.line, tables.context):
        distinct = list(counts.counts[16])
        for a, b in _chunks(len(distinct)):
            counts.find_shared(distinct[a:b])
            yield None
    return tables


def _positions(digests: list[str]) -> Generator[None, None, Positions]:
    """`anchorcounts.positions_of_all(digests)`, a chunk of lines per step."""
    where = Positions()
    for a, b in _chunks(len(digests)):
        where.extend(digests[a:b], a)
        yield None
    return where


__all__ = ["AnchorKind", "IndexBuild"]
