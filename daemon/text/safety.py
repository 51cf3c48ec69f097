"""The sanity check an edit must pass before it is written. Pure.

The spec's "checkpoint, sanity check, roll back" becomes: compute the edit in
memory, check it, and only write it when clean — so a suspicious edit never
touches the disk and there is nothing to roll back. Checks look for the two
mistakes agents make most with line edits:

- a boundary duplicate: the first new line repeats the line just above the
  edit, or the last new line repeats the line just below (the agent included
  its anchor line in the content of an insert_after, say). Not when the writer
  quoted that neighbour as text (a diff's context line, `QuotedSplice`) and the
  repeated line is short, low-entropy or a closing line: a new block ending in
  `end` right above the enclosing block's `end` is how code nests, and the diff
  shows both lines, so the author wrote both. A long, distinctive line repeated
  at a seam is still a finding, quoted or not;
- a bracket-balance change: the edit opens more ( [ { than it closes, or the
  other way round (a replace_range that cut a block's closing brace). Prose
  files skip this check: "1)" in a list is not code.
"""

from __future__ import annotations

import re
from collections.abc import Container, Sequence
from dataclasses import dataclass

from editjournal.daemon.text.anchors import classify_quality
from editjournal.daemon.text.edit import Splice

PAIRS = {"(": ")", "[": "]", "{": "}"}
PROSE_SUFFIXES = (".md", ".markdown", ".txt", ".rst", ".adoc", ".org", ".tex")
_WORD = re.compile(r"\w\W*\w")  # at least two word characters
SHORT_SEAM_CHARS = 12  # `return None`, `end if;`, `</div>`: short enough to repeat at a seam
# A line that closes a block, whatever the language: keywords (Lua, Ruby, fish, Pascal,
# shell, Fortran/VB/Ada `end if`, PHP/Vim `endif`), a preprocessor or region end, a markup
# end tag, LaTeX's \end{...}, closing brackets; then closing punctuation and a comment.
_CLOSING = re.compile(
    r"(?i)^\s*(?:"
    r"end(?:\s+(?:if|do|for|while|loop|case|select|sub|function|module|class|type|program"
    r"|subroutine|interface|procedure|property|namespace|with|try|struct|enum|record))?"
    r"|end(?:if|for|foreach|while|switch|function|module|class|case|region|macro)"
    r"|fi|esac|done|wend|loop|next"
    r"|#\s*end(?:if|region)\b.*"
    r"|</[\w:.-]+\s*>"
    r"|\\end\{[^}]*\}"
    r"|[)\]}]+"
    r")[\s;,.)\]}]*(?:(?://|#|--|/\*|\(\*|\{|\').*)?$"
)
# What the bracket count skips, on one line: string literals and line comments. One
# alternation scanned left to right, so whichever starts first wins: "http://x" is a
# string, not a comment, and an apostrophe in `# don't (` cannot open a string.
_SKIPPED = re.compile(
    r'"(?:\\.|[^"\\\n])*"'
    r"|`(?:\\.|[^`\\\n])*`"
    # A closing quote followed by a letter is no string end: Rust's `<'a>(x: &'a str)`.
    r"|'(?:\\.|[^'\\\n])*'(?!\w)"
    # Comments start a line or follow a space, and `#` is followed by a space: so `#[derive(`,
    # `#include`, CSS `#main {` and `this.#f(` stay code. Without the file's language,
    # Python's `a // (b` reads as a comment: harmless unless the `(` closes on a later line.
    r"|(?:^|(?<=\s))(?:#(?=\s|$)|//).*"
)


@dataclass(frozen=True, slots=True)
class QuotedSplice(Splice):
    """A splice whose writer quoted, as text, the lines right next to it: a diff's
    context lines directly above and below its change (None: that side not quoted).

    What the writer quoted is what it demonstrably saw, so a closing line it adds
    right above an identical quoted one is meant (see the module docstring). The text
    is kept, not a flag: carried over other agents' changes, the neighbour in the
    current content may no longer be the line the writer quoted."""

    quoted_above: str | None = None
    quoted_below: str | None = None


def quoting(splice: Splice, lines: Sequence[str], quoted: Container[int]) -> QuotedSplice:
    """`splice` of `lines` with the neighbours its writer quoted as text (`quoted`: the
    0-based lines of `lines` it quoted, say an old_string's context or a hunk's)."""
    above, below = splice.start - 1, splice.end
    return QuotedSplice(
        splice.index,
        splice.op,
        splice.start,
        splice.end,
        splice.new_lines,
        splice.targets,
        lines[above] if above >= 0 and above in quoted else None,
        lines[below] if below < len(lines) and below in quoted else None,
    )


@dataclass(frozen=True, slots=True)
class SafetyWarning:
    kind: str  # "duplicate_boundary_line" | "bracket_balance_changed"
    operation: int  # 1-based position in the batch, 0 for whole-edit findings
    message: str


def check_edit(
    lines: Sequence[str], splices: Sequence[Splice], check_brackets: bool = True
) -> list[SafetyWarning]:
    """Every warning the edit earns; empty means clean."""
    warnings = [w for s in splices for w in _boundary_duplicates(lines, s)]
    if check_brackets:
        warnings.extend(_bracket_balance(lines, splices))
    return warnings


def brackets_matter(path: str) -> bool:
    return not path.lower().endswith(PROSE_SUFFIXES)


def _distinctive(line: str) -> bool:
    return bool(_WORD.search(line))


def _boundary_duplicates(lines: Sequence[str], splice: Splice) -> list[SafetyWarning]:
    if not splice.new_lines:
        return []
    found = []
    above = lines[splice.start - 1] if splice.start > 0 else None
    below = lines[splice.end] if splice.end < len(lines) else None
    first, last = splice.new_lines[0], splice.new_lines[-1]
    quoted_above, quoted_below = _quoted(splice)
    if _repeats(first, above) and not _meant(lines, first, above, quoted_above):
        found.append(_duplicate(splice, splice.start, "first", "above", first))
    if _repeats(last, below) and not _meant(lines, last, below, quoted_below):
        found.append(_duplicate(splice, splice.end + 1, "last", "below", last))
    return found


def _repeats(new: str, neighbour: str | None) -> bool:
    return neighbour is not None and _distinctive(new) and new.strip() == neighbour.strip()


def _quoted(splice: Splice) -> tuple[str | None, str | None]:
    if isinstance(splice, QuotedSplice):
        return splice.quoted_above, splice.quoted_below
    return None, None


def _meant(lines: Sequence[str], new: str, neighbour: str | None, quoted: str | None) -> bool:
    """The writer quoted this very neighbour and the repeated line is one code repeats
    at a seam: short, low-entropy (the file has it 3 times or more) or a closer."""
    if quoted is None or quoted != neighbour:
        return False
    body = new.strip()
    if len(body) <= SHORT_SEAM_CHARS or _CLOSING.match(body):
        return True
    repeats = sum(1 for line in lines if line.strip() == body)
    return classify_quality(body, repeats) == "low"


def _duplicate(splice: Splice, line: int, which: str, side: str, text: str) -> SafetyWarning:
    return SafetyWarning(
        "duplicate_boundary_line",
        splice.index + 1,
        f"operation {splice.index + 1} ({splice.op}): the {which} new line repeats line "
        f"{line} just {side} the edit ({text.strip()!r}); did the content include the "
        "anchor line?",
    )


def _bracket_balance(lines: Sequence[str], splices: Sequence[Splice]) -> list[SafetyWarning]:
    removed = [line for s in splices for line in lines[s.start : s.end]]
    added = [line for s in splices for line in s.new_lines]
    before, after = _balance(removed), _balance(added)
    changed = {o: (before[o], after[o]) for o in PAIRS if before[o] != after[o]}
    if not changed:
        return []
    detail = ", ".join(f"{o}{PAIRS[o]} net {b:+d} -> {a:+d}" for o, (b, a) in changed.items())
    return [
        SafetyWarning(
            "bracket_balance_changed",
            0,
            f"the edit changes the file's bracket balance ({detail}): the removed lines "
            "and the new lines do not open and close the same brackets",
        )
    ]


def _balance(lines: Sequence[str]) -> dict[str, int]:
    """Opens minus closes per bracket kind, ignoring strings and line comments
    (line by line: a stray quote must not swallow the brackets of the lines after it)."""
    text = "\n".join(_SKIPPED.sub("", line) for line in lines)
    return {o: text.count(o) - text.count(c) for o, c in PAIRS.items()}
