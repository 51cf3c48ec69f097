"""The sanity check an edit must pass before it is written. Pure.

The spec's "checkpoint, sanity check, roll back" becomes: compute the edit in
memory, check it, and only write it when clean — so a suspicious edit never
touches the disk and there is nothing to roll back. Checks look for the two
mistakes agents make most with line edits:

- a boundary duplicate: the first new line repeats the line just above the
  edit, or the last new line repeats the line just below (the agent included
  its anchor line in the content of an insert_after, say);
- a bracket-balance change: the edit opens more ( [ { than it closes, or the
  other way round (a replace_range that cut a block's closing brace). Prose
  files skip this check: "1)" in a list is not code.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from editjournal.daemon.text.edit import Splice

PAIRS = {"(": ")", "[": "]", "{": "}"}
PROSE_SUFFIXES = (".md", ".markdown", ".txt", ".rst", ".adoc", ".org", ".tex")
_WORD = re.compile(r"\w\W*\w")  # at least two word characters
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
    if above is not None and _distinctive(first) and first.strip() == above.strip():
        found.append(_duplicate(splice, splice.start, "first", "above", first))
    if below is not None and _distinctive(last) and last.strip() == below.strip():
        found.append(_duplicate(splice, splice.end + 1, "last", "below", last))
    return found


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
