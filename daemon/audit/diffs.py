"""Diffs between two stored contents, as people read them (unified) and count them.

Lines are split as the text engine splits them (`\\n`, `\\r\\n`, `\\r` only), so
line numbers agree with what agents were shown. Pure: bytes in, text out.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence

from editjournal.daemon.text.lines import parse

LineChange = tuple[int, int, int]  # lines [start, end) of the old content became n lines


def lines_of(data: bytes | None) -> tuple[str, ...]:
    """The lines of a content (none for an absent file), without their endings."""
    if not data:
        return ()
    return parse(data.decode("utf-8", "surrogateescape")).lines


def changes(old: Sequence[str], new: Sequence[str]) -> list[LineChange]:
    """What changed, as `edit_applied.line_changes` says it: (start, end, inserted)."""
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    return [(i1, i2, j2 - j1) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]


def counts(old: Sequence[str], new: Sequence[str]) -> tuple[int, int]:
    """(added, removed) lines."""
    found = changes(old, new)
    return sum(n for _, _, n in found), sum(end - start for start, end, _ in found)


def unified(old: bytes | None, new: bytes | None, path: str) -> str:
    """A unified diff (`--- a/PATH` / `+++ b/PATH`, 3 lines of context); "" when equal."""
    rows = difflib.unified_diff(
        [line + "\n" for line in lines_of(old)],
        [line + "\n" for line in lines_of(new)],
        f"a/{path}" if old is not None else "/dev/null",
        f"b/{path}" if new is not None else "/dev/null",
    )
    return "".join(rows)
