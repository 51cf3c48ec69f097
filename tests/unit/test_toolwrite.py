"""The pure engine of a claim (daemon/text/toolwrite.py): what a harness's Edit tool
makes of a file, and the file with that change taken out again."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from editjournal.daemon.text.lines import Document, parse, render
from editjournal.daemon.text.toolwrite import change_of, expected, without_change

APP = "".join(f"v{n} = {n}\n" for n in range(1, 21))
PIECES = st.sampled_from(["a", "b", "ab", "\n", "\n\n", "c\n"])
TEXT = st.lists(PIECES, max_size=12).map("".join)


@given(TEXT, TEXT.filter(bool), TEXT, st.booleans())
def test_expected_is_the_string_replacement_the_tool_makes(
    text: str, old: str, new: str, replace_all: bool
):
    found = expected(parse(text), [(old, new, replace_all)])
    count = text.count(old)
    if count == 0 or (count > 1 and not replace_all):
        assert found is None  # the tool fails: nothing to foresee
    else:
        assert found is not None
        assert render(found) == (
            text.replace(old, new) if replace_all else text.replace(old, new, 1)
        )


@given(TEXT.filter(lambda t: "\n" in t), TEXT.filter(bool), TEXT, st.booleans())
def test_in_a_crlf_file_expected_is_the_replacement_with_the_files_endings(
    text: str, old: str, new: str, replace_all: bool
):
    """Claude Code's Edit matches "\n" text in a CRLF file and writes CRLF back."""
    found = expected(parse(text.replace("\n", "\r\n")), [(old, new, replace_all)])
    lf = expected(parse(text), [(old, new, replace_all)])
    assert (found is None) == (lf is None)
    if found is not None and lf is not None:
        assert render(found) == render(lf).replace("\n", "\r\n")


def test_expected_keeps_each_lines_ending_and_matches_old_text_written_with_lf():
    text = "a\r\nb\r\nc\r\n"
    found = expected(parse(text), [("b\n", "B\n", False)])
    assert found is not None and render(found) == "a\r\nB\r\nc\r\n"


def test_edits_are_made_in_turn_as_a_multi_edit_makes_them():
    found = expected(parse("x = 1\n"), [("x = 1", "x = 2", False), ("x = 2", "x = 3", False)])
    assert found is not None and render(found) == "x = 3\n"


def split(now: str, edit: tuple[str, str] = ("v5 = 5\n", "v5 = 50\n")) -> str | None:
    checked = parse(APP)
    wanted = expected(checked, [(*edit, False)])
    assert wanted is not None
    now_doc = parse(now)
    found = without_change(checked, wanted, now_doc, change_of(checked, wanted))
    if found is None:
        return None
    assert redone(found.base, found.changes, now_doc) == now_doc.lines  # exact changes
    return render(found.base)


def redone(base: Document, changes: list[tuple[int, int, int]], now: Document) -> tuple[str, ...]:
    """`base` with `changes` made, the new lines taken from `now` (as blame folds them)."""
    lines: list[str] = []
    at = shift = 0
    for start, end, inserted in changes:
        lines += base.lines[at:start]
        lines += now.lines[start + shift : start + shift + inserted]
        shift += inserted - (end - start)
        at = end
    return (*lines, *base.lines[at:])


def test_exactly_the_tools_write_is_all_the_change():
    assert split(APP.replace("v5 = 5\n", "v5 = 50\n")) == APP


def test_a_line_added_apart_or_beside_the_change_is_left_when_the_change_is_taken_out():
    mine = APP.replace("v5 = 5\n", "v5 = 50\n")
    assert split(mine + "tail\n") == APP + "tail\n"
    assert split(mine.replace("v5 = 50\n", "v5 = 50\nnext\n")) == APP.replace(
        "v5 = 5\n", "v5 = 5\nnext\n"
    )


def test_no_split_when_the_change_is_not_there_or_its_lines_were_changed():
    assert split(APP.replace("v9 = 9\n", "v9 = 99\n")) is None  # not there
    assert split(APP.replace("v5 = 5\n", "v5 = 55\n")) is None  # its line rewritten
    deleted = APP.replace("v4 = 4\n", "v4 = 4\nfilled\n").replace("v5 = 5\n", "")
    assert split(deleted, ("v5 = 5\n", "")) is None  # a gap it made, filled


def test_an_announcement_that_changes_nothing_credits_nothing():
    checked = parse(APP)
    assert change_of(checked, checked) == []
    assert without_change(checked, checked, parse(APP + "x\n"), []) is None


LINES = st.lists(st.sampled_from(["a", "b", "c", "", "}"]), max_size=10)


@given(LINES, LINES, LINES, st.integers(0, 10), st.integers(0, 10))
def test_a_split_always_makes_the_file_again_and_takes_the_change_out(
    checked_lines: list[str], mine: list[str], theirs: list[str], at: int, where: int
):
    """Whatever a person did around the change: the answer, with its changes made, is
    the file; and the answer no longer holds the change where it held it."""
    checked = parse("".join(f"{line}\n" for line in checked_lines))
    at = min(at, checked.line_count)
    wanted_lines = [*checked.lines[:at], *mine, *checked.lines[at + 1 :]]
    wanted = parse("".join(f"{line}\n" for line in wanted_lines))
    where = min(where, wanted.line_count)
    now_lines = [*wanted.lines[:where], *theirs, *wanted.lines[where:]]
    now = parse("".join(f"{line}\n" for line in now_lines))
    found = without_change(checked, wanted, now, change_of(checked, wanted))
    if found is not None:
        assert redone(found.base, found.changes, now) == now.lines
        assert found.base.lines != now.lines
