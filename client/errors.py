"""Exceptions the client raises: an error reply becomes a `RequestError`."""

from __future__ import annotations

from typing import Any, TypeVar

from editjournal.schemas.errors import CATALOGUE, EditJournalError, ErrorCode
from editjournal.schemas.wire import Error

E = TypeVar("E", bound="RequestError")


class RequestError(EditJournalError):
    """The daemon answered with an error, or could not be reached at all.

    `code` is a value of `schemas.errors.ErrorCode` (as a string, so codes of a
    newer daemon still arrive intact).
    """

    def __init__(
        self,
        code: str,
        message: str,
        details: dict[str, Any] | None = None,
        suggested_action: str | None = None,
        seq: int | None = None,
    ) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.details = details or {}
        self.suggested_action = suggested_action
        self.seq = seq

    @classmethod
    def from_wire(cls, error: Error, seq: int | None = None) -> RequestError:
        return cls(error.code, error.message, error.details, error.suggested_action, seq)

    @classmethod
    def local(cls: type[E], code: ErrorCode, message: str, **details: Any) -> E:
        """An error the client itself detected (no daemon, timeout)."""
        return cls(code.value, message, details, CATALOGUE[code].suggested_action)


class DaemonUnavailable(RequestError):
    """No daemon serves the workspace and none could be started."""


class WorkspaceNotFound(DaemonUnavailable):
    """The workspace directory does not exist: no daemon can serve it, none was started."""


class RequestTimeout(RequestError):
    """The daemon did not answer within the client's timeout."""
