"""What a failure of SQLite under the journal means: damaged, or only unavailable.

Why: the journal's database can fail in two ways that call for different answers.
A malformed file (SQLITE_CORRUPT, SQLITE_NOTADB: truncated, overwritten with random
bytes) will not heal by retrying: it is `journal_corrupt`, and the person must run
`editjournal verify` and restore it. Anything else (locked past the busy timeout, an
I/O error, the file gone, the disk full) is `journal_unavailable`: nothing was
changed, and a retry may work. This module only classifies and words them; it never
opens, repairs or retries anything.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from editjournal.schemas.errors import ErrorCode, ToolError

# SQLite's primary result codes for a file that is not a sound database; the extended
# codes (SQLITE_CORRUPT_INDEX, ...) carry them in their low byte
# (SQLITE_CORRUPT 11, SQLITE_NOTADB 26: numbers, as the stubs lack sqlite3's constants)
_MALFORMED = {11, 26}
_MALFORMED_TEXT = ("malformed", "not a database", "database corruption")


def sqlite_cause(error: BaseException | None) -> sqlite3.Error | None:
    """The sqlite3 error behind `error` (itself, or in its chain of causes), if any."""
    seen = 0
    while error is not None and seen < 20:  # a chain of causes is short; never loop
        if isinstance(error, sqlite3.Error):
            return error
        error, seen = error.__cause__ or error.__context__, seen + 1
    return None


def is_malformed(error: BaseException | None) -> bool:
    """Whether `error` comes from a journal file that is not a sound database."""
    cause = sqlite_cause(error)
    if cause is None:
        return False
    code = getattr(cause, "sqlite_errorcode", None)
    if isinstance(code, int) and code & 0xFF in _MALFORMED:
        return True
    return any(text in str(cause).lower() for text in _MALFORMED_TEXT)


def journal_code(error: BaseException) -> ErrorCode:
    """The code an error names itself (`error_code`: the journal's files changed under
    it, daemon.store.journalfiles), else `journal_corrupt` for a malformed database and
    `journal_unavailable` otherwise."""
    named = getattr(error, "error_code", None)
    if isinstance(named, ErrorCode):
        return named
    return ErrorCode.JOURNAL_CORRUPT if is_malformed(error) else ErrorCode.JOURNAL_UNAVAILABLE


def journal_failure(error: BaseException, doing: str) -> ToolError:
    """The catalogued error for a request whose journal access failed with `error`."""
    code = journal_code(error)
    cause = sqlite_cause(error) or error
    what = "is damaged" if code is ErrorCode.JOURNAL_CORRUPT else "could not be used"
    return ToolError(
        code,
        f"the journal {what} while {doing}, so nothing was changed: {cause}",
        {"stage": doing},
        advice(error),
    )


def advice(error: BaseException) -> str | None:
    """What to do, when the error knows better than its code's catalogued hint (a
    journal sealed because its files changed: daemon.store.journal), else None."""
    found = getattr(error, "advice", None)
    return found if isinstance(found, str) else None


def startup_refusal(error: BaseException, path: Path) -> str:
    """One line for a daemon that cannot start on the journal at `path` (no traceback)."""
    code = journal_code(error)
    cause = sqlite_cause(error) or error
    if code is ErrorCode.JOURNAL_CORRUPT:
        return (
            f"journal_corrupt: {path} is damaged ({cause}); nothing was appended. Run"
            " `editjournal verify` to see the damage; restore it from a backup, or stop the"
            f" daemon and move {path.name}* aside (keeping them as evidence) to start afresh"
        )
    return f"journal_unavailable: cannot use the journal {path}: {cause}"
