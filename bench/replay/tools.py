"""How agent A writes its hunk with each tool, as an agent would call it.

A read the parent version (with anchors); B's hunk has landed since. A's
request is built from the parent alone: anchors from its read, a `git diff
-U3`-style hunk with the parent's SHA-256, an `old_string` with two lines of
context each side (more when the parent needs it to be unique), a prepared
hunk made before B wrote.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from bench.replay.cases import Case, Hunk
from editjournal.client import Client, RequestError
from editjournal.schemas.tools import AnchoredLine

CONTEXT = 3  # safe_patch: lines of context, as `git diff` makes them
AROUND = 2  # edit_file: lines of context each side of the change in old_string


@dataclass
class Prepared:
    """What A did before B wrote (a prepared hunk's id), for the tools that need it."""

    hunk_id: str | None = None


def _text(lines: list[str] | tuple[str, ...]) -> str:
    return "".join(line + "\n" for line in lines)


Rows = dict[int, AnchoredLine]  # A's read: line -> its anchor and quality


def insertion(h: Hunk, rows: Rows) -> tuple[str, int, tuple[str, ...]]:
    """Where an agent anchors an insertion: after the line above it, unless that line
    is low-entropy (blank, punctuation: refused as a single-line target); then before
    the line below; else it rewrites the line above with the new lines after it."""
    above, below = rows.get(h.start), rows.get(h.start + 1)
    if above is not None and above.quality != "low":
        return "insert_after", h.start, h.new
    if below is not None and below.quality != "low":
        return "insert_before", h.start + 1, h.new
    assert above is not None
    return "replace", h.start, (above.text.rstrip("\n"), *h.new)


def anchored_ops(h: Hunk, rows: Rows) -> list[dict[str, object]]:
    """The `edit` operations for a hunk, anchored by the agent's read of the parent."""
    if h.end > h.start:
        return _replaced(rows, h.start + 1, h.end, h.new)
    how, line, new = insertion(h, rows)
    if how == "replace":
        return _replaced(rows, line, line, new)
    return [{"op": how, "hash": _anchor(rows, line), "content": _text(new)}]


def _good(row: AnchoredLine) -> bool:
    return row.quality != "low" and row.unique


def _anchor(rows: Rows, line: int) -> str:
    """As read_file shows it and agents copy it: LINE#HASH (the line number the row was
    shown with: in the multi play, A's view may number it apart from its key)."""
    return f"{rows[line].line}#{rows[line].hash}"


def _replaced(rows: Rows, first: int, last: int, new: tuple[str, ...]) -> list[dict[str, object]]:
    """Lines first..last (1-based) replaced by `new`: one line by replace_line/delete_line.

    A boundary on a line the read marks low-entropy or not unique is refused as a
    target, so the agent widens the range to the nearest good lines (kept as they are)."""
    while first > 1 and not _good(rows[first]):
        first -= 1
        new = (rows[first].text.rstrip("\n"), *new)
    while last < len(rows) and not _good(rows[last]):
        last += 1
        new = (*new, rows[last].text.rstrip("\n"))
    content = _text(new) if new else ""
    if first == last:
        if not new:
            return [{"op": "delete_line", "hash": _anchor(rows, first)}]
        return [{"op": "replace_line", "hash": _anchor(rows, first), "content": content}]
    span = {"start_hash": _anchor(rows, first), "end_hash": _anchor(rows, last)}
    if not new:
        return [{"op": "delete_range", **span}]
    return [{"op": "replace_range", **span, "content": content}]


def unified_hunk(case: Case, path: str) -> str:
    """Hunk A alone as `git diff -U3` would write it against the parent."""
    return unified(case.lines, case.a, path)


def unified(lines: list[str], h: Hunk, path: str) -> str:
    """Hunk `h` alone as `git diff -U3` would write it against `lines`."""
    lo, hi = max(0, h.start - CONTEXT), min(len(lines), h.end + CONTEXT)
    body = [" " + x for x in lines[lo : h.start]]
    body += ["-" + x for x in lines[h.start : h.end]]
    body += ["+" + x for x in h.new]
    body += [" " + x for x in lines[h.end : hi]]
    old_len, new_len = hi - lo, hi - lo - (h.end - h.start) + len(h.new)
    old_start = lo + 1 if old_len else lo
    new_start = lo + 1 if new_len else lo
    header = f"@@ -{old_start},{old_len} +{new_start},{new_len} @@"
    return f"--- a/{path}\n+++ b/{path}\n{header}\n" + "".join(x + "\n" for x in body)


def replacement(case: Case) -> tuple[str, str]:
    """old_string / new_string for hunk A: two lines of context each side, widened
    until old_string is unique in the parent (as an agent told "not unique" would)."""
    return replacement_in(case.lines, case.a)


def replacement_in(lines: list[str], h: Hunk) -> tuple[str, str]:
    """old_string / new_string for hunk `h` of `lines` (see `replacement`)."""
    text = _text(lines)
    around = AROUND
    while True:
        lo, hi = max(0, h.start - around), min(len(lines), h.end + around)
        old = _text(lines[lo:hi])
        new = _text([*lines[lo : h.start], *h.new, *lines[h.end : hi]])
        if _once(text, old) or (lo == 0 and hi == len(lines)):
            return old, new
        around += 1


def _once(text: str, old: str) -> bool:
    """`old` occurs exactly once in `text`, overlapping occurrences counted (str.count
    skips them: two copies of a repeated block sharing lines counted as one)."""
    first = text.find(old)
    return first >= 0 and text.find(old, first + 1) < 0


def prepare(client: Client, case: Case, path: str, rows: Rows) -> Prepared:
    """prepare_*: a range edit of A's lines, or an insert beside its anchor line."""
    h = case.a
    if h.end > h.start:
        hunk = client.prepare_file_range_edit(
            path, _text(h.new), start_line=h.start + 1, end_line=h.end
        )
        return Prepared(hunk.hunk_id)
    how, line, new = insertion(h, rows)
    if how == "replace":
        hunk = client.prepare_file_range_edit(path, _text(new), start_line=line, end_line=line)
    else:
        anchor = f"{line}#{rows[line].hash}"
        hunk = client.prepare_file_insert(path, anchor, _text(new), after=how == "insert_after")
    return Prepared(hunk.hunk_id)


def write(tool: str, client: Client, case: Case, path: str, rows: Rows, prepared: Prepared) -> None:
    """A's write with `tool`; raises RequestError when refused."""
    try:
        _write(tool, client, case, path, rows, prepared, skip=False)
    except RequestError as e:  # the agent reviews the finding and insists, as it may
        if e.code != "safety_check_failed":
            raise
        _write(tool, client, case, path, rows, prepared, skip=True)


def _write(
    tool: str, client: Client, case: Case, path: str, rows: Rows, prepared: Prepared, skip: bool
) -> None:
    if tool == "edit":
        client.edit(path, anchored_ops(case.a, rows), skip_safety_check=skip)
    elif tool == "safe_patch":
        sha = hashlib.sha256(case.parent.encode()).hexdigest()
        diff = unified_hunk(case, path)
        client.safe_patch(
            path, diff, sha, rebase=True, include_content=False, skip_safety_check=skip
        )
    elif tool == "edit_file":
        old, new = replacement(case)
        client.edit_file(path, old, new, skip_safety_check=skip)
    elif tool == "prepare_apply":
        assert prepared.hunk_id is not None
        client.apply_file_modification(prepared.hunk_id)
    else:
        raise ValueError(tool)


TOOLS = ("edit", "safe_patch", "edit_file", "prepare_apply")
