"""The files that say "a daemon serves this workspace": lock, pidfile, endpoint —
and the state directory that holds them, with its own `.gitignore`.

The lock is taken before the socket is bound: a second `bind` to the same ipc
path silently steals it from the first daemon, so the flock — not the socket —
decides who serves. The state directory is 0700: the socket file's own mode
follows the umask, so the directory is the real protection -- and so one that
already exists must be ours and writable by nobody else, or the daemon refuses
to start (chmod-ing a directory another user made would not take it back: they
could still have planted a socket, or read what the daemon then writes there).
"""

from __future__ import annotations

import fcntl
import hashlib
import logging
import os
import stat
import time
from pathlib import Path

import zmq

from editjournal.schemas import PROTOCOL_VERSION
from editjournal.schemas.endpoint import (
    ENDPOINT_ENCODER,
    ENDPOINT_FILE,
    LOCK_FILE,
    PID_FILE,
    SOCKET_FILE,
    Endpoint,
    registry_entry,
    user_runtime_dir,
)
from editjournal.schemas.errors import ErrorCode, ToolError

log = logging.getLogger("editjournal")
GITIGNORE_FILE = ".gitignore"
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)  # run files are never written through a symlink
_GITIGNORE_TEXT = "# written by editjournal: nothing in this directory belongs in git\n*\n"


class AlreadyServed(ToolError):
    """Another live daemon holds this workspace's lock."""

    def __init__(self, state_dir: Path, pid: int | None) -> None:
        who = f"pid {pid}" if pid else "another process"
        lock = state_dir / LOCK_FILE
        message = f"workspace is already served by {who} (lock {lock})"
        super().__init__(ErrorCode.DAEMON_ALREADY_RUNNING, message, {"pid": pid, "lock": str(lock)})
        self.pid = pid


class NotPrivate(ToolError):
    """A directory the daemon must own alone is someone else's, or open to others."""

    def __init__(self, path: Path, why: str) -> None:
        super().__init__(
            ErrorCode.DIRECTORY_NOT_PRIVATE,
            f"{path} {why}: the daemon keeps its journal and socket there and will not"
            " trust it or chmod it",
            {"directory": str(path)},
            f"check who made {path}; remove it (or chmod 700 it if it is yours) and start again",
        )


def ensure_private_dir(path: Path) -> Path:
    """Create `path` (0700), or accept an existing one only if it is a real directory
    owned by this user that no one else may write; then make it 0700."""
    try:
        path.mkdir(mode=0o700, parents=True)
    except FileExistsError:
        check_private_dir(path)
    os.chmod(path, 0o700)
    return path


def check_private_dir(path: Path) -> None:
    info = os.lstat(path)
    if stat.S_ISLNK(info.st_mode):
        raise NotPrivate(path, "is a symlink")
    if not stat.S_ISDIR(info.st_mode):
        raise NotPrivate(path, "is not a directory")
    if info.st_uid != os.geteuid():
        raise NotPrivate(path, f"is owned by uid {info.st_uid}, not by uid {os.geteuid()}")
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        mode = stat.filemode(info.st_mode)
        raise NotPrivate(path, f"is writable by its group or by everyone ({mode})")


def ensure_state_dir(state_dir: Path) -> Path:
    """The workspace's `.editjournal/` (0700), with a `.gitignore` of `*` so that `git add -A`
    never commits the journal, the log or the run files. Created when missing (also in a
    state directory an older version made), never overwritten: a person may have edited it."""
    ensure_private_dir(state_dir)
    try:
        fd = os.open(state_dir / GITIGNORE_FILE, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return state_dir
    with os.fdopen(fd, "w") as out:
        out.write(_GITIGNORE_TEXT)
    return state_dir


def acquire_lock(state_dir: Path) -> int:
    """Hold an exclusive flock for the daemon's lifetime; the fd is the proof."""
    fd = os.open(state_dir / LOCK_FILE, os.O_RDWR | os.O_CREAT | _NOFOLLOW, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise AlreadyServed(state_dir, read_pid(state_dir)) from None
    _write_private(state_dir / PID_FILE, f"{os.getpid()}\n".encode())
    return fd


def read_pid(state_dir: Path) -> int | None:
    try:
        return int((state_dir / PID_FILE).read_text().strip())
    except (OSError, ValueError):
        return None


def socket_path(state_dir: Path) -> Path:
    """`.editjournal/daemon.sock`, or a per-user runtime dir when that path is too long
    (for the longer name beside it too: the PUB socket's `daemon-events.sock`)."""
    preferred = state_dir / SOCKET_FILE
    longest = state_dir / f"{preferred.stem}-events.sock"
    if len(str(longest).encode()) <= zmq.IPC_PATH_MAX_LEN:
        return preferred
    digest = hashlib.blake2b(str(state_dir).encode(), digest_size=8).hexdigest()
    return ensure_private_dir(user_runtime_dir()) / f"{digest}.sock"


def write_endpoint(state_dir: Path, endpoint: Endpoint) -> None:
    """Publish daemon.json, and its copy in the user's registry (for `editjournal list`)."""
    _write_private(state_dir / ENDPOINT_FILE, ENDPOINT_ENCODER.encode(endpoint))
    entry = registry_entry(endpoint.workspace)
    try:
        ensure_private_dir(entry.parent.parent)
        ensure_private_dir(entry.parent)
        _write_private(entry, ENDPOINT_ENCODER.encode(endpoint))
    except (OSError, NotPrivate) as e:  # a convenience for `list`: never a reason not to serve
        log.warning("could not register in %s: %s", entry.parent, e)


def _write_private(path: Path, data: bytes) -> None:
    """Atomically (0600): readers never see half a file."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.unlink(missing_ok=True)  # a leftover of a crash (or a planted link): never followed
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def make_endpoint(
    workspace: Path, socket: str, events: str, version: str, max_frame: int
) -> Endpoint:
    return Endpoint(
        pid=os.getpid(),
        workspace=str(workspace),
        socket=socket,
        events=events,
        version=version,
        protocol=PROTOCOL_VERSION,
        started_at_ms=time.time_ns() // 1_000_000,
        max_frame=max_frame,
    )


def remove_run_files(state_dir: Path, workspace: Path, *sockets: Path) -> None:
    """On clean shutdown: clients then know at once that nobody serves."""
    entry = registry_entry(str(workspace))
    for path in (state_dir / ENDPOINT_FILE, state_dir / PID_FILE, entry, *sockets):
        path.unlink(missing_ok=True)
