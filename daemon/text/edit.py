"""Planning and applying a batch of anchored edit operations. Pure: no I/O, no clock.

A batch is resolved completely against one snapshot before anything changes:
every anchor of every operation climbs the ladder (6-hex line hash -> 8-hex
-> context hash -> `occurrence`, or the line number given with it) in the same
`AnchorIndex`. Which line a number means is the caller's to say (`Pick`: the
agent's numbering lives in the journal); without a `Pick`, identical lines need an
`occurrence`. Any problem rejects the whole batch, and the error lists every
problem found, so an agent fixes them all in one turn. Each operation becomes a
`Splice` addressed by its position in the initial snapshot; splices may not
overlap, and apply in position order (ties in batch order), so later operations
never see the results of earlier ones.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Generator, Iterable, Sequence
from dataclasses import dataclass, field

from editjournal.daemon.text.anchors import AnchorIndex, LineAnchor, classify_quality
from editjournal.daemon.text.lines import Document, parse
from editjournal.schemas.errors import ErrorCode, ToolError
from editjournal.schemas.tools import (
    DeleteLine,
    DeleteRange,
    InsertAfter,
    InsertBefore,
    Op,
    Operation,
    ReplaceLine,
    ReplaceRange,
    SingleLineOp,
)

NEIGHBOURS_EACH_SIDE = 3
PREVIEW_CHARS = 80
_ANCHOR = re.compile(r"^\s*(?:(\d+)#)?([0-9a-fA-F]{4,16})[~?]?\s*$")

# (anchor, the line number given with it, the lines the anchor matches) -> the line the
# agent meant, or None when the number does not single one out (`anchors.meant_line`)
Pick = Callable[[str, int, tuple[int, ...]], int | None]


@dataclass(frozen=True, slots=True)
class Splice:
    """Replace original lines [start, end) (0-based) with `new_lines`.

    `start == end` is an insertion before original index `start`. `targets`
    are the 1-based lines the change relies on: the lines it replaces, or an
    insert's anchor line. An insertion without targets relies on its position
    only (between its two neighbours), as a diff's added lines do; carrying
    the splice over later changes (`daemon.text.rebase`) goes by them.
    """

    index: int  # the operation's position in the batch
    op: str
    start: int
    end: int
    new_lines: tuple[str, ...]
    targets: tuple[int, ...]


@dataclass(frozen=True)
class EditPlan:
    splices: tuple[Splice, ...]  # in application order
    auto_corrections: tuple[tuple[str, str], ...] = ()
    warnings: tuple[str, ...] = ()


@dataclass
class _Planner:
    """Resolves one batch; collects every problem instead of stopping at the first."""

    index: AnchorIndex
    anchors: Sequence[LineAnchor]
    lines: Sequence[str]
    pick: Pick | None = None
    picked: set[int] = field(default_factory=set)  # operations resolved by line number
    problems: list[ToolError] = field(default_factory=list)
    corrections: list[tuple[str, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def parse_anchor(raw: str) -> tuple[str, int | None]:
    """`"12#A1B2C3~"` -> `("a1b2c3", 12)`: the hex, and the advisory line if one was copied."""
    found = _ANCHOR.match(raw)
    if not found:
        raise ToolError(ErrorCode.INVALID_PARAMS, f"{raw!r} is not an anchor (4-16 hex digits)")
    return found.group(2).lower(), int(found.group(1)) if found.group(1) else None


def content_lines(content: str) -> tuple[str, ...]:
    """The lines of an operation's content; "" is one empty line, a final newline adds none.

    A leading U+FEFF stays text of the first line: `parse` takes it for a file's BOM,
    but only the file's own BOM is file-level, so dropping it here would lose a char.
    """
    doc = parse(content)
    lines = doc.lines or ("",)
    if doc.bom:
        lines = ("\ufeff" + lines[0], *lines[1:])
    return lines


def plan_edit(
    lines: Sequence[str],
    operations: Sequence[Operation],
    index: AnchorIndex | None = None,
    anchors: Sequence[LineAnchor] | None = None,
    pick: Pick | None = None,
) -> EditPlan:
    """Resolve every operation against `lines`; raise one ToolError listing all problems.

    Pass the `index` and its `anchors()` when the caller has them already. `pick`
    resolves an anchor that matches several lines by the line number given with it;
    None (an agent that never read the file: its numbers refer to nothing) leaves
    that to an `occurrence`.
    """
    steps = planning_edit(lines, operations, index, anchors, pick)
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return done.value


OPS_PER_STEP = 250  # a big batch planned in a job: ~30 µs an operation


def planning_edit(
    lines: Sequence[str],
    operations: Sequence[Operation],
    index: AnchorIndex | None = None,
    anchors: Sequence[LineAnchor] | None = None,
    pick: Pick | None = None,
) -> Generator[None, None, EditPlan]:
    """`plan_edit`, `OPS_PER_STEP` operations a step (the same calls, in order)."""
    index = index or AnchorIndex(lines)
    shown = anchors if anchors is not None else index.anchors()
    planner = _Planner(index, shown, lines, pick)
    splices: list[Splice] = []
    for at in range(0, len(operations), OPS_PER_STEP):
        for i in range(at, min(at + OPS_PER_STEP, len(operations))):
            splice = _splice(planner, i, operations[i])
            if splice:
                splices.append(splice)
        yield None
    if planner.problems:
        raise _combined(planner.problems)
    ordered = sorted(splices, key=lambda s: (s.start, s.end, s.index))
    _refuse_overlaps(ordered)
    return EditPlan(tuple(ordered), tuple(planner.corrections), tuple(planner.warnings))


def _splice(planner: _Planner, i: int, op: Operation) -> Splice | None:
    try:
        if isinstance(op, (ReplaceRange, DeleteRange)):
            return _range_splice(planner, i, op)
        return _single_splice(planner, i, op)
    except ToolError as problem:
        problem.details.setdefault("operation", i + 1)
        problem.details.setdefault("op", _op_name(op))
        planner.problems.append(problem)
        return None


def _op_name(op: Op) -> str:
    return str(type(op).__struct_config__.tag)


def _single_splice(planner: _Planner, i: int, op: SingleLineOp) -> Splice:
    line = _resolve_single(planner, i, op)
    _refuse_low_entropy(planner, i, op, line)
    zero = line - 1
    if isinstance(op, ReplaceLine):
        return Splice(i, "replace_line", zero, line, content_lines(op.content), (line,))
    if isinstance(op, DeleteLine):
        return Splice(i, "delete_line", zero, line, (), (line,))
    if isinstance(op, InsertAfter):
        return Splice(i, "insert_after", line, line, content_lines(op.content), (line,))
    assert isinstance(op, InsertBefore)
    return Splice(i, "insert_before", zero, zero, content_lines(op.content), (line,))


def _resolve_single(planner: _Planner, i: int, op: SingleLineOp) -> int:
    """The ladder for one anchor; `occurrence` picks among several line-level matches."""
    anchor, copied_line = parse_anchor(op.hash)
    advisory = op.line or copied_line
    match = planner.index.match(anchor)
    if match.level == "none":
        raise _stale(anchor, "hash")
    if op.occurrence is None:  # line-level matches are counted only for an occurrence
        candidates = match.candidates
        if len(candidates) == 1:
            return candidates[0]
        picked = _by_line_number(planner, anchor, advisory, candidates)
        if picked is not None:
            planner.picked.add(i)
            return picked
        code = _ambiguity_code(planner, candidates)
        raise _ambiguous(planner, code, anchor, "hash", candidates, advisory)
    by_line = planner.index.line_matches(anchor)
    candidates = by_line if len(by_line) > 1 else match.candidates
    if op.occurrence > len(candidates):
        raise _stale(
            anchor,
            "hash",
            f"occurrence {op.occurrence} asked for, but anchor {anchor} matches only "
            f"{len(candidates)} line(s) of the current file",
        )
    chosen = candidates[op.occurrence - 1]
    if advisory is not None and advisory != chosen:
        planner.warnings.append(
            f"operation {i + 1}: occurrence {op.occurrence} of {anchor} is line {chosen}, "
            f"not the advisory line {advisory}; the occurrence was used"
        )
    return chosen


def _ambiguity_code(planner: _Planner, candidates: Sequence[int]) -> ErrorCode:
    """Identical at every level (same line, same context) is `anchor_context_ambiguous`:
    no anchor can tell them apart. Otherwise a context anchor could: `anchor_ambiguous`."""
    contexts = {planner.anchors[n - 1].context for n in candidates}
    hashes = {planner.anchors[n - 1].hash for n in candidates}
    if len(contexts) == 1 and len(hashes) == 1:
        return ErrorCode.ANCHOR_CONTEXT_AMBIGUOUS
    return ErrorCode.ANCHOR_AMBIGUOUS


def _by_line_number(
    planner: _Planner, anchor: str, line: int | None, candidates: tuple[int, ...]
) -> int | None:
    """The candidate the line number given with the anchor names, as the caller's `pick`
    reads it (None: no number, no pick, or it singles none out)."""
    if line is None or planner.pick is None:
        return None
    return planner.pick(anchor, line, candidates)


def _resolve_endpoint(planner: _Planner, raw: str, which: str) -> int:
    anchor, line = parse_anchor(raw)
    match = planner.index.match(anchor)
    if match.level == "none":
        raise _stale(anchor, which)
    if len(match.candidates) > 1:
        picked = _by_line_number(planner, anchor, line, match.candidates)
        if picked is not None:
            return picked
        code = ErrorCode.ANCHOR_CONTEXT_AMBIGUOUS
        raise _ambiguous(planner, code, anchor, which, match.candidates, line)
    return match.candidates[0]


def _range_splice(planner: _Planner, i: int, op: ReplaceRange | DeleteRange) -> Splice:
    start, end = _range_endpoints(planner, i, op)
    new = content_lines(op.content) if isinstance(op, ReplaceRange) else ()
    return Splice(i, _op_name(op), start - 1, end, new, tuple(range(start, end + 1)))


def _range_endpoints(
    planner: _Planner, index: int, op: ReplaceRange | DeleteRange
) -> tuple[int, int]:
    """Both endpoints (every problem reported); a reversed range is swapped and reported."""
    resolved: dict[str, int] = {}
    errors: list[ToolError] = []
    for which, raw in (("start_hash", op.start_hash), ("end_hash", op.end_hash)):
        try:
            resolved[which] = _resolve_endpoint(planner, raw, which)
        except ToolError as e:
            errors.append(e)
    if errors:  # report both endpoints, in order, each naming its operation
        for error in errors:
            error.details.setdefault("operation", index + 1)
            error.details.setdefault("op", _op_name(op))
        planner.problems.extend(errors[:-1])
        raise errors[-1]
    start, end = resolved["start_hash"], resolved["end_hash"]
    if start == end:
        raise ToolError(
            ErrorCode.INVALID_RANGE_ORDER,
            f"start_hash and end_hash both resolve to line {start}: the range is a no-op "
            "(start equals end); use replace_line or delete_line for one line",
            {"line": start},
        )
    if start > end:
        planner.corrections.append(
            (
                "range_order_swapped",
                f"start_line ({start}) was after end_line ({end}). Swapped automatically.",
            )
        )
        start, end = end, start
    return start, end


def _picked_deliberately(planner: _Planner, i: int, op: SingleLineOp) -> bool:
    """An explicit occurrence, a line number that singled the line out among its twins
    in the agent's numbering, or a context anchor (which names the neighbours too)."""
    if op.occurrence is not None or i in planner.picked:
        return True
    return planner.index.match(parse_anchor(op.hash)[0]).level == "context"


def _refuse_low_entropy(planner: _Planner, i: int, op: SingleLineOp, line: int) -> None:
    """Single-line ops may not target low lines. A line low only by repetition
    (boilerplate) may still be targeted deliberately: by its context anchor, an
    explicit occurrence or the line number that picked it among its twins. Blank and
    punctuation-only lines never may."""
    anchor = planner.anchors[line - 1]
    if anchor.quality != "low":
        return  # (how it was picked is asked only now: a lookup scans the file)
    deliberate = _picked_deliberately(planner, i, op)
    if deliberate and classify_quality(planner.lines[line - 1], 1) == "high":
        return
    raise ToolError(
        ErrorCode.ANCHOR_LOW_ENTROPY,
        f"line {line} ({_preview(planner.lines[line - 1])!r}) is a low-entropy line and "
        f"cannot be the target of {_op_name(op)}; anchor on a distinctive neighbour, or "
        "wrap it in a replace_range",
        {
            "line": line,
            "content": planner.lines[line - 1],
            "neighbor_anchors": neighbor_anchors(planner.anchors, line),
        },
    )


def neighbor_anchors(anchors: Sequence[LineAnchor], line: int) -> list[str]:
    """Up to 3 high-quality, unique anchors before `line` and 3 after, as `LINE#ANCHOR`."""
    good = [a for a in anchors if a.quality == "high" and a.unique]
    before = [a for a in good if a.line < line][-NEIGHBOURS_EACH_SIDE:]
    after = [a for a in good if a.line > line][:NEIGHBOURS_EACH_SIDE]
    return [f"{a.line}#{a.anchor}" for a in (*before, *after)]


def _stale(anchor: str, field_name: str, message: str | None = None) -> ToolError:
    return ToolError(
        ErrorCode.ANCHOR_STALE,
        message or f"anchor {anchor} ({field_name}) matches no line of the current file",
        {"anchor": anchor, "field": field_name},
    )


def _ambiguous(
    planner: _Planner,
    code: ErrorCode,
    anchor: str,
    field_name: str,
    lines: Sequence[int],
    given: int | None = None,
) -> ToolError:
    what = _advice(planner.pick is not None, anchor, field_name, given)
    return ToolError(
        code,
        f"anchor {anchor} ({field_name}) matches {len(lines)} lines "
        f"({', '.join(map(str, lines))}); {what}",
        {
            "anchor": anchor,
            "field": field_name,
            "candidates": [{"line": n, "preview": _preview(planner.lines[n - 1])} for n in lines],
        },
    )


def _advice(numbered: bool, anchor: str, field_name: str, given: int | None) -> str:
    """What picks one of several lines: an occurrence or a unique boundary; for an agent
    whose numbering the journal knows (`numbered`), the line number it read it at."""
    plain = (
        "add occurrence (1-indexed) and line to pick one"
        if field_name == "hash"
        else "use a unique boundary anchor"
    )
    if not numbered:
        return plain
    if given is None:
        return f"give it with the line number you read it at (LINE#{anchor}), or {plain}"
    return (
        f"line {given} does not single one out in the file as you were shown it (no such "
        f"line there, or your numbers disagree since lines moved); {plain}"
    )


def _preview(text: str) -> str:
    return text if len(text) <= PREVIEW_CHARS else text[: PREVIEW_CHARS - 1] + "…"


def _combined(problems: list[ToolError]) -> ToolError:
    """The first problem's code and message; details list every problem."""
    first = problems[0]
    if len(problems) == 1:
        return first
    listed = [{"code": p.code.value, "message": p.message, **p.details} for p in problems]
    return ToolError(
        first.code,
        f"{first.message} (and {len(problems) - 1} more problem(s); see details.problems)",
        {**first.details, "problems": listed},
        first.hint,
    )


def _refuse_overlaps(ordered: Sequence[Splice]) -> None:
    """Two operations may not touch the same original line (inserts at a gap are fine)."""
    reach: Splice | None = None  # the splice that extends furthest so far
    for b in ordered:
        a = reach
        if a is not None and b.start < a.end:
            line = b.start + 1
            raise ToolError(
                ErrorCode.OVERLAPPING_OPERATIONS,
                f"operations {a.index + 1} ({a.op}) and {b.index + 1} ({b.op}) both touch "
                f"line {line}; merge them into one operation",
                {"operations": [a.index + 1, b.index + 1], "line": line},
            )
        if reach is None or b.end > reach.end:
            reach = b


def apply_plan(doc: Document, plan: EditPlan) -> Document:
    """The edited document; endings, BOM and the final-newline state are kept, and
    `parse(render(result)) == result` always holds (what is reported is what is written).
    `doc` is a checked document: only the lines the plan brings are checked here, and
    the lines between splices are copied by slicing (an edit runs on every size)."""
    bodies: list[str] = []
    endings: list[str] = []
    written: list[range] = []  # the new lines the plan wrote: only theirs may be adjusted
    position = 0
    dominant: list[str] = []  # the file's own ending, counted once (O(lines)) if needed
    for splice in plan.splices:
        bodies += doc.lines[position : splice.start]
        endings += doc.endings[position : splice.start]
        written.append(range(len(bodies), len(bodies) + len(splice.new_lines)))
        bodies += splice.new_lines
        endings += [_ending_for(doc, splice, dominant)] * len(splice.new_lines)
        position = max(position, splice.end)
    bodies += doc.lines[position:]
    endings += doc.endings[position:]
    _check_bodies(line for splice in plan.splices for line in splice.new_lines)
    settled = _settle_endings(bodies, endings, written, doc)
    return Document.derived(tuple(bodies), settled, doc.bom)


def _check_bodies(lines: Iterable[str]) -> None:
    joined = "".join(lines)
    if "\n" in joined or "\r" in joined:
        raise ValueError("line bodies must not contain line terminators")


def _ending_for(doc: Document, splice: Splice, dominant: list[str]) -> str:
    """Replacements keep the replaced line's ending; insertions take the file's own
    (counted on first need and kept in `dominant`: once per plan, not per splice)."""
    if splice.end > splice.start and doc.endings[splice.end - 1]:
        return doc.endings[splice.end - 1]
    if not dominant:
        dominant.append(doc.dominant_ending)
    return dominant[0]


def _settle_endings(
    bodies: list[str], endings: list[str], written: list[range], doc: Document
) -> tuple[str, ...]:
    """Every line but the last ends; the last ends exactly when the original's did.

    Two shapes would not survive a render and re-parse, and are settled here:
    an empty last line must end (or it is no line at all: the file gains a final
    newline), and an empty line ending in "\n" right after one ending in a bare
    "\r" would merge into "\r\n" (the written line takes "\r" instead).
    An all-"\n" file (the common case) is recognised by one identity count.
    """
    if not endings:
        return ()
    last = endings[-1] or doc.dominant_ending
    keeps_final = doc.final_newline or bodies[-1] == ""
    endings[-1] = last if keeps_final else ""
    if endings.count("\n") - (endings[-1] == "\n") == len(endings) - 1:  # all but the last
        return tuple(endings)
    if "" in endings[:-1]:
        endings[:-1] = [e or doc.dominant_ending for e in endings[:-1]]
    if "\r" in endings:  # only after a bare "\r"
        _settle_bare_cr(bodies, endings, {i for lines in written for i in lines})
    return tuple(endings)


def _settle_bare_cr(bodies: list[str], settled: list[str], new: set[int]) -> None:
    for i in range(1, len(settled)):
        if settled[i - 1] == "\r" and bodies[i] == "" and settled[i].startswith("\n"):
            if i - 1 in new and i not in new:  # the old empty line keeps its bytes
                settled[i - 1] = "\r\n"
            else:  # a written line, or a deletion brought two old lines together
                settled[i] = "\r"


def relied_lines(
    splice: Splice, op: Operation, lines: Sequence[str], anchors: Sequence[LineAnchor]
) -> set[int]:
    """Every 1-based line a planned splice depends on: its targets (a range's whole
    inside), and for an anchor line found by its *context* hash, the nearest non-blank
    lines before and after it, which that hash covers. An agent must have been shown
    all of them, or its anchor may have named a line other than the one it meant."""
    relied = set(splice.targets)
    given = [parse_anchor(raw)[0] for raw in _anchor_fields(op)]
    for line in {splice.targets[0], splice.targets[-1]}:
        if not any(anchors[line - 1].hash.startswith(h) for h in given):
            relied |= _nonblank_neighbours(lines, line)
    return relied


def _anchor_fields(op: Operation) -> list[str]:
    return [v for v in (getattr(op, f, None) for f in ("hash", "start_hash", "end_hash")) if v]


def _nonblank_neighbours(lines: Sequence[str], line: int) -> set[int]:
    """The 1-based numbers of the nearest non-blank lines around `line`, where they exist."""
    before = next((n for n in range(line - 1, 0, -1) if lines[n - 1].strip()), None)
    after = next((n for n in range(line + 1, len(lines) + 1) if lines[n - 1].strip()), None)
    return {n for n in (before, after) if n is not None}
