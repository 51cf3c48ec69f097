"""Content-hash line anchors such as ``12#a5ac1e``.

An anchor names a line by a hex prefix of a hash of its content, so an edit that
targets a stale line fails loudly instead of hitting whatever now sits at that
line number. The rules below are the contract shared by ``read`` (which prints
anchors) and ``edit`` (which resolves them); change them only together.

Hashes
    ``line_hash`` (a line's body) and ``context_hash`` (a line with its nearest
    non-blank neighbours) are defined in daemon.text.linehashes; L and C below are
    the lines whose line and context hashes start with a given prefix.

Resolution (``AnchorIndex.match``), for a 4..16 hex-digit prefix ``a``
(case-insensitive)::

    L = lines whose line hash starts with a;    C = lines whose context hash does
    len(L) == 1  -> Match("line", L)
    len(C) == 1  -> Match("context", C)
    len(L) > 1   -> Match("line", L)       # ambiguous: caller picks an occurrence
    len(C) > 1   -> Match("context", C)
    otherwise    -> Match("none", ())

Shortest anchor (``AnchorIndex.anchors``), consistent with ``match`` by construction:

1. ``line_hash[:6]``, ``[:8]``, ``[:16]``: the first whose L is exactly this line
   wins (kind "line"). A normal line gets 6 hex digits, e.g. ``1#a5ac1e``.
2. Otherwise (identical twins exist) ``context[:6]``, ``[:8]``, ``[:16]``: the
   first with ``len(L) != 1`` and C exactly this line wins (kind "context").
3. Otherwise (a twin with identical non-blank neighbours) the line is not
   unique: the anchor is ``line_hash[:6]`` (kind "line", unique False), and the
   line number given with it, or an occurrence number, picks the line. In the
   rare case (a chance hex collision) that ``line_hash[:6]`` is also exactly one
   other line's context prefix, ``match`` would return that other line at
   context level; then the first of ``[:8]``/``[:16]`` that resolves at line
   level is used instead.
   Either way ``match(anchor)`` is at level "line" and includes this line.

Incremental upkeep (``AnchorIndex.derive``): the state above is per-line lists
(hashes, contexts, chosen anchors, a byte of kind per line) plus counts keyed by
content (prefix -> number of lines, daemon.text.anchorcounts), never per-line
objects. After an edit only the changed lines and their nearest non-blank
neighbours are rehashed (``linehashes.rehashed_regions``), and a line elsewhere is
re-chosen only if a count it consults crossed 1 (the rules above only ever ask
"exactly one?"). The result is identical to a from-scratch index; ``LineAnchor``
objects are made on demand by the ``Anchors`` view.

Line numbers (``meant_line``): when an anchor matches several lines (identical
twins: blank runs, closing braces), the line number copied with it (``12#a5ac1e``)
says which one, in the numbering the agent holds: its read, or its read with its
own edits applied. The caller gives each such numbering with a map to the version
the edit is carried to; they must agree on one line, or the anchor stays ambiguous.

Quality (``classify_quality``) flags anchors that are weak evidence of intent.
"low" when the line is blank, has fewer than 2 word characters (``\\w``), or
its stripped body occurs 3+ times in the file (boilerplate); otherwise "high"::

    "}", "},", "]);", "*/", "x", "#", ""  -> low
    "fi", "x = 1"                           -> high
    "display: flex;" on 2 lines -> high; on 3 lines -> low
"""

from __future__ import annotations

import bisect
import re
import weakref
from collections import Counter
from collections.abc import Generator, Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Literal, overload

from editjournal.daemon.text.anchorcounts import (
    TWIN,
    AnchorCounts,
    AnchorKind,
    Positions,
    choose_anchor,
    positions,
    positions_of_all,
    recount,
)
from editjournal.daemon.text.deferral import Deferred, inline, too_big
from editjournal.daemon.text.linehashes import (
    Change,
    Region,
    context_range,
    line_hash,
    rehashed_regions,
)
from editjournal.schemas.tools import AnchoredLine

Quality = Literal["high", "low"]
MatchLevel = Literal["line", "context", "none"]

_HEX_RE = re.compile(r"[0-9a-f]{4,16}")
_TWO_WORD_CHARS = re.compile(r"\w\W*\w")
# By kind code (anchorcounts.LINE, CONTEXT, TWIN): the mark, then the low-quality mark.
_MARKS = ((".", "~"), ("c", "C"), ("?", "!"))
_KINDS: tuple[tuple[AnchorKind, bool], ...] = (("line", True), ("context", True), ("line", False))
_SCANS_BEFORE_INDEX = 16  # lookups answered by scanning before positions are indexed
# A derive of this many changed spans or more on a big file wants the old version's
# positions (`AnchorIndex.positions`): fewer are answered by a few scans.
MANY_REGIONS = 16
# A stepped derive's steps (`AnchorIndex.deriving`): a few milliseconds of work each.
_REGIONS_PER_STEP = 128
_KEYS_PER_STEP = 4096
_CHOSEN_PER_STEP = 2048


def classify_quality(body: str, repeats: int) -> Quality:
    """Say whether an anchor on this line is strong evidence of which line was meant.

    ``repeats`` is how many lines of the file have the same stripped body.
    """
    if repeats >= 3 or not _TWO_WORD_CHARS.search(body):  # blank lines have none either
        return "low"
    return "high"


@dataclass(frozen=True, slots=True)
class LineAnchor:
    """The anchor chosen for one line, plus what a reader needs to trust it."""

    line: int
    hash: str
    context: str
    anchor: str
    kind: AnchorKind
    unique: bool
    quality: Quality

    @property
    def mark(self) -> str:
        """ "?" for a non-unique anchor (it names identical lines: the line number picks
        one), else "~" for a low-quality one, else "". Uniqueness first: a blank line
        among blank twins is plainly low, but that its anchor names them all is not."""
        return "?" if not self.unique else ("~" if self.quality == "low" else "")


def anchored(anchor: LineAnchor, text: str) -> AnchoredLine:
    """One line as the wire shows it: number, anchor, quality, text. Here, beside the
    anchor it renders, because reads, the writing path's refusals and its replies all
    show lines this way (none of them may import another's room for it)."""
    return AnchoredLine(
        line=anchor.line,
        hash=anchor.anchor,
        quality=anchor.quality,
        text=text,
        kind=anchor.kind,
        unique=anchor.unique,
    )


@dataclass(frozen=True)
class Match:
    """Result of resolving an anchor: the level that matched and the 1-based lines."""

    level: MatchLevel
    candidates: tuple[int, ...]


class AnchorIndex:
    """Hashes, counts and chosen anchors for one file version, queried often and
    carried forward through edits by :meth:`derive`."""

    def __init__(self, lines: Sequence[str]) -> None:
        self._bodies: tuple[str, ...] = tuple(lines)
        self._hashes: list[str] = list(map(line_hash, self._bodies))
        self._contexts = context_range(self._bodies, 0, len(self._bodies))
        self._tables: AnchorCounts | None = AnchorCounts(self._bodies, self._hashes, self._contexts)
        self._anchors: list[str] = []
        self._codes = bytearray(len(self._hashes))
        self.choose(0, len(self._hashes))
        self._lookups = 0
        self._where: dict[AnchorKind, Positions] = {}
        self._near: tuple[tuple[int, int], ...] = ()  # see `derive`
        self._derived: tuple[weakref.ref[AnchorIndex], list[int]] | None = None

    @classmethod
    def assembled(
        cls, bodies: tuple[str, ...], hashes: list[str], contexts: list[str], tables: AnchorCounts
    ) -> AnchorIndex:
        """An index of hashes and counts computed elsewhere (a slice at a time,
        daemon.text.indexbuild); its anchors are then chosen with `choose`, in order."""
        new = cls.__new__(cls)
        new._bodies, new._hashes, new._contexts, new._tables = bodies, hashes, contexts, tables
        new._anchors, new._codes = [], bytearray(len(hashes))
        new._lookups, new._where, new._near, new._derived = 0, {}, (), None
        return new

    def choose(self, a: int, b: int) -> None:
        """Choose the anchors of lines [a, b), the lines before `a` chosen already."""
        tables = self.tables
        unique6 = tables.line.counts[6]
        anchors, codes = self._anchors, self._codes
        for i in range(a, b):
            digest = self._hashes[i]
            short = digest[:6]
            if unique6[short] == 1:  # the common case, settled by one count
                anchors.append(short)
                continue
            anchor, codes[i] = choose_anchor(digest, self._contexts[i], tables)
            anchors.append(anchor)

    @property
    def tables(self) -> AnchorCounts:
        """The counts, rebuilt if a later version took them over (see `derive`)."""
        if self._tables is None:
            if too_big(len(self._bodies)):
                raise Deferred(index=self)
            self._tables = AnchorCounts(self._bodies, self._hashes, self._contexts)
        return self._tables

    @property
    def line_count(self) -> int:
        return len(self._bodies)

    def counted(self, tables: AnchorCounts) -> None:
        """Take counts rebuilt elsewhere (a slice at a time) for this index's lines."""
        self._tables = tables

    def has_positions(self) -> bool:
        """Whether where each hash is has been indexed (both kinds)."""
        return len(self._where) == 2

    def position_all(self) -> None:
        """Where each hash is, both kinds, for a batch of many lookups to come (a big
        edit resolved in a job's steps, where nothing may be deferred): `Deferred` to a
        job first when the file is big and deferring is on, else built now."""
        if self.has_positions():
            return
        if too_big(len(self._hashes)):
            raise Deferred(index=self, positions=True)
        kinds: tuple[AnchorKind, ...] = ("line", "context")
        for table in kinds:
            if table not in self._where:
                self._where[table] = positions_of_all(self.digests(table))

    def positioned(self, table: AnchorKind, where: Positions) -> None:
        """Take the positions of every ``table`` hash, indexed elsewhere."""
        self._where[table] = where

    def digests(self, table: AnchorKind) -> list[str]:
        """The full hashes of one kind (no copy: do not modify)."""
        return self._hashes if table == "line" else self._contexts

    @property
    def hashes(self) -> tuple[str, ...]:
        """Full 16-hex line hashes, index 0 = line 1."""
        return tuple(self._hashes)

    @property
    def contexts(self) -> tuple[str, ...]:
        """Full 16-hex context hashes, index 0 = line 1."""
        return tuple(self._contexts)

    @property
    def anchor_strings(self) -> list[str]:
        """The chosen anchor of every line (no copy: do not modify)."""
        return self._anchors

    def _lines_with(self, table: AnchorKind, prefix: str) -> list[int]:
        """Ascending 0-based lines whose line or context hash starts with ``prefix``."""
        digests = self._hashes if table == "line" else self._contexts
        if self._tables is None and self._lookups < _SCANS_BEFORE_INDEX:
            # A version an edit was derived from (an agent's snapshot, carried forward):
            # its counts went on with `derive`, and a few scans beat rebuilding them.
            self._lookups += 1
            return [i for i, d in enumerate(digests) if d.startswith(prefix)]
        counts = self.tables.line if table == "line" else self.tables.context
        if len(prefix) < 6:
            return [i for i, d in enumerate(digests) if d.startswith(prefix)]
        found = counts.values_with(prefix)
        self._lookups += 1
        where = self._where.get(table)
        if where is None and self._lookups <= _SCANS_BEFORE_INDEX:
            near = self._near  # a few C-speed scans beat a full index
            return sorted(
                p for v in found for p in positions(digests, v, counts.counts[16][v], near)
            )
        if where is None:
            if too_big(len(digests)):
                raise Deferred(index=self, positions=True)
            where = self._where[table] = positions_of_all(digests)
        return sorted(p for v in found for p in where.of(v))

    def _lookup(self, table: AnchorKind, prefix: str) -> tuple[int, ...]:
        """1-based lines whose line or context hash starts with ``prefix`` (lowercase)."""
        return tuple(i + 1 for i in self._lines_with(table, prefix))

    def line_matches(self, anchor: str) -> tuple[int, ...]:
        """Lines whose *line* hash starts with ``anchor``: what an occurrence counts."""
        return self._lookup("line", anchor.lower())

    def match(self, anchor: str) -> Match:
        """Resolve a 4..16 hex-digit anchor following the module's resolution rules.

        Raises ValueError for anything that is not 4..16 hex digits.
        """
        prefix = anchor.lower()
        if not _HEX_RE.fullmatch(prefix):
            raise ValueError(f"anchor must be 4 to 16 hex digits, got {anchor!r}")
        by_line = self._lookup("line", prefix)
        if len(by_line) == 1:
            return Match("line", by_line)
        by_context = self._lookup("context", prefix)
        if len(by_context) == 1:
            return Match("context", by_context)
        if by_line:
            return Match("line", by_line)
        if by_context:
            return Match("context", by_context)
        return Match("none", ())

    def names(self, line: int, anchor: str) -> bool:
        """Whether 1-based ``line`` exists and its line or context hash starts with
        ``anchor`` (lowercase hex): the line an anchor copied with that number showed."""
        if not 0 < line <= len(self._bodies):
            return False
        i = line - 1
        return self._hashes[i].startswith(anchor) or self._contexts[i].startswith(anchor)

    def anchor_at(self, i: int) -> LineAnchor:
        """The anchor of 0-based line ``i``, built on demand."""
        body = self._bodies[i]
        kind, unique = _KINDS[self._codes[i]]
        repeats = self._repeats(body.strip())
        return LineAnchor(
            i + 1, self._hashes[i], self._contexts[i], self._anchors[i], kind, unique,
            classify_quality(body, repeats),
        )  # fmt: skip

    def _repeats(self, stripped: str) -> int:
        """Lines whose stripped body is ``stripped``; counted by a scan when this version's
        counts went on with `derive`, for the first few lines asked; then they are rebuilt."""
        if self._tables is None and self._lookups < _SCANS_BEFORE_INDEX:
            self._lookups += 1
            return list(map(str.strip, self._bodies)).count(stripped)
        return self.tables.repeats.get(stripped, 0)

    def anchors(self) -> Anchors:
        """The shortest anchor and quality for every line, in line order (a lazy view)."""
        return Anchors(self)

    def diff_row(self, i: int, sign: str) -> str:
        """0-based line ``i`` as a diff row shows it, ``{sign}{line}#{anchor}{mark}|{body}``
        (the mark as `diff._row` gives it: low quality first), without a `LineAnchor`."""
        body = self._bodies[i]
        if self._repeats(body.strip()) >= 3 or not _TWO_WORD_CHARS.search(body):
            mark = "~"
        else:
            mark = "?" if self._codes[i] == TWIN else ""
        return f"{sign}{i + 1}#{self._anchors[i]}{mark}|{body}"

    def render(self, start: int, end: int) -> str:
        """``render_rows`` for 1-based lines start..end, without per-line objects."""
        repeats = self.tables.repeats
        rows = []
        for i in range(start - 1, end):
            body = self._bodies[i]
            if self._codes[i] == TWIN:  # uniqueness first, as `LineAnchor.mark`
                mark = "?"
            elif repeats.get(body.strip(), 0) >= 3 or not _TWO_WORD_CHARS.search(body):
                mark = "~"
            else:
                mark = ""
            rows.append(f"{i + 1}#{self._anchors[i]}{mark}|{body}")
        return "\n".join(rows)

    def marks(self, start: int = 0, end: int | None = None) -> str:
        """One character per line of [start, end) (0-based; all by default) for its kind,
        uniqueness and quality (the alphabet of ``schemas.anchorrows``), without
        per-line objects: a read of a window pays for the window."""
        repeats = self.tables.repeats
        marks = []
        stop = len(self._bodies) if end is None else end
        for body, code in zip(self._bodies[start:stop], self._codes[start:stop], strict=True):
            low = repeats.get(body.strip(), 0) >= 3 or not _TWO_WORD_CHARS.search(body)
            marks.append(_MARKS[code][low])
        return "".join(marks)

    def derive(
        self, lines: Sequence[str], changes: Sequence[Change] | None, verified: bool = False
    ) -> AnchorIndex:
        """The index of ``lines``: these lines with ``changes`` applied (sorted,
        non-overlapping). Only changed lines and their neighbours are rehashed, and only
        lines whose counts crossed 1 are re-chosen; equal to ``AnchorIndex(lines)``.
        Takes this index's counts over (it rebuilds them if asked again). ``verified``:
        the caller made ``lines`` from this index's lines by exactly ``changes``
        (``rehashed_regions``).

        The per-line lists are copied once and the rehashed spans spliced in from the
        last (slice assignment moves pointers): the rest of the cost follows the change.
        """
        bodies = tuple(lines)
        regions = rehashed_regions(self._bodies, bodies, changes, verified)
        if regions is None:
            return AnchorIndex(bodies)
        # Anything deferred is asked before this index is changed (its counts move on)
        tables = self.tables
        if len(regions) >= MANY_REGIONS and not self.has_positions() and too_big(len(bodies)):
            raise Deferred(index=self, positions=True)
        with inline():
            self._tables = None
            return _finished(self._deriving(bodies, regions, tables))

    def deriving(
        self,
        lines: Sequence[str],
        changes: Sequence[Change] | None,
        tables: AnchorCounts,
        verified: bool = False,
    ) -> Generator[None, None, AnchorIndex]:
        """`derive`, a bounded step at a time (a job's: daemon.text.indexbuild), leaving
        this index whole: it goes on from `tables`, a copy of this index's counts, for
        this version stays in use while the job is parked."""
        bodies = tuple(lines)
        regions = rehashed_regions(self._bodies, bodies, changes, verified)
        yield None
        if regions is None:
            return AnchorIndex(bodies)
        return (yield from self._deriving(bodies, regions, tables))

    def _deriving(
        self, bodies: tuple[str, ...], regions: list[Region], tables: AnchorCounts
    ) -> Generator[None, None, AnchorIndex]:
        new = AnchorIndex.__new__(AnchorIndex)
        new._bodies, new._tables = bodies, tables
        new._lookups, new._where = 0, {}
        # the lines just written are where the next anchor most likely points
        new._near = tuple((na, nb) for _, _, na, nb in regions)
        before: dict[AnchorKind, dict[str, int]] = {"line": {}, "context": {}}
        hashes, contexts = self._hashes.copy(), self._contexts.copy()
        anchors, codes = self._anchors.copy(), bytearray(self._codes)
        backwards = regions[::-1]  # from the last: earlier spans stay put
        for at in range(0, len(backwards), _REGIONS_PER_STEP):
            gone: tuple[list[str], list[str], list[str]] = ([], [], [])
            came: tuple[list[str], list[str], list[str]] = ([], [], [])
            for oa, ob, na, nb in backwards[at : at + _REGIONS_PER_STEP]:
                fresh = list(map(line_hash, bodies[na:nb]))
                fresh_contexts = context_range(bodies, na, nb)
                for into, part in zip(
                    gone + came,
                    (self._bodies[oa:ob], self._hashes[oa:ob], self._contexts[oa:ob],
                     bodies[na:nb], fresh, fresh_contexts),
                    strict=True,
                ):  # fmt: skip
                    into.extend(part)
                hashes[oa:ob] = fresh
                contexts[oa:ob] = fresh_contexts
                anchors[oa:ob] = [""] * (nb - na)
                codes[oa:ob] = bytes(nb - na)
            recount(tables, gone, came, before)  # spans in batches: the same counts
            yield None
        new._hashes, new._contexts, new._anchors, new._codes = hashes, contexts, anchors, codes
        dirty = sorted((yield from new._dirty(regions, before, self)))
        for at in range(0, len(dirty), _CHOSEN_PER_STEP):
            for i in dirty[at : at + _CHOSEN_PER_STEP]:
                anchors[i], codes[i] = choose_anchor(hashes[i], contexts[i], tables)
            yield None
        new._derived = (weakref.ref(self), dirty)
        return new

    def anchors_kept_until(self, old: AnchorIndex, limit: int) -> int:
        """The first 0-based line before ``limit`` whose chosen anchor is not ``old``'s
        (the lines before ``limit`` must be the same in both), or ``limit``.

        When this index was derived from ``old``, only the lines it re-chose are
        compared: every other line before the first rehashed span kept ``old``'s anchor.
        """
        derived = self._derived
        mine, theirs = self._anchors, old._anchors
        if derived is None or derived[0]() is not old:
            i = 0
            while i + 256 <= limit and theirs[i : i + 256] == mine[i : i + 256]:  # C-speed
                i += 256
            while i < limit and theirs[i] == mine[i]:
                i += 1
            return i
        cut = min(self._near[0][0] if self._near else limit, limit)
        suspects = [i for i in derived[1] if i < cut] + list(range(cut, limit))
        return next((i for i in suspects if theirs[i] != mine[i]), limit)

    def _dirty(
        self,
        regions: list[Region],
        before: dict[AnchorKind, dict[str, int]],
        old: AnchorIndex,
    ) -> Generator[None, None, set[int]]:
        """0-based lines to re-choose: the rehashed ones, and every line consulting a
        prefix whose count crossed 1 (a line consults its own hash's and context's
        prefixes in both tables). Lines outside the rehashed spans kept their hashes:
        when ``old`` knows where each of its hashes is, they are found there and moved
        by the spans' shifts, in O(change) (a scan of the file per prefix was most of a
        1,000-hunk patch's time on 200,000 lines, issue 40)."""
        tables = self.tables
        dirty = {i for _, _, na, nb in regions for i in range(na, nb)}
        keys = set()
        for kind, table in (("line", tables.line), ("context", tables.context)):
            by_length = table.counts
            touched = list(before[kind].items())  # type: ignore[index]
            for at in range(0, len(touched), _KEYS_PER_STEP):
                for key, was in touched[at : at + _KEYS_PER_STEP]:
                    if (was == 1) != (by_length[len(key)].get(key, 0) == 1):
                        keys.add(key)
                yield None
        inside: Counter[str] = Counter()  # prefixes of the rehashed lines, by key length
        for n in {len(key) for key in keys}:
            inside.update(self._hashes[i][:n] for i in dirty)
            inside.update(self._contexts[i][:n] for i in dirty)
        moved = _Moved(regions) if old.has_positions() else None
        lines_by, contexts_by = tables.line.counts, tables.context.counts
        for done, key in enumerate(keys, start=1):
            if done % _KEYS_PER_STEP == 0:
                yield None
            n = len(key)
            if lines_by[n].get(key, 0) + contexts_by[n].get(key, 0) <= inside[key]:
                continue
            for kind, table in (("line", tables.line), ("context", tables.context)):
                if moved is None:
                    dirty.update(self._lines_with(kind, key))  # type: ignore[arg-type]
                    continue
                where = old._where[kind]  # type: ignore[index]
                for value in table.values_with(key):
                    dirty.update(moved.outside(where.of(value)))
        return dirty


def _finished(steps: Generator[None, None, AnchorIndex]) -> AnchorIndex:
    """Run stepped work to its end at once (the work is the same either way)."""
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return done.value


class _Moved:
    """Where the lines outside a derive's rehashed spans went: old 0-based line ->
    new, by the shift of the last span before it."""

    def __init__(self, regions: list[Region]) -> None:
        self._starts = [oa for oa, _, _, _ in regions]
        self._regions = regions

    def outside(self, old_lines: Iterable[int]) -> Iterator[int]:
        """The new lines of those old lines that are outside every rehashed span (the
        ones inside are re-chosen anyway)."""
        for p in old_lines:
            k = bisect.bisect_right(self._starts, p) - 1
            if k < 0:
                yield p
                continue
            _, ob, _, nb = self._regions[k]
            if p >= ob:
                yield p + (nb - ob)


@dataclass(frozen=True)
class Numbering:
    """A version of the file whose line numbers an agent holds (one it read, or its view:
    the read with its own edits applied), and where each of its lines is in the version
    an edit is carried to (0-based; None: changed or gone since)."""

    index: AnchorIndex
    to_current: Sequence[int | None]


def meant_line(
    anchor: str,
    line: int,
    candidates: Sequence[int],
    here: Numbering,
    others: Iterable[Numbering] = (),
) -> int | None:
    """Which of ``candidates`` (lines of ``here`` that ``anchor`` matches) the agent meant
    by the ``line`` number it gave with the anchor, or None when that does not single
    one out.

    A hash names identical lines alike; the number says which one, but only in the
    numbering it came from. Every numbering the agent holds whose line ``line`` the
    anchor names votes for where that line is now; they must agree (a number from a
    version whose lines shifted since must not land on a twin). The candidate of
    ``here`` that is that line wins. A line changed since (voted None) is its own
    line number when ``here`` has it: carrying the edit then refuses it as stale,
    naming who changed it. ``others`` is consumed lazily, only once a vote is needed.
    """
    votes: set[int | None] = set()
    for numbering in chain((here,), others):
        if numbering.index.names(line, anchor):
            votes.add(numbering.to_current[line - 1])
        if len(votes) > 1:
            return None
    if len(votes) != 1:
        return None
    (meant,) = votes
    if line in candidates and here.to_current[line - 1] == meant:
        return line
    if meant is None:
        return None
    found = [c for c in candidates if here.to_current[c - 1] == meant]
    return found[0] if len(found) == 1 else None


class Anchors(Sequence[LineAnchor]):
    """Every line's :class:`LineAnchor`, made on access from the index's compact state."""

    __slots__ = ("_index",)

    def __init__(self, index: AnchorIndex) -> None:
        self._index = index

    @property
    def anchor_index(self) -> AnchorIndex:
        """The index this view reads (`Sequence.index` is the other `index`)."""
        return self._index

    def __len__(self) -> int:
        return len(self._index._bodies)

    @overload
    def __getitem__(self, i: int) -> LineAnchor: ...
    @overload
    def __getitem__(self, i: slice) -> list[LineAnchor]: ...
    def __getitem__(self, i: int | slice) -> LineAnchor | list[LineAnchor]:
        if isinstance(i, slice):
            return [self._index.anchor_at(j) for j in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError("line out of range")
        return self._index.anchor_at(i)

    def __iter__(self) -> Iterator[LineAnchor]:
        return (self._index.anchor_at(j) for j in range(len(self)))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]


def anchor_lines(lines: Sequence[str]) -> list[LineAnchor]:
    """Convenience: build an :class:`AnchorIndex` for ``lines`` and anchor every line."""
    return list(AnchorIndex(lines).anchors())


def render_rows(anchors: Sequence[LineAnchor], bodies: Sequence[str]) -> str:
    """Format lines as agents see them: ``{line}#{anchor}{mark}|{body}``.

    ``mark`` is "?" for a non-unique anchor (identical lines share it: the line
    number, or an occurrence, picks one), else "~" for a low-quality one, else
    empty. Rows are joined with "\\n" and there is no trailing newline, e.g.::

        1#a5ac1e|def foo():
        2#f5d78c|    return 1
        3#b8c2a5~|}
    """
    rows = []
    for anchor, body in zip(anchors, bodies, strict=True):
        rows.append(f"{anchor.line}#{anchor.anchor}{anchor.mark}|{body}")
    return "\n".join(rows)
