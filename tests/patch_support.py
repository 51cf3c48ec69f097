"""Patches for the patch tests: unified diffs made as tools make them, and texts
edited at random (the property tests of safe_patch and apply_patch).

`unified` is difflib's `unified_diff` with the one thing it leaves out: the
"\\ No newline at end of file" marker after a last line without a newline.
"""

from __future__ import annotations

import difflib
import hashlib
import io
import re

from hypothesis import strategies as st


def sha(data: str | bytes) -> str:
    return hashlib.sha256(data.encode() if isinstance(data, str) else data).hexdigest()


def unified(a: str, b: str, name: str = "f", context: int = 3) -> str:
    """The diff from text `a` to text `b` (lines split on "\\n" only, endings kept)."""
    old, new = io.StringIO(a).readlines(), io.StringIO(b).readlines()
    rows = difflib.unified_diff(old, new, f"a/{name}", f"b/{name}", n=context)
    return "".join(
        row if row.endswith("\n") else row + "\n\\ No newline at end of file\n" for row in rows
    )


_HEADER = re.compile(r"^@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@", re.MULTILINE)


def shifted(diff: str, offset: int) -> str:
    """Every hunk header's stated lines moved by `offset` (never below 1)."""

    def move(match: re.Match[str]) -> str:
        old, new = max(1, int(match[1]) + offset), max(1, int(match[3]) + offset)
        return f"@@ -{old}{match[2] or ''} +{new}{match[4] or ''} @@"

    return _HEADER.sub(move, diff)


@st.composite
def edited(
    draw: st.DrawFn, old: list[str], line: st.SearchStrategy[str], least: int = 1
) -> list[str]:
    """`old` with `least` to four lines inserted, deleted or replaced by `line`s."""
    new = list(old)
    for _ in range(draw(st.integers(least, 4))):
        at = draw(st.integers(0, len(new)))
        kind = draw(st.sampled_from(["insert", "delete", "replace"]))
        if kind == "insert" or at == len(new):
            new.insert(at, draw(line))
        elif kind == "delete":
            del new[at]
        else:
            new[at] = draw(line)
    return new
