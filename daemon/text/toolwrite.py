"""What a harness's own Edit tool makes of a file, and which part of a file is its change. Pure.

A harness hook announces its tool's write before the tool runs (`check_write`) and
claims it after (`claim_write`, daemon/handlers/harness.py). Between the two a person
may have saved the file too, or the tool may have done something else. The daemon
credits the session only with the change its checked edits make: `expected` is the
content those edits produce from the content the daemon checked (a string
replacement, as the harness's tool makes it: `old_string` matched with "\\n" endings,
each replaced line keeping its own ending), and `without_change` is the file as it
is now with that change taken out again — by the undo's own revert
(`daemon.text.revert`): each line the edits wrote must still stand, together, where a
line map of the expected content to the file now puts it, and a deletion's two
neighbours must still be side by side. The rest of the file (what is left when the
change is taken out) is somebody else's: an outside change.

Text in, documents out: no journal, no files. Nothing here guesses: when the change
cannot be told apart from the rest, the answer is None and the caller journals all of
it as an outside change.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from dataclasses import dataclass, replace

from editjournal.daemon.text.edit import EditPlan, apply_plan
from editjournal.daemon.text.lines import Document, parse, render
from editjournal.daemon.text.rebase import LineChange, line_map
from editjournal.daemon.text.replace import Joined, find_all, normalized, plan_replace
from editjournal.daemon.text.revert import refined, revert_plan

Replacement = tuple[str, str, bool]  # old_string, new_string, replace_all


def expected(checked: Document, edits: Sequence[Replacement]) -> Document | None:
    """The content the harness's tool leaves when it makes `edits` in turn on `checked`;
    None when one of them would fail there (its text not found, or found more than once
    without replace_all): the tool then writes nothing the daemon can foresee."""
    steps = expecting(checked, edits)
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return done.value


def expecting(
    checked: Document, edits: Sequence[Replacement]
) -> Generator[None, None, Document | None]:
    """`expected`, a step per edit: each is a pass over the whole text (a 1,000-edit
    check of a 200,000-line file is seconds of them, made in a job's slices)."""
    if not checked.bom and set(checked.endings) <= {"\n", ""}:
        # "\n" only: the text is the lines
        return (yield from _replaced_text(render(checked), edits))
    doc = checked
    for old_string, new_string, replace_all in edits:
        found = _replaced(doc, normalized(old_string), normalized(new_string), replace_all)
        if found is None:
            return None
        doc = found
        yield None
    return doc


def _replaced_text(
    text: str, edits: Sequence[Replacement]
) -> Generator[None, None, Document | None]:
    """`expected` of a file with "\n" endings only: `str.replace`, as the tool makes it."""
    for old_string, new_string, replace_all in edits:
        old, new = normalized(old_string), normalized(new_string)
        if not old:
            if text:
                return None
            text = new_string
            continue
        count = text.count(old)
        if not count or (count > 1 and not replace_all):
            return None
        text = text.replace(old, new)
        yield None
    return parse(text)


def _replaced(doc: Document, old: str, new: str, replace_all: bool) -> Document | None:
    if not old:  # an Edit with no old text creates a file: only an empty one is foreseen
        return None if doc.lines else parse(new)
    joined = Joined.of(doc)
    offsets = find_all(joined, old)
    if not offsets or (len(offsets) > 1 and not replace_all):
        return None
    plan, final = plan_replace(joined, offsets, old, new)
    habit = doc.dominant_ending if any(doc.endings) else "\n"  # the file's, before the edit
    return _ending(apply_plan(doc, plan), final, habit)


def _ending(doc: Document, final: bool | None, habit: str) -> Document:
    """The final newline as the replacement left it (None: the last line was not touched):
    `text.replace(old, new)` exactly, where the writing path would end the file anyway."""
    if final is None or not doc.lines or doc.final_newline == final:
        return doc
    if not final and doc.lines[-1] == "":
        return doc  # an empty last line is a line only with its ending
    last = (doc.dominant_ending if any(doc.endings) else habit) if final else ""
    return replace(doc, endings=(*doc.endings[:-1], last))


@dataclass(frozen=True)
class Split:
    """A file told apart: `base` is the file without the change, and `changes` the change
    in `base`'s coordinates, exact ((start, end, inserted), as `edit_applied` records it)."""

    base: Document
    changes: list[LineChange]


def change_of(checked: Document, wanted: Document) -> list[LineChange]:
    """The change `checked` -> `wanted`, narrowed to the lines that differ (a diff: the
    caller keeps it for every later look at the same announcement)."""
    return refined(checked.lines, wanted.lines, [])


def without_change(
    checked: Document, wanted: Document, now: Document, change: Sequence[LineChange]
) -> Split | None:
    """`now` told apart into the change `checked` -> `wanted` (`change`, as `change_of`
    gives it) and the rest: what the file would hold had the tool not run. None when that
    is not well defined: the change made nothing or is not in `now`, or lines it wrote (or
    a deletion's neighbours) were changed since. Putting the change back on the answer
    gives `now` again by construction: the answer is `now` with exactly the lines the
    change wrote (found together, where the line map puts them) put back as they were."""
    if not change:
        return None
    if now.lines == wanted.lines:  # the tool's write, endings aside: all of it is the change
        return Split(checked, list(change))
    mapping = line_map(wanted.lines, now.lines)
    revert = revert_plan(checked.lines, wanted.line_count, change, mapping, now.line_count)
    if revert.broken or not revert.plan.splices:
        return None
    base = apply_plan(now, revert.plan)
    return None if base.lines == now.lines else Split(base, _inverse(revert.plan))


def _inverse(plan: EditPlan) -> list[LineChange]:
    """The changes that turn the plan's result back into what it was applied to, in the
    result's coordinates (the plan's splices are sorted and do not overlap)."""
    inverse: list[LineChange] = []
    shift = 0
    for splice in plan.splices:
        at = splice.start + shift
        inverse.append((at, at + len(splice.new_lines), splice.end - splice.start))
        shift += len(splice.new_lines) - (splice.end - splice.start)
    return inverse
