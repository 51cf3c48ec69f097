"""Exceptions the client raises: an error reply becomes a `RequestError`."""

from __future__ import annotations

from typing import Any, ClassVar, TypeVar

from editjournal.schemas.errors import CATALOGUE, SEED_TOKENS, EditJournalError, ErrorCode
from editjournal.schemas.wire import Error

E = TypeVar("E", bound="RequestError")


class RequestError(EditJournalError):
    """The daemon answered with an error, or could not be reached at all.

    `code` is a value of `schemas.errors.ErrorCode` (as a string, so codes of a
    newer daemon still arrive intact). `suggested_action` is what a program keys on
    (the seeds' token, `"re-read_file"` for `anchor_stale`, else a sentence); `hint`
    is what to tell a reader. Where the suggested action is the sentence itself the
    daemon leaves `hint` out (as a daemon older than `hint` did): that sentence is
    the hint then.
    """

    def __init__(
        self,
        code: str,
        message: str,
        details: dict[str, Any] | None = None,
        suggested_action: str | None = None,
        seq: int | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.details = details or {}
        self.suggested_action = suggested_action
        self.seq = seq
        self.hint = hint if hint is not None else _sentence(suggested_action)

    @property
    def token(self) -> str | None:
        """The suggested action when it is a machine token rather than the hint's words."""
        action = self.suggested_action
        return action if action and action != self.hint else None

    codes: ClassVar[frozenset[str]] = frozenset()  # the codes raised as this class

    @classmethod
    def from_wire(cls, error: Error, seq: int | None = None) -> RequestError:
        """The error reply as the exception of its code's family (a code this client does
        not know — a newer daemon's — is a plain RequestError)."""
        raised = _BY_CODE.get(error.code, cls)
        return raised(
            error.code, error.message, error.details, error.suggested_action, seq, error.hint
        )

    @classmethod
    def local(cls: type[E], code: ErrorCode, message: str, **details: Any) -> E:
        """An error the client itself detected (no daemon, timeout)."""
        spec = CATALOGUE[code]
        return cls(code.value, message, details, spec.token or spec.hint, hint=spec.hint)


def _sentence(suggested_action: str | None) -> str | None:
    """An older daemon's suggested action as the hint: its words, never a seed token."""
    return None if suggested_action in SEED_TOKENS else suggested_action


class BadRequest(RequestError):
    """The request itself was wrong: undecodable, unknown method, a mistyped or too
    large param, an idempotency key reused for another request. Fix it, not the file."""

    codes = frozenset({"bad_request", "unknown_method", "invalid_params", "request_too_large",
                       "idempotency_key_reused"})  # fmt: skip


class FileRefused(RequestError):
    """The file cannot be served or written as asked: outside the workspace, missing, a
    directory, not text, too large, not writable, protected."""

    codes = frozenset({
        "path_outside_workspace", "file_not_found", "is_a_directory", "binary_file",
        "not_utf8", "file_too_large", "file_too_many_lines", "permission_denied",
        "path_protected", "hard_linked", "read_only_file", "write_access_denied",
        "read_budget_exceeded",
    })  # fmt: skip


class StaleWrite(RequestError):
    """The file changed under the write: lines it relies on were changed by someone
    else since the version it was planned on. `details.conflicts` names who,
    `details.delta` has the change with fresh anchors: retry from it."""

    codes = frozenset({"write_displaced", "file_changing"})


class StaleAnchor(StaleWrite):
    """`anchor_stale`: an anchor (or `old_string`, or section) relies on changed lines."""

    codes = frozenset({"anchor_stale"})


class StateMismatch(StaleWrite):
    """`state_mismatch`: a `safe_patch` base that is not the file's content now."""

    codes = frozenset({"state_mismatch"})


class ApplyRejected(StaleWrite):
    """`apply_rejected`: a prepared hunk's lines changed since it was prepared."""

    codes = frozenset({"apply_rejected"})


class UndoConflict(StaleWrite):
    """`undo_conflict`: the lines the undone write wrote changed since."""

    codes = frozenset({"undo_conflict"})


class AnchorProblem(RequestError):
    """An anchor or range that names no single line as asked: ambiguous, low-entropy,
    reversed, overlapping, out of range."""

    codes = frozenset({
        "anchor_ambiguous", "anchor_context_ambiguous", "anchor_low_entropy",
        "invalid_range_order", "overlapping_operations", "invalid_range",
    })  # fmt: skip


class NoMatch(RequestError):
    """Text to find was not found exactly once: `no_match`, `multiple_matches`, a
    section missing or ambiguous, a regex that ran out of time."""

    codes = frozenset({"no_match", "multiple_matches", "regex_timeout", "section_not_found",
                       "section_ambiguous"})  # fmt: skip


class ChangeRefused(RequestError):
    """The change itself was refused: an invalid or failing diff, a safety check, content
    that looks like a diff where text was expected."""

    codes = frozenset({"invalid_diff", "patch_failed", "safety_check_failed",
                       "content_looks_like_diff"})  # fmt: skip


class HunkProblem(RequestError):
    """A prepared hunk that cannot be applied as asked: unknown, expired, another agent's
    (or another client's of the same name), applied already, or of another kind."""

    codes = frozenset({"hunk_not_found", "hunk_expired", "wrong_owner", "hunk_already_applied",
                       "hunk_kind_mismatch", "hunk_identity_mismatch"})  # fmt: skip


class CheckpointProblem(RequestError):
    """A checkpoint or undo that cannot be done as asked."""

    codes = frozenset({"checkpoint_not_found", "checkpoint_exists", "nothing_to_undo",
                       "write_identity_mismatch"})  # fmt: skip


class JournalProblem(RequestError):
    """The journal cannot answer or record: corrupt, unavailable, disk full, an event or
    version it does not have, a config it cannot read."""

    codes = frozenset({
        "journal_corrupt", "journal_unavailable", "disk_full", "unknown_seq",
        "file_not_in_journal", "version_not_stored", "config_invalid",
    })  # fmt: skip


class FleetProblem(RequestError):
    """Shipping to PostgreSQL, or asking it (`editjournal ship`, `fleet`): a server that
    cannot be used, a schema too new, another shipper, a journal that diverged, a copy
    shipped without the contents an answer needs."""

    codes = frozenset({
        "fleet_unavailable", "fleet_schema_too_new", "shipper_busy", "journal_diverged",
        "blobs_not_shipped",
    })  # fmt: skip


class GitProblem(RequestError):
    """`editjournal git-notes`: git, or the repository, refused what was asked."""

    codes = frozenset({"git_refused"})


class DaemonProblem(RequestError):
    """The daemon, not the request: an internal error, a daemon that cannot be reached,
    started or trusted."""

    codes = frozenset({"internal_error", "daemon_already_running", "directory_not_private",
                       "untrusted_run_file"})  # fmt: skip


class DaemonUnavailable(DaemonProblem):
    """No daemon serves the workspace and none could be started."""

    codes = frozenset({"daemon_unavailable"})


class DaemonStopping(DaemonUnavailable):
    """The daemon was stopping when the request came, or while it waited parked: it was
    never handled, so nothing was changed, and sending it again is safe for any method
    (a write too). The next call finds the daemon serving then, or starts one unless
    autostart is off. A `DaemonUnavailable`, so code that handled a stop as that still
    does; unlike a daemon that died mid-request, there is no doubt it did not run."""

    codes = frozenset({"daemon_stopping"})


class WorkspaceNotFound(DaemonUnavailable):
    """The workspace directory does not exist: no daemon can serve it, none was started."""

    codes = frozenset({"workspace_not_found"})


class WorkspaceTooBroad(DaemonUnavailable):
    """The workspace is / or the home directory itself, and serving it was not asked for
    (`--allow-broad`): no daemon was started."""

    codes = frozenset({"workspace_too_broad"})


class RequestTimeout(DaemonProblem):
    """The daemon did not answer within the client's timeout."""

    codes = frozenset({"timeout"})


def _families(cls: type[RequestError]) -> list[type[RequestError]]:
    return [cls, *(c for sub in cls.__subclasses__() for c in _families(sub))]


# every code of the catalogue raised as exactly one class (tests/unit/test_client_errors.py)
_BY_CODE: dict[str, type[RequestError]] = {
    code: cls for cls in _families(RequestError) for code in cls.codes
}
