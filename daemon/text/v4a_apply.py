"""Applying a V4A `UpdateFile` to a file's text: find each chunk by its context. Pure.

Each chunk is found by its `@@` headers and its old lines (context and removed
lines, in order), never by a position: the headers are looked for one after
another, then the old lines after the last header, every search starting
after the previous chunk's block, so chunks land in order and never overlap.
A search tries, as Codex's `seek_sequence.rs` does, four levels over the whole
rest of the file before giving up: exact, then trailing whitespace ignored, then
whitespace at both ends ignored, then typographic dashes, quotes and spaces
read as their ASCII kin ("whitespace" as Codex's Rust means it: Unicode's
White_Space, not Python's wider `str.isspace`). An `*** End of File` chunk must
end at the file's last line. A chunk not found raises `ChunkNotFound` naming
the hunk, the first of its lines that does not match, and the file's most
similar lines.

The file's own bytes are kept where the patch does not change them: only the
runs of removed and added lines are spliced, so a context line matched
leniently keeps its own whitespace, each kept line its own ending, and added
lines take the file's dominant ending (CRLF stays CRLF). The file ends with a
newline afterwards, as Codex leaves every file it updates.

Where this deliberately differs from Codex (`codex-apply-patch` 0.4.0):

- Context lines keep the file's text; Codex rewrites the whole found block with
  the patch's version (so a leniently matched line loses its whitespace), and
  writes added lines with LF into a CRLF file. A CR-only file is read as lines
  too (Codex finds nothing in it).
- A file ending with a blank line keeps it; Codex drops it (its line model
  takes the last blank line for the final newline).
- A chunk of added lines only goes right after its last `@@` header; without a
  header, at the end of the file. Codex puts it at the end (before a final
  blank line) even when it has a header.
- An `*** End of File` chunk may not reach back over an earlier chunk's block.
- A byte order mark is no part of the first line (the line model keeps it apart),
  so a hunk with the first line as context finds it; Codex's search reads the
  mark as part of that line and finds no such hunk.

What it must never do: read a file, decide whether a change is allowed, or
carry a change over other agents' edits (the writing path does, with `Landing`).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rapidfuzz import fuzz, process

from editjournal.daemon.text.lines import Document, parse, render
from editjournal.daemon.text.patch import line_positions
from editjournal.daemon.text.v4a import Chunk, Row, UpdateFile, V4AError

SIMILAR_LIMIT = 3
SIMILAR_CUTOFF = 50.0  # rapidfuzz ratio (0-100) below which a line is no hint at all
_PUNCTUATION = str.maketrans(
    {
        **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212", "-"),
        **dict.fromkeys("\u2018\u2019\u201a\u201b", "'"),
        **dict.fromkeys("\u201c\u201d\u201e\u201f", '"'),
        **dict.fromkeys(
            "\u00a0\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000", " "
        ),
    }
)
# What Codex's `trim` takes for whitespace: Rust's `char::is_whitespace` (Unicode
# White_Space). Python's own `str.strip()` also strips \x1c-\x1f (information
# separators, "whitespace" to `str.isspace`), so a line ending in one would be found
# where Codex finds none.
WHITESPACE = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007"
    "\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
# The search levels, strictest first: a level is tried over the whole rest of the
# file before the next one, so an exact match later wins over a lenient one earlier.
LEVELS: tuple[Callable[[str], str], ...] = (
    lambda s: s,
    lambda s: s.rstrip(WHITESPACE),
    lambda s: s.strip(WHITESPACE),
    lambda s: s.strip(WHITESPACE).translate(_PUNCTUATION),
)


class ChunkNotFound(V4AError):
    """A chunk's header or lines are not in the file (after the previous chunk)."""

    def __init__(
        self,
        path: str,
        hunk: int,
        header: str | None,
        unmatched: str,
        nearest: tuple[tuple[int, str], ...],
        after: int = 0,
    ) -> None:
        self.path = path
        self.hunk = hunk  # 1-based among the update's chunks
        self.header = header  # the chunk's last @@ header, if any
        self.unmatched = unmatched  # the first line that does not match
        self.nearest = nearest  # (1-based line, text) of the file's most similar lines
        self.after = after  # 0-based line the search started at (past the previous hunk)
        where = f"hunk {hunk}" + (f" (@@ {header})" if header else "")
        hint = "; nearest: " + ", ".join(f"{n}: {t!r}" for n, t in nearest) if nearest else ""
        since = f" from line {after + 1} on" if after else ""
        super().__init__(f"{path}: {where}: line {unmatched!r} not found{since}{hint}")


@dataclass(frozen=True, slots=True)
class Change:
    """Old lines [start, end) (0-based) become `new_lines`: one run of -/+ rows."""

    start: int
    end: int
    new_lines: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Landing:
    """Where one chunk landed in the old text: its block [start, end) (0-based),
    the lines its headers matched, and its changes inside the block."""

    chunk: int  # 1-based
    start: int
    end: int
    header_lines: tuple[int, ...]  # 0-based
    changes: tuple[Change, ...]

    @property
    def relied_on(self) -> tuple[int, ...]:
        """The 1-based lines the chunk relies on: its context and removed lines."""
        return tuple(range(self.start + 1, self.end + 1))


@dataclass(frozen=True, slots=True)
class UpdatePlan:
    """Every chunk's landing, in order, against the old text's lines."""

    landings: tuple[Landing, ...]


def plan_update(lines: Sequence[str], op: UpdateFile) -> UpdatePlan:
    """Find every chunk of `op` in the file's `lines`; raise `ChunkNotFound` for the
    first that is not."""
    landings: list[Landing] = []
    after = 0  # where the next search starts: past the previous block or header
    for number, chunk in enumerate(op.chunks, 1):
        landing = _land(lines, chunk, number, after, op.path)
        landings.append(landing)
        after = max(landing.end, landing.header_lines[-1] + 1 if landing.header_lines else 0)
    return UpdatePlan(tuple(landings))


def apply_update(old_text: str, op: UpdateFile) -> str:
    """`old_text` with every chunk of `op` applied (and a final newline)."""
    return render_update(old_text, plan_update(parse(old_text).lines, op))


def render_update(old_text: str, plan: UpdatePlan) -> str:
    """The old text with the plan's changes spliced in, its endings and BOM kept."""
    doc = parse(old_text)
    ending = doc.dominant_ending
    lines, endings = list(doc.lines), list(doc.endings)
    if endings and not endings[-1]:
        endings[-1] = ending  # Codex ends every file it updates with a newline
    changes = [change for landing in plan.landings for change in landing.changes]
    for change in sorted(changes, key=lambda c: c.start, reverse=True):
        lines[change.start : change.end] = change.new_lines
        endings[change.start : change.end] = [ending] * len(change.new_lines)
    return render(Document(tuple(lines), tuple(endings), doc.bom))


def _land(lines: Sequence[str], chunk: Chunk, number: int, after: int, path: str) -> Landing:
    header_lines: list[int] = []
    for header in chunk.headers:
        found = seek(lines, (header,), after)
        if found is None:
            raise _not_found(lines, (header,), after, path, number, header)
        header_lines.append(found)
        after = found + 1
    rows = chunk.rows
    old = chunk.old_lines
    if not old:  # additions only: after the header, or at the end of the file
        at = after if chunk.headers else len(lines)
        return Landing(number, at, at, tuple(header_lines), _changes(rows, at))
    found = seek(lines, old, after, chunk.end_of_file)
    if found is None and old[-1] == "":
        # Codex's retry: a last empty context line may stand for the final newline
        rows = _without_last_empty(rows)
        old = tuple(row.text for row in rows if row.kind != "+")
        found = seek(lines, old, after, chunk.end_of_file)
    if found is None:
        last = chunk.headers[-1] if chunk.headers else None
        raise _not_found(lines, chunk.old_lines, after, path, number, last)
    return Landing(number, found, found + len(old), tuple(header_lines), _changes(rows, found))


def seek(lines: Sequence[str], pattern: Sequence[str], start: int, eof: bool = False) -> int | None:
    """The first index >= `start` where `pattern` occurs, at the strictest level that
    finds one; with `eof`, only where it ends at the last line."""
    if not pattern or len(pattern) > len(lines):
        return start if not pattern else None
    last = len(lines) - len(pattern)
    first = last if eof else start
    if first < start:
        return None
    exact = _exact(lines, pattern, first, last)
    if exact is not None:
        return exact
    for level in LEVELS[1:]:
        wanted = [level(line) for line in pattern]
        for i in range(first, last + 1):
            if all(level(lines[i + k]) == w for k, w in enumerate(wanted)):
                return i
    return None


def _exact(lines: Sequence[str], pattern: Sequence[str], first: int, last: int) -> int | None:
    """The strictest level of `seek`, by the positions of the pattern's first line (kept
    for the content: `patch.line_positions`) rather than a scan of the lines: 1,000
    chunks through a 200,000-line file walked all of it at Python speed (issue 40)."""
    where = line_positions(lines).get(pattern[0], ())
    size = len(pattern)
    for i in where[bisect.bisect_left(where, first) :]:
        if i > last:
            return None
        if size == 1 or all(lines[i + k] == pattern[k] for k in range(1, size)):
            return i
    return None


def _without_last_empty(rows: tuple[Row, ...]) -> tuple[Row, ...]:
    """The rows less the last old line (an empty one), and less the last new line
    if that is empty too: Codex's retry, as rows."""
    out = list(rows)
    old_at = max(i for i, row in enumerate(out) if row.kind != "+")
    new_at = max((i for i, row in enumerate(out) if row.kind != "-"), default=-1)
    if new_at == old_at:  # one empty context row ends both: both lose it
        del out[old_at]
        return tuple(out)
    if new_at >= 0 and out[new_at].text == "":
        if out[new_at].kind == " ":
            out[new_at] = Row("-", "")  # still an old line, no longer a new one
        else:
            del out[new_at]
            old_at -= new_at < old_at
    if out[old_at].kind == " ":
        out[old_at] = Row("+", "")  # still a new line, no longer an old one
    else:
        del out[old_at]
    return tuple(out)


def _changes(rows: Sequence[Row], start: int) -> tuple[Change, ...]:
    """The runs of removed and added rows, as changes of the old lines."""
    changes: list[Change] = []
    at, run_start = start, start
    added: list[str] = []
    for row in (*rows, Row(" ", "")):  # a sentinel context row closes the last run
        if row.kind == " ":
            if at > run_start or added:
                changes.append(Change(run_start, at, tuple(added)))
            at += 1
            run_start, added = at, []
        elif row.kind == "-":
            at += 1
        else:
            added.append(row.text)
    return tuple(changes)


def _not_found(
    lines: Sequence[str],
    pattern: Sequence[str],
    after: int,
    path: str,
    number: int,
    header: str | None,
) -> ChunkNotFound:
    unmatched = pattern[_longest_prefix(lines, pattern, after)]
    nearest = similar_lines(lines, unmatched)
    return ChunkNotFound(path, number, header, unmatched, nearest, after)


def _longest_prefix(lines: Sequence[str], pattern: Sequence[str], after: int) -> int:
    """How many of the pattern's first lines match somewhere after `after` (the
    loosest level): the next one is the first line that does not match."""
    loose = LEVELS[-1]
    wanted = [loose(line) for line in pattern]
    best = 0
    for i in range(after, len(lines)):
        k = 0
        while k < len(wanted) - 1 and i + k < len(lines) and loose(lines[i + k]) == wanted[k]:
            k += 1
        best = max(best, k)
    return best


def similar_lines(lines: Sequence[str], wanted: str) -> tuple[tuple[int, str], ...]:
    """The file's lines most like `wanted`, best first, as (1-based line, text)."""
    found = process.extract(
        wanted.strip(),
        [line.strip() for line in lines],
        scorer=fuzz.ratio,
        limit=SIMILAR_LIMIT,
        score_cutoff=SIMILAR_CUTOFF,
    )
    return tuple((index + 1, lines[index]) for _, _, index in found)
