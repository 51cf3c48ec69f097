"""`hunks.unified`: difflib's diff of the changed region only, its line numbers moved
back into place (of a whole 200,000-line file, a one-line hunk's diff held the thread
0.3 s). Whatever lines repeat, the diff applied to the old lines gives the new ones;
with lines that do not repeat it is the very diff difflib gives of the whole files.
"""

from __future__ import annotations

import difflib
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from editjournal.daemon.text.hunks import DIFF_CONTEXT, SEARCHED_LINES, unified

_HEADER = re.compile(r"@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@")


def applied(old: list[str], diff: str) -> list[str]:
    """A unified diff applied, every context and removed line checked."""
    out: list[str] = []
    at, rows = 0, diff.split("\n")[2:-1]
    for row in rows:
        header = _HEADER.match(row)
        if header is not None:
            start, length = int(header.group(1)), int(header.group(2) or 1)
            first = start - 1 if length else start
            out += old[at:first]
            at = first
        elif row[0] == "+":
            out.append(row[1:])
        else:
            assert old[at] == row[1:], (at, row)
            out += [old[at]] if row[0] == " " else []
            at += 1
    return out + old[at:]


def edited(draw: st.DrawFn, old: list[str], words: st.SearchStrategy[str]) -> list[str]:
    new = list(old)
    for _ in range(draw(st.integers(1, 5))):
        at = draw(st.integers(0, len(new)))
        kind = draw(st.sampled_from(["insert", "delete", "change"]))
        if kind == "insert" or not new:
            new.insert(at, draw(words))
        elif kind == "delete":
            del new[min(at, len(new) - 1)]
        else:
            new[min(at, len(new) - 1)] = draw(words)
    return new


@st.composite
def repeating(draw: st.DrawFn) -> tuple[list[str], list[str]]:
    words = st.sampled_from([f"l{i}" for i in range(6)])
    old = draw(st.lists(words, max_size=400))
    return old, edited(draw, old, words)


@st.composite
def distinct(draw: st.DrawFn) -> tuple[list[str], list[str]]:
    old = [f"line {i}" for i in range(draw(st.integers(0, 400)))]
    return old, edited(draw, old, st.integers(0, 10**9).map(lambda n: f"new {n}"))


@settings(max_examples=300, deadline=None)
@given(repeating())
def test_the_diff_applied_gives_the_new_lines(case: tuple[list[str], list[str]]) -> None:
    old, new = case
    diff = unified("p", old, new)
    assert (diff == "") == (old == new)
    if diff:
        assert applied(old, diff) == new


@settings(max_examples=300, deadline=None)
@given(distinct())
def test_with_distinct_lines_it_is_difflibs_diff_of_the_whole(
    case: tuple[list[str], list[str]],
) -> None:
    old, new = case
    whole = difflib.unified_diff(old, new, "a/p", "b/p", lineterm="", n=DIFF_CONTEXT)
    assert unified("p", old, new) == ("\n".join(whole) + "\n" if old != new else "")


def test_a_region_past_the_search_is_one_hunk_that_applies() -> None:
    old = [f"x{i}" for i in range(SEARCHED_LINES + 10)]
    new = [f"y{i}" for i in range(SEARCHED_LINES + 10)]
    diff = unified("p", ["same", *old, "end"], ["same", *new, "end"])
    assert diff.count("\n@@") == 1
    assert applied(["same", *old, "end"], diff) == ["same", *new, "end"]
