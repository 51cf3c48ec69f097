"""The text cache's byte bound, the line count without parsing, clipped payloads."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from editjournal.daemon.files.textcache import TextCache
from editjournal.daemon.settings.limits import clip_text, count_lines
from editjournal.daemon.text.lines import parse
from editjournal.schemas.errors import ToolError


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def test_the_cache_stays_under_its_byte_bound() -> None:
    cache = TextCache(entries=100, max_bytes=2_000_000)
    for i in range(20):
        text = f"file {i}\n" + "some line of text\n" * 1000  # ~400 KB estimated each
        cache.parsed(sha(text), text)
        assert cache.bytes <= 2_000_000
    assert 1 < len(cache._items) < 20


def test_one_entry_over_the_bound_is_kept_while_in_use() -> None:
    cache = TextCache(max_bytes=10)
    text = "a line\n" * 100
    assert cache.parsed(sha(text), text).doc.line_count == 100
    assert len(cache._items) == 1


def test_too_many_lines_is_refused_before_parsing() -> None:
    cache = TextCache(max_lines=10)
    calls: list[int] = []  # the text is fetched, but never parsed

    def text() -> str:
        calls.append(1)
        return "x\n" * 11

    with pytest.raises(ToolError) as refused:
        cache.parsed("h", text, "big.txt")
    assert refused.value.code.value == "file_too_many_lines"
    assert refused.value.details == {"path": "big.txt", "lines": 11, "limit": 10}
    assert calls == [1]


@given(st.text(alphabet="ab\r\n", max_size=40))
def test_count_lines_agrees_with_the_parser(text: str) -> None:
    assert count_lines(text) == parse(text).line_count


def test_long_texts_are_clipped_with_their_length_and_hash() -> None:
    ops = [{"op": "replace_line", "hash": "abcdef", "content": "z" * 10_000}]
    clipped = clip_text(ops, limit=100)
    content = clipped[0]["content"]
    assert content.startswith("z" * 100) and len(content) < 200
    assert f"10000 chars, sha256 {sha('z' * 10_000)}" in content
    assert clipped[0]["hash"] == "abcdef"
    assert clip_text({"short": "ok"}) == {"short": "ok"}
