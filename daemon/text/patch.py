"""Unified diffs: parse one, find where its hunks really are, plan the splices. Pure.

Parsing is unidiff's (a typed, maintained parser of git, GNU and difflib diffs),
after one forgiving pass of ours: each hunk header's line counts are recounted
from its body, because agents miscount, and unidiff, trusting the header, ends a
hunk early and silently drops the rest of it.

Locating ignores the stated line numbers except to choose: a hunk's block (its
context and removed lines, in order) must occur in the content; where it occurs
more than once, the occurrence nearest the stated position — shifted by how far
the previous hunk was from its own — wins, as in git, but only while the headers
can be trusted (`FilePatch.header_doubt`): with made-up headers the nearest
occurrence is a guess, so the hunk takes the one place the hunks' order leaves or
is refused naming its candidate lines. Hunks keep their order and may not overlap.
A hunk found nowhere is refused, naming the first of its lines that did not match.
Nothing is applied unless every hunk is placed: all or nothing.

The plan's splices rely on the lines each change removes (an addition, on its
position); the context only finds the place. Carrying them to newer content is
the writing path's, as for every writer (`daemon.text.rebase`). Each splice also
quotes the context lines right next to it (`QuotedSplice`), for the safety check.
"""

from __future__ import annotations

import dataclasses
import io
import re
from collections import Counter
from collections.abc import Generator, Iterator, Sequence
from dataclasses import dataclass

import unidiff

from editjournal.daemon.text.deferral import Deferred, too_big
from editjournal.daemon.text.edit import EditPlan
from editjournal.daemon.text.lines import Document
from editjournal.daemon.text.safety import QuotedSplice
from editjournal.schemas.errors import ErrorCode, ToolError

PATCH_FAILED_MESSAGE = (
    "Internal Error: The corrected patch failed to apply. Please review the diff for subtle errors."
)
INVALID_DIFF_MESSAGE = (
    "Invalid Diff: The provided diff content does not match the file's content."
    " The context or lines to be removed may be incorrect."
)
PREVIEW_CHARS = 80
DEV_NULL = "/dev/null"
_HEADER = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(.*)$", re.DOTALL)
_BLANK_BODY = ("\n", "\r\n")
CANDIDATES_SHOWN = 6  # candidate lines a refusal's message names (details has them all)
CANDIDATES_KEPT = 100  # ... up to this many


@dataclass(frozen=True, slots=True)
class Run:
    """One change inside a hunk: block lines [start, end) become `new_lines`."""

    start: int
    end: int
    new_lines: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Hunk:
    """One hunk: its block (context and removed lines, in order) and its changes."""

    number: int  # 1-based position in the diff
    header: str
    stated: int  # 0-based index the header names for the block (an insertion point if empty)
    old: tuple[str, ...]
    old_rows: tuple[int, ...]  # for each block line, its 1-based row in the hunk's body
    new: tuple[str, ...]  # its context and added lines, in order: what the result must hold
    runs: tuple[Run, ...]
    old_ends_without_newline: bool = False
    new_ends_without_newline: bool = False

    @property
    def adds(self) -> int:
        return sum(len(r.new_lines) for r in self.runs)


@dataclass(frozen=True, slots=True)
class FilePatch:
    """The hunks of a one-file diff; /dev/null on a side means creation or deletion.

    `header_doubt` says why the hunk headers' line numbers cannot be trusted to choose
    between two places where a hunk's lines occur (None: they can). They cannot when
    the agent demonstrably did not take them from a diff tool:
    - a header's counts disagree with its body (recounted, `warnings`): whoever wrote
      the counts without counting wrote the line number the same way;
    - every header claims line 1 (`@@ -1,…` or `@@ -0,…`): the placeholder agents write
      (two honest hunks cannot both start at line 1; one honest hunk at line 1 is
      found there exactly, which `locate` accepts).
    Headers whose counts agree are trusted even when their line is off: a diff made
    against an older file, where git takes the nearest occurrence too.
    """

    hunks: tuple[Hunk, ...]
    creates: bool = False
    deletes: bool = False
    warnings: tuple[str, ...] = ()
    header_doubt: str | None = None


@dataclass(frozen=True, slots=True)
class Placed:
    """A hunk and where its block starts in some content (0-based)."""

    hunk: Hunk
    start: int

    @property
    def end(self) -> int:
        return self.start + len(self.hunk.old)

    @property
    def offset(self) -> int:
        return self.start - self.hunk.stated


# --- parsing --------------------------------------------------------------------------


def parse_patch(text: str) -> FilePatch:
    """The one file's hunks of `text`; `invalid_diff` when it is no usable diff. The last
    diff parsed is kept (a `FilePatch` never changes), or its refusal: a handler asks
    for it several times, and runs again once a big file's index is built (1,000 hunks:
    ~60 ms each). A diff of `STEPPED_FROM` hunks or more, where deferring is on, is
    parsed in a job a step at a time (`Deferred`), then found kept."""
    if _LAST_PATCH and _LAST_PATCH[0][0] == text:
        return _kept_patch(_LAST_PATCH[0][1])
    if too_big(SLICED_DIFF_LINES) and text.count("\n@@") >= STEPPED_FROM:
        raise Deferred(work=_parsing_kept(text))
    try:
        parsed: FilePatch | ToolError = _finished(_parsing(text))
    except ToolError as e:
        parsed = e
    _LAST_PATCH[:] = [(text, parsed)]
    return _kept_patch(parsed)


# the daemon's one thread asks, one at a time
_LAST_PATCH: list[tuple[str, FilePatch | ToolError]] = []
STEPPED_FROM = 200  # hunks: a diff of fewer is parsed at once (< ~10 ms)
SLICED_DIFF_LINES = 20_000  # deferring on for files this big: a big diff defers too
_HUNKS_PER_STEP = 250


def _kept_patch(kept: FilePatch | ToolError) -> FilePatch:
    """A kept parse; a kept refusal raised afresh (a handler may add to its details)."""
    if isinstance(kept, ToolError):
        raise ToolError(kept.code, kept.message, dict(kept.details), kept.hint)
    return kept


def _parsing_kept(text: str) -> Iterator[None]:
    """The parse in a job's steps, kept with its refusal: the handler's run raises it."""
    try:
        parsed: FilePatch | ToolError = yield from _parsing(text)
    except ToolError as e:
        parsed = e
    _LAST_PATCH[:] = [(text, parsed)]


def _finished(steps: Generator[None, None, FilePatch]) -> FilePatch:
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return done.value


def _parsing(text: str) -> Generator[None, None, FilePatch]:
    """The parse, a step at a time: the recount, unidiff's parse, the hunks a few
    hundred at a time (the same calls in the same order as at once)."""
    text, warnings, miscounted = _recounted(_with_file_header(text))
    yield None
    try:
        files = unidiff.PatchSet(text)
    except unidiff.UnidiffParseError as e:
        raise _invalid(f"the diff could not be parsed: {e}", {"reason": str(e)}) from e
    if not files:
        raise _invalid("the text has no hunks (no line starting with @@)", {})
    if len(files) != 1:
        raise _invalid(
            f"the diff names {len(files)} files; safe_patch takes a diff of one file",
            {"files": [f.path for f in files]},
        )
    yield None
    patched = files[0]
    hunks: list[Hunk] = []
    for at in range(0, len(patched), _HUNKS_PER_STEP):
        hunks.extend(
            _hunk(i + 1, patched[i]) for i in range(at, min(at + _HUNKS_PER_STEP, len(patched)))
        )
        yield None
    # only /dev/null says so: unidiff also takes a hunk that empties a file for a deletion
    creates, deletes = patched.source_file == DEV_NULL, patched.target_file == DEV_NULL
    if not hunks and not creates:
        raise _invalid("the diff has no hunks (no line starting with @@)", {})
    doubt = _header_doubt(patched, miscounted)
    return FilePatch(tuple(hunks), creates, deletes, tuple(warnings), doubt)


def _header_doubt(patched: unidiff.PatchedFile, miscounted: Sequence[str]) -> str | None:
    """Why the headers' line numbers cannot choose a place (see `FilePatch`)."""
    if miscounted:
        return miscounted[0]
    if len(patched) and all(h.source_start <= 1 for h in patched):
        return "every hunk header claims line 1"
    return None


def _with_file_header(text: str) -> str:
    """A diff of hunks only (no ---/+++ lines) gets neutral file headers."""
    return "--- a\n+++ b\n" + text if text.lstrip("\r\n").startswith("@@") else text


def _recounted(text: str) -> tuple[str, list[str], list[str]]:
    """Every hunk header's counts recounted from its body; trailing blank lines dropped.
    Also the warnings saying so, and what each recounted header got wrong."""
    rows = list(io.StringIO(text.rstrip("\r\n") + "\n"))  # splits on "\n" only
    out: list[str] = []
    warnings: list[str] = []
    miscounted: list[str] = []
    i = number = 0
    while i < len(rows):
        match = _HEADER.match(rows[i])
        if match is None:
            out.append(rows[i])
            i += 1
            continue
        j = i + 1
        while j < len(rows) and _is_body(rows, j):
            j += 1
        number += 1
        header, wrong = _header_for(match, rows[i + 1 : j])
        out.append(header)
        out.extend(rows[i + 1 : j])
        if wrong:
            miscounted.append(f"hunk {number}'s header {wrong}")
            warnings.append(f"hunk {number}: its header {wrong}: the body was used")
        i = j
    return "".join(out), warnings, miscounted


def _is_body(rows: Sequence[str], j: int) -> bool:
    row = rows[j]
    if row.startswith("--- ") and j + 1 < len(rows) and rows[j + 1].startswith("+++ "):
        return False  # the next file's header
    return row[:1] in (" ", "-", "+", "\\") or row in _BLANK_BODY


def _header_for(match: re.Match[str], body: Sequence[str]) -> tuple[str, str | None]:
    """The header with its body's counts, and what it said wrong (None: nothing)."""
    old = sum(1 for row in body if row[:1] in (" ", "-") or row in _BLANK_BODY)
    new = sum(1 for row in body if row[:1] in (" ", "+") or row in _BLANK_BODY)
    stated_old = 1 if match[2] is None else int(match[2])
    stated_new = 1 if match[4] is None else int(match[4])
    header = f"@@ -{match[1]},{old} +{match[3]},{new} @@{match[5]}"
    if (stated_old, stated_new) == (old, new):
        return header, None
    return header, (
        f"counts {stated_old} old and {stated_new} new lines, its body has {old} and {new}"
    )


def _hunk(number: int, hunk: unidiff.Hunk) -> Hunk:
    old: list[str] = []
    new: list[str] = []
    rows: list[int] = []
    runs: list[Run] = []
    pending: list[str] = []  # added lines of the run being collected
    run_start: int | None = None
    flags = {"old": False, "new": False}
    previous = " "
    for row, line in enumerate(hunk, start=1):
        kind = line.line_type or " "
        if kind == "\\":
            flags["old"] |= previous in " -"
            flags["new"] |= previous in " +"
            continue
        body = _body(number, row, line.value)
        if kind == " " and run_start is not None:
            runs.append(Run(run_start, len(old), tuple(pending)))
            run_start, pending = None, []
        if kind in "-+" and run_start is None:
            run_start = len(old)
        if kind in " -":
            old.append(body)
            rows.append(row)
        if kind in " +":
            new.append(body)
        if kind == "+":
            pending.append(body)
        previous = kind
    if run_start is not None:
        runs.append(Run(run_start, len(old), tuple(pending)))
    stated = hunk.source_start - 1 if hunk.source_length else hunk.source_start
    header = (
        f"@@ -{hunk.source_start},{hunk.source_length} +{hunk.target_start},{hunk.target_length} @@"
    )
    return Hunk(
        number,
        header,
        max(stated, 0),
        tuple(old),
        tuple(rows),
        tuple(new),
        tuple(runs),
        flags["old"],
        flags["new"],
    )


def _body(number: int, row: int, value: str) -> str:
    """A diff line's text without its line ending; no bare CR, no NUL."""
    body = value[:-1] if value.endswith("\n") else value
    body = body[:-1] if body.endswith("\r") else body
    for char, name in (("\r", "a bare carriage return"), ("\x00", "a NUL character")):
        if char in body:
            raise _invalid(
                f"hunk {number}, row {row} contains {name}, which no line of a text file holds",
                {"hunk": number, "row": row},
            )
    return body


# --- locating -------------------------------------------------------------------------


def locate(lines: Sequence[str], patch: FilePatch) -> list[Placed]:
    """Where each hunk's block is in `lines`, in order, not overlapping; or `invalid_diff`.

    A block found in several places after the hunk above takes the one nearest its
    stated line (shifted by the hunk above's offset), as git does, when the headers
    can be trusted. When they cannot (`FilePatch.header_doubt`), the number chooses
    nothing: the hunk takes the one place left once the hunks' order is kept (after
    the hunk above, early enough for the hunks below to fit), or the place its header
    names exactly; otherwise it is refused naming every candidate, since a made-up
    number would pick one of two identical blocks by chance."""
    where = line_positions(lines)
    found = [_occurrences(lines, where, hunk.old) if hunk.old else [] for hunk in patch.hunks]
    doubt = patch.header_doubt
    latest = _latest_starts(patch.hunks, found, len(lines)) if doubt else [len(lines)] * len(found)
    placed: list[Placed] = []
    floor, shift = 0, 0
    for hunk, starts, last in zip(patch.hunks, found, latest, strict=True):
        untrusted = None if doubt is None else (doubt, last)
        spot = _place(lines, where, hunk, starts, floor, hunk.stated + shift, untrusted)
        placed.append(spot)
        floor, shift = spot.end, spot.offset
    return placed


class LinePositions:
    """Each line's 0-based positions in a content, answered from two C-speed passes (a
    dict of where each line last is, and how often each occurs): a line that occurs
    once, as most do, needs no list of its own; a repeated one is found on demand."""

    def __init__(self, lines: Sequence[str], counted: bool = True) -> None:
        self._lines = lines
        self._last: dict[str, int] = {}
        self._counts: Counter[str] = Counter()
        self._repeated: dict[str, list[int]] = {}
        if counted:
            self._last = dict(zip(lines, range(len(lines)), strict=True))
            self._counts = Counter(lines)

    @classmethod
    def stepped(cls, lines: Sequence[str]) -> Generator[None, None, LinePositions]:
        """The same, a chunk of lines per step (a big file's, in a job): the dict and the
        counts filled in order, as the one-go passes fill them."""
        where = cls(lines, counted=False)
        for a in range(0, len(lines), _LINES_PER_STEP):
            chunk = lines[a : a + _LINES_PER_STEP]
            where._last.update(zip(chunk, range(a, a + len(chunk)), strict=True))
            where._counts.update(chunk)
            yield None
        return where

    def get(self, line: str, default: Sequence[int] = ()) -> Sequence[int]:
        count = self._counts.get(line, 0)
        if count == 0:
            return default
        if count == 1:
            return (self._last[line],)
        found = self._repeated.get(line)
        if found is None:
            found, at = [], -1
            index = self._lines.index
            for _ in range(count):
                at = index(line, at + 1)
                found.append(at)
            self._repeated[line] = found
        return found


_LAST_POSITIONS: list[tuple[Sequence[str], LinePositions]] = []
_POSITIONS_KEPT = 2  # the contents a request locates in (current, and the agent's view)
_LINES_PER_STEP = 16384


def line_positions(lines: Sequence[str]) -> LinePositions:
    """`LinePositions` of `lines`, kept for the last contents asked (a tuple of lines never
    changes): a request planned again (its file's index was built in a job, or the file
    changed meanwhile) does not pay for the passes once more."""
    for kept, where in _LAST_POSITIONS:
        if kept is lines:
            return where
    if isinstance(lines, tuple) and too_big(len(lines)):  # built in a job, then kept
        raise Deferred(work=_kept(lines))
    where = LinePositions(lines)
    _keep(lines, where)
    return where


def _kept(lines: tuple[str, ...]) -> Iterator[None]:
    _keep(lines, (yield from LinePositions.stepped(lines)))


def _keep(lines: Sequence[str], where: LinePositions) -> None:
    if isinstance(lines, tuple):  # immutable: a list could change under the memo
        _LAST_POSITIONS.insert(0, (lines, where))
        del _LAST_POSITIONS[_POSITIONS_KEPT:]


def _latest_starts(hunks: Sequence[Hunk], found: Sequence[list[int]], size: int) -> list[int]:
    """For each hunk, the last start from which every hunk below it still fits after it,
    in order (-1: none does; the placing then says what is wrong)."""
    latest: list[int] = []
    limit = size
    for hunk, starts in zip(reversed(hunks), reversed(found), strict=True):
        if hunk.old:  # an insertion without context takes no lines: it bounds nothing
            limit = max((p for p in starts if p + len(hunk.old) <= limit), default=-1)
        latest.append(limit)
    return latest[::-1]


def _place(
    lines: Sequence[str],
    where: LinePositions,
    hunk: Hunk,
    found: list[int],
    floor: int,
    expected: int,
    untrusted: tuple[str, int] | None,
) -> Placed:
    """`hunk` at its block's place after `floor`; `untrusted`: why its header cannot
    choose, and the latest start the hunks below allow."""
    if not hunk.old:  # an insertion without context: only the stated position says where
        if not floor <= expected <= len(lines):
            raise _unplaceable_insertion(hunk, expected, len(lines))
        return Placed(hunk, expected)
    after = [p for p in found if p >= floor]
    if untrusted is not None and len(after) > 1:
        return _unguessed(hunk, after, *untrusted)
    if after:
        return Placed(hunk, min(after, key=lambda p: (abs(p - expected), p)))
    if found:
        raise _invalid(
            f"hunk {hunk.number} ({hunk.header}) overlaps the hunk before it, or comes before"
            " it, where its lines are found: hunks must be in file order and not overlap",
            {"hunk": hunk.number, "header": hunk.header, "found_at_line": found[0] + 1},
        )
    raise _mismatch(lines, where, hunk, expected)


def _unguessed(hunk: Hunk, after: list[int], doubt: str, latest: int) -> Placed:
    """Under headers that cannot be trusted: the one place the hunks' order leaves, or
    the place the header names exactly (its own line holding the block confirms it);
    else `invalid_diff` naming the candidates."""
    fitting = [p for p in after if p <= latest] or after
    if len(fitting) == 1:
        return Placed(hunk, fitting[0])
    if hunk.stated in fitting:
        return Placed(hunk, hunk.stated)
    raise _ambiguous(hunk, fitting, doubt)


def _occurrences(lines: Sequence[str], where: LinePositions, block: Sequence[str]) -> list[int]:
    """Every start at which `block` occurs, keyed on its rarest line."""
    counts = [len(where.get(line, ())) for line in block]
    k = min(range(len(block)), key=counts.__getitem__)
    starts = (p - k for p in where.get(block[k], ()))
    size = len(block)
    return [s for s in starts if s >= 0 and tuple(lines[s : s + size]) == tuple(block)]


def _mismatch(lines: Sequence[str], where: LinePositions, hunk: Hunk, expected: int) -> ToolError:
    """`invalid_diff` naming the first block line that matched nowhere (best attempt)."""
    best, best_at = 0, None
    for start in where.get(hunk.old[0], ()):
        n = _common_prefix(lines, start, hunk.old)
        if n > best or (
            n == best and best_at is not None and abs(start - expected) < abs(best_at - expected)
        ):
            best, best_at = n, start
    text = hunk.old[best]
    found = None
    if best_at is not None and best_at + best < len(lines):
        found = lines[best_at + best]
    details = {
        "hunk": hunk.number,
        "header": hunk.header,
        "row": hunk.old_rows[best],
        "expected": text,
        "found": found,
        "at_line": best_at + best + 1 if best_at is not None else None,
    }
    where_text = (
        f"; at line {best_at + best + 1} the file has {_preview(found)!r}"
        if best_at is not None
        else ""
    )
    return _invalid(
        f"hunk {hunk.number} ({hunk.header}): its row {hunk.old_rows[best]}, {_preview(text)!r},"
        f" does not match{where_text}",
        details,
    )


def _ambiguous(hunk: Hunk, candidates: Sequence[int], doubt: str) -> ToolError:
    """`invalid_diff`: the block occurs at several places and the header cannot choose."""
    lines = [p + 1 for p in candidates]
    shown = [str(n) for n in lines[:CANDIDATES_SHOWN]]
    more = len(lines) - len(shown)
    named = ", ".join(shown[:-1]) + " and " + shown[-1] if not more else ", ".join(shown)
    named += f" and {more} more" if more else ""
    return _invalid(
        f"hunk {hunk.number} ({hunk.header}): its context and removed lines occur at lines"
        f" {named}, and the hunk headers cannot be trusted to choose ({doubt}): nothing"
        " was guessed; give the hunk more context lines, until they occur once, or its"
        " true line numbers",
        {
            "hunk": hunk.number,
            "header": hunk.header,
            "candidates": lines[:CANDIDATES_KEPT],
            "candidate_count": len(lines),
            "header_doubt": doubt,
        },
    )


def _common_prefix(lines: Sequence[str], start: int, block: Sequence[str]) -> int:
    n = 0
    while n < len(block) and start + n < len(lines) and lines[start + n] == block[n]:
        n += 1
    return n


def _unplaceable_insertion(hunk: Hunk, at: int, line_count: int) -> ToolError:
    return _invalid(
        f"hunk {hunk.number} ({hunk.header}) inserts without context at line {at + 1}, which"
        f" is not in the file ({line_count} lines) or comes before the hunk above it;"
        " include context lines",
        {"hunk": hunk.number, "header": hunk.header, "line_count": line_count},
    )


# --- carrying and planning --------------------------------------------------------------


def to_plan(placed: Sequence[Placed], notes: Sequence[str] = ()) -> EditPlan:
    """Each change of each hunk as a splice of the content the hunks were placed in.

    A change relies on the lines it removes (an addition, on its position between
    two lines); the hunk's context lines only found its place (`context_lines`).
    Each splice quotes the context lines the diff shows right above and below it
    (of any hunk: a hunk may end where the next one's context starts)."""
    quoted = _quoted_context(placed)
    splices = [
        QuotedSplice(
            spot.hunk.number - 1,
            "hunk",
            spot.start + run.start,
            spot.start + run.end,
            run.new_lines,
            tuple(range(spot.start + run.start + 1, spot.start + run.end + 1)),
            quoted.get(spot.start + run.start - 1),
            quoted.get(spot.start + run.end),
        )
        for spot in placed
        for run in spot.hunk.runs
    ]
    ordered = tuple(sorted(splices, key=lambda s: (s.start, s.end, s.index)))
    return EditPlan(ordered, tuple(("hunk_header_recounted", n) for n in notes))


def _quoted_context(placed: Sequence[Placed]) -> dict[int, str]:
    """The hunks' context lines by their 0-based place in the content: what the diff
    quotes of the file besides what it removes."""
    quoted: dict[int, str] = {}
    for spot in placed:
        removed = {i for run in spot.hunk.runs for i in range(run.start, run.end)}
        for i, text in enumerate(spot.hunk.old):
            if i not in removed:
                quoted[spot.start + i] = text
    return quoted


def context_lines(placed: Sequence[Placed]) -> tuple[int, ...]:
    """The 1-based lines of the hunks' blocks that no change removes: their context."""
    found: list[int] = []
    for spot in placed:
        removed = {spot.start + i for run in spot.hunk.runs for i in range(run.start, run.end)}
        found.extend(n + 1 for n in range(spot.start, spot.end) if n not in removed)
    return tuple(found)


def final_newline(placed: Sequence[Placed], line_count: int) -> bool | None:
    """Whether the result ends with a newline, when the diff says (None: keep the file's).

    Only a hunk that reaches the end of the file speaks about it: the "\\ No newline
    at end of file" marker on its new side says no; on its old side only, yes; an
    empty file given lines gets a newline unless the marker says otherwise.
    """
    for spot in placed:
        if spot.end != line_count:
            continue
        hunk = spot.hunk
        if not hunk.new:  # removes the last lines: the line above them ends the file
            return True if hunk.old_ends_without_newline and spot.start > 0 else None
        if hunk.new_ends_without_newline:
            return False
        if hunk.old_ends_without_newline or line_count == 0:
            return True
    return None


def with_final_newline(doc: Document, wanted: bool, ending: str = "\n") -> Document:
    """The final newline as a tool stated it (`ending`: the file's habit, when the result
    has no ending left to copy); an empty last line keeps its ending (without one it would
    be no line at all)."""
    if not doc.lines or doc.final_newline == wanted or (not wanted and doc.lines[-1] == ""):
        return doc
    habit = doc.dominant_ending if any(doc.endings) else ending
    last = habit if wanted else ""
    return dataclasses.replace(doc, endings=(*doc.endings[:-1], last))


def removes_everything(placed: Sequence[Placed], line_count: int) -> bool:
    """The hunks remove every line and add none (what a diff to /dev/null must do)."""
    removed = sum(r.end - r.start for spot in placed for r in spot.hunk.runs)
    return removed == line_count and all(spot.hunk.adds == 0 for spot in placed)


def verify(
    placed: Sequence[Placed], result: Sequence[str], wanted: bool | None, ends: bool
) -> None:
    """The strict check of the applied result: every hunk's new side stands where its
    block was, shifted by the hunks above, and the final newline is as the diff says.
    `patch_failed` otherwise (a bug of ours, or a diff no text file can satisfy)."""
    shift = 0
    for spot in placed:
        at = spot.start + shift
        if tuple(result[at : at + len(spot.hunk.new)]) != spot.hunk.new:
            raise _failed(spot.hunk, f"its new lines are not at line {at + 1} of the result")
        shift += len(spot.hunk.new) - len(spot.hunk.old)
    if wanted is not None and wanted != ends:
        last = placed[-1].hunk if placed else None
        said = "ends with" if wanted else "ends without"
        raise _failed(last, f"the diff says the file {said} a newline, which the result cannot")


def _failed(hunk: Hunk | None, detail: str) -> ToolError:
    where = f"hunk {hunk.number} ({hunk.header}): " if hunk else ""
    details = {"hunk": hunk.number, "header": hunk.header} if hunk else {}
    return ToolError(
        ErrorCode.PATCH_FAILED,
        f"{PATCH_FAILED_MESSAGE} {where}{detail}",
        {**details, "problem": detail},
    )


def _preview(text: str | None) -> str | None:
    if text is None or len(text) <= PREVIEW_CHARS:
        return text
    return text[: PREVIEW_CHARS - 1] + "…"


def _invalid(detail: str, details: dict[str, object]) -> ToolError:
    return ToolError(
        ErrorCode.INVALID_DIFF,
        f"{INVALID_DIFF_MESSAGE} {detail[:1].upper()}{detail[1:]}",
        {**details, "problem": detail},
    )
