"""Said once: a harness hook that finds no daemon tells its session so once, not on every call.

A hook that finds no daemon serving the workspace and cannot start one allows the call
(it fails open, as an http hook whose connection is refused does) and says why on
stderr. Said on every prompt and every tool call, that line would bury the session's
own output; said never, a person would not know the journal stopped recording. So
each session is told once: the sessions told are listed in a marker in this user's
private runtime directory (one file per workspace), and the marker goes as soon as a
hook reaches a daemon of that workspace again, so the next time none serves every
session is told again.

Only this user's own files are believed (client/library/trust.py): a marker or a
directory someone else made is never read as "told" (the hook then says it, every
time), never written through, never followed as a symlink. Pure file handling; no
daemon, no harness payload.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from pathlib import Path

from editjournal.client.library.trust import (
    Untrusted,
    check_private_dir,
    open_no_symlink,
    read_trusted,
)
from editjournal.schemas.endpoint import user_runtime_dir

MARKER_DIR = "hooks-unserved"  # under the user's runtime directory (schemas/endpoint.py)
_APPEND = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


def marker(root: Path) -> Path:
    """The file listing the sessions told that no daemon serves `root`."""
    digest = hashlib.blake2b(str(root).encode("utf-8", "surrogatepass"), digest_size=8)
    return user_runtime_dir() / MARKER_DIR / digest.hexdigest()


def first_time(root: Path, agent: str) -> bool:
    """Whether `agent` (a harness session) is to be told now that no daemon serves
    `root`: True the first time, and it is remembered as told; False after. Anything
    that stops the marker from being read or written says it (True): never silence
    that could not be remembered."""
    path = marker(root)
    try:
        told = read_trusted(path)
    except (OSError, Untrusted):
        return True
    if told is not None and agent in told.decode("utf-8", "replace").splitlines():
        return False
    with contextlib.suppress(OSError, Untrusted):
        _remember(path, agent)
    return True


def reached(root: Path) -> None:
    """A hook reached a daemon of `root`: the next time none serves, every session is
    told again. One unlink, on every hook call that reaches a daemon (no marker: ENOENT)."""
    with contextlib.suppress(OSError):
        os.unlink(marker(root))


def _remember(path: Path, agent: str) -> None:
    """Add `agent` to the marker, in a directory that is this user's alone."""
    directory = path.parent
    with contextlib.suppress(FileExistsError):
        directory.mkdir(mode=0o700, parents=True)
    check_private_dir(directory)
    check_private_dir(directory.parent)
    fd = open_no_symlink(path, _APPEND)
    try:
        os.write(fd, agent.replace("\n", " ").encode("utf-8", "surrogatepass") + b"\n")
    finally:
        os.close(fd)
