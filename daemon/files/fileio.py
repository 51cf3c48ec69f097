"""What every workspace file operation shares: bounded reads, the regular-file rule, and
OSErrors translated into the catalogue.

The workspace (`daemon.files.workspace`), its path judge (`daemon.files.pathjudge`)
and a prepared write (`daemon.files.preparedwrite`) all open, read and rename files;
they meet the same failures and must report them the same way. So every `OSError`
they catch leaves through `translate`, as a `ToolError` from the catalogue, never as
a bare `OSError`. This module opens nothing itself: it reads from fds it is given.
"""

from __future__ import annotations

import errno
import os
import stat as stat_mod

from editjournal.schemas.errors import ErrorCode, ToolError

SWAP_RETRIES = 3  # a symlink swapped in between the walk and the open: walk again
READ_CHUNK = 1024 * 1024

_REFUSED = frozenset({errno.EACCES, errno.EPERM, errno.EROFS})
_BAD_NAME = frozenset({errno.ELOOP, errno.ENAMETOOLONG})
_NO_SPACE = frozenset({errno.ENOSPC, errno.EDQUOT})


def read_up_to(fd: int, limit: int) -> bytes:
    """Read until EOF or `limit` bytes, in binary: os.read may return short counts."""
    chunks: list[bytes] = []
    remaining = limit
    while remaining > 0:
        chunk = os.read(fd, min(remaining, READ_CHUNK))
        if not chunk:
            break
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def require_regular(info: os.stat_result, rel: str) -> None:
    """Only regular files are served: reading a FIFO or a device could hang or never end."""
    if stat_mod.S_ISDIR(info.st_mode):
        raise ToolError(ErrorCode.IS_A_DIRECTORY, f"{rel} is a directory", {"path": rel})
    if not stat_mod.S_ISREG(info.st_mode):
        raise ToolError(
            ErrorCode.BINARY_FILE,
            f"{rel} is not a regular file",
            {"path": rel, "reason": "not a regular file"},
        )


def kept_changing(rel: str) -> ToolError:
    return ToolError(
        ErrorCode.FILE_CHANGING,
        f"{rel} kept changing while it was opened (a symlink swapped over it); nothing was done",
        {"path": rel},
    )


def translate(exc: OSError, rel: str) -> ToolError:
    """Map an OSError onto the catalogue, so no bare OSError leaves the workspace."""
    details = {"path": rel}
    if isinstance(exc, (FileNotFoundError, NotADirectoryError)):
        return ToolError(ErrorCode.FILE_NOT_FOUND, f"{rel} does not exist", details)
    if isinstance(exc, IsADirectoryError):
        return ToolError(ErrorCode.IS_A_DIRECTORY, f"{rel} is a directory", details)
    if exc.errno in _REFUSED:
        return ToolError(ErrorCode.PERMISSION_DENIED, f"{rel}: {exc.strerror}", details)
    if exc.errno in _NO_SPACE:
        return ToolError(
            ErrorCode.DISK_FULL,
            f"no space left to write {rel} ({exc.strerror}); nothing was written",
            {"path": rel, "errno": errno.errorcode.get(exc.errno or 0, "unknown")},
        )
    if exc.errno in _BAD_NAME:
        return ToolError(ErrorCode.INVALID_PARAMS, f"{rel}: {exc.strerror}", details)
    name = errno.errorcode.get(exc.errno or 0, "unknown")
    return ToolError(
        ErrorCode.INTERNAL_ERROR,
        f"{rel}: {exc.strerror or exc}",
        {"path": rel, "errno": name},
    )
