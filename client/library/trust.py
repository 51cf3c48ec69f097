"""Which run files the client believes: only this user's own, in this user's own directories.

A workspace may be shared (mode 0777) and `/tmp` is everyone's, so another local user
can plant `.editjournal/daemon.json` naming his own socket and any pid, a registry entry
in a runtime directory he made first, or `daemon.log` as a symlink to one of the
victim's files. The daemon refuses such directories; the client must too, before it
sends a request, signals a pid or appends to a log:

* a run file is read only when it and its directory are owned by this user, are not
  symlinks and cannot be written by group or others (opened `O_NOFOLLOW`, judged on
  the open fd);
* a socket is connected to only when it is this user's, in such a directory;
* a pid is signalled only when /proc says it is this user's editjournal daemon serving
  that workspace (`is_our_daemon`).

Anything else is `untrusted_run_file`, naming the file.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable
from pathlib import Path

from editjournal.client.library.errors import RequestError
from editjournal.schemas.errors import ErrorCode

_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
_OTHERS_WRITE = stat.S_IWGRP | stat.S_IWOTH
_DAEMON_MODULE = "editjournal.daemon"


class Untrusted(RequestError):
    """A run file or directory that is not this user's alone."""

    def __init__(self, path: Path | str, why: str) -> None:
        self.why = why
        super().__init__(
            ErrorCode.UNTRUSTED_RUN_FILE.value,
            f"{path} {why}: not trusted, nothing was sent to it",
            {"path": str(path)},
            f"check who made {path}; remove it (and a .editjournal/ that is not yours) and"
            " try again",
        )


def check_private_dir(directory: Path) -> None:
    """This user's own directory, not a symlink, writable by no one else."""
    info = os.lstat(directory)
    _judge(directory, info, stat.S_ISDIR, "directory")


def _in_private_dir(path: Path) -> None:
    """`path`'s directory is this user's alone (the refusal names `path`)."""
    try:
        check_private_dir(path.parent)
    except Untrusted as e:
        raise Untrusted(path, f"is in {path.parent}, which {e.why}") from None


def open_no_symlink(path: Path, flags: int, mode: int = 0o600) -> int:
    """`os.open` with O_NOFOLLOW: a symlink at `path` is `Untrusted`, never followed."""
    try:
        return os.open(path, flags | os.O_NOFOLLOW, mode)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise Untrusted(path, "is a symlink") from None
        raise


def read_trusted(path: Path) -> bytes | None:
    """The bytes of run file `path`, when it and its directory are this user's alone;
    None when there is none. `Untrusted` otherwise."""
    try:
        fd = open_no_symlink(path, _READ)
    except (FileNotFoundError, NotADirectoryError):
        return None
    try:
        _in_private_dir(path)
        _judge(path, os.fstat(fd), stat.S_ISREG, "regular file")
        chunks = []
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def check_socket(address: str) -> None:
    """An ipc socket this user made, in a directory of this user's alone."""
    if not address.startswith("ipc://"):
        return  # tcp: authenticated by CURVE keys, not by the file system
    path = Path(address.removeprefix("ipc://"))
    _in_private_dir(path)
    _judge(path, os.lstat(path), stat.S_ISSOCK, "socket")


def open_log(path: Path) -> int:
    """The daemon log for appending, never through a symlink, in a private directory."""
    check_private_dir(path.parent)
    fd = open_no_symlink(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    try:
        _judge(path, os.fstat(fd), stat.S_ISREG, "regular file")
    except Untrusted:
        os.close(fd)
        raise
    return fd


def is_our_daemon(pid: int, workspace: str) -> bool:
    """Whether `pid` is this user's editjournal daemon serving `workspace` (from /proc):
    `stop` signals nothing else, whatever a run file says."""
    proc = Path(f"/proc/{pid}")
    try:
        owner = os.stat(proc).st_uid
        argv = (proc / "cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    if owner != os.geteuid():
        return False
    words = [os.fsdecode(word) for word in argv]
    if _DAEMON_MODULE not in words or "--workspace" not in words:
        return False
    given = words[words.index("--workspace") + 1 :][:1]
    return bool(given) and os.path.realpath(given[0]) == os.path.realpath(workspace)


def _judge(path: Path, info: os.stat_result, is_kind: Callable[[int], bool], kind: str) -> None:
    if stat.S_ISLNK(info.st_mode):
        raise Untrusted(path, "is a symlink")
    if not is_kind(info.st_mode):
        raise Untrusted(path, f"is not a {kind}")
    if info.st_uid != os.geteuid():
        raise Untrusted(path, f"is owned by uid {info.st_uid}, not by you (uid {os.geteuid()})")
    if info.st_mode & _OTHERS_WRITE:
        raise Untrusted(path, f"may be written by others ({stat.filemode(info.st_mode)})")
