"""The text a model reads back from a tool call over MCP: compact, never pages of JSON.

A read shows its anchored rows (`LINE#ANCHOR|text`) under a one-line header;
an edit or a patch its one-line confirmation and the diff with new anchors;
an error its code, message, what it refers to (conflicts, the delta with
fresh anchors, neighbour anchors, candidates, the file as it is now) and the
suggested action. The structured reply travels beside this text as MCP
structured content, so nothing is lost by leaving fields out here. A tool
this module has no view for is shown as compact JSON. Reuses the CLI's
renderers in `render.py` with their terminal styles removed. Pure: no I/O.

Some clients show the model the structured content instead of this text
(Claude Code, VS Code), so `structured` makes it readable on its own: a read
with hashes carries its `rendered` rows, and the warnings ride along.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click
import msgspec

from editjournal.client.library.errors import RequestError
from editjournal.client.views.render import (
    agent_status_lines,
    apply_patch_lines,
    edit_lines,
    error_lines,
    patch_lines,
    plain_message,
)
from editjournal.schemas.tools import (
    AgentStatusResult,
    ApplyPatchResult,
    EditResult,
    ReadFileResult,
    ReadManyFilesResult,
    SafePatchResult,
)

MAX_DETAIL_CHARS = 200  # a scalar detail longer than this stays in structured content only
_SHOWN_DETAILS = {"conflicts", "delta", "neighbor_anchors", "candidates", "safety_warnings"}
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
        shown = show(msgspec.convert(result, kind))
        return shown if isinstance(shown, str) else "\n".join(shown)

    return view


_VIEWS: dict[str, Callable[[Any], str]] = {
    "read_file": _typed(ReadFileResult, read_text),
    "read_many_files": _typed(ReadManyFilesResult, read_many_text),
    "edit": _typed(EditResult, edit_lines),
    "safe_patch": _typed(SafePatchResult, patch_lines),
    "apply_patch": _typed(ApplyPatchResult, apply_patch_lines),
    "agent_status": _typed(AgentStatusResult, agent_status_lines),
}


# --- errors ---------------------------------------------------------------------------------


def error_text(error: RequestError) -> str:
    """An error reply as the model reads it: everything it needs to retry at once."""
    action = plain_message(error.hint, "above") if error.hint else None
    lines = error_lines(error, action, say=plain_message)  # calls stay tool calls
    lines[0] = lines[0].replace("editjournal: ", "error ", 1)
    lines += _latest_state(error.details.get("latest_file_state"))
    lines += _other_details(error.details)
    return click.unstyle("\n".join(lines))


def _latest_state(state: Any) -> list[str]:
    """safe_patch refusals carry the file as it is: what to make the next diff from."""
    if not isinstance(state, dict):
        return []
    head = (
        f"  latest_file_state: {state.get('file_path')} version {state.get('version')}"
        f" sha256 {state.get('sha256')}" + ("" if state.get("exists", True) else " (no file)")
    )
    content = state.get("content")
    return [head] if content is None else [head, "  content:", str(content)]


def _other_details(details: dict[str, Any]) -> list[str]:
    """Short scalar details the message may refer to (hunk, row, expected, found, ...)."""
    pairs = [
        f"{key}={value!r}"
        for key, value in details.items()
        if key not in _SHOWN_DETAILS
        and isinstance(value, str | int | float | bool)
        and len(repr(value)) <= MAX_DETAIL_CHARS
    ]
    return [f"  details: {', '.join(pairs)}"] if pairs else []
