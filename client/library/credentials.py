"""The credentials short-lived clients keep, so one agent stays one identity across processes.

A request's `agent` is a name anyone may write; its `credential` (schemas/wire.py) is
what binds the agent's prepared hunks, plain undo and idempotency keys to whoever made
them. A `Client` object makes one for itself; but the CLI runs one process per
command and a command hook one per tool call, and an agent's second command must be
able to apply the hunk its first prepared. So those keep the credential in this
user's runtime directory, one per workspace and agent name (a hook's name holds its
harness session id, so a session keeps its own): `identities/<digest>`, 0600 in a 0700
directory, linked into place whole so two processes starting at once agree on one.

What it proves is bounded by who can read that file: this user's processes can
(docs/guarantees.md).

A kept credential lives while it is used: each use marks the file (its mtime, at most
once a day), and one left unused for KEEP_DAYS is removed by the next CLI command or
hook that keeps one (a sweep of the directory at most once a day, `.swept` saying
when). A hook session's credential is dead once its session ends, and a CLI agent's
name unused for that long gets a new identity: what it made under the old one (a
hunk, which expires within hours; a write a plain `undo` would take back) is then
another client's, as it is for any client (`undo` naming the seq still works).

A file or directory that is not this user's alone (client/library/trust.py) is refused
`untrusted_run_file`, never read or written through.
It never talks to the daemon.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
import time
from pathlib import Path

from editjournal.client.library.trust import (
    Untrusted,
    check_private_dir,
    open_no_symlink,
    read_trusted,
)
from editjournal.schemas.endpoint import user_runtime_dir
from editjournal.schemas.wire import MIN_CREDENTIAL_LEN, new_credential

IDENTITY_DIR = "identities"
KEEP_DAYS = 14  # a kept credential unused this long is removed
DAY_S = 86_400.0
SWEPT = ".swept"  # its mtime: when the directory was last swept
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


def credential_file(root: Path, agent: str) -> Path:
    """Where the credential of `agent` in workspace `root` is kept."""
    key = f"{root}\x00{agent}".encode()
    return user_runtime_dir() / IDENTITY_DIR / hashlib.blake2b(key, digest_size=16).hexdigest()


def kept_credential(root: Path, agent: str) -> str:
    """The credential this user keeps for `agent` in `root`: the one kept, or a new one
    kept from now on. `Untrusted` when the file or its directories are not this user's
    alone, or the file could be read by others."""
    path = credential_file(root, agent)
    _private_dirs(path.parent)
    for _ in range(2):  # made by another process between the read and the link: read again
        found = _read(path)
        if found:
            _mark_used(path)
            sweep(path.parent)
            return found
        made = new_credential()
        if _create(path, made):
            sweep(path.parent)
            return made
    raise Untrusted(path, "holds no credential")


def sweep(directory: Path, now: float | None = None, *, force: bool = False) -> list[str]:
    """Remove the kept credentials of `directory` unused for KEEP_DAYS (and temp files a
    killed process left), at most once a day unless `force`; the names removed. Only
    this user's regular files are removed: the directory is checked private first. Best
    effort: a file another process removes or uses meanwhile, or any OS error, never
    fails the command that keeps a credential."""
    try:
        return _sweep(directory, time.time() if now is None else now, force)
    except OSError:
        return []


def _sweep(directory: Path, now: float, force: bool) -> list[str]:
    marker = directory / SWEPT
    try:
        if not force and now - marker.stat(follow_symlinks=False).st_mtime < DAY_S:
            return []
    except FileNotFoundError:
        pass
    marker.touch(mode=0o600)
    os.utime(marker, (now, now), follow_symlinks=False)
    removed: list[str] = []
    with os.scandir(directory) as entries:
        for entry in entries:
            try:
                info = entry.stat(follow_symlinks=False)
            except FileNotFoundError:  # another process's sweep, or a temp file linked
                continue
            if entry.name == SWEPT or not stat.S_ISREG(info.st_mode):
                continue
            keep_s = DAY_S if entry.name.startswith(".") else KEEP_DAYS * DAY_S  # a temp file
            if info.st_uid == os.getuid() and now - info.st_mtime > keep_s:
                Path(entry.path).unlink(missing_ok=True)
                removed.append(entry.name)
    return removed


def _mark_used(path: Path) -> None:
    """The file's mtime says when it was last used; refreshed once a day at most."""
    now = time.time()
    with contextlib.suppress(OSError):  # swept by another process meanwhile: kept anew next
        if now - os.stat(path, follow_symlinks=False).st_mtime > DAY_S:
            os.utime(path, (now, now), follow_symlinks=False)


def _private_dirs(directory: Path) -> None:
    """The runtime directory and its `identities/`, made 0700 when missing, checked."""
    directory.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    check_private_dir(directory.parent)
    directory.mkdir(mode=0o700, exist_ok=True)
    check_private_dir(directory)


def _read(path: Path) -> str | None:
    data = read_trusted(path)
    if data is None:
        return None
    info = os.stat(path, follow_symlinks=False)
    if info.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise Untrusted(path, f"may be read by others ({stat.filemode(info.st_mode)})")
    text = data.decode("ascii", "replace").strip()
    return text if len(text) >= MIN_CREDENTIAL_LEN else None


def _create(path: Path, credential: str) -> bool:
    """Keep a new credential at `path`, whole or not at all: written to a file of its
    own, then linked to `path` (which fails if another process kept one first: False)."""
    temp = path.with_name(f".{path.name}.{os.getpid()}.{new_credential()[:8]}")
    fd = open_no_symlink(temp, _CREATE)
    try:
        try:
            os.write(fd, credential.encode())
        finally:
            os.close(fd)
        os.link(temp, path)
    except FileExistsError:
        return False
    finally:
        temp.unlink(missing_ok=True)
    return True
