"""Codex's apply_patch text, read as the files it changes (`parse_patch`).

The envelope (`*** Begin Patch`, `*** Add File: P` with + lines, `*** Delete File: P`,
`*** Update File: P` with an optional `*** Move to: Q` and hunks of ' ', '-', '+'
lines after optional `@@` headers, `*** End Patch`). The daemon's own reader
(daemon/text/v4a.py) is the daemon's: the hook may not import it. This one only says
which files change and how; it never applies a patch. A hunk is a replacement of whole
lines (its context and - lines by its context and + lines). A file whose change
cannot be said that way (deleted, moved, a hunk with no line to find) is not
`claimable`: the hook credits it through a shell window around the tool.
"""

from __future__ import annotations

from typing import Any

from editjournal.client.harness.hookcall import PatchFile

PATCH_BEGIN, PATCH_END = "*** Begin Patch", "*** End Patch"
PATCH_ADD, PATCH_DELETE, PATCH_UPDATE = "*** Add File: ", "*** Delete File: ", "*** Update File: "
PATCH_MOVE, PATCH_EOF = "*** Move to: ", "*** End of File"
MAX_PATCH_FILES = 256


def parse_patch(text: str) -> tuple[PatchFile, ...]:
    """The files of a patch, in its order; `ValueError` when it is not one."""
    lines = text.strip().splitlines()
    if not lines or lines[0].strip() != PATCH_BEGIN:
        raise ValueError(f"the patch does not start with {PATCH_BEGIN!r}")
    if lines[-1].strip() != PATCH_END:
        raise ValueError(f"the patch does not end with {PATCH_END!r}")
    body, files, at = lines[1:-1], [], 0
    heads = (PATCH_ADD, PATCH_DELETE, PATCH_UPDATE)
    while at < len(body):
        end = next((i for i in range(at + 1, len(body)) if body[i].startswith(heads)), len(body))
        files.append(_patch_file(body[at], body[at + 1 : end]))
        at = end
    if len(files) > MAX_PATCH_FILES:
        raise ValueError(f"the patch names {len(files)} files, more than {MAX_PATCH_FILES}")
    return tuple(files)


def _patch_file(head: str, rows: list[str]) -> PatchFile:
    if head.startswith(PATCH_ADD):
        if any(not row.startswith("+") for row in rows):
            raise ValueError(f"{head!r}: every line of an added file starts with +")
        content = "".join(row[1:] + "\n" for row in rows)
        return PatchFile("add", _patch_name(head, PATCH_ADD), content=content)
    if head.startswith(PATCH_DELETE):
        return PatchFile("delete", _patch_name(head, PATCH_DELETE), claimable=False)
    if head.startswith(PATCH_UPDATE):
        return _patch_update(_patch_name(head, PATCH_UPDATE), rows)
    raise ValueError(f"{head!r} is not a file header of a patch")


def _patch_name(line: str, prefix: str) -> str:
    name = line[len(prefix) :].strip()
    if not name:
        raise ValueError(f"{line!r} names no file")
    return name


def _patch_update(path: str, rows: list[str]) -> PatchFile:
    """An updated file, one replacement per hunk; moved, or with a hunk of + lines
    only: not claimable, its edits not said."""
    move_to = None
    if rows and rows[0].startswith(PATCH_MOVE):
        move_to, rows = _patch_name(rows[0], PATCH_MOVE), rows[1:]
    hunks: list[list[str]] = []
    for row in rows:
        if row.startswith("@@") or not hunks:
            hunks.append([])
        if not row.startswith("@@") and row.strip() != PATCH_EOF:
            hunks[-1].append(row)
    edits = tuple(e for e in map(_hunk_edit, hunks) if e is not None)
    whole = move_to is None and len(edits) == len(hunks) and bool(edits)
    return PatchFile("update", path, move_to, edits if whole else (), claimable=whole)


def _hunk_edit(hunk: list[str]) -> dict[str, Any] | None:
    """A hunk as a replacement of whole lines; None when it has no line to find."""
    old: list[str] = []
    new: list[str] = []
    for row in hunk:
        mark, text = (row[:1], row[1:]) if row else (" ", "")  # a bare blank context line
        if mark not in " +-":
            raise ValueError(f"{row!r} is not a line of a hunk (' ', '-' or '+' first)")
        if mark != "+":
            old.append(text)
        if mark != "-":
            new.append(text)
    if not old:
        return None
    return {
        "old_string": "".join(line + "\n" for line in old),
        "new_string": "".join(line + "\n" for line in new),
        "replace_all": False,
    }
