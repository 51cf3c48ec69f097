"""The one catalogue of error codes a user of editjournal can meet.

Every error that crosses the wire is a code from `ErrorCode` plus a message,
details, a suggested action and a hint. The hint is what to do in words, with
any call to make spelt `method({...})`; the suggested action is the seeds'
machine token where a seed names one for the code (`anchor_stale`:
`"re-read_file"`, which harnesses written against the seed key on), else the
hint's sentence again. Inside the daemon errors travel as
`ToolError` exceptions; the server turns them into wire `Error` values at the
edge, and the client turns them back into `RequestError`. Never raise a bare
`ValueError` for something the caller did: add a code here instead.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

from editjournal.schemas.suggestions import SUGGESTIONS
from editjournal.schemas.wire import Error


class ErrorCode(str, enum.Enum):
    """Stable, snake_case codes. Never rename one: journals and clients keep them."""

    # envelope and protocol
    BAD_REQUEST = "bad_request"
    UNKNOWN_METHOD = "unknown_method"
    INVALID_PARAMS = "invalid_params"
    INTERNAL_ERROR = "internal_error"
    REQUEST_TOO_LARGE = "request_too_large"
    IDEMPOTENCY_KEY_REUSED = "idempotency_key_reused"
    # workspace access
    PATH_OUTSIDE_WORKSPACE = "path_outside_workspace"
    FILE_NOT_FOUND = "file_not_found"
    IS_A_DIRECTORY = "is_a_directory"
    BINARY_FILE = "binary_file"
    NOT_UTF8 = "not_utf8"
    FILE_TOO_LARGE = "file_too_large"
    FILE_TOO_MANY_LINES = "file_too_many_lines"
    PERMISSION_DENIED = "permission_denied"
    PATH_PROTECTED = "path_protected"
    HARD_LINKED = "hard_linked"
    DIRECTORY_NOT_PRIVATE = "directory_not_private"
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
    REGEX_TIMEOUT = "regex_timeout"
    SECTION_NOT_FOUND = "section_not_found"
    SECTION_AMBIGUOUS = "section_ambiguous"
    # prepared hunks (prepare_* / apply_file_modification) and write access
    HUNK_NOT_FOUND = "hunk_not_found"
    HUNK_EXPIRED = "hunk_expired"
    WRONG_OWNER = "wrong_owner"
    # the caller has the hunk's agent name but not the credential it was prepared with
    HUNK_IDENTITY_MISMATCH = "hunk_identity_mismatch"
    HUNK_ALREADY_APPLIED = "hunk_already_applied"
    HUNK_KIND_MISMATCH = "hunk_kind_mismatch"
    APPLY_REJECTED = "apply_rejected"
    CONTENT_LOOKS_LIKE_DIFF = "content_looks_like_diff"
    WRITE_ACCESS_DENIED = "write_access_denied"
    CONFIG_INVALID = "config_invalid"
    # checkpoints and undo
    CHECKPOINT_NOT_FOUND = "checkpoint_not_found"
    CHECKPOINT_EXISTS = "checkpoint_exists"
    NOTHING_TO_UNDO = "nothing_to_undo"
    UNDO_CONFLICT = "undo_conflict"
    # a plain undo whose write was made under the caller's name with another credential
    WRITE_IDENTITY_MISMATCH = "write_identity_mismatch"
    # the journal
    JOURNAL_CORRUPT = "journal_corrupt"
    JOURNAL_UNAVAILABLE = "journal_unavailable"
    DISK_FULL = "disk_full"
    # the daemon was stopping when the request came (or while it waited, parked): not handled
    DAEMON_STOPPING = "daemon_stopping"
    # audit: show, history, blame, read_file(at_version), replay
    UNKNOWN_SEQ = "unknown_seq"
    FILE_NOT_IN_JOURNAL = "file_not_in_journal"
    VERSION_NOT_STORED = "version_not_stored"
    # sent by the daemon: a write met an outside save, a read's budget, a read-only file
    WRITE_DISPLACED = "write_displaced"
    READ_BUDGET_EXCEEDED = "read_budget_exceeded"
    READ_ONLY_FILE = "read_only_file"
    # client side (never sent by the daemon): no daemon, no answer, no workspace (or one
    # too broad to serve), run files not to be trusted; and a daemon's start-up refusal
    # (another one serves)
    DAEMON_UNAVAILABLE = "daemon_unavailable"
    TIMEOUT = "timeout"
    WORKSPACE_NOT_FOUND = "workspace_not_found"
    WORKSPACE_TOO_BROAD = "workspace_too_broad"
    UNTRUSTED_RUN_FILE = "untrusted_run_file"
    DAEMON_ALREADY_RUNNING = "daemon_already_running"
    # the fleet (`editjournal ship`, `editjournal fleet`; never the daemon): a PostgreSQL
    # server that cannot be used, a schema newer than this code, a workspace another
    # shipper is shipping now, a local journal that no longer continues its shipped copy,
    # a shipped copy without the contents `fleet blame` needs
    FLEET_UNAVAILABLE = "fleet_unavailable"
    FLEET_SCHEMA_TOO_NEW = "fleet_schema_too_new"
    SHIPPER_BUSY = "shipper_busy"
    JOURNAL_DIVERGED = "journal_diverged"
    BLOBS_NOT_SHIPPED = "blobs_not_shipped"
    # `editjournal git-notes` (never the daemon): git, or the repository, does not allow
    # what was asked (no commits, a shallow clone's boundary, not a repository, no git)
    GIT_REFUSED = "git_refused"


@dataclass(frozen=True)
class ErrorSpec:
    """What a code means and what the caller should do about it: the `hint` in these
    fixed words unless `schemas.suggestions` makes it from the error's details (its real
    path, seq, checkpoint). A call is spelt `method({...})`, so each surface can name it
    in its own terms (the CLI: its command). `token` is the seeds' `suggested_action`
    for the code, where a seed names one: it stays on the wire as the seed spells it."""

    summary: str
    hint: str
    token: str | None = None


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
    ErrorCode.REQUEST_TOO_LARGE: ErrorSpec(
        "The request frame is larger than the daemon's frame limit (details.size and"
        " details.limit in bytes); nothing of it was read.",
        "send smaller requests (split the change), or restart the daemon with a larger"
        " --max-file-size (the frame limit follows it)",
    ),
    ErrorCode.IDEMPOTENCY_KEY_REUSED: ErrorSpec(
        "The idempotency_key was already used by this agent for a different request;"
        " nothing was done.",
        "use a fresh key for every distinct request; reuse a key only to retry the same one",
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
        "convert it to UTF-8 outside editjournal (with iconv, say), or leave it alone",
    ),
    ErrorCode.FILE_TOO_LARGE: ErrorSpec(
        "The file is larger than the daemon's size limit (details.size and details.limit in"
        " bytes).",
        "restart the daemon with a higher limit (editjournal stop && editjournal start"
        " --max-file-size 16MiB), or skip the file",
    ),
    ErrorCode.FILE_TOO_MANY_LINES: ErrorSpec(
        "The file has more lines than the daemon's line limit (details.lines and"
        " details.limit); anchoring it would stall every agent.",
        "restart the daemon with a higher limit (editjournal stop && editjournal start"
        " --max-file-lines 500000), or skip the file",
    ),
    ErrorCode.PERMISSION_DENIED: ErrorSpec(
        "The daemon may not read or write the file.", "check the file's permissions"
    ),
    ErrorCode.PATH_PROTECTED: ErrorSpec(
        "The path is inside .git/: a hook or config written there runs code on the next git"
        " command, so the daemon never writes it.",
        "change git's files with git itself",
    ),
    ErrorCode.HARD_LINKED: ErrorSpec(
        "The file has other hard links (st_nlink > 1): replacing it would split it from them,"
        " and one of them may be outside the workspace.",
        "write a copy without links (cp it, then mv the copy over it), or edit it outside"
        " editjournal",
    ),
    ErrorCode.DIRECTORY_NOT_PRIVATE: ErrorSpec(
        "A directory the daemon keeps private (.editjournal/ or the runtime socket directory)"
        " is owned by another user or writable by others; the daemon will not trust or chmod it.",
        "check who made it; remove it (or chmod 700 it if it is yours) and start again",
    ),
    ErrorCode.INVALID_RANGE: ErrorSpec(
        "The requested line range is malformed or out of order.", "use range 'START-END', 1-based"
    ),
    ErrorCode.ANCHOR_STALE: ErrorSpec(
        "An anchor matches no line of the file: the file changed since it was read.",
        "read the file again for fresh anchors (read_file with hashes: true)",
        token="re-read_file",  # seed 000: "suggested_action: \"re-read_file\""
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
        "check details.safety_warnings, or pass skip_safety_check: true",
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
    ErrorCode.REGEX_TIMEOUT: ErrorSpec(
        "A match: regex anchor took longer than its time limit (0.25 s a request, plus 3 µs a"
        " line of the file) to search the file, as a pattern with nested repeats can; nothing"
        " was planned.",
        'use a simpler pattern (no nested repeats such as (a|aa)+), or match "contains"',
    ),
    ErrorCode.SECTION_NOT_FOUND: ErrorSpec(
        "update_section found no markdown header matching section_header; nothing was written.",
        'use one of details.headers exactly (e.g. "## Current State")',
    ),
    ErrorCode.SECTION_AMBIGUOUS: ErrorSpec(
        "Several markdown headers match section_header; nothing was written.",
        'give the header with its level ("## Name"), or make the headers distinct',
    ),
    ErrorCode.HUNK_NOT_FOUND: ErrorSpec(
        "No prepared hunk has that hunk_id (hunk_ids are made by the daemon; a discarded"
        " hunk is gone).",
        "prepare the change again, or see your pending hunks: list_hunks({})",
    ),
    ErrorCode.HUNK_EXPIRED: ErrorSpec(
        "The prepared hunk outlived its time to live (details.expires_at_ms); nothing was written.",
        "prepare the change again",
    ),
    ErrorCode.WRONG_OWNER: ErrorSpec(
        "The hunk was prepared, or the write announced (check_write), by another agent: only"
        " that agent may apply, re-plan or discard the hunk, or claim the write"
        " (details.announced_by); nothing was done.",
        "prepare your own hunk; claim only a write your own check_write announced",
    ),
    ErrorCode.HUNK_IDENTITY_MISMATCH: ErrorSpec(
        "The hunk was prepared under this agent name by a client holding another credential"
        " (another connection, process or session using the same name): a name alone does"
        " not make a hunk yours; nothing was done.",
        "prepare your own hunk (the client that prepared this one may apply or discard it);"
        " give each agent session a name of its own",
    ),
    ErrorCode.HUNK_ALREADY_APPLIED: ErrorSpec(
        "The hunk was applied already (details.applied_seq); a hunk applies at most once.",
        "read the file to see it; prepare a new hunk for a further change",
    ),
    ErrorCode.HUNK_KIND_MISMATCH: ErrorSpec(
        "existing_hunk_id names a hunk of another prepare kind; a hunk is re-planned only by"
        " the tool that made it.",
        "leave existing_hunk_id out to prepare a new hunk",
    ),
    ErrorCode.APPLY_REJECTED: ErrorSpec(
        "Lines the plan relies on changed since it was prepared (details.conflicts names who"
        " changed them); nothing was written.",
        "prepare it again against the file as details.delta shows it",
    ),
    ErrorCode.CONTENT_LOOKS_LIKE_DIFF: ErrorSpec(
        "overwrite_entire_file's content looks like a diff or patch; nothing was written.",
        'to store the text as it is, pass content_format: "text"; to change part of the'
        " file, prepare the change (prepare_file_*) and apply it (apply_file_modification)",
    ),
    ErrorCode.WRITE_ACCESS_DENIED: ErrorSpec(
        "The workspace's .editjournal/config.toml does not let this agent write; nothing was"
        " written.",
        "ask whoever owns the workspace, or use an agent name that may write",
    ),
    ErrorCode.CONFIG_INVALID: ErrorSpec(
        "The workspace's .editjournal/config.toml cannot be read (details.error says where).",
        "fix .editjournal/config.toml (see README: Workspace configuration)",
    ),
    ErrorCode.CHECKPOINT_NOT_FOUND: ErrorSpec(
        "No checkpoint has that id (its seq) or name; nothing was written.",
        "see the checkpoints there are: checkpoint_list({})",
    ),
    ErrorCode.CHECKPOINT_EXISTS: ErrorSpec(
        "A checkpoint of that name exists already (names are unique); nothing was recorded.",
        "choose another name, or leave name out for one made from the seq",
    ),
    ErrorCode.NOTHING_TO_UNDO: ErrorSpec(
        "There is no applied write to undo: the agent never wrote the file, or the seq"
        " named is not a write to it.",
        "see the file's writes (history, with the file's path)",
    ),
    ErrorCode.UNDO_CONFLICT: ErrorSpec(
        "Lines the write changed were changed again since (details.conflicts names those"
        " events: seq, agent, kind, lines); nothing was written.",
        "undo the later writes first, or edit the file as it is now (read_file shows it)",
    ),
    ErrorCode.WRITE_IDENTITY_MISMATCH: ErrorSpec(
        "A plain undo takes back only your own latest write, and the latest write to the"
        " file under this agent name was made by a client holding another credential"
        " (another connection, process or session using the same name); nothing was"
        " written.",
        "name the write to take back: undo with the path and the seq this refusal names"
        " (journaled as yours, as any undo of another agent's write)",
    ),
    ErrorCode.JOURNAL_CORRUPT: ErrorSpec(
        "The journal's stored data is damaged: its SQLite file is malformed (cut short,"
        " bytes overwritten), a blob does not match its SHA-256, or (at"
        " start-up, which then refuses) the hash chain is broken at a seq or disagrees with"
        " .editjournal/chain-anchor (events removed or the chain recomputed).",
        "run `editjournal verify` to see the damage; restore .editjournal/journal.db from a"
        " backup, or stop the daemon and move journal.db* and chain-anchor aside to start afresh",
    ),
    ErrorCode.UNKNOWN_SEQ: ErrorSpec(
        "No event has that seq: it is past the journal's last event.",
        "pick a seq no later than the journal's newest event",
    ),
    ErrorCode.FILE_NOT_IN_JOURNAL: ErrorSpec(
        "The journal has never recorded that file (as of that version): nothing to show.",
        "check the path (workspace-relative), or read the file first",
    ),
    ErrorCode.VERSION_NOT_STORED: ErrorSpec(
        "The file did not exist at that version, or its content then was not stored (an"
        " outside change to a file no agent had read keeps only its hash).",
        "see the versions whose content is stored (history, with the file's path)",
    ),
    ErrorCode.JOURNAL_UNAVAILABLE: ErrorSpec(
        "The journal could not record the request (locked by another process, disk full,"
        " ...); nothing was changed.",
        "retry; if it persists, see .editjournal/daemon.log and whatever holds journal.db",
    ),
    ErrorCode.DISK_FULL: ErrorSpec(
        "The disk (or a quota) ran out of space while the change was written or journaled;"
        " nothing was written and nothing was recorded.",
        "free space on the file system that holds the file or the journal, then retry",
    ),
    ErrorCode.DAEMON_STOPPING: ErrorSpec(
        "The daemon was stopping (details.reason: a signal's name, or the stop asked for)"
        " when this request came, or while it waited for its turn: it was not handled, and"
        " nothing was changed or recorded.",
        "send it again, any request (a write too: this one never ran): the next call finds"
        " the daemon that serves the workspace then, or starts one unless autostart is off"
        " (then `editjournal start`)",
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
    ErrorCode.WORKSPACE_TOO_BROAD: ErrorSpec(
        "The workspace is / or the home directory itself (where a command lands when run"
        " from there without --workspace): no daemon was started, as one would watch and"
        " journal everything under it.",
        "run the command in a project directory, or name one with --workspace DIR; to serve"
        " this directory anyway, start its daemon with"
        " `editjournal start --workspace DIR --allow-broad`",
    ),
    ErrorCode.UNTRUSTED_RUN_FILE: ErrorSpec(
        "A daemon's run file (daemon.json, a registry entry, the socket, daemon.log) or its"
        " directory is not this user's own, is a symlink, or may be written by others: the"
        " client does not use it (another user could make it point at his own process).",
        "check who made the file named in the message; remove it (and a foreign .editjournal/)"
        " and run the command again",
    ),
    ErrorCode.READ_ONLY_FILE: ErrorSpec(
        "The file has no write bit: the daemon neither replaces nor removes it, whoever it"
        " runs as (root too), as editors and rm ask first; nothing was changed.",
        "make it writable first (chmod u+w, in a shell) if it is meant to change",
    ),
    ErrorCode.READ_BUDGET_EXCEEDED: ErrorSpec(
        "This file was not read: the files before it in the same read_many_files already"
        " took the bytes one request may read (details.budget).",
        "read it in another request (read_file, or read_many_files with the paths not yet read)",
    ),
    ErrorCode.WRITE_DISPLACED: ErrorSpec(
        "An outside writer (an editor's save, an append) changed the file while this write"
        " was being put in place, on the lines this write changed: the outside content was"
        " kept and journaled (details.outside_seq), and this write is not in the file.",
        "read the file again (read_file with since_version shows the outside change) and"
        " redo the change over it",
    ),
    ErrorCode.FLEET_UNAVAILABLE: ErrorSpec(
        "The PostgreSQL server could not be used: not reachable, a refused login, or it"
        " went away; nothing was shipped twice or lost (details.url, password hidden).",
        "check the URL, the server and its credentials, then run the command again: it"
        " resumes where the server's copy ends",
    ),
    ErrorCode.FLEET_SCHEMA_TOO_NEW: ErrorSpec(
        "The server's editjournal schema is newer than this editjournal (details.server,"
        " details.ours); nothing was written.",
        "upgrade editjournal where it ships",
    ),
    ErrorCode.SHIPPER_BUSY: ErrorSpec(
        "Another `editjournal ship` is shipping this workspace to that server now;"
        " nothing was written.",
        "let the other one finish (or stop it); one shipper per workspace and server",
    ),
    ErrorCode.JOURNAL_DIVERGED: ErrorSpec(
        "The local journal no longer continues the copy shipped to the server: from"
        " details.seq on they differ (rewritten, truncated, or another workspace's with the"
        " same id); nothing was shipped, and the server's copy is untouched.",
        "compare them with `editjournal fleet verify --workspace .`; a copied workspace"
        " ships under its own id after `editjournal ship --new-identity`",
    ),
    ErrorCode.BLOBS_NOT_SHIPPED: ErrorSpec(
        "The shipped copy lacks contents the answer folds: events were shipped without"
        " --blobs (details.seq: the first version whose content is missing, details.blobs_seq:"
        " up to where every content was shipped); blaming without them would credit lines"
        " to the wrong event, so nothing was answered.",
        "run `editjournal ship --blobs` in that workspace: it sends the missing contents,"
        " those of the events shipped earlier too, and then ask again",
    ),
    ErrorCode.GIT_REFUSED: ErrorSpec(
        "git, or the repository, does not allow what was asked: no commits yet, a commit"
        " at a shallow clone's boundary, a revision that names no commit, not a repository,"
        " no git; nothing in the repository was changed.",
        "do what the message says (commit first, `git fetch --deepen=1`, name another"
        " revision), then run the command again",
    ),
}


SEED_TOKENS: frozenset[str] = frozenset(s.token for s in CATALOGUE.values() if s.token)


def hint_for(code: ErrorCode, details: dict[str, Any]) -> str:
    """What to do about `code`, in words: made from `details` when they hold what it
    needs, else the catalogue's fixed words."""
    make = SUGGESTIONS.get(code.value)
    return (make(details) if make else None) or CATALOGUE[code].hint


def suggested_action(code: ErrorCode, hint: str) -> str:
    """The wire's `suggested_action`: the seeds' token for `code`, else `hint` itself."""
    return CATALOGUE[code].token or hint


class EditJournalError(Exception):
    """Root of every exception editjournal raises on purpose."""


class ToolError(EditJournalError):
    """An error the caller caused or must act on; becomes a wire `Error`."""

    def __init__(
        self,
        code: ErrorCode,
        message: str,
        details: dict[str, Any] | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(f"{code.value}: {message}")
        self.code = code
        self.message = message
        self.details = details or {}
        self.hint = hint

    @property
    def hint(self) -> str:
        """The one given, else the code's, made from the details as they are now (an
        explanation added later — a delta, the path — changes what to do)."""
        return self._hint or hint_for(self.code, self.details)

    @hint.setter
    def hint(self, value: str | None) -> None:
        self._hint = value  # None: the code's own hint

    @property
    def suggested_action(self) -> str:
        """The seeds' token for the code, else the hint."""
        return suggested_action(self.code, self.hint)

    def detached(self) -> ToolError:
        """This error without its traceback and chained causes, to be kept in a result.
        A traceback keeps every frame of the failed request alive — its frame, params
        and every text built from them — and the daemon's collector, tuned for latency,
        rarely looks for such cycles: 20 rejected 9 MB writes held gigabytes."""
        self.__traceback__ = None
        self.__cause__ = self.__context__ = None
        return self

    def to_wire(self) -> Error:
        """`hint` travels only beside a seed's token: where the suggested action is the
        sentence itself, a second copy would only make every refusal bigger (a client
        reads the hint from `suggested_action` then, as from an older daemon)."""
        hint = self.hint
        action = suggested_action(self.code, hint)
        return Error(
            code=self.code.value,
            message=self.message,
            details=self.details,
            suggested_action=action,
            hint=hint if action != hint else None,
        )
