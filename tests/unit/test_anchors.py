"""Tests for daemon.text.anchors and its hashes (daemon.text.linehashes): hashes, quality,
shortest anchors and resolution."""

from __future__ import annotations

from functools import cache

import pytest
import xxhash
from hypothesis import given
from hypothesis import strategies as st

from editjournal.daemon.text.anchors import (
    AnchorIndex,
    LineAnchor,
    Match,
    anchor_lines,
    classify_quality,
    render_rows,
)
from editjournal.daemon.text.linehashes import context_hash, line_hash


@cache
def _six_hex_collision() -> tuple[str, str]:
    """Two different lines whose line hashes share a 6-hex prefix (birthday search)."""
    seen: dict[str, str] = {}
    for i in range(1_000_000):
        body = f"line {i}"
        prefix = xxhash.xxh3_64_hexdigest(body.encode())[:6]
        if prefix in seen:
            return seen[prefix], body
        seen[prefix] = body
    raise AssertionError("no collision found")


def test_line_hash_is_xxh3_64_hex() -> None:
    assert line_hash("def foo():") == xxhash.xxh3_64_hexdigest(b"def foo():")
    assert line_hash("def foo():") == "a5ac1efbea30d3c7"  # the value quoted in the docs
    assert line_hash("") == xxhash.xxh3_64_hexdigest(b"")
    assert line_hash("héllo ✓") == xxhash.xxh3_64_hexdigest("héllo ✓".encode())


def test_line_hash_is_zero_padded_lowercase() -> None:
    body = next(
        f"z{i}" for i in range(10_000) if xxhash.xxh3_64_intdigest(f"z{i}".encode()) < 2**60
    )
    digest = line_hash(body)
    assert digest.startswith("0")
    assert len(digest) == 16
    assert digest == format(xxhash.xxh3_64_intdigest(body.encode()), "016x")
    assert digest == digest.lower()


def test_line_hash_accepts_lone_surrogates() -> None:
    assert line_hash("\ud800") == xxhash.xxh3_64_hexdigest(b"\xed\xa0\x80")


def test_context_hash_definition() -> None:
    assert context_hash("p", "b", "n") == xxhash.xxh3_64_hexdigest(b"p\nb\nn")
    assert context_hash("", "b", "") == xxhash.xxh3_64_hexdigest(b"\nb\n")


def test_context_uses_nearest_non_blank_neighbours() -> None:
    lines = ["a", "", "  ", "b", "\t", "c"]
    contexts = [anchor.context for anchor in anchor_lines(lines)]
    assert contexts[0] == context_hash("", "a", "b")
    assert contexts[1] == context_hash("a", "", "b")
    assert contexts[2] == context_hash("a", "  ", "b")
    assert contexts[3] == context_hash("a", "b", "c")
    assert contexts[4] == context_hash("b", "\t", "c")
    assert contexts[5] == context_hash("b", "c", "")


def test_blank_line_insertion_keeps_context() -> None:
    before = anchor_lines(["x = 1", "y = 2"])
    after = anchor_lines(["x = 1", "", "", "y = 2"])
    assert before[1].context == after[3].context
    assert before[1].anchor == after[3].anchor


@pytest.mark.parametrize("body", ["}", "},", "]);", "*/", "x", "#", "", "   ", "\t"])
def test_low_quality_examples(body: str) -> None:
    assert classify_quality(body, 1) == "low"


@pytest.mark.parametrize("body", ["fi", "x = 1", "def foo():", "  return value"])
def test_high_quality_examples(body: str) -> None:
    assert classify_quality(body, 1) == "high"


def test_boilerplate_threshold() -> None:
    assert classify_quality("display: flex;", 2) == "high"
    assert classify_quality("display: flex;", 3) == "low"


def test_boilerplate_counts_stripped_bodies_in_file() -> None:
    two = anchor_lines(["a {", "  display: flex;", "}", "b {", "    display: flex;", "}"])
    assert [a.quality for a in two] == ["low", "high", "low", "low", "high", "low"]
    three = anchor_lines(["display: flex;", "  display: flex;", "\tdisplay: flex;", "x = 1"])
    assert [a.quality for a in three] == ["low", "low", "low", "high"]


def test_unique_line_gets_six_hex_line_anchor() -> None:
    lines = ["def foo():", "    return 1"]
    anchors = anchor_lines(lines)
    assert anchors[0] == LineAnchor(
        line=1,
        hash=line_hash("def foo():"),
        context=context_hash("", "def foo():", "    return 1"),
        anchor=line_hash("def foo():")[:6],
        kind="line",
        unique=True,
        quality="high",
    )
    assert AnchorIndex(lines).match(anchors[1].anchor) == Match("line", (2,))


def test_six_hex_collision_falls_back_to_eight_hex() -> None:
    first, second = _six_hex_collision()
    assert first != second
    assert line_hash(first)[:6] == line_hash(second)[:6]
    assert line_hash(first)[:8] != line_hash(second)[:8]
    lines = [first, second]
    index = AnchorIndex(lines)
    anchors = index.anchors()
    assert [a.anchor for a in anchors] == [line_hash(first)[:8], line_hash(second)[:8]]
    assert all(a.kind == "line" and a.unique for a in anchors)
    assert index.match(anchors[0].anchor) == Match("line", (1,))
    assert index.match(anchors[1].anchor) == Match("line", (2,))
    assert index.match(line_hash(first)[:6]) == Match("line", (1, 2))


def test_twins_with_different_neighbours_get_context_anchors() -> None:
    lines = ["a = 1", "x = 1", "b = 2", "x = 1", "c = 3"]
    index = AnchorIndex(lines)
    anchors = index.anchors()
    for number in (2, 4):
        anchor = anchors[number - 1]
        assert anchor.kind == "context"
        assert anchor.unique is True
        assert anchor.anchor == anchor.context[:6]
        assert index.match(anchor.anchor) == Match("context", (number,))
    assert index.match(line_hash("x = 1")[:6]) == Match("line", (2, 4))


def test_twins_with_identical_neighbours_are_not_unique() -> None:
    lines = ["a = 1", "x = 1", "a = 1", "x = 1", "a = 1"]
    index = AnchorIndex(lines)
    anchors = index.anchors()
    for number in (2, 4):
        anchor = anchors[number - 1]
        assert anchor.unique is False
        assert anchor.kind == "line"
        assert anchor.anchor == line_hash("x = 1")[:6]
        assert index.match(anchor.anchor) == Match("line", (2, 4))
    # "a = 1" lines differ by neighbours (file edges), so they resolve by context.
    assert all(anchors[n - 1].kind == "context" and anchors[n - 1].unique for n in (1, 3, 5))


def test_match_is_case_insensitive_and_scans_other_lengths() -> None:
    lines = ["def foo():", "    return 1", "def foo():"]
    index = AnchorIndex(lines)
    digest = line_hash("    return 1")
    assert index.match(digest[:6].upper()) == Match("line", (2,))
    for length in (4, 5, 7, 10, 15, 16):
        assert index.match(digest[:length]) == Match("line", (2,))
    assert index.match(line_hash("def foo():")[:4]).candidates == (1, 3)
    context = index.contexts[2]
    assert index.match(context[:12]) == Match("context", (3,))


def test_match_none() -> None:
    index = AnchorIndex(["only"])
    missing = next(
        p
        for p in (f"{i:06x}" for i in range(1000))
        if not index.hashes[0].startswith(p) and not index.contexts[0].startswith(p)
    )
    assert index.match(missing) == Match("none", ())
    assert AnchorIndex([]).match("abcdef") == Match("none", ())


@pytest.mark.parametrize("bad", ["", "abc", "a" * 17, "xyz123", "12#abc", " abcd"])
def test_match_rejects_bad_anchor(bad: str) -> None:
    with pytest.raises(ValueError):
        AnchorIndex(["a"]).match(bad)


def test_anchor_lines_equals_index_anchors() -> None:
    lines = ["a", "b", "a", "", "}"]
    assert anchor_lines(lines) == AnchorIndex(lines).anchors()
    assert anchor_lines([]) == []


def test_render_rows_format() -> None:
    rows = [
        LineAnchor(1, "0" * 16, "1" * 16, "abcdef", "line", True, "high"),
        LineAnchor(2, "0" * 16, "1" * 16, "123456", "line", False, "high"),
        LineAnchor(3, "0" * 16, "1" * 16, "fedcba", "context", True, "low"),
        LineAnchor(4, "0" * 16, "1" * 16, "654321", "line", False, "low"),
    ]
    assert render_rows(rows, ["def foo():", "    x = 1", "}", ""]) == (
        "1#abcdef|def foo():\n2#123456?|    x = 1\n3#fedcba~|}\n4#654321?|"
    )
    assert render_rows([], []) == ""


def test_render_rows_from_real_anchors() -> None:
    lines = ["def foo():", "    return 1", "}"]
    out = render_rows(anchor_lines(lines), lines)
    assert out == (
        f"1#{line_hash('def foo():')[:6]}|def foo():\n"
        f"2#{line_hash('    return 1')[:6]}|    return 1\n"
        f"3#{line_hash('}')[:6]}~|}}"
    )
    assert not out.endswith("\n")


_SMALL_ALPHABET = ["", "  ", "}", "x = 1", "y = 2", "return x", "pass"]


@given(st.lists(st.sampled_from(_SMALL_ALPHABET), max_size=40))
def test_every_anchor_resolves_to_its_own_line(lines: list[str]) -> None:
    index = AnchorIndex(lines)
    anchors = index.anchors()
    assert [a.line for a in anchors] == list(range(1, len(lines) + 1))
    for anchor in anchors:
        match = index.match(anchor.anchor)
        assert len(anchor.anchor) in (6, 8, 16)
        if anchor.unique:
            assert match == Match(anchor.kind, (anchor.line,))
        else:
            assert match.level == "line"
            assert anchor.line in match.candidates
            assert len(match.candidates) > 1


@given(st.lists(st.sampled_from(_SMALL_ALPHABET), max_size=40))
def test_anchors_are_shortest_possible(lines: list[str]) -> None:
    index = AnchorIndex(lines)
    for anchor in index.anchors():
        if anchor.unique and len(anchor.anchor) > 6:
            shorter = anchor.anchor[: 6 if len(anchor.anchor) == 8 else 8]
            assert index.match(shorter) != Match(anchor.kind, (anchor.line,))
        if anchor.kind == "context":
            # Context anchors are only used when the line hash cannot do it.
            assert len(index.match(anchor.hash).candidates) > 1


def test_large_file_with_many_twins_resolves_including_rare_fallback() -> None:
    # 10,000 lines where most lines are twins with identical neighbours. By chance
    # (hash collisions, deterministic for xxh3) a few twins' 6-hex line prefixes are
    # another line's unique context prefix, which exercises the longer fallback.
    lines = [f"    x_{i % 3000} = {i % 5}" if i % 7 else "}" for i in range(10_000)]
    index = AnchorIndex(lines)
    anchors = index.anchors()
    assert any(not a.unique and len(a.anchor) > 6 for a in anchors)
    for anchor in anchors:
        match = index.match(anchor.anchor)
        if anchor.unique:
            assert match == Match(anchor.kind, (anchor.line,))
        else:
            assert match.level == "line"
            assert anchor.line in match.candidates
