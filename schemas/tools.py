"""Params and result Structs for every method the daemon serves.

`TOOL_PARAMS` maps each method name to its params Struct; the daemon builds
one typed decoder per entry and the client uses the same names. Params forbid
unknown fields, so a misspelt or misplaced field is an `invalid_params` error
that names it instead of being silently ignored.
"""

from __future__ import annotations

from typing import Annotated, Any, Union

import msgspec
from msgspec import Meta

from editjournal.schemas.wire import Error

PositiveInt = Annotated[int, Meta(ge=1)]
NonNegativeInt = Annotated[int, Meta(ge=0)]

DEFAULT_MAX_LINES = 2000


class Params(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """Base of every params Struct."""


class Result(msgspec.Struct, kw_only=True):
    """Base of every result Struct."""


# --- daemon methods ---------------------------------------------------------


class PingParams(Params):
    pass


class PingResult(Result):
    pong: bool
    pid: int
    version: str


class StatusParams(Params):
    pass


class StatusResult(Result):
    workspace: str
    pid: int
    version: str
    uptime_s: float
    event_count: int
    last_seq: int
    known_files: int
    agents: int
    state_digest: str  # equals the digest of a fold of the journal
    journal_path: str
    journal_bytes: int
    socket: str
    events_socket: str  # PUB: every committed event, topic = path + NUL
    log_path: str
    watcher: dict[str, Any] = {}  # state, paths_checked, outside_changes, rescans, ...


class LogParams(Params):
    path: str | None = None
    agent: str | None = None
    kind: str | None = None
    after_seq: NonNegativeInt = 0
    limit: Annotated[int, Meta(ge=1, le=100_000)] = 50


class LogEntry(Result):
    seq: int
    ts: int
    agent: str | None
    kind: str
    path: str | None
    summary: str
    hash: str
    body: dict[str, Any]


class LogResult(Result):
    events: list[LogEntry]
    last_seq: int


# --- reading ------------------------------------------------------------------


class ReadFileParams(Params):
    """`path` is required; `file_path` is its deprecated alias (path wins)."""

    path: str | None = None
    file_path: str | None = None
    hashes: bool = False
    range: str | None = None
    offset: PositiveInt | None = None
    limit: PositiveInt | None = None
    max_lines: PositiveInt = DEFAULT_MAX_LINES
    since_version: NonNegativeInt | None = None  # only what changed since this version


class AnchoredLine(Result):
    line: int
    hash: str
    quality: str
    text: str
    kind: str = "line"
    unique: bool = True


class ReadFileResult(Result):
    """A versioned read. `content` holds the lines served, with their endings and
    without the BOM; `sha256` is always of the whole file's bytes on disk."""

    file_path: str
    version: int
    sha256: str
    line_count: int
    content: str
    start_line: int
    end_line: int
    truncated: bool
    eol: str
    bom: bool
    final_newline: bool
    size: int
    lines: list[AnchoredLine] | None = None
    rendered: str | None = None
    # delta reads (since_version): content is "", `delta` holds the changed hunks with
    # fresh anchors, `lines` the changed lines; `unchanged` says nothing changed
    since_version: int | None = None
    unchanged: bool | None = None
    delta: str | None = None


class AgentStatusParams(Params):
    agent: str | None = None  # default: the calling agent


class FileSeen(Result):
    """One file an agent has seen: the version it saw and what changed since."""

    path: str
    version_seen: int
    sha256_seen: str
    lines_seen: tuple[int, int] | None
    current: bool
    current_version: int | None
    current_sha256: str | None  # None: the file was deleted
    changed_since: list[dict[str, Any]]
    # lines of the version seen that the agent was never shown (1-based, inclusive
    # ranges): outside a ranged read, or others' changes its own edit was carried over
    unseen_lines: list[tuple[int, int]] = []


class AgentStatusResult(Result):
    agent: str
    files: list[FileSeen]
    stale_files: int


class ReadManyFilesParams(Params):
    paths: Annotated[list[str], Meta(min_length=1)]
    hashes: bool = False
    max_lines: PositiveInt = DEFAULT_MAX_LINES


class ReadManyItem(Result):
    """One file of a `read_many_files`: a result, or the error that file got."""

    file_path: str
    ok: bool
    result: ReadFileResult | None = None
    error: Error | None = None


class ReadManyFilesResult(Result):
    files: list[ReadManyItem]


# --- editing ------------------------------------------------------------------------

# An anchor as read_file shows it: 4-16 hex digits, optionally with the `LINE#`
# prefix and the quality mark copied from a rendered row (`12#a1b2c3`, `3#b8c2a5~`).
Anchor = Annotated[str, Meta(pattern=r"^\s*(\d+#)?[0-9a-fA-F]{4,16}[~?]?\s*$")]


class Op(msgspec.Struct, kw_only=True, forbid_unknown_fields=True, tag_field="op"):
    """Base of the six anchored operations, tagged by `op`."""


class SingleLineOp(Op):
    """The four operations that name one line: by `hash`, with `occurrence` (1-indexed
    among several matches) and an advisory `line` to disambiguate."""

    hash: Anchor
    occurrence: PositiveInt | None = None
    line: PositiveInt | None = None


class ReplaceLine(SingleLineOp, tag="replace_line", kw_only=True):
    content: str


class InsertAfter(SingleLineOp, tag="insert_after", kw_only=True):
    content: str


class InsertBefore(SingleLineOp, tag="insert_before", kw_only=True):
    content: str


class DeleteLine(SingleLineOp, tag="delete_line"):
    pass


class ReplaceRange(Op, tag="replace_range"):
    start_hash: Anchor
    end_hash: Anchor
    content: str


class DeleteRange(Op, tag="delete_range"):
    start_hash: Anchor
    end_hash: Anchor


Operation = Union[  # noqa: UP007 - a runtime value
    ReplaceLine, InsertAfter, InsertBefore, DeleteLine, ReplaceRange, DeleteRange
]
SINGLE_ANCHOR_OPS = ("replace_line", "insert_after", "insert_before", "delete_line")
RANGE_OPS = ("replace_range", "delete_range")


class EditParams(Params, kw_only=True):
    """`path` is required (`file_path` is its deprecated alias); operations apply atomically."""

    path: str | None = None
    file_path: str | None = None
    operations: Annotated[list[Operation], Meta(min_length=1)]
    skip_safety_check: bool = False


class AutoCorrection(Result):
    type: str
    detail: str


class EditDetails(Result):
    writer_type: str
    baseline_continuity: str  # "clean" | "mixed"
    anchors_valid_through: int
    must_refresh_from_line: int


class WrittenResult(Result):
    """What every writing tool that names its file at the top reports (`edit` and the
    atomic tools): where the file stands now and what changed. `diff` shows the changed
    region with new anchors."""

    message: str
    file_path: str
    version: int
    sha256: str
    lines_before: int
    lines_after: int
    net_change: int
    anchors_valid_through: int
    must_refresh_from_line: int
    diff: str
    changed_lines: list[AnchoredLine]
    auto_corrections: list[AutoCorrection]
    safety_check: str  # "clean" | "skipped" | "overridden"
    details: EditDetails


class EditResult(WrittenResult):
    """An applied edit."""

    # set when the agent's anchors were resolved in an older snapshot and carried forward
    rebased_from_version: int | None = None
    rebased_over: list[dict[str, Any]] = []


# --- patching ------------------------------------------------------------------------

Sha256 = Annotated[str, Meta(pattern=r"^[0-9a-fA-F]{64}$")]


class SafePatchParams(Params, kw_only=True):
    """A unified diff of one file, locked by the SHA-256 of the content it was made from.

    `path` is required (`file_path` is its deprecated alias). `rebase: true` applies
    the diff over newer content when none of the lines it relies on changed since.
    """

    path: str | None = None
    file_path: str | None = None
    unified_diff: str
    base_content_sha256: Sha256
    rebase: bool = False
    include_content: bool = True  # false: latest_file_state without the whole content
    skip_safety_check: bool = False


class LatestFileState(Result):
    """The file as it is after the call (applied or not): what to patch next."""

    file_path: str
    version: int
    sha256: str  # of the whole file's bytes; the empty content's when it does not exist
    content: str | None = None  # the whole content (without a BOM); None: not asked for
    exists: bool = True


class HunkPlacement(Result):
    """Where a hunk was applied: the line its header stated and the line it was found at."""

    hunk: int
    header: str
    stated_line: int
    applied_line: int
    offset: int


class SafePatchResult(Result):
    """An applied patch (the seed's success / message / latest_file_state, and more)."""

    success: bool
    message: str
    latest_file_state: LatestFileState
    lines_before: int
    lines_after: int
    net_change: int
    hunks: list[HunkPlacement]
    diff: str  # the changed region with new anchors, as `edit` shows it
    changed_lines: list[AnchoredLine]
    anchors_valid_through: int
    must_refresh_from_line: int
    auto_corrections: list[AutoCorrection]
    safety_check: str  # "clean" | "skipped" | "overridden"
    details: EditDetails
    created: bool = False
    deleted: bool = False
    rebased_from_version: int | None = None
    rebased_over: list[dict[str, Any]] = []


# --- atomic text tools ------------------------------------------------------------------
# For agents that cannot hold a file in context: the daemon does the read-modify-write.


class EditFileParams(Params, kw_only=True):
    """Replace the exact text `old_string` with `new_string`: once, or exactly
    `expected_replacements` times (it must occur exactly that often)."""

    path: str
    old_string: Annotated[str, Meta(min_length=1)]
    new_string: str
    expected_replacements: PositiveInt | None = None
    skip_safety_check: bool = False


class AppendToFileParams(Params, kw_only=True):
    """Add `content` at the end of the file (created when missing)."""

    path: str
    content: str
    skip_safety_check: bool = False


class PrependToFileParams(Params, kw_only=True):
    """Add `content` at the start of the file (created when missing)."""

    path: str
    content: str
    skip_safety_check: bool = False


class UpdateSectionParams(Params, kw_only=True):
    """Replace the body of the markdown section `section_header` (e.g. "## Current State")."""

    path: str
    section_header: Annotated[str, Meta(min_length=1)]
    new_content: str
    skip_safety_check: bool = False


class WriteFileParams(Params, kw_only=True):
    """Create a file (and its directories) or fill it; replaces an existing file's content."""

    path: str
    content: str


class AtomicResult(WrittenResult):
    """An applied atomic text tool (edit_file, append/prepend, update_section, write_file)."""

    created: bool = False
    replacements: int | None = None  # edit_file: how many places were changed
    lines: list[tuple[int, int]] = []  # edit_file / update_section: lines written (1-based)
    separator_added: bool = False  # append/prepend: a newline was added between the two
    # write_file over content this agent had not seen: the changes it overwrote
    overwrote_unseen: list[dict[str, Any]] = []


def explain_validation(method: str, message: str) -> str | None:
    """A hint for the validation errors agents make most, e.g. mixing op fields."""
    if "matching regex" in message and "hash`" in message:
        return (
            "an anchor is 4-16 hex digits as read_file(hashes: true) shows it: a1b2c3 or 12#a1b2c3"
        )
    if method != "edit" or "unknown field" not in message:
        return None
    if "`start_hash`" in message or "`end_hash`" in message:
        return (
            "replace_line / delete_line / insert_after / insert_before take `hash` "
            "(one anchor); only replace_range / delete_range take start_hash + end_hash"
        )
    if "`hash`" in message or "`occurrence`" in message or "`line`" in message:
        return (
            "replace_range / delete_range take start_hash + end_hash; `hash`, "
            "`occurrence` and `line` belong to the single-anchor operations"
        )
    return None


TOOL_PARAMS: dict[str, type[Params]] = {
    "ping": PingParams,
    "status": StatusParams,
    "log": LogParams,
    "read_file": ReadFileParams,
    "read_many_files": ReadManyFilesParams,
    "edit": EditParams,
    "safe_patch": SafePatchParams,
    "agent_status": AgentStatusParams,
    "edit_file": EditFileParams,
    "append_to_file": AppendToFileParams,
    "prepend_to_file": PrependToFileParams,
    "update_section": UpdateSectionParams,
    "write_file": WriteFileParams,
}

TOOL_RESULTS: dict[str, type[Result]] = {
    "ping": PingResult,
    "status": StatusResult,
    "log": LogResult,
    "read_file": ReadFileResult,
    "read_many_files": ReadManyFilesResult,
    "edit": EditResult,
    "safe_patch": SafePatchResult,
    "agent_status": AgentStatusResult,
    "edit_file": AtomicResult,
    "append_to_file": AtomicResult,
    "prepend_to_file": AtomicResult,
    "update_section": AtomicResult,
    "write_file": AtomicResult,
}
