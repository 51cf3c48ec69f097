"""Suggested calls in the daemon's words: one spelling every surface can read back.

The daemon words its messages, warnings and suggested actions for agents, in the
tools' own terms. When it suggests a call it spells it as `call` does — the
method and its params as one JSON object, real values filled in:
`checkpoint_restore({"id_or_name": "before", "remove_new": true})`. That reads
as a tool call where tools are called (MCP), and `calls_in` finds every such
call in a text again, so a surface with other words (the CLI: the command that
does the same) renders each in its own terms. One source says what to do.

`SUGGESTIONS` makes a code's suggested action from an error's details, so it
names the real path, seq or checkpoint; `schemas.errors` falls back to the
catalogue's fixed words when a code has none here or the details lack what it
needs. Pure: builds and parses strings, no I/O.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any

from editjournal.schemas.units import limit_that_fits

Details = dict[str, Any]


def call(method: str, **params: Any) -> str:
    """`method({"param": value, ...})`: a suggested call, params in the order given
    (those that are None left out)."""
    given = {name: value for name, value in params.items() if value is not None}
    return f"{method}({json.dumps(given, ensure_ascii=False)})"


@dataclass(frozen=True)
class FoundCall:
    """A call `calls_in` found: where it is in the text, and what it calls."""

    start: int
    end: int
    method: str
    params: dict[str, Any]


_OPENING = re.compile(r"\b([a-z][a-z0-9_]*)\(\{")


def calls_in(text: str, methods: Collection[str]) -> list[FoundCall]:
    """Every `method({...})` in `text` whose method is one of `methods` and whose
    params are one JSON object, in order."""
    found: list[FoundCall] = []
    decoder = json.JSONDecoder()
    for match in _OPENING.finditer(text):
        if match.group(1) not in methods or (found and match.start() < found[-1].end):
            continue
        try:
            params, end = decoder.raw_decode(text, match.end() - 1)
        except ValueError:
            continue
        if isinstance(params, dict) and text[end : end + 1] == ")":
            found.append(FoundCall(match.start(), end + 1, match.group(1), params))
    return found


# --- a code's suggested action, made from the error's details ---------------------------


# The edit operations that name their lines by anchor: only a retry of these can use
# fresh anchors (edit_file, update_section, a whole-file write take none: `_RETRY_BY_TEXT`,
# `_RETRY_WHOLE_FILE` say what theirs take).
ANCHORED_OPS = frozenset(
    {
        "replace_line",
        "insert_after",
        "insert_before",
        "delete_line",
        "replace_range",
        "delete_range",
    }
)


# What a retry of a writer that takes no anchors does with the changes a stale refusal
# hands over: it finds its place by text, or replaces the whole file.
_RETRY_BY_TEXT = {
    "edit_file": "retry at once with an old_string copied from the current lines of",
    "update_section": (
        "retry your update_section at once with a new body that keeps the changed lines of"
    ),
}
_RETRY_WHOLE_FILE = {
    "replace": "redo the whole-file write at once with the changed lines of details.delta"
    " kept in its content (they are not yours to drop)",
    "delete": "see what changed in details.delta, and delete the file again only if those"
    " changes may go too",
}


def _retry_with(d: Details) -> str:
    """What a retry takes from the changes a stale refusal hands over (`details.stale`
    names the refused operations): fresh anchors for an anchored edit (and when it names
    none), the current text for a tool that searches for its own place."""
    ops = {s.get("op") for s in d.get("stale") or [] if isinstance(s, dict)}
    if not ops or ops <= ANCHORED_OPS:
        return "retry at once with the fresh anchors of"
    if len(ops) == 1 and (found := _RETRY_BY_TEXT.get(str(next(iter(ops))))) is not None:
        return found
    return "retry at once over the changes in"


def _anchor_stale(d: Details) -> str | None:
    path = d.get("path")
    if d.get("reason") == "unknown_anchor" and path:
        read = call("read_file", path=path, hashes=True)
        return f"use anchors a read gave you; this one never was: {read}"
    whole = _RETRY_WHOLE_FILE.get(str(d.get("whole_file")))
    if whole is not None and d.get("delta"):
        return f"{whole}: no re-read needed"
    if d.get("delta"):
        return f"{_retry_with(d)} details.delta: no re-read needed"
    if whole is not None and path:  # never read, or its read is not stored: nothing to key on
        return f"read the file first ({call('read_file', path=path)}), then redo the write"
    if path and d.get("your_version") is not None:
        seen = call("read_file", path=path, since_version=d["your_version"])
        return f"see what changed since your read ({seen}) and retry with its fresh anchors"
    if path:
        return f"read the file again for fresh anchors: {call('read_file', path=path, hashes=True)}"
    return None


def _file_too_many_lines(d: Details) -> str | None:
    lines = d.get("lines")
    if not isinstance(lines, int):
        return None
    limit = -(-lines * 2 // 100_000) * 100_000  # twice the file, in round hundred thousands
    return (
        "restart the daemon with a higher limit (editjournal stop && editjournal start"
        f" --max-file-lines {limit}), or skip the file"
    )


def _file_too_large(d: Details) -> str | None:
    size = d.get("size")
    if not isinstance(size, int):
        return None
    return (
        "restart the daemon with a higher limit (editjournal stop && editjournal start"
        f" --max-file-size {limit_that_fits(size)}), or skip the file"
    )


def _file_changing(d: Details) -> str | None:
    path, seq = d.get("path"), d.get("seq")
    if not path:
        return None
    shown = (
        call("history", path=path)
        if seq is None
        else call("read_file", path=path, since_version=seq)
    )
    return f"retry once the other writer is done ({shown} shows its changes)"


def _undo_conflict(d: Details) -> str | None:
    """Undo the latest write still in the way, then this one again, by seq (`undo PATH`
    would now take the caller's newest write: the undo just made); an outside change has
    no undo, so then only an edit helps."""
    path, conflicts = d.get("path"), d.get("conflicts") or []
    if not path:
        return None
    now = call("read_file", path=path, hashes=True)
    if not conflicts or any(c.get("kind") != "edit_applied" for c in conflicts):
        why = " (an outside change is in the way, and it has no undo)" if conflicts else ""
        return f"it cannot be undone now{why}; edit the file as it is ({now})"
    latest = max(c["seq"] for c in conflicts)
    first = call("undo", path=path, seq=latest)
    undone = d.get("undone_seq")
    then = f", then this one again ({call('undo', path=path, seq=undone)})" if undone else ""
    return (
        f"undo the later writes first (the latest: {first}){then}, or edit the file as it"
        f" is ({now})"
    )


def _safety_check_failed(d: Details) -> str | None:
    """One finding is the message itself (no surface lists it again): point there."""
    found = d.get("safety_warnings")
    if not isinstance(found, list) or len(found) != 1:
        return None  # the catalogue's words: details.safety_warnings lists them
    return (
        "if the change is what you meant (the message says what looked wrong), pass"
        " skip_safety_check: true"
    )


def _no_match(d: Details) -> str | None:
    """edit_file's miss with no similar line to show: the catalogue's words would point at
    an empty details.similar_lines."""
    path, similar = d.get("path"), d.get("similar_lines")
    if not isinstance(path, str) or not path or similar != []:
        return None
    read = call("read_file", path=path)
    return f"copy old_string exactly from the file (no line of the file comes close to it): {read}"


def _with_path(make: Callable[[str], str]) -> Callable[[Details], str | None]:
    """`make(path)` when the details name the error's path."""

    def made(d: Details) -> str | None:
        path = d.get("path")
        return make(path) if isinstance(path, str) and path else None

    return made


def _write_of_another_identity(d: Details) -> str | None:
    """A plain undo refused for a write another client made under the same name: the
    undo that names it (journaled as the caller's, as any undo of another's write)."""
    path, seq = d.get("path"), d.get("seq")
    if not isinstance(path, str) or not isinstance(seq, int):
        return None
    return (
        f"that write is not yours to take back by name; to take it back anyway, name it:"
        f" {call('undo', path=path, seq=seq)} (journaled as yours)"
    )


def _copied(path: str) -> str:
    """A hard-linked file's way out: a copy of its own, put in its place."""
    new = shlex.quote(path + ".new")
    return (
        f"write a copy without links, outside editjournal (in the workspace: cp"
        f" {shlex.quote(path)} {new} && mv {new} {shlex.quote(path)}), or leave it alone"
    )


def _file_not_in_journal(d: Details) -> str | None:
    """A file with records, only not at the version asked, is seen in its history; a
    file with none is a path to check, or a file to read first."""
    path = d.get("path")
    if not isinstance(path, str):
        return None
    if isinstance(d.get("first_seq"), int):
        return f"see the versions it has: {call('history', path=path)}"
    read = call("read_file", path=path)
    return f"check the path (workspace-relative), or read the file first: {read}"


def _unknown_seq(d: Details) -> str | None:
    last = d.get("last_seq")
    if not isinstance(last, int):
        return None
    if last < 1:
        return "the journal has no events yet"
    return f"the newest event is seq {last}: {call('show', seq=last)}"


SUGGESTIONS: dict[str, Callable[[Details], str | None]] = {
    "anchor_stale": _anchor_stale,
    "safety_check_failed": _safety_check_failed,
    "no_match": _no_match,
    "file_too_large": _file_too_large,
    "file_too_many_lines": _file_too_many_lines,
    "file_changing": _file_changing,
    "undo_conflict": _undo_conflict,
    "unknown_seq": _unknown_seq,
    "hunk_already_applied": _with_path(
        lambda p: (
            f"see it in the file: {call('read_file', path=p)}; prepare a new hunk for a"
            " further change"
        )
    ),
    "nothing_to_undo": _with_path(lambda p: f"see the file's writes: {call('history', path=p)}"),
    "write_identity_mismatch": _write_of_another_identity,
    "file_not_in_journal": _file_not_in_journal,
    "version_not_stored": _with_path(
        lambda p: f"see the versions whose content is stored: {call('history', path=p)}"
    ),
    "read_budget_exceeded": _with_path(
        lambda p: f"read it in another request: {call('read_file', path=p)}"
    ),
    "hard_linked": _with_path(_copied),
}
