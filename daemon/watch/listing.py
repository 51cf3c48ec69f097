"""One directory of the workspace as the watcher sees it: its files and subdirectories.

The watcher's rescans and a checkpoint's walk of the tree list directories the same
way — by the same ignore rules, names that are not UTF-8 passed over — so that
"covered" and "watched" mean one thing. One `scandir` per directory: its entries
carry their type, so only files cost a stat.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from editjournal.daemon.files.encoding import is_utf8_name
from editjournal.daemon.watch.ignore import Ignorer

Listed = tuple[str, os.stat_result]


def list_directory(
    root: Path, base: str, ignorer: Ignorer, *, file_links: bool
) -> tuple[list[Listed], list[str]]:
    """(path, stat) of the regular, not-ignored files directly in `base`, and its
    not-ignored subdirectories (never through a symbolic link). `file_links`: a link
    to a regular file counts as that file (the watcher compares what it names); else
    links are passed over (a checkpoint leaves them alone)."""
    files: list[Listed] = []
    subdirs: list[str] = []
    prefix = base + "/" if base else ""
    try:
        entries = list(os.scandir(root / base))
    except OSError:
        return files, subdirs  # gone or unreadable meanwhile
    file_ignored = ignorer.files_ignored_in(base)
    for entry in entries:
        if not is_utf8_name(entry.name) or (not file_links and entry.is_symlink()):
            continue
        rel = prefix + entry.name
        try:
            if entry.is_dir(follow_symlinks=False):
                if not ignorer.ignored(rel, is_dir=True):
                    subdirs.append(rel)
                continue
            if file_ignored(entry.name):
                continue
            info = entry.stat(follow_symlinks=file_links)
        except OSError:
            continue
        if stat.S_ISREG(info.st_mode):
            files.append((rel, info))
    return files, subdirs
