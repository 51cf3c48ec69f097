"""The two renames that close the last window of a write: exchange and no-replace.

A plain `rename(temp, target)` replaces whatever is at `target` at that instant: an
editor's save (temp file + rename) or an `open(path, "a")` append that landed after
the daemon last looked is silently gone. Linux's `renameat2` can do better:

* `RENAME_EXCHANGE` swaps the two names atomically, so the displaced file stays
  readable under the temp file's name, and the daemon can compare it with the
  version its write was planned against (daemon/landing/writeround.py);
* `RENAME_NOREPLACE` refuses to clobber a name that appeared since (a file created
  where the daemon is creating one, or a name it moves a displaced file to).

Python has no wrapper; glibc (2.28+) does, reached through ctypes. Where the call
or the file system does not support it, `Unsupported` is raised and the caller
falls back to `os.replace` (README "Guarantees" says what that leaves open).
This module only renames, relative to a held directory fd; it decides nothing.
"""

from __future__ import annotations

import ctypes
import errno
import os

RENAME_NOREPLACE = 1
RENAME_EXCHANGE = 2
_UNSUPPORTED = frozenset({errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP})


class Unsupported(OSError):
    """The kernel, libc or file system offers no `renameat2` with these flags."""


def _load() -> ctypes._CFuncPtr | None:  # type: ignore[name-defined]
    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None
    function = getattr(libc, "renameat2", None)
    if function is not None:
        text, number = ctypes.c_char_p, ctypes.c_int
        function.argtypes = [number, text, number, text, ctypes.c_uint]
        function.restype = ctypes.c_int
    return function


_renameat2 = _load()


def _call(directory: int, source: str, destination: str, flags: int) -> None:
    if _renameat2 is None:
        raise Unsupported(errno.ENOSYS, "renameat2 is not available")
    result = _renameat2(directory, os.fsencode(source), directory, os.fsencode(destination), flags)
    if result == 0:
        return
    code = ctypes.get_errno()
    if code in _UNSUPPORTED:
        raise Unsupported(code, os.strerror(code))
    raise OSError(code, os.strerror(code), destination)


def exchange(directory: int, first: str, second: str) -> None:
    """Swap names `first` and `second` in the held `directory`; both must exist
    (FileNotFoundError otherwise)."""
    _call(directory, first, second, RENAME_EXCHANGE)


def rename_noreplace(directory: int, source: str, destination: str) -> None:
    """Rename `source` to `destination` unless that name exists (FileExistsError)."""
    _call(directory, source, destination, RENAME_NOREPLACE)
