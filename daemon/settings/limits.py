"""The daemon's resource limits: how much one request or one file may cost.

One thread serves every agent, so one agent's huge request is every agent's wait
(a 1,000,000-line file took 14 s to read with hashes and ~950 MB per edit; a
`read_many_files` of 200,000 paths held another agent's ping for 23 s). Each limit
here bounds one such cost and is refused with its own error code:

- `frame_bytes`: a request frame larger than this is `request_too_large`, answered
  before anything decodes it. It follows the file size limit (a `write_file` of a
  whole file, an `edit_file` with old and new text), so raising one raises the
  other. libzmq drops frames over twice this (`zmq.MAXMSGSIZE`) without reading them.
- `file_lines`: a file with more lines is `file_too_many_lines`, before it is parsed.
- a text field longer than the file size limit (a `write_file` content, an `edit`
  operation's content) is `file_too_large` as soon as the params are decoded, before a
  handler builds anything from it (`check_text_fields`).
- `cache_bytes`: the parsed-text cache's estimated memory (see `daemon.files.textcache`).
- `journaled_text`: a rejected request's text fields are journaled up to this many
  characters, then by length and SHA-256 — a rejection must not cost its payload.

(The paths of one `read_many_files` are capped in the schema, `MAX_PATHS_PER_READ`, as
are `edit`'s operations and `check_write`'s edits, `MAX_OPERATIONS`. The hunks of one
`safe_patch` or `apply_patch`, `MAX_HUNKS`, are counted here (`check_hunks`): from the
diff's `@@` lines before it is parsed, then exactly once it is.)
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any

import msgspec

from editjournal.schemas.errors import ErrorCode, ToolError
from editjournal.schemas.tools import MAX_HUNKS
from editjournal.schemas.units import format_binary_size, format_size, limit_that_fits

MIB = 1024 * 1024
DEFAULT_FILE_LINES = 200_000
DEFAULT_CACHE_BYTES = 256 * MIB
JOURNALED_TEXT = 4096


@dataclass(frozen=True)
class Limits:
    """The limits of one daemon (command-line options of `python -m editjournal.daemon`)."""

    frame_bytes: int = 2 * 8 * MIB + MIB
    file_lines: int = DEFAULT_FILE_LINES
    cache_bytes: int = DEFAULT_CACHE_BYTES
    journaled_text: int = JOURNALED_TEXT

    @classmethod
    def for_file_size(cls, max_file_size: int, **others: Any) -> Limits:
        """Limits whose frame fits two whole files of `max_file_size` plus params."""
        return cls(frame_bytes=2 * max_file_size + MIB, **others)


def count_lines(text: str) -> int:
    """The lines of `text` as the parser counts them (LF, CRLF and CR end a line),
    counted without parsing: milliseconds for 8 MB of text, where parsing takes seconds."""
    ends = text.count("\n") + text.count("\r") - text.count("\r\n")
    return ends + (bool(text) and text[-1] not in "\r\n")


def check_line_count(lines: int, limit: int, path: str | None = None) -> None:
    """`file_too_many_lines` when `lines` is over `limit`."""
    if lines > limit:
        subject = f"{path} has" if path else "the content has"
        raise ToolError(
            ErrorCode.FILE_TOO_MANY_LINES,
            f"{subject} {lines:,} lines, over the daemon's limit of {limit:,}",
            {"path": path, "lines": lines, "limit": limit},
        )


def clip_text(value: Any, limit: int = JOURNALED_TEXT) -> Any:
    """`value` with every string longer than `limit` cut to its start plus its length
    and SHA-256: what a rejected request's payload is journaled as."""
    if isinstance(value, str) and len(value) > limit:
        digest = hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()
        return f"{value[:limit]}...[clipped: {len(value)} chars, sha256 {digest}]"
    if isinstance(value, dict):
        return {k: clip_text(v, limit) for k, v in value.items()}
    if isinstance(value, list):
        return [clip_text(v, limit) for v in value]
    return value


_BOTH_SIDES = {"unified_diff": 2}  # a diff may carry a whole file's old and new text


def check_text_fields(params: Any, limit: int) -> None:
    """`file_too_large` when a text field of `params` (or of a struct in one of its lists,
    such as `edit`'s operations) is longer than `limit`: no file may hold it, and splitting
    it into lines would cost every agent's wait for nothing."""
    for name, value in _text_fields(params):
        if len(value) > limit * _BOTH_SIDES.get(name, 1):
            raise ToolError(
                ErrorCode.FILE_TOO_LARGE,
                f"`{name}` is {format_size(len(value))}, more than a file may hold (the"
                f" limit is {format_binary_size(limit)}); nothing was done",
                {"field": name, "size": len(value), "limit": limit},
                "restart the daemon with a higher limit: editjournal stop && editjournal start"
                f" --max-file-size {limit_that_fits(len(value))}",
            )


def _text_fields(params: Any, depth: int = 0) -> list[tuple[str, str]]:
    if not isinstance(params, msgspec.Struct) or depth > 1:
        return []
    found: list[tuple[str, str]] = []
    for name in params.__struct_fields__:
        value = getattr(params, name)
        if isinstance(value, str):
            found.append((name, value))
        elif isinstance(value, list):
            for i, item in enumerate(value):
                found.extend((f"{name}[{i}].{k}", v) for k, v in _text_fields(item, depth + 1))
    return found


# the last `@@` line of each stack of them: a V4A chunk's headers, or a unified hunk's one
_HUNK_HEADER = re.compile(r"^@@[^\n]*\n(?!@@)", re.MULTILINE)


def hunk_headers(text: str) -> int:
    """How many hunks `text` starts with an `@@` line, counted without parsing it (a
    regex pass over the text): never more than a parser finds, so a diff refused by
    this count is over the cap for sure."""
    return len(_HUNK_HEADER.findall(text))


def check_hunks(count: int, field: str, limit: int = MAX_HUNKS) -> None:
    """`invalid_params` when one request carries more than `limit` hunks: each is located
    in the file and carried over newer content on its own, and one thread serves every
    agent (20,000 one-line hunks held another agent's ping for 72 s)."""
    if count > limit:
        raise ToolError(
            ErrorCode.INVALID_PARAMS,
            f"{count:,} hunks, over the limit of {limit:,} per request; nothing was written"
            f" - at `$.params.{field}`",
            {"field": f"$.params.{field}", "hunks": count, "limit": limit},
            f"split the change into requests of at most {limit:,} hunks each",
        )
