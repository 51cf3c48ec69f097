"""The daemon's own renames, recognised by stat alone when the watcher reports them.

Every write the daemon publishes makes the watcher report the path a moment
later; re-reading and re-hashing the whole file only to find the content the
state already holds cost a read, a SHA-256 and a UTF-8 decode per edit on the
one thread. Right after each rename the write round notes the file's identity
as the kernel reports it — (device, inode, size, mtime_ns, ctime_ns) — with the
content's SHA-256. When the watcher reports that path and the state still holds
that SHA-256, an identical stat means the very inode the daemon wrote, not
touched since (any write or rename onto it changes size, mtime or ctime; a file
swapped in has another inode), so there is nothing to observe. Anything else —
a different stat, a state that moved on, a path never noted — is judged by
content as before (daemon/watch/outside.py). It is the identity the read cache trusts
(daemon/files/readcache.py), taken microseconds after the rename; on kernels without
fine-grained ctime a same-size rewrite in that same clock tick could pass for
ours, and is then noticed when the file is next read or edited (both hash it).
"""

from __future__ import annotations

import os

StatKey = tuple[int, int, int, int, int]

# One entry per path the daemon wrote (a path is noted again on every write): bounded
# by the files written, like the state's own table; cleared past this many at once.
_MAX_PATHS = 100_000


def stat_key(info: os.stat_result) -> StatKey:
    """What changes whenever the file's content can have changed."""
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


class OwnWrites:
    """Last published (stat, SHA-256) by real workspace-relative path; daemon thread only."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self._root = os.fspath(root)
        self._marks: dict[str, tuple[StatKey, str]] = {}

    def note(self, rel: str, sha256: str, size: int) -> None:
        """`rel` was just renamed into place holding `sha256` (`size` bytes). If the file
        already holds another size, someone appended in between: it is not noted, so
        that change is judged by content (never taken for the daemon's own write)."""
        try:
            info = os.stat(os.path.join(self._root, rel), follow_symlinks=False)
        except OSError:
            self._marks.pop(rel, None)
            return
        if info.st_size != size:
            self._marks.pop(rel, None)
            return
        if len(self._marks) >= _MAX_PATHS:
            self._marks.clear()
        self._marks[rel] = (stat_key(info), sha256)

    def unchanged(self, rel: str, sha256: str | None) -> StatKey | None:
        """The stat of `rel` when it is still exactly the daemon's last write of it and
        that write holds `sha256` (the content the state knows); else None."""
        mark = self._marks.get(rel)
        if mark is None or sha256 is None or mark[1] != sha256:
            return None
        try:
            key = stat_key(os.stat(os.path.join(self._root, rel), follow_symlinks=False))
        except OSError:
            return None
        if key == mark[0]:
            return key
        del self._marks[rel]  # changed since: judged by content from now on
        return None

    def displaced_is_own(self, rel: str, sha256: str, info: os.stat_result) -> bool:
        """Whether a file a write just displaced (`info`, its stat) is the daemon's last
        write of `rel`, holding `sha256`, untouched since. ctime is left out: the swap
        that displaced it changed that; any write changes size or mtime."""
        mark = self._marks.get(rel)
        if mark is None or mark[1] != sha256:
            return False
        return mark[0][:4] == stat_key(info)[:4]

    def forget(self, rel: str) -> None:
        self._marks.pop(rel, None)
