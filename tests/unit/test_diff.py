"""Tests for daemon.text.diff: the changed region and the anchored diff of an edit."""

from __future__ import annotations

import difflib
import random

from editjournal.daemon.text import diff as diff_module
from editjournal.daemon.text.anchors import anchor_lines
from editjournal.daemon.text.diff import anchored_diff
from editjournal.daemon.text.region import ChangedRegion, changed_region


def values(count: int, start: int = 1) -> list[str]:
    return [f"value_{n} = {n}" for n in range(start, start + count)]


def diff(old: list[str], new: list[str]) -> tuple[str, list[int]]:
    return anchored_diff(old, new, anchor_lines(new))


# --- changed_region ---------------------------------------------------------------------


def test_changed_region_trims_common_prefix_and_suffix() -> None:
    old = ["a", "b", "c", "d", "e"]
    new = ["a", "b", "X", "Y", "d", "e"]
    assert changed_region(old, new) == ChangedRegion(start=2, old_end=3, new_end=4)


def test_changed_region_of_identical_sequences_is_empty() -> None:
    region = changed_region(["a", "b"], ["a", "b"])
    assert region.empty
    assert region == ChangedRegion(2, 2, 2)


def test_changed_region_of_a_pure_insertion_removes_nothing() -> None:
    region = changed_region(["a", "b"], ["a", "new", "b"])
    assert region == ChangedRegion(1, 1, 2)
    assert not region.empty


def test_changed_region_of_a_pure_deletion_adds_nothing() -> None:
    assert changed_region(["a", "b", "c"], ["a", "c"]) == ChangedRegion(1, 2, 1)


def test_changed_region_prefix_and_suffix_do_not_overlap_on_repeats() -> None:
    # "a a" -> "a a a": the prefix takes two, so the suffix may take none of them again.
    assert changed_region(["a", "a"], ["a", "a", "a"]) == ChangedRegion(2, 2, 3)
    assert changed_region(["a", "a", "a"], ["a"]) == ChangedRegion(1, 3, 1)


def test_changed_region_handles_empty_sides() -> None:
    assert changed_region([], ["a"]) == ChangedRegion(0, 0, 1)
    assert changed_region(["a"], []) == ChangedRegion(0, 1, 0)


# --- anchored_diff --------------------------------------------------------------------------


def test_unchanged_text_gives_an_empty_diff() -> None:
    assert diff(values(5), values(5)) == ("", [])


def test_replaced_line_shows_context_with_new_anchors_removed_and_added_rows() -> None:
    old = values(10)
    new = [*old[:4], "changed = 5", *old[5:]]
    a = anchor_lines(new)
    text, added = diff(old, new)
    assert text.splitlines() == [
        "@@ -2,7 +2,7 @@",
        *(f" {n}#{a[n - 1].anchor}|{new[n - 1]}" for n in (2, 3, 4)),
        "-5|value_5 = 5",
        f"+5#{a[4].anchor}|changed = 5",
        *(f" {n}#{a[n - 1].anchor}|{new[n - 1]}" for n in (6, 7, 8)),
    ]
    assert added == [5]


def test_insertion_rows_carry_their_new_line_numbers() -> None:
    old = values(8)
    new = [*old[:4], "inserted_a()", "inserted_b()", *old[4:]]
    a = anchor_lines(new)
    text, added = diff(old, new)
    rows = text.splitlines()
    assert rows[0] == "@@ -2,6 +2,8 @@"
    assert f"+5#{a[4].anchor}|inserted_a()" in rows
    assert f"+6#{a[5].anchor}|inserted_b()" in rows
    assert not any(row.startswith("-") for row in rows)
    assert f" 7#{a[6].anchor}|value_5 = 5" in rows  # context after: new numbering
    assert added == [5, 6]


def test_deletion_rows_carry_their_old_line_numbers() -> None:
    old = values(8)
    new = [*old[:2], *old[5:]]
    text, added = diff(old, new)
    rows = text.splitlines()
    assert [r for r in rows if r.startswith("-")] == [
        "-3|value_3 = 3",
        "-4|value_4 = 4",
        "-5|value_5 = 5",
    ]
    a = anchor_lines(new)
    assert rows[0] == "@@ -1,8 +1,5 @@"
    assert f" 3#{a[2].anchor}|value_6 = 6" in rows
    assert added == []


def test_change_at_the_top_has_no_context_before() -> None:
    old = values(6)
    new = ["first = 0", *old[1:]]
    text, _ = diff(old, new)
    rows = text.splitlines()
    assert rows[:3] == ["@@ -1,4 +1,4 @@", "-1|value_1 = 1", rows[2]]
    assert rows[2].startswith("+1#")


def test_far_apart_changes_get_separate_hunks() -> None:
    old = values(30)
    new = list(old)
    new[2] = "early = 3"
    new[26] = "late = 27"
    text, added = diff(old, new)
    headers = [row for row in text.splitlines() if row.startswith("@@")]
    assert headers == ["@@ -1,6 +1,6 @@", "@@ -24,7 +24,7 @@"]
    assert added == [3, 27]


def test_low_quality_and_non_unique_rows_are_marked() -> None:
    old = ["fn a() {", "    one();", "}", "fn b() {", "    two();", "}"]
    new = ["fn a() {", "    one();", "", "}", "fn b() {", "    two();", "}"]
    a = anchor_lines(new)
    text, added = diff(old, new)
    rows = text.splitlines()
    assert f"+3#{a[2].anchor}~|" in rows
    assert f" 4#{a[3].anchor}~|}}" in rows
    assert f" 1#{a[0].anchor}|fn a() {{" in rows
    assert added == [3]


def test_non_unique_rows_are_marked_with_a_question_mark() -> None:
    twin = ["before = 1", "twin = 2", "after = 3"]
    old = [*twin, "middle = 0", *twin]
    new = [*twin, "middle = changed", *twin]
    a = anchor_lines(new)
    assert not a[1].unique
    text, _ = diff(old, new)
    assert f" 2#{a[1].anchor}?|twin = 2" in text.splitlines()


def test_a_big_changed_middle_has_difflibs_hunks_found_without_its_walk() -> None:
    """Past DIFFLIB_WORK line pairs the blocks come from the stepped search: the same
    hunks as difflib's (here 5,000 lines, 60 changed far apart)."""
    old = [f"    v_{i} = f({i})" for i in range(5_000)]
    new = list(old)
    for k in random.Random(7).sample(range(5_000), 60):
        new[k] = "    changed()"
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    assert diff_module._groups(old, new, None, None) == list(matcher.get_grouped_opcodes(3))


def test_a_reversed_middle_of_repeated_lines_is_compared_in_place_not_for_minutes() -> None:
    """difflib walks every occurrence of a repeated line: a stale refusal's diff of a
    reversed 20,000-line file held the daemon's thread for minutes. Past MAX_STEPS of
    the stepped search, two sides as long are compared line for line in place (the lines
    equal at the same place kept, every other one changed), else the middle is one
    change between its equal ends."""
    old = [f"line {i % 7} {{" if i % 3 else "" for i in range(20_000)]
    new = old[::-1]
    opcodes = diff_module._matcher(old, new, 0, 0).get_opcodes()
    i = j = 0
    for tag, i1, i2, j1, j2 in opcodes:  # contiguous, and true to both sides
        assert (i1, j1) == (i, j)
        if tag == "equal":
            assert old[i1:i2] == new[j1:j2]
        else:
            assert all(a != b for a, b in zip(old[i1:i2], new[j1:j2], strict=True))
        i, j = i2, j2
    assert (i, j) == (len(old), len(new))
    kept = sum(i2 - i1 for tag, i1, i2, _, _ in opcodes if tag == "equal")
    assert kept == sum(a == b for a, b in zip(old, new, strict=True))


def test_a_longer_side_past_the_search_is_one_change() -> None:
    """Not as long: the middle between the equal ends is one change."""
    old = [f"line {i % 7} {{" if i % 3 else "" for i in range(20_000)]
    [group] = diff_module._groups(old, ["head", *old[::-1]], None, None, context=2)
    changes = [op for op in group if op[0] != "equal"]
    assert len(changes) == 1 and changes[0][0] == "replace"
