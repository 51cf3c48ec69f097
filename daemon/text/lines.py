"""Lossless line model of a text file.

A file is split only on the three real line terminators ("\\r\\n", "\\n", "\\r").
``str.splitlines`` is deliberately not used: it also splits on \\x0b, \\x0c,
\\x1c-\\x1e, \\x85, \\u2028 and \\u2029, which would silently change the line
numbering agents see and make ``render(parse(text)) == text`` impossible.

Examples::

    parse("")          -> lines=(),            endings=()
    parse("a")         -> lines=("a",),        endings=("",)
    parse("a\\n")       -> lines=("a",),        endings=("\\n",)      # no phantom last line
    parse("\\n")        -> lines=("",),         endings=("\\n",)
    parse("a\\r\\n\\r\\nb") -> lines=("a", "", "b"), endings=("\\r\\n", "\\r\\n", "")
"""

from __future__ import annotations

import operator
import re
from collections import Counter
from dataclasses import dataclass

BOM = "\ufeff"
_VALID_ENDINGS = frozenset({"\n", "\r\n", "\r"})
_LAST_ENDINGS = frozenset({(), ("",), *((e,) for e in _VALID_ENDINGS)})
_EOL_NAMES = {"\n": "lf", "\r\n": "crlf", "\r": "cr"}
# The capture group keeps the terminators in re.split's output; "\r\n" must come
# first so a CRLF pair is one terminator, not "\r" followed by an empty line.
_SPLIT_RE = re.compile(r"(\r\n|\r|\n)")


@dataclass(frozen=True, slots=True)
class Document:
    """A parsed text: line bodies, their exact terminators, and the BOM flag.

    Keeping each line's own ending (instead of one file-wide style) is what makes
    rendering byte-exact for mixed-ending files.
    """

    lines: tuple[str, ...]
    endings: tuple[str, ...]
    bom: bool = False

    def __post_init__(self) -> None:
        """Reject shapes that could not round-trip, so bugs surface at construction."""
        if len(self.lines) != len(self.endings):
            raise ValueError("lines and endings must have the same length")
        # set and join run at C speed: a document is built on every edit of any size
        if not set(self.endings[:-1]) <= _VALID_ENDINGS or self.endings[-1:] not in _LAST_ENDINGS:
            for i, ending in enumerate(self.endings):
                last = i == len(self.endings) - 1
                if ending not in _VALID_ENDINGS and not (last and ending == ""):
                    raise ValueError(f"invalid ending {ending!r} for line {i + 1}")
        joined = "".join(self.lines)
        if "\n" in joined or "\r" in joined:
            raise ValueError("line bodies must not contain line terminators")

    @classmethod
    def derived(cls, lines: tuple[str, ...], endings: tuple[str, ...], bom: bool) -> Document:
        """A document built from a checked one by a caller that has checked only what
        it brought (the edit engine: its new lines, endings copied or settled).
        Skips the whole-text check, which would make every edit O(file) once more."""
        if len(lines) != len(endings):
            raise ValueError("lines and endings must have the same length")
        doc = object.__new__(cls)
        object.__setattr__(doc, "lines", lines)
        object.__setattr__(doc, "endings", endings)
        object.__setattr__(doc, "bom", bom)
        return doc

    @property
    def line_count(self) -> int:
        """Number of lines; a trailing terminator does not start a new line."""
        return len(self.lines)

    @property
    def final_newline(self) -> bool:
        """True when the text ends with a terminator (False for an empty document)."""
        return bool(self.endings) and self.endings[-1] != ""

    @property
    def eol_style(self) -> str:
        """One of "lf", "crlf", "cr", "mixed", or "none" (no terminators at all)."""
        kinds = set(self.endings)  # at C speed: this runs on every read
        kinds.discard("")
        if not kinds:
            return "none"
        if len(kinds) > 1:
            return "mixed"
        return _EOL_NAMES[kinds.pop()]

    @property
    def dominant_ending(self) -> str:
        """The most frequent terminator (ties: first seen); "\\n" if there is none.

        Used as the ending for inserted lines so edits follow the file's habit.
        """
        counts = Counter(ending for ending in self.endings if ending)
        if not counts:
            return "\n"
        # most_common orders equal counts by first insertion, i.e. first occurrence.
        return counts.most_common(1)[0][0]


def parse(text: str) -> Document:
    """Split ``text`` into a :class:`Document`; the exact inverse of :func:`render`."""
    bom = text.startswith(BOM)
    if bom:
        text = text[len(BOM) :]
    if "\r" not in text:  # "\n" alone, as most files: str.split, 14x the regex's speed
        return _parse_lf(text, bom)
    parts = _SPLIT_RE.split(text)
    bodies = parts[0::2]
    endings = parts[1::2]
    if bodies[-1] == "":
        bodies.pop()  # text ended with a terminator (or was empty): no phantom line
    else:
        endings.append("")
    return Document(lines=tuple(bodies), endings=tuple(endings), bom=bom)


def _parse_lf(text: str, bom: bool) -> Document:
    """`parse` of a text with no "\r": every terminator is "\n" (a stale edit's rebase
    parses each version it is carried through, so this is on the hot path)."""
    bodies = text.split("\n")
    if bodies[-1] == "":
        bodies.pop()  # ended with a terminator (or was empty): no phantom line
        endings = ("\n",) * len(bodies)
    else:
        endings = ("\n",) * (len(bodies) - 1) + ("",)
    return Document(lines=tuple(bodies), endings=endings, bom=bom)


def render(doc: Document) -> str:
    """Join a :class:`Document` back into text, byte-for-byte as it was parsed."""
    head = doc.endings[:-1]
    if head and head.count(head[0]) == len(head):  # one ending throughout: one C-speed join
        body = head[0].join(doc.lines) + doc.endings[-1]
    else:
        body = "".join(map(operator.add, doc.lines, doc.endings))  # same lengths (Document)
    return (BOM if doc.bom else "") + body
