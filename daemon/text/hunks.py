"""Planning the `prepare_*` tools' hunks: where content goes, and what the plan looks like. Pure.

A prepared hunk is one splice of the file as the plan found it: a line range
replaced, content inserted beside an anchor line (found by text: `contains`,
`exact` or `regex`; or by a `read_file` line anchor `12#a1b2c3`), a block of
text replaced, or content appended. This module finds the place, builds the
splice, the reviewable unified diff, the blank-line observations
(`blankline_style`, `style_warning`) and the EOF-newline normalisation notes;
it also tells whether text looks like a diff (which `overwrite_entire_file`
refuses unless declared plain text).

A `regex` anchor is the agent's own pattern, run on the daemon's one thread: it
is matched with the `regex` package (Python `re` syntax, its VERSION0), whose
searches take a time limit, so a catastrophic pattern is refused `regex_timeout`
instead of stalling every agent. The limit is a parameter (`RegexLimit`); the
caller owns the clock.

What it must never do: read a file, look at the clock, or decide whether a
plan may be applied (the handler checks owner, expiry and staleness).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import regex

from editjournal.daemon.text.edit import Splice, plan_edit
from editjournal.daemon.text.lines import Document
from editjournal.daemon.text.region import changed_region
from editjournal.daemon.text.replace import (
    Joined,
    find_all,
    matched_lines,
    normalized,
    plan_replace,
)
from editjournal.schemas.errors import ErrorCode, ToolError
from editjournal.schemas.tools import InsertAfter, InsertBefore

MATCH_MODES = ("contains", "exact", "regex")
# resolves an insert's `LINE#ANCHOR` to a 1-based line of the content planned in
LineOf = Callable[[InsertAfter | InsertBefore], int]
LINE_ANCHOR = re.compile(r"^\s*\d+#[0-9a-fA-F]{4,16}[~?]?\s*$")
DIFF_CONTEXT = 3
LINES_LISTED = 10  # match lines named in a refusal
REGEX_SECONDS = 0.25  # what a `regex` anchor may spend searching one request's file,
REGEX_SECONDS_PER_LINE = 3e-6  # plus this a line: a plain search with a limit costs ~1.6 µs

_HUNK_HEADER = re.compile(r"^@@ -\d+(,\d+)? \+\d+(,\d+)? @@")
_DIFF_MARKERS = (
    re.compile(r"^diff --git "),
    re.compile(r"^\*\*\* (Begin|End) Patch"),
    re.compile(r"^\*\*\* (Update|Add|Delete) File: "),
    re.compile(r"^Index: \S"),
)


@dataclass(frozen=True)
class Found:
    """Where a prepare tool will change the file: 1-based lines and the text matched."""

    splice: Splice
    first: int  # the first line relied on (an insert's anchor line; 0: none, an append)
    last: int
    matched: tuple[int, ...] = ()  # the lines the anchor or block matched
    occurrences: int = 0  # how many places matched (the one chosen is `occurrence`)
    occurrence: int | None = None


@dataclass(frozen=True)
class RegexLimit:
    """How long a `regex` anchor may search: `seconds` in all for the request, `left()`
    says what remains by the caller's clock. Without a clock each line's search gets
    `seconds` (the engine reads no clock; `regex` times its own search)."""

    seconds: float = REGEX_SECONDS
    left: Callable[[], float] | None = None

    @classmethod
    def starting(cls, clock: Callable[[], float], seconds: float = REGEX_SECONDS) -> RegexLimit:
        """A budget of `seconds` from now on `clock` (e.g. `time.monotonic`)."""
        deadline = clock() + seconds
        return cls(seconds, lambda: deadline - clock())

    def remaining(self) -> float:
        return self.seconds if self.left is None else self.left()


def regex_seconds(line_count: int) -> float:
    """A request's budget for a file of `line_count` lines: enough for any plain pattern on
    the largest file the daemon parses, far too little for catastrophic backtracking."""
    return REGEX_SECONDS + line_count * REGEX_SECONDS_PER_LINE


@dataclass(frozen=True)
class Normalized:
    """What the EOF-newline rule added: every written line ends with a newline."""

    file_eof_newline_added: bool
    content_eof_newline_added: bool


def content_lines(content: str) -> tuple[str, ...]:
    """The lines of a hunk's content ("\\r\\n" read as "\\n"); a final newline adds none,
    and "" is no lines at all (a range replaced by nothing is deleted)."""
    text = normalized(content)
    if text == "":
        return ()
    return tuple((text[:-1] if text.endswith("\n") else text).split("\n"))


def normalization(doc: Document, content: str) -> Normalized:
    file_added = doc.line_count > 0 and not doc.final_newline
    content_added = content != "" and not normalized(content).endswith("\n")
    return Normalized(file_added, content_added)


# --- finding the place ---------------------------------------------------------------------


def range_found(doc: Document, start: int, end: int, content: str) -> Found:
    """Lines start..end (1-based, inclusive) replaced by `content`."""
    count = doc.line_count
    if not 1 <= start <= end or end > count:
        raise ToolError(
            ErrorCode.INVALID_RANGE,
            f"range {start}-{end} is not within the file's {count} lines"
            " (1-based, inclusive, START <= END)",
            {"start_line": start, "end_line": end, "line_count": count},
        )
    lines = tuple(range(start, end + 1))
    splice = Splice(0, "replace_range", start - 1, end, content_lines(content), lines)
    return Found(splice, start, end, lines)


def append_found(doc: Document, content: str) -> Found:
    """At the end of the file; relies on no line of it."""
    _refuse_empty(content)
    at = doc.line_count
    return Found(Splice(0, "append", at, at, content_lines(content), ()), 0, 0)


def insert_found(
    doc: Document,
    anchor: str,
    match: str,
    occurrence: int | None,
    content: str,
    after: bool,
    limit: RegexLimit = RegexLimit(),
    line_of: LineOf | None = None,
) -> Found:
    """Beside the anchor line: found by text (`match`), or by a read_file line anchor
    (resolved by `line_of` when the caller knows the agent's numbering: the handler's
    `daemon.writing.numbers.anchor_line`, which picks among identical lines by the line
    number given with the anchor; else in `doc`, where twins need an `occurrence`)."""
    _refuse_empty(content)
    op = "insert_after" if after else "insert_before"
    if LINE_ANCHOR.match(anchor) and match == "contains":
        line, count = _by_line_anchor(doc, anchor, occurrence, after, line_of), 1
    else:
        candidates = anchor_lines(doc.lines, anchor, match, limit)
        line, count = _chosen(candidates, occurrence, f"anchor {anchor!r} ({match})", "anchor")
    at = line if after else line - 1
    splice = Splice(0, op, at, at, content_lines(content), (line,))
    return Found(splice, line, line, (line,), count, occurrence)


def block_found(doc: Document, old_block: str, new_block: str, occurrence: int | None) -> Found:
    """The exact text `old_block` (compared with "\\n" endings) replaced by `new_block`."""
    old, new = normalized(old_block), normalized(new_block)
    if old == "":
        raise ToolError(
            ErrorCode.INVALID_PARAMS,
            "old_block is empty: nothing to replace - at `$.params.old_block`",
        )
    joined = Joined.of(doc)
    offsets = find_all(joined, old)
    spans = matched_lines(joined, offsets, len(old))
    _, count = _chosen([first for first, _ in spans], occurrence, "old_block", "old_block")
    k = (occurrence or 1) - 1
    plan, _final = plan_replace(joined, [offsets[k]], old, new)
    (splice,) = plan.splices
    first, last = spans[k]
    splice = replace(splice, op="block_replace")
    return Found(splice, first, last, tuple(range(first, last + 1)), count, occurrence)


def anchor_lines(
    lines: Sequence[str], anchor: str, match: str, limit: RegexLimit = RegexLimit()
) -> list[int]:
    """The 1-based lines the anchor text matches, in `match` mode."""
    if anchor == "" or "\n" in anchor or "\r" in anchor:
        raise ToolError(
            ErrorCode.INVALID_PARAMS,
            "anchor must be one non-empty line of text (or a read_file anchor like 12#a1b2c3)"
            " - at `$.params.anchor`",
        )
    if match == "exact":
        return [n for n, line in enumerate(lines, 1) if line == anchor]
    if match == "regex":
        return _regex_lines(lines, _compiled(anchor), limit)
    return [n for n, line in enumerate(lines, 1) if anchor in line]


def _compiled(anchor: str) -> regex.Pattern[str]:
    try:
        return regex.compile(anchor)
    except (regex.error, ValueError, OverflowError) as e:  # e.g. a repeat count too large
        raise ToolError(
            ErrorCode.INVALID_PARAMS,
            f"anchor is not a valid regular expression: {e} - at `$.params.anchor`",
        ) from e


def _regex_lines(lines: Sequence[str], pattern: regex.Pattern[str], limit: RegexLimit) -> list[int]:
    """The lines the pattern is found in, searched within the limit or refused."""
    found = []
    for n, line in enumerate(lines, 1):
        left = limit.remaining()
        try:
            if left <= 0:
                raise TimeoutError
            if pattern.search(line, timeout=left):
                found.append(n)
        except TimeoutError:
            raise _regex_timeout(pattern.pattern, limit.seconds, n, len(lines)) from None
    return found


def _regex_timeout(anchor: str, seconds: float, line: int, count: int) -> ToolError:
    return ToolError(
        ErrorCode.REGEX_TIMEOUT,
        f"anchor regex {anchor[:80]!r} took longer than its {seconds:.2f} s limit (stopped at"
        f" line {line} of {count}); nothing was planned. Use a simpler pattern (no nested"
        ' repeats such as (a|aa)+) or match: "contains" / "exact"',
        {"field": "anchor", "limit_s": seconds, "line": line, "line_count": count},
    )


def _by_line_anchor(
    doc: Document, anchor: str, occurrence: int | None, after: bool, line_of: LineOf | None
) -> int:
    """The line a `12#a1b2c3` anchor names, resolved as `edit` resolves it."""
    op_type = InsertAfter if after else InsertBefore
    op = op_type(hash=anchor.strip(), occurrence=occurrence, content="")
    if line_of is not None:
        return line_of(op)
    (splice,) = plan_edit(doc.lines, [op]).splices
    return splice.targets[0]


def _chosen(
    candidates: list[int], occurrence: int | None, what: str, field: str
) -> tuple[int, int]:
    """The one matching line (or the `occurrence`-th); refusals name where it matched."""
    count = len(candidates)
    listed = ", ".join(map(str, candidates[:LINES_LISTED])) + ("…" if count > LINES_LISTED else "")
    if count == 0:
        raise ToolError(
            ErrorCode.NO_MATCH,
            f"{what} matches no line of the file; nothing was planned",
            {"field": field},
            hint=f"check {field} against the file (read_file), or the match mode",
        )
    if occurrence is not None and occurrence > count:
        raise ToolError(
            ErrorCode.NO_MATCH,
            f"{what} matches {count} time(s) (lines {listed}), so there is no occurrence"
            f" {occurrence}",
            {"field": field, "count": count, "lines": candidates},
            hint=f"use an occurrence from 1 to {count}",
        )
    if occurrence is None and count > 1:
        raise ToolError(
            ErrorCode.MULTIPLE_MATCHES,
            f"{what} matches {count} places (lines {listed}); pass occurrence (1-based) to"
            " choose one, or make it unique",
            {"field": field, "count": count, "lines": candidates},
            hint="pass occurrence (1-based) or a more specific text",
        )
    return candidates[(occurrence or 1) - 1], count


def _refuse_empty(content: str) -> None:
    if content == "":
        raise ToolError(
            ErrorCode.INVALID_PARAMS, "content is empty: nothing to add - at `$.params.content`"
        )


# --- what the plan looks like --------------------------------------------------------------


def spliced(lines: Sequence[str], splice: Splice) -> list[str]:
    """The lines after the splice (endings are the writing path's business)."""
    return [*lines[: splice.start], *splice.new_lines, *lines[splice.end :]]


def unified(path: str, old: Sequence[str], new: Sequence[str]) -> str:
    """The reviewable unified diff of the plan (`--- a/PATH`, `+++ b/PATH`): difflib's,
    of the changed region and its context only (of a whole 200,000-line file, it held
    the thread 0.3 s for a one-line hunk), its hunks' line numbers moved back into
    place; a region past `SEARCHED_LINES` a side is one hunk, without a search."""
    region = changed_region(old, new)
    if region.empty:
        return ""
    room = DIFF_CONTEXT + SLACK  # difflib's own choice of where a change sits has room
    lo = max(0, region.start - room)
    a = old[lo : min(len(old), region.old_end + room)]
    b = new[lo : min(len(new), region.new_end + room)]
    head = [f"--- a/{path}", f"+++ b/{path}"]
    if max(len(a), len(b)) > SEARCHED_LINES:
        rows = [*head, _unified_header(lo, len(a), lo, len(b))]
        rows += [f"-{line}" for line in a] + [f"+{line}" for line in b]
    else:
        found = difflib.unified_diff(
            list(a), list(b), head[0][4:], head[1][4:], lineterm="", n=DIFF_CONTEXT
        )
        rows = [_moved(row, lo) if row.startswith("@@") else row for row in found]
    return "\n".join(rows) + "\n"


SEARCHED_LINES = 5_000  # a side of a changed region past this: one hunk, not searched
SLACK = 64  # lines around the changed region, past the context, that difflib is given
_HUNK_HEADER = re.compile(r"^@@ -(\d+)((?:,\d+)?) \+(\d+)((?:,\d+)?) @@")


def _moved(header: str, lines: int) -> str:
    """A hunk header of difflib's with its line numbers `lines` further down."""
    found = _HUNK_HEADER.match(header)
    assert found is not None, header
    old, old_len, new, new_len = found.groups()
    rest = header[found.end() :]
    return f"@@ -{int(old) + lines}{old_len} +{int(new) + lines}{new_len} @@{rest}"


def _unified_header(a_start: int, a_len: int, b_start: int, b_len: int) -> str:
    """`@@ -A,N +B,M @@` as difflib writes it (0-based starts; a length of 1 omitted)."""
    return f"@@ -{_range(a_start, a_len)} +{_range(b_start, b_len)} @@"


def _range(start: int, length: int) -> str:
    if length == 1:
        return str(start + 1)
    return f"{start + 1 if length else start},{length}"


@dataclass(frozen=True)
class BlanklineStyle:
    """Blank lines at each seam of an insertion: the file's and the content's together."""

    above: int
    below: int
    warning: str | None


def blankline_style(lines: Sequence[str], splice: Splice) -> BlanklineStyle:
    """Observed, never changed: a seam of two or more blank lines that the content's own
    blank lines make (or lengthen) is a double blank line; the file's own are its style."""
    new = splice.new_lines
    lead, trail = _leading_blanks(new), _trailing_blanks(new)
    above = _trailing_blanks(lines[: splice.start]) + lead
    below = _leading_blanks(lines[splice.end :]) + trail
    if not any(line.strip() for line in new):
        return BlanklineStyle(above, below, None)
    notes = []
    if splice.start > 0 and above >= 2 and lead:
        notes.append(f"{above} blank lines above the inserted content (a double blank line)")
    if splice.end < len(lines) and below >= 2 and trail:
        notes.append(f"{below} blank lines below the inserted content (a double blank line)")
    return BlanklineStyle(above, below, "; ".join(notes) or None)


def glued_warning(doc: Document) -> str | None:
    """An append to a file without a final newline would glue onto its last line."""
    if doc.line_count and not doc.final_newline:
        return (
            "the file's last line had no newline: one is added so the content does not glue onto it"
        )
    return None


def _leading_blanks(lines: Sequence[str]) -> int:
    n = 0
    for line in lines:
        if line.strip():
            break
        n += 1
    return n


def _trailing_blanks(lines: Sequence[str]) -> int:
    return _leading_blanks(list(reversed(lines)))


def looks_like_diff(text: str) -> str | None:
    """Why `text` looks like a diff or patch (strong features only), or None."""
    lines = normalized(text).split("\n")
    for i, line in enumerate(lines):
        if _HUNK_HEADER.match(line):
            return f"line {i + 1} is a unified diff hunk header ({line[:40]!r})"
        if line.startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ "):
            return f"lines {i + 1}-{i + 2} are diff file headers (--- / +++)"
        for marker in _DIFF_MARKERS:
            if marker.match(line):
                return f"line {i + 1} is a patch marker ({line[:40]!r})"
    return None
