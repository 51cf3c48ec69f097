"""The O(change) shortcuts of an edit give what the plain O(file) steps give.

`apply_plan` copies the unchanged lines by slicing, checks only the lines a plan
brings and settles endings with one identity count for all-LF files; an edit's
`changed_region` skips the lines its splices did not touch; a cache entry's cost
comes from the text's known size. Each is compared here with the plain version,
on random documents with mixed and bare-CR endings and random splices.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from editjournal.daemon.files.textcache import PER_LINE_BYTES, Parsed
from editjournal.daemon.text.edit import EditPlan, Splice, apply_plan
from editjournal.daemon.text.lines import Document, parse, render
from editjournal.daemon.text.region import changed_region

BODIES = st.sampled_from(["", "a", "b", "x = 1", "  "])
ENDINGS = st.sampled_from(["\n", "\n", "\r\n", "\r"])


@st.composite
def documents(draw: st.DrawFn) -> Document:
    """A parsed text: what every edit starts from (a bare "\\r" before an empty line
    merges on parsing, as in a real file)."""
    lines = draw(st.lists(st.tuples(BODIES, ENDINGS), max_size=12))
    text = "".join(body + ending for body, ending in lines)
    if draw(st.booleans()):
        text += draw(BODIES)  # maybe no final newline
    return parse(text)


@st.composite
def plans(draw: st.DrawFn, doc: Document) -> EditPlan:
    """Sorted, non-overlapping splices (insertions included) with new bodies."""
    cuts = sorted(draw(st.lists(st.integers(0, doc.line_count), max_size=6)))
    splices = [
        Splice(i, "replace", start, end, tuple(draw(st.lists(BODIES, max_size=3))), (start + 1,))
        for i, (start, end) in enumerate(zip(cuts[0::2], cuts[1::2], strict=False))
    ]
    return EditPlan(tuple(splices))


def plain_apply(doc: Document, plan: EditPlan) -> Document:
    """The edit as it was computed before the shortcuts: every line visited."""
    bodies: list[str] = []
    endings: list[str] = []
    new: list[bool] = []
    position = 0
    for s in plan.splices:
        bodies += doc.lines[position : s.start]
        endings += doc.endings[position : s.start]
        new += [False] * max(0, s.start - position)
        kept = s.end > s.start and doc.endings[s.end - 1]
        ending = doc.endings[s.end - 1] if kept else doc.dominant_ending
        bodies += s.new_lines
        endings += [ending] * len(s.new_lines)
        new += [True] * len(s.new_lines)
        position = max(position, s.end)
    bodies += doc.lines[position:]
    endings += doc.endings[position:]
    new += [False] * len(doc.lines[position:])
    if not endings:
        return Document((), (), doc.bom)
    settled = [e or doc.dominant_ending for e in endings[:-1]]
    keeps_final = doc.final_newline or bodies[-1] == ""
    settled.append((endings[-1] or doc.dominant_ending) if keeps_final else "")
    for i in range(1, len(settled)):
        if settled[i - 1] == "\r" and bodies[i] == "" and settled[i].startswith("\n"):
            if new[i - 1] and not new[i]:
                settled[i - 1] = "\r\n"
            else:
                settled[i] = "\r"
    return Document(tuple(bodies), tuple(settled), doc.bom)


@settings(max_examples=400, deadline=None)
@given(st.data())
def test_an_edit_equals_the_plain_line_by_line_edit(data: st.DataObject) -> None:
    doc = data.draw(documents())
    plan = data.draw(plans(doc))
    edited = apply_plan(doc, plan)
    assert edited == plain_apply(doc, plan)
    assert parse(render(edited)) == edited
    Document(edited.lines, edited.endings, edited.bom)  # passes the full check too


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_the_changed_region_of_an_edit_skips_only_untouched_lines(data: st.DataObject) -> None:
    doc = data.draw(documents())
    plan = data.draw(plans(doc))
    edited = apply_plan(doc, plan)
    starts = [s.start for s in plan.splices]
    known = (min(starts), doc.line_count - max(s.end for s in plan.splices)) if starts else (0, 0)
    assert changed_region(doc.lines, edited.lines, known) == changed_region(doc.lines, edited.lines)


@pytest.mark.parametrize("body", ["a\nb", "a\r", "\r\nb"])
def test_a_new_line_holding_a_terminator_is_refused(body: str) -> None:
    doc = parse("one\ntwo\nthree\n")
    plan = EditPlan((Splice(0, "replace", 1, 2, ("fine", body), (2,)),))
    with pytest.raises(ValueError, match="terminators"):
        apply_plan(doc, plan)


def test_a_derived_document_still_refuses_unequal_lengths() -> None:
    with pytest.raises(ValueError, match="same length"):
        Document.derived(("a", "b"), ("\n",), bom=False)


def test_a_cache_entry_costs_its_known_size_plus_its_lines() -> None:
    doc = parse("alpha\nbeta\n\ngamma delta\n")
    assert Parsed(doc).cost == len("alphabetagamma delta") + PER_LINE_BYTES * 4
    assert Parsed(doc, size=1000).cost == 1000 + PER_LINE_BYTES * 4  # no pass over the lines
