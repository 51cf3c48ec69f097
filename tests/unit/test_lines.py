"""Tests for daemon.text.lines: lossless parse/render and line-ending facts."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from editjournal.daemon.text.lines import Document, parse, render


@pytest.mark.parametrize(
    ("text", "lines", "endings"),
    [
        ("", (), ()),
        ("a", ("a",), ("",)),
        ("a\n", ("a",), ("\n",)),
        ("\n", ("",), ("\n",)),
        ("a\nb\n", ("a", "b"), ("\n", "\n")),
        ("a\r\nb\r\n", ("a", "b"), ("\r\n", "\r\n")),
        ("a\rb\r", ("a", "b"), ("\r", "\r")),
        ("a\r\n\r\nb", ("a", "", "b"), ("\r\n", "\r\n", "")),
        ("a\nb\r\nc\rd", ("a", "b", "c", "d"), ("\n", "\r\n", "\r", "")),
        ("\n\n", ("", ""), ("\n", "\n")),
        ("\r\r\n", ("", ""), ("\r", "\r\n")),
        ("\n\r", ("", ""), ("\n", "\r")),
    ],
)
def test_parse_splits_and_renders_back(
    text: str, lines: tuple[str, ...], endings: tuple[str, ...]
) -> None:
    doc = parse(text)
    assert doc.lines == lines
    assert doc.endings == endings
    assert doc.bom is False
    assert doc.line_count == len(lines)
    assert render(doc) == text


def test_bom_is_flagged_and_not_part_of_line_one() -> None:
    doc = parse("\ufeffa\nb\n")
    assert doc.bom is True
    assert doc.lines == ("a", "b")
    assert render(doc) == "\ufeffa\nb\n"


def test_bom_only_text_has_no_lines() -> None:
    doc = parse("\ufeff")
    assert doc.bom is True
    assert doc.line_count == 0
    assert render(doc) == "\ufeff"


def test_only_first_bom_is_stripped() -> None:
    doc = parse("\ufeff\ufeffa")
    assert doc.bom is True
    assert doc.lines == ("\ufeffa",)
    assert render(doc) == "\ufeff\ufeffa"


def test_splitlines_separators_stay_inside_a_line() -> None:
    # str.splitlines would split this into 9 pieces; we must keep one line.
    trap = "a\x0bb\x0cc\x1cd\x1de\x1ef\x85g\u2028h\u2029i"
    assert len(trap.splitlines()) == 9
    doc = parse(trap + "\n")
    assert doc.lines == (trap,)
    assert doc.endings == ("\n",)
    assert render(doc) == trap + "\n"


@pytest.mark.parametrize(
    ("text", "style"),
    [
        ("", "none"),
        ("a", "none"),
        ("a\nb", "lf"),
        ("a\r\nb\r\n", "crlf"),
        ("a\rb", "cr"),
        ("a\nb\r\n", "mixed"),
        ("a\rb\n", "mixed"),
    ],
)
def test_eol_style(text: str, style: str) -> None:
    assert parse(text).eol_style == style


@pytest.mark.parametrize(
    ("text", "dominant"),
    [
        ("", "\n"),
        ("abc", "\n"),
        ("a\r\n", "\r\n"),
        ("a\rb\rc\n", "\r"),
        ("a\r\nb\nc\n", "\n"),
        ("a\r\nb\n", "\r\n"),  # tie: first occurrence wins
        ("a\nb\r\n", "\n"),
        ("a\rb\nc\r\nd\n", "\n"),
    ],
)
def test_dominant_ending(text: str, dominant: str) -> None:
    assert parse(text).dominant_ending == dominant


@pytest.mark.parametrize(
    ("text", "final"),
    [("", False), ("a", False), ("a\n", True), ("a\r", True), ("\n", True), ("a\nb", False)],
)
def test_final_newline(text: str, final: bool) -> None:
    assert parse(text).final_newline is final


def test_document_rejects_shapes_that_cannot_round_trip() -> None:
    with pytest.raises(ValueError):
        Document(lines=("a", "b"), endings=("\n",), bom=False)
    with pytest.raises(ValueError):
        Document(lines=("a", "b"), endings=("", "\n"), bom=False)
    with pytest.raises(ValueError):
        Document(lines=("a",), endings=("\x85",), bom=False)
    with pytest.raises(ValueError):
        Document(lines=("a\nb",), endings=("",), bom=False)


def test_document_built_by_hand_renders() -> None:
    doc = Document(lines=("x", "y"), endings=("\r\n", ""), bom=True)
    assert render(doc) == "\ufeffx\r\ny"
    assert parse(render(doc)) == doc


@given(st.text(alphabet=["\r", "\n", "\ufeff", "\x0b", "\u2028", "}", "a", " "]))
def test_render_parse_round_trip(text: str) -> None:
    doc = parse(text)
    assert render(doc) == text
    assert parse(render(doc)) == doc
    assert all("\r" not in line and "\n" not in line for line in doc.lines)


@given(st.text())
def test_render_parse_round_trip_any_text(text: str) -> None:
    assert render(parse(text)) == text
