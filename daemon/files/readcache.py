"""Unchanged files are not read again: the last snapshot of each path, kept while
the file's stat says it is the same file with the same content.

A read of an unchanged file would otherwise re-read, re-decode and re-hash it
(SHA-256) before the parse cache (daemon.textcache, by content hash) can answer.
An entry is keyed by the workspace-relative path and valid while
(st_dev, st_ino, st_size, st_mtime_ns, st_ctime_ns) is unchanged: a rename over
the file (how the daemon and most editors write) changes the inode, any write
changes ctime, and a change of size shows at once.

Timestamp granularity: file times come from the kernel's coarse clock (one tick,
1-10 ms) and some filesystems keep whole seconds (FAT: 2 s). A same-size rewrite
in place within one tick of the read we cached would leave every field equal. So
a snapshot is only kept when the file's mtime and ctime are at least
`RACY_NS` (2 s) older than the moment before its stat; a file changed more
recently is read afresh every time until it has been still for 2 s (what git
calls "racily clean"). Such a snapshot is kept all the same, without a key, and
so is every content the daemon is about to write (`expect`): the next read of the
path compares the bytes it reads with it and, when they are the same, takes its
text and SHA-256 instead of decoding and hashing again — exact whatever the
timestamps say, and what an edit right after an edit costs. Pending writes of a
batch (`Workspace.overlay`) always answer first: the cache is bypassed while any
is pending (a removal not yet landed answers `file_not_found`, its file still on
disk: a snapshot kept of it must not answer). Owned by the daemon's one thread;
every stat and read goes through `Workspace`.
"""

from __future__ import annotations

import os
import time
from collections import OrderedDict

from editjournal.daemon.files.filesnapshot import FileSnapshot
from editjournal.daemon.files.workspace import Workspace

RACY_NS = 2_000_000_000
DEFAULT_ENTRIES = 64
DEFAULT_BYTES = 64 * 1024 * 1024  # data and text of the snapshots kept

StatKey = tuple[int, int, int, int, int]


def stat_key(info: os.stat_result) -> StatKey:
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


class SnapshotCache:
    """A small LRU of the last snapshot read of each path, checked by stat."""

    def __init__(
        self, entries: int = DEFAULT_ENTRIES, max_bytes: int = DEFAULT_BYTES, racy_ns: int = RACY_NS
    ) -> None:
        self._entries = entries
        self._racy_ns = racy_ns
        self.max_bytes = max_bytes
        # a None key: not settled, or not read yet; the snapshot is only a byte-compare candidate
        self._items: OrderedDict[str, tuple[StatKey | None, FileSnapshot]] = OrderedDict()
        self.bytes = 0
        self.hits = 0

    def read(self, workspace: Workspace, path: str) -> FileSnapshot:
        """`workspace.read(path)`, or the same snapshot again when the file is unchanged."""
        if workspace.overlay:  # a batch's pending write must answer (Workspace.read)
            return workspace.read(path)
        rel = workspace.file_relative(path)  # `f.txt/` is refused here too, never served
        now = time.time_ns()
        info = workspace.stat(rel)
        found = self._items.get(rel)
        if info is not None and found is not None and found[0] == stat_key(info):
            self._items.move_to_end(rel)
            self.hits += 1
            return found[1]
        snap = workspace.read(rel, known=found[1] if found is not None else None)
        self._forget(rel)
        settled = (
            info is not None and now - max(info.st_mtime_ns, info.st_ctime_ns) >= self._racy_ns
        )
        key = stat_key(info) if settled and info is not None and snap.size == info.st_size else None
        self._remember(rel, key, snap)
        return snap

    def expect(self, rel: str, snap: FileSnapshot) -> None:
        """`snap` is about to be written at `rel`: the next read compares bytes with it."""
        self._forget(rel)
        self._remember(rel, None, snap)

    def _forget(self, rel: str) -> None:
        old = self._items.pop(rel, None)
        if old is not None:
            self.bytes -= _cost(old[1])

    def _remember(self, rel: str, key: StatKey | None, snap: FileSnapshot) -> None:
        self._items[rel] = (key, snap)
        self.bytes += _cost(snap)
        while self._items and (len(self._items) > self._entries or self.bytes > self.max_bytes):
            self.bytes -= _cost(self._items.popitem(last=False)[1][1])


def _cost(snap: FileSnapshot) -> int:
    return len(snap.data) + len(snap.text)
