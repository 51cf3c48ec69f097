"""The lean read reply: anchors and marks on the wire, rows rebuilt by the client.

What the client rebuilds (`lines`, `rendered`) must be exactly what the daemon
used to send: the `LineAnchor`s of the text engine and `render_rows`.
"""

from __future__ import annotations

import msgspec
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from editjournal.daemon.text.anchors import AnchorIndex, render_rows
from editjournal.daemon.text.lines import parse
from editjournal.schemas.anchorrows import MARKS
from editjournal.schemas.tools import AnchoredLine, ReadFileResult

_BODIES = st.sampled_from(["", "  ", "}", "x = 1", "return x", "def f():", "é ✓ \u2028 \x0c"])
_ENDINGS = st.sampled_from(["\n", "\r\n", "\r"])


def _reply(text: str, start: int, end: int) -> bytes:
    """A reply as the daemon builds it (handlers.read: anchors set after construction)."""
    doc = parse(text)
    index = AnchorIndex(doc.lines)
    content = "".join(
        a + b for a, b in zip(doc.lines[start - 1 : end], doc.endings[start - 1 : end], strict=True)
    )
    result = ReadFileResult(
        file_path="f", version=1, sha256="0" * 64, line_count=doc.line_count, content=content,
        start_line=start, end_line=end, truncated=False, eol=doc.eol_style, bom=doc.bom,
        final_newline=doc.final_newline, size=len(text),
    )  # fmt: skip
    result.anchors = index.anchor_strings[start - 1 : end]
    result.marks = index.marks()[start - 1 : end]
    wire = msgspec.msgpack.encode(result)
    sent = msgspec.msgpack.decode(wire)
    assert sent["lines"] is None and sent["rendered"] is None  # nothing travels twice
    return wire


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(_BODIES, _ENDINGS), min_size=1, max_size=12), st.booleans(), st.data())
def test_the_client_rebuilds_exactly_the_rows_the_engine_makes(
    lines: list[tuple[str, str]], final: bool, data: st.DataObject
) -> None:
    text = "".join(body + ending for body, ending in lines)
    if not final:
        text = text[: -len(lines[-1][1])]
    doc = parse(text)
    assume(doc.line_count > 0)
    start = data.draw(st.integers(1, doc.line_count))
    end = data.draw(st.integers(start, doc.line_count))
    got = msgspec.msgpack.decode(_reply(text, start, end), type=ReadFileResult)
    anchors = list(AnchorIndex(doc.lines).anchors())[start - 1 : end]
    bodies = doc.lines[start - 1 : end]
    assert got.lines == [
        AnchoredLine(
            line=a.line, hash=a.anchor, quality=a.quality, text=b, kind=a.kind, unique=a.unique
        )
        for a, b in zip(anchors, bodies, strict=True)
    ]
    assert got.rendered == render_rows(anchors, bodies)


def test_every_mark_names_one_kind_uniqueness_and_quality() -> None:
    lines = ["def f():", "    return x", "}", "", "    return x", "}", "}", "x"]
    index = AnchorIndex(lines)
    for anchor, mark in zip(index.anchors(), index.marks(), strict=True):
        assert MARKS[(anchor.kind, anchor.unique, anchor.quality)] == mark


def test_a_read_reply_carries_the_text_once() -> None:
    text = "".join(f"    value_{i} = compute({i}, limit={i % 7})\n" for i in range(600))
    assert len(_reply(text, 1, 600)) <= 1.5 * len(text.encode())


def test_rows_are_built_on_first_use_and_kept_for_json() -> None:
    """Decoding builds no rows; `expanded()` puts them on the wire form (CLI --json)."""
    got = msgspec.msgpack.decode(_reply("a = 1\nb = 2\n", 1, 2), type=ReadFileResult)
    assert got.sent_lines is None and got.sent_rendered is None
    rendered = got.rendered
    assert rendered is not None and rendered.startswith("1#")
    shown = msgspec.to_builtins(got.expanded())
    assert [row["text"] for row in shown["lines"]] == ["a = 1", "b = 2"]
    assert shown["rendered"] == rendered
