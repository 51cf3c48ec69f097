"""Carrying a change over a concurrent one by a three-way merge of lines. Pure.

Used when a write, at the moment it is put in place, displaces a file an outside
writer changed after the write was planned (an editor's save, an append): the
write's change (base -> ours) is carried over the outside one (base -> theirs)
when the two touch different lines, so both survive. Where they touch the same
lines, or insert at the same place, there is no safe answer and `None` says so:
the caller keeps the outside content and refuses the write. A missing file is
`None` content; a file created or removed on one side is a conflict unless the
other side agrees exactly.

The merge itself is breezy's `merge3` (the algorithm of GNU diff3, a well-kept
library); this module only splits lines (keeping their endings, so CRLF and a
missing final newline survive byte for byte) and says which merged lines came
from the other side: the lines the writing agent has not been shown.
"""

from __future__ import annotations

from dataclasses import dataclass

from merge3 import Merge3

Ranges = list[tuple[int, int]]  # 1-based, inclusive


@dataclass(frozen=True, slots=True)
class Carried:
    """The merged content, and its lines that came from the other side's change."""

    data: bytes
    theirs: Ranges


def carry_over(base: bytes | None, ours: bytes | None, theirs: bytes | None) -> Carried | None:
    """`ours` carried over `theirs` (both changed from `base`), or None on a conflict."""
    if ours == base:  # nothing of ours to carry: theirs stands
        return None if theirs is None else Carried(theirs, _all(theirs))
    if theirs in (base, ours):  # nothing of theirs to keep
        return None if ours is None else Carried(ours, [])
    if base is None or ours is None or theirs is None:
        return None  # created twice, or changed on one side and removed on the other
    if _appended(base, theirs):  # the common outside change: lines added at the end
        if _appended(base, ours):
            return _both_appended(base, ours, theirs)
        return _then_appended(ours, theirs[len(base) :])
    return _merged(base, ours, theirs)


def _then_appended(ours: bytes, added: bytes) -> Carried | None:
    """Ours changed the file, theirs only added lines at its end: ours, then those lines
    (linear time, where a merge of a long file costs a diff)."""
    if ours and not ours.endswith((b"\n", b"\r")):
        return None  # ours left its last line unfinished: theirs would be glued to it
    start = len(ours.splitlines())
    return Carried(ours + added, [(start + 1, start + len(added.splitlines()))])


def _appended(base: bytes, data: bytes) -> bool:
    """`data` is `base` with whole lines added at its end."""
    return data.startswith(base) and (not base or base.endswith((b"\n", b"\r")))


def _both_appended(base: bytes, ours: bytes, theirs: bytes) -> Carried | None:
    """Both sides added lines at the end: theirs first, then ours — the order two
    `O_APPEND` writers would have left. Not when theirs leaves a line unfinished."""
    if not theirs.endswith((b"\n", b"\r")):
        return None
    start, count = len(base.splitlines()), len(theirs.splitlines())
    return Carried(theirs + ours[len(base) :], [(start + 1, count)])


def _merged(base: bytes, ours: bytes, theirs: bytes) -> Carried | None:
    base_lines, our_lines = base.splitlines(True), ours.splitlines(True)
    their_lines = theirs.splitlines(True)
    merged: list[bytes] = []
    from_theirs: Ranges = []
    for region in Merge3(base_lines, our_lines, their_lines).merge_regions():
        kind = region[0]
        if kind == "conflict":
            return None
        if kind == "unchanged":
            merged.extend(base_lines[region[1] : region[2]])
        elif kind in ("a", "same"):
            merged.extend(our_lines[region[1] : region[2]])
        else:  # "b": their change, in a region ours left alone
            if region[2] > region[1]:
                from_theirs.append((len(merged) + 1, len(merged) + region[2] - region[1]))
            merged.extend(their_lines[region[1] : region[2]])
    return Carried(b"".join(merged), from_theirs)


def _all(data: bytes) -> Ranges:
    count = len(data.splitlines())
    return [(1, count)] if count else []
