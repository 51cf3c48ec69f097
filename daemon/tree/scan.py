"""Every file of the workspace the watcher would watch, listed a directory at a time.

A checkpoint covers the workspace as it is, not what the watcher has caught up
with, so it lists the tree itself — by the watcher's own ignore rules (`Ignorer`:
built-ins, `.gitignore`, `.editjournalignore`, `--ignore` patterns), so "covered"
means the same thing everywhere. The walk is resumable (`step` until `done`): a
100,000-file tree is listed in slices between requests, never in one long hold of
the daemon's thread. One `scandir` per directory; only regular files cost a stat.
Symbolic links are neither followed nor listed (a checkpoint leaves them alone),
nor are names that are not UTF-8 (no request could name them): the listing is the
watcher's own (daemon/watch/listing.py).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from pathlib import Path

from editjournal.daemon.watch.ignore import Ignorer
from editjournal.daemon.watch.listing import Listed, list_directory


class TreeScan:
    """The regular, not-ignored files under `tops` (directories or files, relative;
    "" is the whole workspace)."""

    def __init__(self, root: Path, ignorer: Ignorer, tops: Sequence[str] = ("",)) -> None:
        self.root, self.ignorer = root, ignorer
        self._pending: list[str] = []
        self._files: list[str] = []
        for top in tops:
            kind = self._kind(top)
            if kind == "dir":
                self._pending.append(top)
            elif kind == "file":
                self._files.append(top)
        self.directories = 0

    @property
    def done(self) -> bool:
        return not self._pending and not self._files

    def step(self) -> list[Listed]:
        """The next directory's files (or the files named at the start)."""
        if self._files:
            named, self._files = self._files, []
            return [(rel, info) for rel in named if (info := self._lstat(rel)) is not None]
        files, subdirs = self._list(self._pending.pop())
        self._pending += subdirs
        self.directories += 1
        return files

    def _kind(self, rel: str) -> str | None:
        """A top named by the caller counts even when ignored; what is below it, not."""
        info = self._lstat(rel)
        if info is None:
            return None
        return "dir" if stat.S_ISDIR(info.st_mode) else "file" if rel else None

    def _lstat(self, rel: str) -> os.stat_result | None:
        try:
            info = os.lstat(self.root / rel)
        except OSError:
            return None
        return info if stat.S_ISREG(info.st_mode) or stat.S_ISDIR(info.st_mode) else None

    def _list(self, base: str) -> tuple[list[Listed], list[str]]:
        return list_directory(self.root, base, self.ignorer, file_links=False)
