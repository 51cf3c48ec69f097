"""Content-hash line anchors such as ``12#a5ac1e``.

An anchor names a line by a hex prefix of a hash of its content, so an edit that
targets a stale line fails loudly instead of hitting whatever now sits at that
line number. The rules below are the contract shared by ``read`` (which prints
anchors) and ``edit`` (which resolves them); change them only together.

Hashes
    ``line_hash(body)`` is xxh3_64 of ``body.encode("utf-8", "surrogatepass")`` as
    16 zero-padded lowercase hex digits; the line ending is not part of the body::

        line_hash("def foo():") == "a5ac1efbea30d3c7"
        line_hash("")           == "2d06800538d394c2"

    ``context_hash(prev, body, next)`` is xxh3_64 hex of ``prev + "\\n" + body +
    "\\n" + next`` where ``prev``/``next`` are the nearest lines before/after whose
    body is not blank (``body.strip() != ""``), or "" at the file edges. Blank
    lines are skipped so inserting or deleting blank lines does not move anchors::

        lines = ["def foo():", "", "    return 1"]
        context of line 3 == context_hash("def foo():", "    return 1", "")
                          == xxh3_64_hexdigest(b"def foo():\\n    return 1\\n")

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
   unique: the anchor is ``line_hash[:6]`` (kind "line", unique False) and the
   caller must add an occurrence number. In the rare case (a chance hex
   collision) that ``line_hash[:6]`` is also exactly one other line's context
   prefix, ``match`` would return that other line at context level; then the
   first of ``[:8]``/``[:16]`` that resolves at line level is used instead.
   Either way ``match(anchor)`` is at level "line" and includes this line.

Quality (``classify_quality``) flags anchors that are weak evidence of intent.
"low" when the line is blank, has fewer than 2 word characters (``\\w``), or
its stripped body occurs 3+ times in the file (boilerplate); otherwise "high"::

    "}", "},", "]);", "*/", "x", "#", ""  -> low
    "fi", "x = 1"                           -> high
    "display: flex;" on 2 lines -> high; on 3 lines -> low
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import xxhash

Quality = Literal["high", "low"]
AnchorKind = Literal["line", "context"]
MatchLevel = Literal["line", "context", "none"]

PREFIX_LENGTHS = (6, 8, 16)
_HEX_RE = re.compile(r"[0-9a-f]{4,16}")
_TWO_WORD_CHARS = re.compile(r"\w\W*\w")


def _xxh3_hex(text: str) -> str:
    """xxh3_64 as 16 lowercase hex digits; surrogatepass so any str is hashable."""
    return xxhash.xxh3_64_hexdigest(text.encode("utf-8", "surrogatepass"))


def line_hash(body: str) -> str:
    """Hash of one line body (no ending), identifying the line by content alone."""
    return _xxh3_hex(body)


def context_hash(prev_nonempty: str, body: str, next_nonempty: str) -> str:
    """Hash of a line with its nearest non-blank neighbours, to tell twins apart."""
    return _xxh3_hex(prev_nonempty + "\n" + body + "\n" + next_nonempty)


def _is_blank(body: str) -> bool:
    return body.strip() == ""


def classify_quality(body: str, repeats: int) -> Quality:
    """Say whether an anchor on this line is strong evidence of which line was meant.

    ``repeats`` is how many lines of the file have the same stripped body.
    """
    if repeats >= 3 or not _TWO_WORD_CHARS.search(body):  # blank lines have none either
        return "low"
    return "high"


def _neighbours(lines: Sequence[str]) -> list[tuple[str, str]]:
    """(prev_nonempty, next_nonempty) for every line, in two linear passes."""
    prevs: list[str] = []
    last = ""
    for body in lines:
        prevs.append(last)
        if not _is_blank(body):
            last = body
    nexts: list[str] = []
    last = ""
    for body in reversed(lines):
        nexts.append(last)
        if not _is_blank(body):
            last = body
    nexts.reverse()
    return list(zip(prevs, nexts, strict=True))


def _prefix_index(hashes: Sequence[str], length: int) -> dict[str, list[int]]:
    """Map each ``length``-digit prefix to the ascending 1-based lines having it."""
    index: dict[str, list[int]] = {}
    for number, digest in enumerate(hashes, start=1):
        prefix = digest[:length]
        found = index.get(prefix)
        if found is None:
            index[prefix] = [number]
        else:
            found.append(number)
    return index


class _LazyTables(dict[int, dict[str, list[int]]]):
    """Prefix tables by length, each built on first use: most files never need
    the 8- or 16-digit ones, and most lines are settled by the 6-digit table."""

    def __init__(self, hashes: Sequence[str]) -> None:
        super().__init__()
        self._hashes = hashes

    def __missing__(self, length: int) -> dict[str, list[int]]:
        table = self[length] = _prefix_index(self._hashes, length)
        return table

    def get(self, length: int, default: object = None) -> dict[str, list[int]] | None:  # type: ignore[override]
        return self[length] if length in PREFIX_LENGTHS else None


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


@dataclass(frozen=True)
class Match:
    """Result of resolving an anchor: the level that matched and the 1-based lines."""

    level: MatchLevel
    candidates: tuple[int, ...]


class AnchorIndex:
    """Hashes and prefix tables for one file version, built once and queried often."""

    def __init__(self, lines: Sequence[str]) -> None:
        self._bodies: tuple[str, ...] = tuple(lines)
        self._hashes = [line_hash(body) for body in self._bodies]
        self._contexts = [
            context_hash(prev, body, nxt)
            for body, (prev, nxt) in zip(self._bodies, _neighbours(self._bodies), strict=True)
        ]
        self._copies = Counter(self._hashes)
        self._line_prefixes = _LazyTables(self._hashes)
        self._context_prefixes = _LazyTables(self._contexts)

    @property
    def hashes(self) -> tuple[str, ...]:
        """Full 16-hex line hashes, index 0 = line 1."""
        return tuple(self._hashes)

    @property
    def contexts(self) -> tuple[str, ...]:
        """Full 16-hex context hashes, index 0 = line 1."""
        return tuple(self._contexts)

    def _lookup(self, table: AnchorKind, prefix: str) -> tuple[int, ...]:
        """Lines whose line or context hash starts with ``prefix`` (already lowercase)."""
        tables = self._line_prefixes if table == "line" else self._context_prefixes
        by_length = tables.get(len(prefix))
        if by_length is not None:
            return tuple(by_length.get(prefix, ()))
        digests = self._hashes if table == "line" else self._contexts
        return tuple(n for n, d in enumerate(digests, start=1) if d.startswith(prefix))

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

    def _choose(self, number: int) -> tuple[str, AnchorKind, bool]:
        """Shortest (anchor, kind, unique) for 1-based line ``number``; see module doc."""
        digest, context = self._hashes[number - 1], self._contexts[number - 1]
        if self._copies[digest] == 1:  # identical twins can never be told apart by line hash
            for n in PREFIX_LENGTHS:
                if len(self._line_prefixes[n][digest[:n]]) == 1:
                    return digest[:n], "line", True
        for n in PREFIX_LENGTHS:
            candidate = context[:n]
            if (
                len(self._line_prefixes[n].get(candidate, ())) != 1
                and len(self._context_prefixes[n][candidate]) == 1
            ):
                return candidate, "context", True
        for n in PREFIX_LENGTHS:
            # A twin's line prefix always has len(L) > 1; it resolves at line level
            # unless the same digits are, by chance, one other line's context prefix.
            if len(self._context_prefixes[n].get(digest[:n], ())) != 1:
                return digest[:n], "line", False
        return digest[:6], "line", False

    def anchors(self) -> list[LineAnchor]:
        """The shortest anchor and quality for every line, in line order."""
        repeats = Counter(body.strip() for body in self._bodies)
        result: list[LineAnchor] = []
        for number, body in enumerate(self._bodies, start=1):
            anchor, kind, unique = self._choose(number)
            result.append(
                LineAnchor(
                    line=number,
                    hash=self._hashes[number - 1],
                    context=self._contexts[number - 1],
                    anchor=anchor,
                    kind=kind,
                    unique=unique,
                    quality=classify_quality(body, repeats[body.strip()]),
                )
            )
        return result


def anchor_lines(lines: Sequence[str]) -> list[LineAnchor]:
    """Convenience: build an :class:`AnchorIndex` for ``lines`` and anchor every line."""
    return AnchorIndex(lines).anchors()


def render_rows(anchors: Sequence[LineAnchor], bodies: Sequence[str]) -> str:
    """Format lines as agents see them: ``{line}#{anchor}{mark}|{body}``.

    ``mark`` is "~" for a low-quality anchor, else "?" for a non-unique one (the
    edit needs an occurrence number), else empty. Rows are joined with "\\n" and
    there is no trailing newline, e.g.::

        1#a5ac1e|def foo():
        2#f5d78c|    return 1
        3#b8c2a5~|}
    """
    rows = []
    for anchor, body in zip(anchors, bodies, strict=True):
        mark = "~" if anchor.quality == "low" else ("?" if not anchor.unique else "")
        rows.append(f"{anchor.line}#{anchor.anchor}{mark}|{body}")
    return "\n".join(rows)
