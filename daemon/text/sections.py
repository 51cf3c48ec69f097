"""Markdown sections for `update_section`: which lines a header's section spans. Pure.

Headers are found by markdown-it-py, a CommonMark parser, not by regexes: a
`# comment` inside a fenced code block is no header, a setext header
(`Title` over `=====`) is one, and closing `#`s are not part of the name. A
section runs from the line after its header to the next header of the same or
a higher level (a smaller number of `#`), or to the end of the file, so its
sub-sections belong to it.

What it must never do: touch a file or decide what the new content is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

from editjournal.daemon.text.edit import EditPlan, Splice
from editjournal.daemon.text.replace import added_lines
from editjournal.schemas.errors import ErrorCode, ToolError

if TYPE_CHECKING:
    from markdown_it import MarkdownIt

_ATX = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*$")


@cache
def _parser() -> MarkdownIt:
    """The CommonMark parser, built when a section is first looked for: markdown-it
    is the daemon's costliest import, and most daemons never edit a section. Its
    inline rules are off: a header's text is its inline token's source either way
    (they were 40% of a parse: a 180,000-line file 3.3 -> 2.0 s)."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").disable("inline")


SLOW_FROM = 5_000  # lines of a document whose headers are found off the loop's thread
KEPT = 4  # documents whose headers are kept, by content (the newest)
_KEPT: dict[str, list[Header]] = {}  # content hash -> headers: a parse is ~11 us a line


@dataclass(frozen=True)
class Header:
    """One markdown header: its level, its text, and the 0-based lines it spans."""

    level: int
    text: str
    start: int
    end: int  # exclusive: a setext header spans two lines

    def shown(self) -> str:
        return f"{'#' * self.level} {self.text}"


def headers(lines: tuple[str, ...], key: str | None = None) -> list[Header]:
    """Every header of the document, in order; kept by `key` (its content's hash), so
    a big document parsed off the loop (`known`) is not parsed again in the turn."""
    if key is not None and key in _KEPT:
        return _KEPT[key]
    found = _parsed(lines)
    if key is not None:
        _KEPT[key] = found  # a dict's item set is atomic: the worker thread may write it
        while len(_KEPT) > KEPT:
            del _KEPT[next(iter(_KEPT))]
    return found


def known(key: str) -> bool:
    """Whether the headers of the content with this hash are kept."""
    return key in _KEPT


def _parsed(lines: tuple[str, ...]) -> list[Header]:
    tokens = _parser().parse("\n".join(lines) + "\n")
    found = []
    for k, token in enumerate(tokens):
        if token.type == "heading_open" and token.map is not None:
            text = tokens[k + 1].content.strip()
            found.append(Header(int(token.tag[1]), text, token.map[0], token.map[1]))
    return found


def wanted(section_header: str) -> tuple[int | None, str]:
    """ "## Name" -> (2, "Name"); a bare "Name" matches a header of any level."""
    match = _ATX.match(section_header)
    if match is None:
        return None, section_header.strip()
    return len(match[1]), match[2].rstrip("#").strip()


def find_section(
    lines: tuple[str, ...], section_header: str, path: str, key: str | None = None
) -> tuple[Header, int]:
    """The header and the (exclusive, 0-based) line its section ends at, or a refusal."""
    every = headers(lines, key)
    level, text = wanted(section_header)
    hits = [h for h in every if h.text == text and level in (None, h.level)]
    if not hits:
        raise ToolError(
            ErrorCode.SECTION_NOT_FOUND,
            f"section {section_header!r} not found in {path}; its headers are: "
            + (", ".join(repr(h.shown()) for h in every) or "none"),
            {"headers": [{"line": h.start + 1, "header": h.shown()} for h in every]},
        )
    if len(hits) > 1:
        raise ToolError(
            ErrorCode.SECTION_AMBIGUOUS,
            f"section {section_header!r} matches {len(hits)} headers in {path} (lines "
            + ", ".join(str(h.start + 1) for h in hits)
            + "); give its level (e.g. '## Name') or make the headers distinct",
            {"matches": [{"line": h.start + 1, "header": h.shown()} for h in hits]},
        )
    header = hits[0]
    after = [h.start for h in every if h.start > header.start and h.level <= header.level]
    return header, after[0] if after else len(lines)


def plan_section(lines: tuple[str, ...], header: Header, end: int, new_content: str) -> EditPlan:
    """The section's body (between its header and `end`) replaced by `new_content`.

    The blank lines that set the old body off from its header and from the next
    header are kept when the new content does not bring its own.
    """
    body = [] if new_content == "" else list(added_lines(new_content))
    start = header.end
    if start < end and not lines[start].strip() and body and body[0].strip():
        body.insert(0, "")
    blank_before_next = end < len(lines) and end > start and not lines[end - 1].strip()
    if blank_before_next and (not body or body[-1].strip()):
        body.append("")
    targets = tuple(range(header.start + 1, end + 1))
    return EditPlan((Splice(0, "update_section", start, end, tuple(body), targets),))
