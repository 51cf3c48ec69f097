"""Exact-string replacement, and text added at either end, as line splices. Pure.

`edit_file`, `append_to_file` and `prepend_to_file` think in strings; the
shared writing path thinks in line splices (which keep each replaced line's
ending, the BOM and the final newline). This module translates: the file is
compared as its lines joined by "\\n" (so an `old_string` written with "\\n"
matches a CRLF file), each match becomes a splice of the whole lines it
touches, and the result is exactly `text.replace(old, new)` with the file's
own line endings kept (the handler then ends the file with a newline, as every
text tool does: `newline_added` says when that added one). The closest similar
lines for a failed match come from rapidfuzz (a C++ edit-distance library: fast
enough to score every window of a large file, where difflib's SequenceMatcher is
quadratic per pair).

What it must never do: decide whether a match is allowed (the handler checks
the agent's snapshot) or apply a hint.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from rapidfuzz import fuzz, process

from editjournal.daemon.text.edit import EditPlan, Splice
from editjournal.daemon.text.lines import Document

_ENDINGS = re.compile(r"\r\n|\r")
SIMILAR_LIMIT = 3
SIMILAR_CUTOFF = 50.0  # rapidfuzz ratio (0-100) below which a line is no hint at all
MAX_WINDOW = 50  # lines of old_string compared at most, to bound the hint's cost
FINAL_NEWLINE_ADDED = "final_newline_added"  # the auto-correction's type, as the path's


def normalized(text: str) -> str:
    """Line endings as "\\n": what old_string, new_string and content are compared as."""
    return _ENDINGS.sub("\n", text)


@dataclass(frozen=True)
class Joined:
    """A document as one "\\n"-joined string, and where each line starts in it."""

    doc: Document
    text: str
    starts: tuple[int, ...]

    @classmethod
    def of(cls, doc: Document) -> Joined:
        """The document joined; the last one asked is kept (a document never changes):
        a check_write of 1,000 edits joined the same 20,000 lines once per edit, 13 s."""
        last = _LAST_JOINED[0]
        if last is not None and last.doc is doc:
            return last
        starts, position = [], 0
        for line in doc.lines:
            starts.append(position)
            position += len(line) + 1
        text = "\n".join(doc.lines) + ("\n" if doc.final_newline else "")
        joined = _LAST_JOINED[0] = cls(doc, text, tuple(starts))
        return joined

    def line_of(self, offset: int) -> int:
        """The 0-based line holding `offset` (a line's "\\n" belongs to it)."""
        return bisect.bisect_right(self.starts, offset) - 1

    def end_of(self, line: int) -> int:
        """The offset just past `line`'s terminator (or its last char, without one)."""
        return self.starts[line + 1] if line + 1 < len(self.starts) else len(self.text)


_LAST_JOINED: list[Joined | None] = [None]  # the daemon's one thread asks, one at a time


def find_all(joined: Joined, old: str) -> list[int]:
    """Offsets of every non-overlapping occurrence, left to right (as str.count sees them)."""
    found, at = [], joined.text.find(old)
    while at >= 0:
        found.append(at)
        at = joined.text.find(old, at + len(old))
    return found


def all_starts(joined: Joined, old: str) -> list[int]:
    """Offsets of every occurrence, overlapping ones included."""
    found, at = [], joined.text.find(old)
    while at >= 0:
        found.append(at)
        at = joined.text.find(old, at + 1)
    return found


def overlapped(joined: Joined, old: str, offsets: list[int]) -> bool:
    """Another occurrence starts inside one of these (in "aXaXa", "aXa" at 0 and at 2):
    counted without overlaps the text looks unique, yet which one is meant is a guess.
    Searched only where such a one would lie (it ends before `at + 2 * len(old) - 1`),
    not to the end of the file: a scan of the file per edit (issue 40)."""
    size = len(old)
    return any(joined.text.find(old, at + 1, at + 2 * size - 1) >= 0 for at in offsets)


def matched_lines(joined: Joined, offsets: list[int], length: int) -> list[tuple[int, int]]:
    """The 1-based, inclusive line span each match touches."""
    return [(joined.line_of(s) + 1, joined.line_of(s + length - 1) + 1) for s in offsets]


def plan_replace(
    joined: Joined, offsets: list[int], old: str, new: str
) -> tuple[EditPlan, bool | None]:
    """Splices replacing each match; the final newline when the last line was rewritten.

    Matches sharing a line become one splice. A replacement that no longer ends in
    a newline runs on into the next line, which the splice then takes in too.
    """
    splices: list[Splice] = []
    final: bool | None = None
    i, last_line = 0, len(joined.doc.lines) - 1
    while i < len(offsets):
        first = joined.line_of(offsets[i])
        last, j, body = first, i, ""
        while True:
            while j < len(offsets) and joined.line_of(offsets[j]) <= last:
                last = max(last, joined.line_of(offsets[j] + len(old) - 1))
                j += 1
            body = _rewritten(joined, first, last, offsets[i:j], old, new)
            if body.endswith("\n") or body == "" or last == last_line:
                break
            last += 1
        if last == last_line:
            final = body.endswith("\n") if body else first > 0
        splices.append(_splice(len(splices), first, last, body))
        i = j
    return EditPlan(tuple(splices)), final


def _rewritten(
    joined: Joined, first: int, last: int, offsets: list[int], old: str, new: str
) -> str:
    """The text of lines first..last (with their "\\n") with the matches in it replaced."""
    start, end = joined.starts[first], joined.end_of(last)
    parts, position = [], start
    for at in offsets:
        parts.append(joined.text[position:at])
        parts.append(new)
        position = at + len(old)
    parts.append(joined.text[position:end])
    return "".join(parts)


def _splice(index: int, first: int, last: int, body: str) -> Splice:
    text = body[:-1] if body.endswith("\n") else body
    new_lines = tuple(text.split("\n")) if body else ()
    return Splice(index, "edit_file", first, last + 1, new_lines, tuple(range(first + 1, last + 2)))


def common_ends(old: Sequence[str], new: Sequence[str]) -> tuple[int, int]:
    """How many first and last lines `new` writes back as `old` had them (not overlapping)."""
    head = 0
    while head < min(len(old), len(new)) and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < min(len(old), len(new)) - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    return head, tail


def narrowed_splice(splice: Splice, lines: Sequence[str]) -> tuple[Splice, tuple[int, ...]]:
    """The splice without the first and last lines it writes back as they were, and
    those lines (1-based): a replacement relies only on the lines it changes; the
    others in its `old_string` were context, used to find the place."""
    new = splice.new_lines
    head, tail = common_ends(lines[splice.start : splice.end], new)
    start, end = splice.start + head, splice.end - tail
    body = new[head : len(new) - tail]
    context = (*range(splice.start + 1, start + 1), *range(end + 1, splice.end + 1))
    return replace(
        splice, start=start, end=end, new_lines=body, targets=tuple(range(start + 1, end + 1))
    ), context


def newline_added(doc: Document, content_ends: bool | None) -> tuple[tuple[str, str], ...]:
    """The auto-correction a text tool reports when the file it writes ends with a newline
    that neither the file nor the tool's text had (the rule: every file a text tool writes
    ends with one). `content_ends`: whether the tool's text that ends the file ends with
    "\\n"; None when the tool leaves the file's last line alone (the file's own end counts).
    The caller leaves out an empty result, which has no line to end."""
    if content_ends is None:
        if doc.line_count == 0 or doc.final_newline:
            return ()
        return ((FINAL_NEWLINE_ADDED, "The file did not end with a newline: now it does."),)
    if content_ends:
        return ()
    return ((FINAL_NEWLINE_ADDED, "The content did not end with a newline: one was added."),)


def added_lines(content: str) -> tuple[str, ...]:
    """The lines of appended or prepended content; its final newline adds none."""
    text = normalized(content)
    text = text[:-1] if text.endswith("\n") else text
    return tuple(text.split("\n"))


def similar_lines(lines: tuple[str, ...], old: str) -> list[tuple[int, int, float]]:
    """The windows of the file most like `old`: (first, last, score), 1-based, best first."""
    wanted = normalized(old).strip("\n").split("\n")[:MAX_WINDOW]
    size = len(wanted)
    if not lines:
        return []
    windows = ["\n".join(lines[i : i + size]) for i in range(max(1, len(lines) - size + 1))]
    found = process.extract(
        "\n".join(wanted),
        windows,
        scorer=fuzz.ratio,
        limit=SIMILAR_LIMIT,
        score_cutoff=SIMILAR_CUTOFF,
    )
    return [(i + 1, min(i + size, len(lines)), round(score, 1)) for _, score, i in found]
