"""Files named relative to a held directory fd: how start-up recovery touches the workspace.

Recovery (`daemon.landing.pendingwrites`) walks to a write's directory through the
workspace's confined walk (`Workspace.locate_real`) and then reads, renames and
removes only relative to that held directory, never through a full path and never
through a link: a directory swapped for a link while the daemon was down cannot
redirect anything. These are those operations, kept in the file-access layer.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import logging
import os
import stat
from pathlib import Path

from editjournal.daemon.files.pathjudge import STATE_DIR_NAME
from editjournal.daemon.files.tempfiles import TEMP_PREFIX, prepare_temp

ABSENT = "absent"  # what `content_sha` says when there is no such file
NOT_REGULAR = "not-regular"  # ... of a link, a directory, a FIFO
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
_CHUNK = 1024 * 1024
_SKIPPED_DIRS = frozenset({".git", STATE_DIR_NAME})

log = logging.getLogger("editjournal")


def content_sha(directory: int, name: str) -> str:
    """SHA-256 of the bytes of regular file `name` in `directory`, never through a link;
    ABSENT when there is none, NOT_REGULAR for a link or anything else."""
    try:
        fd = os.open(name, _READ_FLAGS, dir_fd=directory)
    except (FileNotFoundError, NotADirectoryError):
        return ABSENT
    except OSError as e:
        if e.errno in (errno.ELOOP, errno.EMLINK):  # a link: never read through it
            return NOT_REGULAR
        raise
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            return NOT_REGULAR
        digest = hashlib.sha256()
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def remove(directory: int, name: str) -> None:
    """Remove `name` (a link itself, as `rm` does), if it is there."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(name, dir_fd=directory)


def replace(directory: int, source: str, target: str) -> None:
    """Rename `source` over `target`, both in `directory`, then make it durable."""
    os.replace(source, target, src_dir_fd=directory, dst_dir_fd=directory)
    os.fsync(directory)


def write(directory: int, name: str, data: bytes, rel: str) -> None:
    """Put `data` at `name` durably: a temp file (the replaced file's owner and mode),
    fsynced, renamed over it, the directory fsynced. `rel` names it in errors."""
    try:
        existing: os.stat_result | None = os.stat(name, dir_fd=directory, follow_symlinks=False)
    except FileNotFoundError:
        existing = None
    if existing is not None and not stat.S_ISREG(existing.st_mode):
        existing = None
    temp, _ = prepare_temp(directory, data, existing, rel)
    replace(directory, temp, name)


def rename(directory: int, source: str, target: str) -> None:
    os.rename(source, target, src_dir_fd=directory, dst_dir_fd=directory)


def sync(directory: int) -> None:
    os.fsync(directory)


def remove_temps(root: Path) -> int:
    """Remove every `.editjournal-tmp-*` file in the workspace (not in .git/ or our state).
    Each relative to its held directory, never following a link (`os.fwalk`)."""
    removed = 0
    for _, subdirs, files, directory in os.fwalk(root):
        subdirs[:] = [d for d in subdirs if d not in _SKIPPED_DIRS]
        for name in files:
            if name.startswith(TEMP_PREFIX):
                try:
                    os.unlink(name, dir_fd=directory)
                except OSError as e:
                    log.warning("could not remove leftover temp file %s: %s", name, e)
                    continue
                removed += 1
    if removed:
        log.info("removed %d leftover temp file(s) of a crashed run", removed)
    return removed
