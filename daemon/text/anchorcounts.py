"""How many lines share each prefix of each hash: what an anchor's uniqueness is judged by.

Every rule of the anchor contract (daemon.text.anchors) asks one question of a
prefix, "is exactly one line's line (or context) hash starting with it?", so an
index keeps counts keyed by content (prefix -> number of lines), never per-line
objects, and chooses each line's shortest anchor from them (`choose_anchor`). An
edit moves the counts of the lines it replaced to the lines replacing them
(`recount`), remembering each touched count's value before, so the index re-chooses
only the lines whose counts crossed 1. Pure: no I/O, no clock.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from operator import itemgetter
from typing import Literal

AnchorKind = Literal["line", "context"]

PREFIX_LENGTHS = (6, 8, 16)
_PREFIX = {n: itemgetter(slice(0, n)) for n in PREFIX_LENGTHS}
# One byte per line for the chosen anchor's kind: what `choose_anchor` decided.
LINE, CONTEXT, TWIN = 0, 1, 2


class PrefixCounts:
    """How many lines have each 6-, 8- and 16-digit prefix of one kind of hash, and
    one full hash per 6-digit prefix: enough to find lines without a per-line index."""

    __slots__ = ("counts", "rep")

    def __init__(self, values: Sequence[str]) -> None:
        self.counts = {n: Counter(map(_PREFIX[n], values)) for n in (6, 8)}
        self.counts[16] = Counter(values)
        self.rep = dict(zip(map(_PREFIX[6], values), values, strict=True))

    def count(self, prefix: str) -> int:
        return self.counts[len(prefix)].get(prefix, 0)

    def add(self, value: str, before: dict[str, int]) -> None:
        """Count one more line; `before` keeps each touched key's count before the edit."""
        for n, counts in self.counts.items():
            key = value[:n]
            old = counts.get(key, 0)
            before.setdefault(key, old)
            counts[key] = old + 1
        rep = self.rep.get(value[:6])
        if rep is None or rep not in self.counts[16]:
            self.rep[value[:6]] = value

    def remove(self, value: str, before: dict[str, int]) -> None:
        for n, counts in self.counts.items():
            key = value[:n]
            old = counts[key]
            before.setdefault(key, old)
            if old == 1:
                del counts[key]
            else:
                counts[key] = old - 1
        if value[:6] not in self.counts[6]:
            self.rep.pop(value[:6], None)

    def values_with(self, prefix: str) -> list[str] | None:
        """The full hashes present that start with ``prefix`` (6+ digits); None when the
        table cannot tell (two different hashes share the 6-digit prefix)."""
        total = self.counts[6].get(prefix[:6], 0)
        if total == 0:
            return []
        rep = self.rep.get(prefix[:6])
        if rep is None or self.counts[16].get(rep, 0) != total:
            return None
        return [rep] if rep.startswith(prefix) else []


class AnchorCounts:
    """The content-keyed half of an index: counts for line and context hashes, and
    how often each stripped body occurs (for quality)."""

    __slots__ = ("context", "line", "repeats")

    def __init__(self, bodies: Sequence[str], hashes: list[str], contexts: list[str]) -> None:
        self.line = PrefixCounts(hashes)
        self.context = PrefixCounts(contexts)
        self.repeats = Counter(map(str.strip, bodies))


def positions(
    values: list[str], value: str, count: int, near: Sequence[tuple[int, int]] = ()
) -> list[int]:
    """0-based positions of the ``count`` occurrences of ``value`` (C-speed scans).

    ``near``: [a, b) spans where a single occurrence is likely (the lines an edit just
    wrote, which the agent most often anchors on next): searched first, so finding the
    one line there costs the span, not the file. The count is exact, so one found there
    is the only one."""
    if count == 1:
        for a, b in near:
            try:
                return [values.index(value, a, b)]
            except ValueError:
                continue
    found: list[int] = []
    at = -1
    for _ in range(count):
        at = values.index(value, at + 1)
        found.append(at)
    return found


def positions_of_all(values: list[str]) -> dict[str, list[int]]:
    """Every value's 0-based positions: built once an index is asked many lookups."""
    where: dict[str, list[int]] = {}
    for i, value in enumerate(values):
        found = where.get(value)
        if found is None:
            where[value] = [i]
        else:
            found.append(i)
    return where


def recount(
    counts: AnchorCounts,
    old: tuple[Sequence[str], Sequence[str], Sequence[str]],
    new: tuple[Sequence[str], Sequence[str], Sequence[str]],
    before: dict[AnchorKind, dict[str, int]],
) -> None:
    """Move the counts from the old lines (bodies, hashes, contexts) of a span to the
    new lines replacing them."""
    old_bodies, old_hashes, old_contexts = old
    bodies, hashes, contexts = new
    for value in old_hashes:
        counts.line.remove(value, before["line"])
    for value in old_contexts:
        counts.context.remove(value, before["context"])
    for value in hashes:
        counts.line.add(value, before["line"])
    for value in contexts:
        counts.context.add(value, before["context"])
    repeats = counts.repeats
    repeats.subtract(map(str.strip, old_bodies))
    repeats.update(map(str.strip, bodies))


def choose_anchor(digest: str, context: str, counts: AnchorCounts) -> tuple[str, int]:
    """Shortest (anchor, kind code) for a line with these hashes: the shortest-anchor
    rules of daemon.text.anchors."""
    by_line, by_context = counts.line.counts, counts.context.counts
    if by_line[16].get(digest) == 1:  # identical twins can never be told apart by line hash
        for n in PREFIX_LENGTHS:
            if by_line[n].get(digest[:n]) == 1:
                return digest[:n], LINE
    for n in PREFIX_LENGTHS:
        candidate = context[:n]
        if by_line[n].get(candidate, 0) != 1 and by_context[n].get(candidate) == 1:
            return candidate, CONTEXT
    for n in PREFIX_LENGTHS:
        # A twin's line prefix always has len(L) > 1; it resolves at line level
        # unless the same digits are, by chance, one other line's context prefix.
        if by_context[n].get(digest[:n], 0) != 1:
            return digest[:n], TWIN
    return digest[:6], TWIN
