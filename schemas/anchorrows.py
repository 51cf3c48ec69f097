"""The lean wire form of anchored lines, and its expansion on the client.

A `read_file(hashes)` reply carries the served text once (`content`) plus, per
line, its anchor (`anchors`) and one mark character (`marks`) saying the
anchor's kind, uniqueness and quality. The per-line rows (`lines`) and the
`LINE#ANCHOR|body` text (`rendered`) that tools show are rebuilt from those on
the client, on first use (ReadFileResult), so a read reply is about the size of
the file instead of three times it, and a caller that only wants the content or
the anchors never pays for a thousand row objects. The alphabet below is the
contract between daemon and client::

    "."  line anchor, unique, high quality     "~"  line, unique, low
    "c"  context anchor (always unique), high  "C"  context, low
    "?"  line anchor, not unique, high         "!"  line, not unique, low
"""

from __future__ import annotations

import re

# (kind, unique, quality) <-> mark
MARKS: dict[tuple[str, bool, str], str] = {
    ("line", True, "high"): ".",
    ("line", True, "low"): "~",
    ("context", True, "high"): "c",
    ("context", True, "low"): "C",
    ("line", False, "high"): "?",
    ("line", False, "low"): "!",
}
MEANINGS = {mark: meaning for meaning, mark in MARKS.items()}
# What `rendered` shows after the anchor: "?" not unique (identical lines share the
# anchor: the line number picks one), else "~" low quality. One character, as anchors
# copied with their mark are accepted (`schemas.tools.Anchor`).
SHOWN = {".": "", "~": "~", "c": "", "C": "~", "?": "?", "!": "?"}
_ENDING = re.compile(r"\r\n|\r|\n")  # the daemon's own three line terminators


def bodies_of(content: str, count: int) -> list[str]:
    """The first `count` line bodies of `content` (lines with their endings)."""
    if "\r" not in content:  # the common case, at C speed
        return content.split("\n", count)[:count]
    return _ENDING.split(content, maxsplit=count)[:count]


def rendered_rows(first: int, anchors: list[str], marks: str, bodies: list[str]) -> str:
    """`{line}#{anchor}{shown mark}|{body}` rows joined by "\\n", as agents see them."""
    return "\n".join(
        f"{first + i}#{anchor}{SHOWN[mark]}|{body}"
        for i, (anchor, mark, body) in enumerate(zip(anchors, marks, bodies, strict=True))
    )
