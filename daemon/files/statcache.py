"""Which files are unchanged since they were last hashed, by their stat alone.

A checkpoint of a 100,000-file tree cannot read every file each time: a file
whose (device, inode, size, mtime_ns, ctime_ns) are what they were when it was
last hashed is taken to hold the same bytes. Git's index makes the same bet, and
guards it the same way: a file modified in the same clock tick as it was hashed
("racily clean") could change again without its mtime moving, so such an entry is
never trusted — the next look hashes the file again. Held in memory by the daemon
(the first checkpoint after a start hashes everything once).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import NamedTuple

# File systems stamp mtimes coarser than a nanosecond (ext4: the kernel tick, some: 1 s,
# FAT: 2 s): an mtime this close to the moment the file was hashed is not trusted.
RACY_NS = 2_000_000_000


class StatKey(NamedTuple):
    """What must not have moved for a file to count as unchanged."""

    dev: int
    ino: int
    size: int
    mtime_ns: int
    ctime_ns: int

    @classmethod
    def of(cls, info: os.stat_result) -> StatKey:
        return cls(info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


class Hashed(NamedTuple):
    key: StatKey
    sha256: str
    text: bool  # the daemon serves it as text (else: binary, not UTF-8, too large)
    hashed_ns: int  # wall clock when the bytes were read (time.time_ns)


@dataclass
class StatCache:
    """Path -> the stat and sha256 of its last hashing; not thread-safe."""

    entries: dict[str, Hashed] = field(default_factory=dict)

    def known(self, path: str, info: os.stat_result) -> Hashed | None:
        """What `path` still holds, when its stat says it cannot have changed."""
        entry = self.entries.get(path)
        if entry is None or entry.key != StatKey.of(info):
            return None
        if info.st_mtime_ns >= entry.hashed_ns - RACY_NS:
            return None  # racily clean: changed, perhaps, within the tick it was read in
        return entry

    def remember(
        self, path: str, info: os.stat_result, sha256: str, text: bool, hashed_ns: int
    ) -> None:
        self.entries[path] = Hashed(StatKey.of(info), sha256, text, hashed_ns)

    def forget(self, path: str) -> None:
        self.entries.pop(path, None)
