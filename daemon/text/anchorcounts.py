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
from collections import _count_elements as count_into  # type: ignore[attr-defined]
from collections.abc import Generator, Iterable, Sequence
from operator import itemgetter
from typing import Literal

AnchorKind = Literal["line", "context"]

PREFIX_LENGTHS = (6, 8, 16)
_PREFIX = {n: itemgetter(slice(0, n)) for n in PREFIX_LENGTHS}
# One byte per line for the chosen anchor's kind: what `choose_anchor` decided.
LINE, CONTEXT, TWIN = 0, 1, 2


def uncount(counts: dict[str, int], values: Iterable[str]) -> None:
    """`Counter.subtract` for a plain dict of counts (a count may reach 0 and stay)."""
    for key, n in Counter(values).items():
        counts[key] = counts.get(key, 0) - n


class PrefixCounts:
    """How many lines have each 6-, 8- and 16-digit prefix of one kind of hash, and
    one full hash per 6-digit prefix: enough to find lines without a per-line index.

    The counts are plain dicts of str -> int, counted by `count_into` (what
    `Counter.update` runs, in C), not Counters: the collector never tracks a plain dict
    of atomic keys and values, but scans every entry of a Counter (a dict subclass) at
    each collection it is young in. A restore of 2,000 files had 3 M such entries young,
    and one collection scanning them held the thread 160-240 ms."""

    __slots__ = ("counts", "multi", "rep")

    def __init__(self, values: Sequence[str] = ()) -> None:
        self.counts: dict[int, dict[str, int]] = {n: {} for n in PREFIX_LENGTHS}
        self.rep: dict[str, str] = {}
        # the 6-digit prefixes two or more different hashes share, and those hashes: so
        # `values_with` always answers (a scan of the file per shared prefix did not)
        self.multi: dict[str, set[str]] = {}
        if values:
            self.extend(values)
            self.find_shared(list(self.counts[16]))

    def extend(self, values: Sequence[str]) -> None:
        """Count more lines (a slice of a file being indexed); `find_shared` once all are."""
        for _ in self.extending(values):
            pass

    def extending(self, values: Sequence[str]) -> Generator[None, None, None]:
        """`extend`, a table per step: the tables grow together, so a big file's index
        resized them all in one step (90 ms of a 200,000-line build, where a step is ~15)."""
        for n in (6, 8):
            count_into(self.counts[n], map(_PREFIX[n], values))
            yield
        count_into(self.counts[16], values)
        yield
        self.rep.update(zip(map(_PREFIX[6], values), values, strict=True))

    def find_shared(self, distinct: Sequence[str]) -> None:
        """Note the 6-digit prefixes shared by different hashes among `distinct` (some of
        the hashes counted, each once: a slice of them at a time for a big file)."""
        if len(self.counts[6]) == len(self.counts[16]):
            return  # as many prefixes as hashes: none is shared
        rep, multi = self.rep, self.multi
        for value in distinct:
            key = value[:6]
            first = rep[key]
            if first != value:
                multi.setdefault(key, {first}).add(value)

    def count(self, prefix: str) -> int:
        return self.counts[len(prefix)].get(prefix, 0)

    def add(self, value: str, before: dict[str, int]) -> None:
        """Count one more line; `before` keeps each touched key's count before the edit."""
        for n, counts in self.counts.items():
            key = value[:n]
            old = counts.get(key, 0)
            before.setdefault(key, old)
            counts[key] = old + 1
        short = value[:6]
        shared = self.multi.get(short)
        if shared is not None:
            shared.add(value)
            return
        rep = self.rep.get(short)
        if rep is None or rep not in self.counts[16]:
            self.rep[short] = value
        elif rep != value:  # a second hash with these 6 digits
            self.multi[short] = {rep, value}

    def remove(self, value: str, before: dict[str, int]) -> None:
        for n, counts in self.counts.items():
            key = value[:n]
            old = counts[key]
            before.setdefault(key, old)
            if old == 1:
                del counts[key]
            else:
                counts[key] = old - 1
        short = value[:6]
        if short not in self.counts[6]:
            self.rep.pop(short, None)
        shared = self.multi.get(short)
        if shared is not None and value not in self.counts[16]:
            shared.discard(value)
            if len(shared) == 1:  # one hash left with these digits: it is the rep
                self.rep[short] = next(iter(shared))
                del self.multi[short]

    def move(self, removed: Sequence[str], added: Sequence[str], before: dict[str, int]) -> None:
        """Count `added` lines in and `removed` ones out, all at once (the net change per
        key); `before` keeps each touched key's count before. Equal to a `remove` of
        each removed value and an `add` of each added one, in any order."""
        for n, counts in self.counts.items():
            cut = _PREFIX[n] if n < 16 else None
            delta: Counter[str] = Counter(added if cut is None else map(cut, added))
            delta.subtract(removed if cut is None else map(cut, removed))
            for key, change in delta.items():
                old = counts.get(key, 0)
                before.setdefault(key, old)
                if change:
                    if old + change:
                        counts[key] = old + change
                    else:
                        del counts[key]
        new: dict[str, set[str]] = {}
        for value in added:
            new.setdefault(value[:6], set()).add(value)
        for short in new.keys() | {v[:6] for v in removed}:
            self._settle(short, new.get(short, set()))

    def _settle(self, short: str, added: set[str]) -> None:
        """Make `rep` and `multi` right again for one 6-digit prefix after a `move`:
        the hashes present with it are among those it had (`rep`, or all in `multi`)
        and those just `added`."""
        if short not in self.counts[6]:
            self.rep.pop(short, None)
            self.multi.pop(short, None)
            return
        known = set(self.multi.get(short, ())) | added
        rep = self.rep.get(short)
        if rep is not None:
            known.add(rep)
        present = self.counts[16]
        values = {v for v in known if v in present}
        if len(values) == 1:
            self.rep[short] = next(iter(values))
            self.multi.pop(short, None)
        else:
            self.multi[short] = values

    def values_with(self, prefix: str) -> list[str]:
        """The full hashes present that start with ``prefix`` (6+ digits)."""
        short = prefix[:6]
        if short not in self.counts[6]:
            return []
        shared = self.multi.get(short)
        if shared is not None:
            return sorted(v for v in shared if v.startswith(prefix))
        rep = self.rep[short]
        return [rep] if rep.startswith(prefix) else []


class AnchorCounts:
    """The content-keyed half of an index: counts for line and context hashes, and
    how often each stripped body occurs (for quality)."""

    __slots__ = ("context", "line", "repeats")

    def __init__(
        self, bodies: Sequence[str] = (), hashes: list[str] | None = None,
        contexts: list[str] | None = None,
    ) -> None:  # fmt: skip
        self.line = PrefixCounts(hashes or ())
        self.context = PrefixCounts(contexts or ())
        self.repeats: dict[str, int] = {}  # a plain dict, as PrefixCounts' counts are
        count_into(self.repeats, map(str.strip, bodies))

    def copying(self) -> Generator[None, None, AnchorCounts]:
        """An independent copy, a counter per step (the counts of a version still in
        use, carried into the next one by a derive made a step at a time)."""
        twin = AnchorCounts()
        for mine, theirs in ((twin.line, self.line), (twin.context, self.context)):
            for n in PREFIX_LENGTHS:
                mine.counts[n] = theirs.counts[n].copy()
                yield None
            mine.rep = theirs.rep.copy()
            mine.multi = {short: set(values) for short, values in theirs.multi.items()}
        twin.repeats = self.repeats.copy()
        yield None
        return twin


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


class Positions:
    """Every value's 0-based positions, ascending: built once an index is asked many
    lookups. The first position of each value in a dict of str -> int and only the
    repeated values' in lists: the collector never tracks a dict of atomic keys and
    values, where a dict of a list per value (200,000 of them for a big file, twice)
    was scanned whole at each collection it was young in (one took 100 ms of a turn)."""

    __slots__ = ("first", "more")

    def __init__(self) -> None:
        self.first: dict[str, int] = {}
        self.more: dict[str, list[int]] = {}  # the values found twice or more: every place

    def extend(self, values: Sequence[str], start: int) -> None:
        """Count `values`, the lines from `start` on (after every line before them)."""
        first, more = self.first, self.more
        for i, value in enumerate(values, start):
            at = first.setdefault(value, i)
            if at != i:
                found = more.get(value)
                if found is None:
                    more[value] = [at, i]
                else:
                    found.append(i)

    def of(self, value: str) -> Sequence[int]:
        """The positions of `value` (none: empty)."""
        found = self.more.get(value)
        if found is not None:
            return found
        at = self.first.get(value)
        return () if at is None else (at,)


def positions_of_all(values: list[str]) -> Positions:
    """Every value's positions at once (a big file's, a chunk a step: indexbuild.py)."""
    where = Positions()
    where.extend(values, 0)
    return where


def recount(
    counts: AnchorCounts,
    old: tuple[Sequence[str], Sequence[str], Sequence[str]],
    new: tuple[Sequence[str], Sequence[str], Sequence[str]],
    before: dict[AnchorKind, dict[str, int]],
) -> None:
    """Move the counts from the old lines (bodies, hashes, contexts) of the changed spans
    to the new lines replacing them: one pass per prefix length over the net change
    (an add and a remove per line and prefix cost a 1,000-hunk patch most of its
    derive)."""
    old_bodies, old_hashes, old_contexts = old
    bodies, hashes, contexts = new
    counts.line.move(old_hashes, hashes, before["line"])
    counts.context.move(old_contexts, contexts, before["context"])
    repeats = counts.repeats
    uncount(repeats, map(str.strip, old_bodies))
    count_into(repeats, map(str.strip, bodies))


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
