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

from collections.abc import Sequence
from dataclasses import replace

from editjournal.daemon.text.edit import apply_plan
from editjournal.daemon.text.lines import Document, parse
from editjournal.daemon.text.rebase import line_map
from editjournal.daemon.text.replace import Joined, find_all, normalized, plan_replace
from editjournal.daemon.text.revert import refined, revert_plan

Replacement = tuple[str, str, bool]  # old_string, new_string, replace_all


def expected(checked: Document, edits: Sequence[Replacement]) -> Document | None:
    """The content the harness's tool leaves when it makes `edits` in turn on `checked`;
    None when one of them would fail there (its text not found, or found more than once
    without replace_all): the tool then writes nothing the daemon can foresee."""
    doc = checked
    for old_string, new_string, replace_all in edits:
        found = _replaced(doc, normalized(old_string), normalized(new_string), replace_all)
        if found is None:
            return None
        doc = found
    return doc


def _replaced(doc: Document, old: str, new: str, replace_all: bool) -> Document | None:
    if not old:  # an Edit with no old text creates a file: only an empty one is foreseen
        return None if doc.lines else parse(new)
    joined = Joined.of(doc)
    offsets = find_all(joined, old)
    if not offsets or (len(offsets) > 1 and not replace_all):
        return None
    plan, final = plan_replace(joined, offsets, old, new)
    return _ending(apply_plan(doc, plan), final)


def _ending(doc: Document, final: bool | None) -> Document:
    """The final newline as the replacement left it (None: the last line was not touched):
    `text.replace(old, new)` exactly, where the writing path would end the file anyway."""
    if final is None or not doc.lines or doc.final_newline == final:
        return doc
    if not final and doc.lines[-1] == "":
        return doc  # an empty last line is a line only with its ending
    last = (doc.dominant_ending if any(doc.endings) else "\n") if final else ""
    return replace(doc, endings=(*doc.endings[:-1], last))


def without_change(checked: Document, wanted: Document, now: Document) -> Document | None:
    """`now` with the change `checked` -> `wanted` taken out: what the file would hold
    had the tool not run. None when that is not well defined: the change made nothing,
    is not in `now`, or lines it wrote (or a deletion's neighbours) were changed since;
    and when putting the change back on the answer would not give `now` again."""
    if now.lines == wanted.lines:  # the tool's write, endings aside: all of it is the change
        return checked if checked.lines != wanted.lines else None
    taken = _undone(checked, wanted, now)
    if taken is None or taken.lines == now.lines:
        return None
    again = _undone(wanted, checked, taken)  # the change made again, on the answer
    return taken if again is not None and again.lines == now.lines else None


def _undone(before: Document, after: Document, current: Document) -> Document | None:
    """The change `before` -> `after` undone on `current`, which holds `after`'s lines
    where a line map finds them: `before`'s lines put back in their place (None: the
    change made nothing, or its lines do not all stand in `current`)."""
    changes = refined(before.lines, after.lines, [])
    if not changes:
        return None
    mapping = line_map(after.lines, current.lines)
    revert = revert_plan(before.lines, after.line_count, changes, mapping, current.line_count)
    return None if revert.broken else apply_plan(current, revert.plan)
