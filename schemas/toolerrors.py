"""Which error codes each method may answer with: one table the daemon, the guidance and
the tests read.

An agent learns what to do with a refusal only from its tool's guidance
(client/tools/guidance.py), so a code a tool can return that its guidance never names
leaves the agent guessing. `TOOL_ERRORS` says, per method, the codes it may answer
with: those every request can meet (`ANY_REQUEST`), those of reading a workspace file
(`READING`) and of the one writing path every writer shares (`WRITING`), and its own.
The daemon checks each refusal it sends against it (`declared`; daemon/runtime/server.py
logs a code its method does not declare, once per pair), and
`tests/unit/test_tool_errors.py` fails when a tool's guidance does not name a code
declared here, when a handler raises a code its method does not declare, or when the
catalogue gains a code that is neither declared for a method nor `NOT_A_TOOLS`.

Pure data: imports only the catalogue, does no I/O.
"""

from __future__ import annotations

from editjournal.schemas.errors import ErrorCode as E

# every request: its envelope and params, the journal that records it, a stopping daemon
ANY_REQUEST = frozenset({
    E.BAD_REQUEST, E.INVALID_PARAMS, E.INTERNAL_ERROR, E.REQUEST_TOO_LARGE,
    E.IDEMPOTENCY_KEY_REUSED, E.JOURNAL_CORRUPT, E.JOURNAL_UNAVAILABLE, E.DISK_FULL,
    E.DAEMON_STOPPING,
})  # fmt: skip
# a workspace path resolved (`.editjournal/` is unreachable: permission_denied)
PATH = frozenset({E.PATH_OUTSIDE_WORKSPACE, E.PERMISSION_DENIED})
# a workspace file read by path
READING = PATH | {
    E.FILE_NOT_FOUND, E.IS_A_DIRECTORY, E.BINARY_FILE, E.NOT_UTF8, E.FILE_TOO_LARGE,
    E.FILE_TOO_MANY_LINES,
}  # fmt: skip
# the one writing path (docs/DESIGN "One writing path"): access, the landing, the carry
WRITING = READING | {
    E.PATH_PROTECTED, E.HARD_LINKED, E.READ_ONLY_FILE, E.WRITE_ACCESS_DENIED,
    E.CONFIG_INVALID, E.FILE_CHANGING, E.WRITE_DISPLACED, E.ANCHOR_STALE,
}  # fmt: skip
ANCHORS = frozenset({
    E.ANCHOR_AMBIGUOUS, E.ANCHOR_CONTEXT_AMBIGUOUS, E.ANCHOR_LOW_ENTROPY,
    E.INVALID_RANGE_ORDER, E.OVERLAPPING_OPERATIONS,
})  # fmt: skip
# a prepare_* call that re-plans existing_hunk_id
REPLAN = frozenset({
    E.HUNK_NOT_FOUND, E.WRONG_OWNER, E.HUNK_IDENTITY_MISMATCH, E.HUNK_EXPIRED,
    E.HUNK_ALREADY_APPLIED, E.HUNK_KIND_MISMATCH,
})  # fmt: skip
TEXT_MATCH = frozenset({E.NO_MATCH, E.MULTIPLE_MATCHES})

# Codes no method answers with: the envelope's (no method to name) and the local ones,
# raised by the client, the CLI's offline commands or a daemon's start-up.
NOT_A_TOOLS = frozenset({
    E.UNKNOWN_METHOD, E.DAEMON_UNAVAILABLE, E.TIMEOUT, E.WORKSPACE_NOT_FOUND,
    E.WORKSPACE_TOO_BROAD, E.UNTRUSTED_RUN_FILE, E.DAEMON_ALREADY_RUNNING,
    E.DIRECTORY_NOT_PRIVATE, E.FLEET_UNAVAILABLE, E.FLEET_SCHEMA_TOO_NEW, E.SHIPPER_BUSY,
    E.JOURNAL_DIVERGED, E.BLOBS_NOT_SHIPPED, E.GIT_REFUSED,
})  # fmt: skip


def _codes(*parts: frozenset[E] | E) -> frozenset[E]:
    return frozenset().union(*(p if isinstance(p, frozenset) else {p} for p in parts))


PREPARE_AT_ANCHOR = _codes(
    READING,
    REPLAN,
    TEXT_MATCH,
    E.REGEX_TIMEOUT,
    E.ANCHOR_STALE,
    E.ANCHOR_AMBIGUOUS,
    E.ANCHOR_CONTEXT_AMBIGUOUS,
    E.ANCHOR_LOW_ENTROPY,
)
HUNK = _codes(E.HUNK_NOT_FOUND, E.WRONG_OWNER, E.HUNK_IDENTITY_MISMATCH, E.HUNK_ALREADY_APPLIED)

# fmt: off
_OWN: dict[str, frozenset[E]] = {
    "ping": frozenset(),
    "status": frozenset(),
    "log": PATH,
    "read_file": _codes(READING, E.INVALID_RANGE, E.UNKNOWN_SEQ, E.VERSION_NOT_STORED,
                        E.FILE_NOT_IN_JOURNAL),
    "read_many_files": _codes(READING, E.INVALID_RANGE, E.READ_BUDGET_EXCEEDED),
    "edit": _codes(WRITING, ANCHORS, E.SAFETY_CHECK_FAILED),
    "safe_patch": _codes(WRITING, E.STATE_MISMATCH, E.INVALID_DIFF, E.PATCH_FAILED,
                         E.SAFETY_CHECK_FAILED),
    "apply_patch": _codes(WRITING, E.INVALID_DIFF, E.NO_MATCH, E.SAFETY_CHECK_FAILED),
    "edit_file": _codes(WRITING, TEXT_MATCH, E.SAFETY_CHECK_FAILED),
    "append_to_file": WRITING,
    "prepend_to_file": WRITING,
    "update_section": _codes(WRITING, E.SECTION_NOT_FOUND, E.SECTION_AMBIGUOUS),
    "write_file": WRITING,
    "prepare_file_range_edit": _codes(READING, REPLAN, E.INVALID_RANGE),
    "prepare_file_append": _codes(READING, REPLAN),
    "prepare_file_insert_after": PREPARE_AT_ANCHOR,
    "prepare_file_insert_before": PREPARE_AT_ANCHOR,
    "prepare_file_block_replace": _codes(READING, REPLAN, TEXT_MATCH),
    "apply_file_modification": _codes(WRITING, HUNK, E.HUNK_EXPIRED, E.APPLY_REJECTED),
    "overwrite_entire_file": _codes(WRITING, E.CONTENT_LOOKS_LIKE_DIFF),
    "list_hunks": PATH,
    "discard_hunk": _codes(HUNK, E.HUNK_EXPIRED),
    "show": _codes(E.UNKNOWN_SEQ),
    "history": _codes(PATH, E.FILE_NOT_IN_JOURNAL),
    "blame": _codes(PATH, E.FILE_NOT_IN_JOURNAL, E.VERSION_NOT_STORED, E.UNKNOWN_SEQ),
    "stats": frozenset(),
    "agent_status": frozenset(),
    "checkpoint_create": _codes(PATH, E.CHECKPOINT_EXISTS),
    "prompt_checkpoint": frozenset(),
    "checkpoint_list": frozenset(),
    "checkpoint_diff": _codes(PATH, E.CHECKPOINT_NOT_FOUND),
    "checkpoint_restore": _codes(WRITING, E.CHECKPOINT_NOT_FOUND),
    "undo": _codes(WRITING, E.NOTHING_TO_UNDO, E.UNDO_CONFLICT, E.WRITE_IDENTITY_MISMATCH,
                   E.CHECKPOINT_NOT_FOUND),
    # a harness hook's (docs/harnesses.md), not an agent's tools
    "check_write": _codes(READING, E.ANCHOR_STALE, E.WRITE_ACCESS_DENIED, E.WRONG_OWNER,
                          E.CONFIG_INVALID),
    "claim_write": _codes(READING, E.WRONG_OWNER, E.WRITE_ACCESS_DENIED, E.CONFIG_INVALID),
    "shell_window": frozenset(),
}
# fmt: on

TOOL_ERRORS: dict[str, frozenset[E]] = {m: ANY_REQUEST | own for m, own in _OWN.items()}


def declared(method: str, code: str) -> bool:
    """Whether `method` declares `code` (a method not in the table: what any request
    can meet)."""
    return code in _VALUES.get(method, _ANY)


_VALUES = {m: frozenset(c.value for c in codes) for m, codes in TOOL_ERRORS.items()}
_ANY = frozenset(c.value for c in ANY_REQUEST)
