"""The temp files a write is prepared in, and the names displaced files are moved to.

A write never touches its target until the last step: the new content is written to
an exclusive temp file in the target's own directory (so the rename that lands it
stays on one file system), with the replaced file's owner and mode, and fsynced
unless the group commit's round does it (`PreparedWrite.sync`). Both kinds of name
carry a prefix the watcher ignores and start-up recognises: a stray temp file is
removed (`daemon.files.held.remove_temps`), a displaced file never is.

Everything here is relative to a held directory fd (`daemon.files.confined`), never a
path, so a directory swapped for a link cannot redirect a create.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat as stat_mod
from typing import BinaryIO

from editjournal.daemon.files.fileio import translate
from editjournal.schemas.errors import ErrorCode, ToolError

TEMP_PREFIX = ".editjournal-tmp-"
# A file a write displaced while its content is judged: never removed by start-up cleanup
DISPLACED_PREFIX = ".editjournal-displaced-"
NEW_FILE_MODE = 0o644  # the kernel applies the umask to it at creation

_O_BINARY = getattr(os, "O_BINARY", 0)  # Windows: never translate newlines
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_TEMP_ATTEMPTS = 16


def prepare_temp(
    directory: int, data: bytes, existing: os.stat_result | None, rel: str, durable: bool = True
) -> tuple[str, int]:
    """Write `data` to a temp file in the held `directory`; return its name and mtime_ns."""
    fd, temp = _create_temp(directory, rel)
    try:
        with os.fdopen(fd, "wb") as handle:  # owns fd from here on, closes it on error
            mtime_ns = _fill_temp(handle, data, existing, durable)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(temp, dir_fd=directory)
        if isinstance(exc, OSError):
            raise translate(exc, rel) from exc
        raise
    return temp, mtime_ns


def displaced_name() -> str:
    return f"{DISPLACED_PREFIX}{secrets.token_hex(8)}"


def _create_temp(directory: int, rel: str) -> tuple[int, str]:
    """Create an exclusive temp file; mode 0o644 so the kernel applies the umask.

    Not `tempfile.mkstemp`: it creates 0o600, and reading the umask to widen it
    again (`os.umask` set-and-restore) is racy in a threaded daemon.
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_BINARY | _O_CLOEXEC | _O_NOFOLLOW
    for _ in range(_TEMP_ATTEMPTS):
        temp = f"{TEMP_PREFIX}{secrets.token_hex(8)}"
        try:
            return os.open(temp, flags, NEW_FILE_MODE, dir_fd=directory), temp
        except FileExistsError:
            continue
        except OSError as exc:
            raise translate(exc, rel) from exc
    raise ToolError(
        ErrorCode.INTERNAL_ERROR, f"could not create a temp file beside {rel}", {"path": rel}
    )


def _fill_temp(
    handle: BinaryIO, data: bytes, existing: os.stat_result | None, durable: bool = True
) -> int:
    """Write, carry over owner and mode, fsync (if `durable`); return the final mtime_ns."""
    handle.write(data)
    handle.flush()
    fd = handle.fileno()
    if existing is not None:
        _copy_owner_and_mode(fd, existing)
    if durable:
        os.fsync(fd)
    return os.fstat(fd).st_mtime_ns


def _copy_owner_and_mode(fd: int, existing: os.stat_result) -> None:
    """Keep the replaced file's permission bits and its owner.

    chown first: changing the owner clears setuid/setgid bits that chmod restores.
    """
    if hasattr(os, "fchown") and (existing.st_uid, existing.st_gid) != _owner(fd):
        os.fchown(fd, existing.st_uid, existing.st_gid)  # `replaceable` said it may
    if hasattr(os, "fchmod"):
        os.fchmod(fd, stat_mod.S_IMODE(existing.st_mode))


def _owner(fd: int) -> tuple[int, int]:
    info = os.fstat(fd)
    return info.st_uid, info.st_gid
