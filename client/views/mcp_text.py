"""The text a model reads back from a tool call over MCP: compact, never pages of JSON.

Every agent tool has a view, one per result type (`_BY_RESULT`): a read shows
its anchored rows (`LINE#ANCHOR|text`) under a one-line header; a write its
confirmation, where the file stands and the diff with new anchors; a planned
hunk the call that applies it and its diff; an error its code, message, what it
refers to (conflicts, the delta with fresh anchors, neighbour anchors,
candidates, the file as it is now) and the suggested action. Not the result as
JSON, as the spec suggests: a client that gives the model only this text would
pay about 3.4 times the characters for JSON on every call (docs/harnesses.md
has the figures). The structured reply travels beside this text as MCP structured
content, checked against the tool's `outputSchema`, so nothing is lost by leaving
fields out here. The daemon's words name fields the model never sees
(`details.delta has the changes`): they are pointed at what this text prints.
A result of another release that does not decode is shown by its message.
Reuses the CLI's renderers in `render.py` and `audit_render.py` with their
terminal styles removed. No I/O (the clock only, for a hunk's expiry).

Some clients show the model the structured content instead of this text
(Claude Code, VS Code), so `structured` makes it readable on its own: a read
with hashes carries its `rendered` rows, and the warnings ride along.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any

import click
import msgspec

from editjournal.client.library.errors import RequestError
from editjournal.client.views.audit_render import (
    blame_lines,
    history_lines,
    hunk_lines,
    show_lines,
    stats_lines,
)
from editjournal.client.views.render import (
    agent_status_lines,
    applied_hunk_lines,
    apply_patch_lines,
    atomic_lines,
    checkpoint_create_lines,
    checkpoint_diff_lines,
    checkpoint_list_lines,
    checkpoint_restore_lines,
    edit_lines,
    error_lines,
    hunk_plan_lines,
    overwrite_lines,
    patch_lines,
    plain_message,
    undo_lines,
)
from editjournal.schemas.tools import (
    TOOL_RESULTS,
    AgentStatusResult,
    ApplyPatchResult,
    ApplyResult,
    AtomicResult,
    BlameResult,
    CheckpointCreateResult,
    CheckpointDiffResult,
    CheckpointListResult,
    CheckpointRestoreResult,
    DiscardHunkResult,
    EditResult,
    HistoryResult,
    HunkPlanResult,
    ListHunksResult,
    OverwriteResult,
    ReadFileResult,
    ReadManyFilesResult,
    SafePatchResult,
    ShowResult,
    StatsResult,
    UndoResult,
)

MAX_DETAIL_CHARS = 200  # a scalar detail longer than this stays in structured content only
_SHOWN_DETAILS = {"conflicts", "delta", "neighbor_anchors", "candidates", "safety_warnings"}
_SHOWN_DETAILS |= {"similar_lines"}
_SHOWN_DETAILS |= {"problems", "latest_file_state", "workspace", "log_tail"}


def result_text(method: str, result: Any, warnings: list[str]) -> str:
    """A successful reply as the model reads it."""
    view = _VIEWS.get(method)
    body = view(result) if view else msgspec.json.encode(result).decode()
    notes = [f"warning: {w}" for w in warnings]
    return "\n".join([*notes, click.unstyle(body)])


def structured(method: str, result: Any, warnings: list[str]) -> dict[str, Any]:
    """A successful reply as MCP structured content: the daemon's result, a read's rows
    built, and the envelope's warnings (no result has a field of that name)."""
    body = dict(result) if isinstance(result, dict) else {}
    if method == "read_file":
        body = _with_rows(body)
    elif method == "read_many_files" and isinstance(body.get("files"), list):
        body["files"] = [_item_with_rows(item) for item in body["files"]]
    if warnings:
        body["warnings"] = list(warnings)
    return body


def _item_with_rows(item: Any) -> Any:
    if isinstance(item, dict) and isinstance(item.get("result"), dict):
        return {**item, "result": _with_rows(item["result"])}
    return item


def _with_rows(read: dict[str, Any]) -> dict[str, Any]:
    """A lean read (`anchors` + `marks`, the daemon's reply with hashes) with `rendered`
    built, as `ReadFileResult.rendered` builds it. `lines` stays out (its null with it):
    a row object per line would more than double the reply again (197 lines: 11 KB
    lean, 21 KB with `rendered`, 48 KB with `lines`), and `anchors` + `marks` +
    `content` already hold it (the Python client rebuilds it)."""
    if read.get("anchors") is None or read.get("marks") is None or read.get("rendered"):
        return read
    rows = msgspec.convert(read, ReadFileResult).rendered
    kept = {k: v for k, v in read.items() if not (k == "lines" and v is None)}
    return {**kept, "rendered": rows}


def read_text(result: ReadFileResult) -> str:
    shown = f"lines {result.start_line}-{result.end_line} of {result.line_count}"
    more = f", truncated: read on from line {result.end_line + 1}"
    head = (
        f"{result.file_path} version {result.version} sha256 {result.sha256}"
        f" ({shown}{more if result.truncated else ''})"
    )
    if result.since_version is not None:
        if result.unchanged:
            return f"{head}\nunchanged since version {result.since_version}"
        return f"{head}\nchanged since version {result.since_version}:\n{result.delta or ''}"
    return f"{head}\n{result.rendered if result.rendered is not None else result.content}"


def read_many_text(result: ReadManyFilesResult) -> str:
    parts = []
    for item in result.files:
        if item.ok and item.result is not None:
            parts.append(read_text(item.result))
        elif item.error is not None:
            parts.append(f"{item.file_path}: error {item.error.code}: {item.error.message}")
    return "\n\n".join(parts)


def _typed(kind: type[Any], show: Callable[[Any], str | list[str]]) -> Callable[[Any], str]:
    def view(result: Any) -> str:
        try:
            typed = msgspec.convert(result, kind)
        except msgspec.ValidationError:  # a daemon of another release: its own words
            return str(result.get("message")) if isinstance(result, dict) else str(result)
        shown = show(typed)
        return shown if isinstance(shown, str) else "\n".join(shown)

    return view


def list_hunks_lines(result: ListHunksResult) -> list[str]:
    """The pending hunks as the CLI's table (times relative to now), then each diff."""
    lines = hunk_lines(result.hunks, result.expired, int(time.time() * 1000))
    return [*lines, *(h.diff.rstrip("\n") for h in result.hunks if h.diff)]


def blame_text(result: BlameResult) -> list[str]:
    return [f"{result.path} version {result.version} sha256 {result.sha256}", *blame_lines(result)]


def history_text(result: HistoryResult) -> list[str]:
    return [f"{result.path}: {len(result.versions)} versions", *history_lines(result)]


def stats_text(result: StatsResult) -> list[str]:
    return (
        [f"as of seq {result.last_seq}", *stats_lines(result.agents)]
        if result.agents
        else [f"no agent has read or written anything yet (as of seq {result.last_seq})"]
    )


# One view per result type, for every tool: `test_mcp_text` fails for a tool without one.
_BY_RESULT: dict[type[Any], Callable[[Any], str | list[str]]] = {
    ReadFileResult: read_text,
    ReadManyFilesResult: read_many_text,
    EditResult: edit_lines,
    SafePatchResult: patch_lines,
    ApplyPatchResult: apply_patch_lines,
    AgentStatusResult: agent_status_lines,
    AtomicResult: atomic_lines,
    HunkPlanResult: hunk_plan_lines,
    ApplyResult: applied_hunk_lines,
    OverwriteResult: overwrite_lines,
    ListHunksResult: list_hunks_lines,
    DiscardHunkResult: lambda r: r.message,
    CheckpointCreateResult: checkpoint_create_lines,
    CheckpointListResult: checkpoint_list_lines,
    CheckpointDiffResult: checkpoint_diff_lines,
    CheckpointRestoreResult: checkpoint_restore_lines,
    UndoResult: undo_lines,
    ShowResult: show_lines,
    HistoryResult: history_text,
    BlameResult: blame_text,
    StatsResult: stats_text,
}
_VIEWS: dict[str, Callable[[Any], str]] = {
    method: _typed(kind, _BY_RESULT[kind])
    for method, kind in TOOL_RESULTS.items()
    if kind in _BY_RESULT
}


# --- errors ---------------------------------------------------------------------------------


def error_text(error: RequestError) -> str:
    """An error reply as the model reads it: everything it needs to retry at once, with
    every `details.x` of the daemon's words pointed at what this text prints."""
    shown = _shown(error.details)
    action = _words(error.hint, shown, "above") if error.hint else None
    lines = error_lines(error, action, say=lambda m: _words(m, shown, "below"))
    lines[0] = lines[0].replace("editjournal: ", "error ", 1)
    lines += _latest_state(error.details.get("latest_file_state"))
    lines += [
        f"  {key}: {_value(error.details[key])}" for key, how in shown.items() if how == _OTHERS
    ]
    return click.unstyle("\n".join(lines))


_OTHERS = "other"  # (a marker: a detail shown as `key: value`; see `_shown`)


def _shown(details: dict[str, Any]) -> dict[str, str]:
    """Each detail this text prints -> how the message may name it: a view's own words
    (`the delta`), or its key, printed as `key: value` at the end (`_OTHERS`)."""
    shown: dict[str, str] = {}
    for key, value in details.items():
        if key in _SHOWN_DETAILS:
            if key == "safety_warnings" and isinstance(value, list) and len(value) == 1:
                shown[key] = "the warning in the message"  # one alone is the message
            elif value and (key != "safety_warnings" or isinstance(value, list)):
                shown[key] = "the file as it is now" if key == "latest_file_state" else key
        elif _value(value) is not None:
            shown[key] = _OTHERS
    return {k: shown[k] for k in sorted(shown, key=lambda k: shown[k] == _OTHERS)}


def _value(value: Any) -> str | None:
    """A detail short enough to print on one line (a scalar, or a list of them)."""
    if isinstance(value, list) and all(isinstance(v, str | int | float) for v in value):
        text = ", ".join(map(str, value)) if value else None
    elif isinstance(value, str | int | float | bool):
        text = str(value)
    else:
        return None
    return text if text is not None and len(text) <= MAX_DETAIL_CHARS else None


def _words(message: str, shown: dict[str, str], where: str) -> str:
    """`details.x` in the daemon's words -> what this text shows of x `where`."""

    def say(m: re.Match[str]) -> str:
        key = m.group(1)
        if key not in shown:
            noun = plain_message(m.group(0), "\0").replace(" \0", "")
            return f"{key if noun == m.group(0) else noun} (not in this reply)"
        if shown[key] == _OTHERS:
            return f"{key} ({where})"
        if key in ("safety_warnings", "latest_file_state"):
            return shown[key] if "message" in shown[key] else f"{shown[key]} ({where})"
        said = plain_message(m.group(0), where)
        return f"{key} (not in this reply)" if said == m.group(0) else said

    return re.sub(r"details\.(\w+)", say, message)


def _latest_state(state: Any) -> list[str]:
    """safe_patch refusals carry the file as it is: what to make the next diff from."""
    if not isinstance(state, dict):
        return []
    head = (
        f"  the file as it is now: {state.get('file_path')} version {state.get('version')}"
        f" sha256 {state.get('sha256')}" + ("" if state.get("exists", True) else " (no file)")
    )
    content = state.get("content")
    return [head] if content is None else [head, "  content:", str(content)]
