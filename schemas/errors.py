"""The one catalogue of error codes a user of editjournal can meet.

Every error that crosses the wire is a code from `ErrorCode` plus a message,
details and a suggested action. Inside the daemon errors travel as
`ToolError` exceptions; the server turns them into wire `Error` values at the
edge, and the client turns them back into `RequestError`. Never raise a bare
`ValueError` for something the caller did: add a code here instead.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

from editjournal.schemas.wire import Error


class ErrorCode(str, enum.Enum):
    """Stable, snake_case codes. Never rename one: journals and clients keep them."""

    # envelope and protocol
    BAD_REQUEST = "bad_request"
    UNKNOWN_METHOD = "unknown_method"
    INVALID_PARAMS = "invalid_params"
    INTERNAL_ERROR = "internal_error"
    # workspace access
    PATH_OUTSIDE_WORKSPACE = "path_outside_workspace"
    FILE_NOT_FOUND = "file_not_found"
    IS_A_DIRECTORY = "is_a_directory"
    BINARY_FILE = "binary_file"
    NOT_UTF8 = "not_utf8"
    FILE_TOO_LARGE = "file_too_large"
    PERMISSION_DENIED = "permission_denied"
    INVALID_RANGE = "invalid_range"
    # anchors and edits
    ANCHOR_STALE = "anchor_stale"
    ANCHOR_AMBIGUOUS = "anchor_ambiguous"
    ANCHOR_CONTEXT_AMBIGUOUS = "anchor_context_ambiguous"
    ANCHOR_LOW_ENTROPY = "anchor_low_entropy"
    INVALID_RANGE_ORDER = "invalid_range_order"
    OVERLAPPING_OPERATIONS = "overlapping_operations"
    SAFETY_CHECK_FAILED = "safety_check_failed"
    FILE_CHANGING = "file_changing"
    # patches
    STATE_MISMATCH = "state_mismatch"
    INVALID_DIFF = "invalid_diff"
    PATCH_FAILED = "patch_failed"
    # atomic text tools
    NO_MATCH = "no_match"
    MULTIPLE_MATCHES = "multiple_matches"
    SECTION_NOT_FOUND = "section_not_found"
    SECTION_AMBIGUOUS = "section_ambiguous"
    # the journal
    JOURNAL_CORRUPT = "journal_corrupt"
    JOURNAL_UNAVAILABLE = "journal_unavailable"
    # client side: raised by the client, never sent by the daemon
    DAEMON_UNAVAILABLE = "daemon_unavailable"
    TIMEOUT = "timeout"
    DAEMON_ALREADY_RUNNING = "daemon_already_running"
    WORKSPACE_NOT_FOUND = "workspace_not_found"


@dataclass(frozen=True)
class ErrorSpec:
    """What a code means and what the caller should do about it."""

    summary: str
    suggested_action: str


CATALOGUE: dict[ErrorCode, ErrorSpec] = {
    ErrorCode.BAD_REQUEST: ErrorSpec(
        "The frame could not be decoded as a request envelope.",
        "send a msgpack map {id, agent, method, params}",
    ),
    ErrorCode.UNKNOWN_METHOD: ErrorSpec(
        "The daemon has no method of that name.", "call one of details.known_methods"
    ),
    ErrorCode.INVALID_PARAMS: ErrorSpec(
        "A parameter is missing, mistyped or not allowed.", "fix the field named in the message"
    ),
    ErrorCode.INTERNAL_ERROR: ErrorSpec(
        "The daemon failed while handling the request; nothing was changed.",
        "report it with .editjournal/daemon.log",
    ),
    ErrorCode.PATH_OUTSIDE_WORKSPACE: ErrorSpec(
        "The path resolves outside the workspace.", "use a path inside the workspace"
    ),
    ErrorCode.FILE_NOT_FOUND: ErrorSpec("No such file.", "check the path"),
    ErrorCode.IS_A_DIRECTORY: ErrorSpec("The path is a directory.", "name a file"),
    ErrorCode.BINARY_FILE: ErrorSpec(
        "The file holds binary data: NUL bytes, or bytes that are neither UTF-8 nor text in"
        " another encoding (that is `not_utf8`).",
        "only text files are served",
    ),
    ErrorCode.NOT_UTF8: ErrorSpec(
        "The file is text in another encoding than UTF-8 (details.encoding names the one it"
        " looks like); only UTF-8 text is served.",
        "convert it to UTF-8 (e.g. `iconv -f ENCODING -t UTF-8`) or leave it alone",
    ),
    ErrorCode.FILE_TOO_LARGE: ErrorSpec(
        "The file is larger than the daemon's size limit (details.size and details.limit in"
        " bytes).",
        "restart the daemon with a higher limit (editjournal stop && editjournal start"
        " --max-file-size 16MiB), or skip the file",
    ),
    ErrorCode.PERMISSION_DENIED: ErrorSpec(
        "The daemon may not read or write the file.", "check the file's permissions"
    ),
    ErrorCode.INVALID_RANGE: ErrorSpec(
        "The requested line range is malformed or out of order.", "use range 'START-END', 1-based"
    ),
    ErrorCode.ANCHOR_STALE: ErrorSpec(
        "An anchor matches no line of the file: the file changed since it was read.",
        "re-read_file",
    ),
    ErrorCode.ANCHOR_AMBIGUOUS: ErrorSpec(
        "An anchor matches several lines.", "add occurrence (1-indexed) and line"
    ),
    ErrorCode.ANCHOR_CONTEXT_AMBIGUOUS: ErrorSpec(
        "A range endpoint matches several lines even after context resolution.",
        "choose a unique boundary anchor",
    ),
    ErrorCode.ANCHOR_LOW_ENTROPY: ErrorSpec(
        "The anchor targets a low-quality line (blank, brackets, boilerplate).",
        "use one of details.neighbor_anchors or a replace_range around it",
    ),
    ErrorCode.INVALID_RANGE_ORDER: ErrorSpec(
        "Both range endpoints resolve to the same line.", "use replace_line or delete_line"
    ),
    ErrorCode.OVERLAPPING_OPERATIONS: ErrorSpec(
        "Two operations of one batch touch the same line.", "merge them into one operation"
    ),
    ErrorCode.SAFETY_CHECK_FAILED: ErrorSpec(
        "The edit looked suspicious and was not written.",
        "check details.safety_warnings, or pass skip_safety_check",
    ),
    ErrorCode.FILE_CHANGING: ErrorSpec(
        "The file kept changing on disk while the edit was being written; nothing was written.",
        "retry once the other writer is done (read_file with since_version shows its changes)",
    ),
    ErrorCode.STATE_MISMATCH: ErrorSpec(
        "The file's SHA-256 is not base_content_sha256: it changed since that version was read.",
        "redo the diff against details.latest_file_state (when the journal knows your base,"
        " details.delta shows what changed since), or pass rebase: true when your hunks'"
        " lines were not touched",
    ),
    ErrorCode.INVALID_DIFF: ErrorSpec(
        "The unified diff is malformed, or a hunk's context or removed lines are not in the"
        " file; nothing was written.",
        "fix the hunk named in the message against details.latest_file_state",
    ),
    ErrorCode.PATCH_FAILED: ErrorSpec(
        "The located patch failed to apply for an unexpected reason; the file is untouched.",
        "review the diff for subtle errors; report it with .editjournal/daemon.log",
    ),
    ErrorCode.NO_MATCH: ErrorSpec(
        "edit_file's old_string occurs nowhere in the file (compared exactly, whitespace"
        " included; line endings are compared as \\n); nothing was written.",
        "copy old_string exactly from the file; details.similar_lines shows the closest"
        " lines with their anchors (a hint only, never applied)",
    ),
    ErrorCode.MULTIPLE_MATCHES: ErrorSpec(
        "edit_file's old_string occurs more often than expected_replacements allows (one by"
        " default); nothing was written.",
        "include more surrounding context to make it unique (details.lines lists where it"
        " occurs), or set expected_replacements to the number of places to change",
    ),
    ErrorCode.SECTION_NOT_FOUND: ErrorSpec(
        "update_section found no markdown header matching section_header; nothing was written.",
        'use one of details.headers exactly (e.g. "## Current State")',
    ),
    ErrorCode.SECTION_AMBIGUOUS: ErrorSpec(
        "Several markdown headers match section_header; nothing was written.",
        'give the header with its level ("## Name"), or make the headers distinct',
    ),
    ErrorCode.JOURNAL_CORRUPT: ErrorSpec(
        "The journal's stored data is damaged (a blob does not match its SHA-256).",
        "stop the daemon and restore .editjournal/journal.db from a backup;"
        " Journal.verify() reports what is damaged",
    ),
    ErrorCode.JOURNAL_UNAVAILABLE: ErrorSpec(
        "The journal could not record the request (locked by another process, disk full,"
        " ...); nothing was changed.",
        "retry; if it persists, see .editjournal/daemon.log and whatever holds journal.db",
    ),
    ErrorCode.DAEMON_UNAVAILABLE: ErrorSpec(
        "No daemon serves the workspace.", "run `editjournal start` or allow auto-start"
    ),
    ErrorCode.TIMEOUT: ErrorSpec(
        "The daemon did not answer in time.", "check `editjournal status` and the daemon log"
    ),
    ErrorCode.DAEMON_ALREADY_RUNNING: ErrorSpec(
        "Another daemon already serves this workspace.", "use it, or stop it first"
    ),
    ErrorCode.WORKSPACE_NOT_FOUND: ErrorSpec(
        "The workspace directory does not exist (or is not a directory); nothing was created.",
        "check --workspace / EDITJOURNAL_WORKSPACE, or create the directory first",
    ),
}


class EditJournalError(Exception):
    """Root of every exception editjournal raises on purpose."""


class ToolError(EditJournalError):
    """An error the caller caused or must act on; becomes a wire `Error`."""

    def __init__(
        self,
        code: ErrorCode,
        message: str,
        details: dict[str, Any] | None = None,
        suggested_action: str | None = None,
    ) -> None:
        super().__init__(f"{code.value}: {message}")
        self.code = code
        self.message = message
        self.details = details or {}
        self.suggested_action = suggested_action or CATALOGUE[code].suggested_action

    def to_wire(self) -> Error:
        return Error(
            code=self.code.value,
            message=self.message,
            details=self.details,
            suggested_action=self.suggested_action,
        )
