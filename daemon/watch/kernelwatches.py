"""Which workspace directories the kernel really watches for this process.

watchdog 7.1 adds a recursive watch directory by directory and silently skips
any directory it cannot watch, including when the inotify watch limit
(`fs.inotify.max_user_watches`) runs out: only a failure on the root reaches
the caller. A workspace with more directories than the limit allows would be
half watched with nothing said. The kernel lists every watch of an inotify
descriptor in `/proc/self/fdinfo`, so coverage is checked against the
kernel's own list rather than watchdog's private state.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from editjournal.daemon.files.encoding import is_utf8_name
from editjournal.daemon.watch.ignore import Ignorer

_PROC_FD = Path("/proc/self/fd")
_PROC_FDINFO = Path("/proc/self/fdinfo")
_KERNEL_MINOR_BITS = 20  # the kernel's dev_t is major << 20 | minor; userspace's is not
DirId = tuple[int, int]  # (device as the kernel writes it, inode)


def watched_dirs() -> set[DirId] | None:
    """Every (device, inode) this process holds an inotify watch on; None where the
    kernel does not say (not Linux, or /proc not mounted)."""
    if not _PROC_FDINFO.is_dir():
        return None
    watched: set[DirId] = set()
    for fd in os.listdir(_PROC_FD):
        try:
            if os.readlink(_PROC_FD / fd) != "anon_inode:inotify":
                continue
            info = (_PROC_FDINFO / fd).read_text()
        except OSError:
            continue  # closed meanwhile
        watched.update(_parse_fdinfo(info))
    return watched


def _parse_fdinfo(info: str) -> set[DirId]:
    """`inotify wd:1 ino:20c01f sdev:fe00000 mask:...` -> {(0xfe00000, 0x20c01f)}."""
    found: set[DirId] = set()
    for line in info.splitlines():
        if not line.startswith("inotify "):
            continue
        fields = dict(part.split(":", 1) for part in line.split()[1:] if ":" in part)
        found.add((int(fields["sdev"], 16), int(fields["ino"], 16)))
    return found


def dir_id(path: str | Path) -> DirId | None:
    try:
        st = os.stat(path, follow_symlinks=False)
    except OSError:
        return None  # gone meanwhile: nothing to watch
    dev = os.major(st.st_dev) << _KERNEL_MINOR_BITS | os.minor(st.st_dev)
    return dev, st.st_ino


def unwatched_dirs(root: Path, ignorer: Ignorer, tops: Iterable[str] = ("",)) -> list[str] | None:
    """Not-ignored directories at or under each of `tops` that have no watch
    (workspace-relative, "" for the root); None when the kernel cannot tell.
    The kernel's list is read once for all of them: it can hold a line per directory."""
    watched = watched_dirs()
    if watched is None:
        return None
    missing: list[str] = []
    for top in tops:
        for directory, subdirs, _files in os.walk(root / top):
            base = os.path.relpath(directory, root)
            base = "" if base == "." else base
            subdirs[:] = [
                d
                for d in subdirs
                if is_utf8_name(d)
                and not ignorer.ignored(f"{base}/{d}" if base else d, is_dir=True)
            ]
            found = dir_id(directory)
            if found is not None and found not in watched:
                missing.append(base)
    return missing
