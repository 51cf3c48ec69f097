"""Taking the tree: what every covered file holds now, a directory at a time.

For a checkpoint, and for comparing one with the workspace. Each file's sha256
comes from the workspace's stat cache when its stat has not moved since it was
last hashed (daemon/files/statcache.py), else from reading it through the
file-access layer (confined; nothing follows a symlink out). A file the daemon
cannot serve as text (binary, not UTF-8, over the size limit) is listed, not
held (its sha256 is "" when it was too large to read): it was there, and a
restore leaves it alone. A file whose removal is committed but not yet landed (a
tombstone in the workspace's overlay, daemon/landing/writeround.py) is not there.
With `store`, the content of each text file the journal does not hold yet is handed
back for it to keep — once: contents are content-addressed, and deduplicated against
every blob the journal already has.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from editjournal.daemon.files.filesnapshot import Fingerprint
from editjournal.daemon.files.statcache import Hashed
from editjournal.daemon.files.workspace import Workspace
from editjournal.daemon.store.manifest import ManifestEntry
from editjournal.daemon.tree.compare import within
from editjournal.daemon.tree.scan import Listed, TreeScan
from editjournal.daemon.watch.ignore import Ignorer


@dataclass
class Kept:
    """Contents for the journal to keep, and which file each is a version of."""

    blobs: dict[str, bytes] = field(default_factory=dict)
    paths: dict[str, str] = field(default_factory=dict)


class TreeTaker:
    """The files under `tops` as they are, taken a slice at a time (`step`)."""

    def __init__(
        self,
        workspace: Workspace,
        ignore_patterns: Sequence[str],
        tops: Sequence[str] = ("",),
        *,
        store: bool,
        has_blob: Callable[[str], bool],
    ) -> None:
        self.workspace = workspace
        self.tops = list(tops)
        self._ignorer = Ignorer(workspace.root, ignore_patterns)
        self._scan = TreeScan(workspace.root, self._ignorer, tops)
        self._inside = within(tops)
        self._store, self._has_blob = store, has_blob
        self._queue: list[Listed] = []
        self.entries: dict[str, ManifestEntry] = {}
        self.read = 0  # files read (the rest were known by their stat)
        self.stored_bytes = 0  # contents handed back to keep

    @property
    def done(self) -> bool:
        return self._scan.done and not self._queue

    def step(self, deadline: float) -> Kept:
        """Take files until `deadline` (time.monotonic) or the end: a directory's files
        known by their stat at once, each file to read one at a time between looks at
        the clock (reading is what takes time; the second checkpoint of a big tree reads
        a few files and knows the rest by their stat, as fast as a loop can)."""
        kept = Kept()
        while not self.done and time.monotonic() < deadline:
            if not self._queue:
                self._queue = self._take_known(self._scan.step(), kept)
                continue
            rel, info = self._queue.pop()
            self._take(rel, info, kept)
        return kept

    def _take_known(self, listed: list[Listed], kept: Kept) -> list[Listed]:
        """Take the files whose stat says they hold what they held when last hashed
        (and, when storing, whose content the journal holds); the others, to read."""
        known, has = self.workspace.stat_cache.known, self._has_blob
        entries, store, to_read = self.entries, self._store, []
        gone = self.workspace.removed_pending
        for rel, info in listed:
            if gone(rel):  # a removal committed, not yet landed: not there
                continue
            hashed = known(rel, info)
            if hashed is None:
                to_read.append((rel, info))
            elif not hashed.text or not store or hashed.sha256 in kept.blobs or has(hashed.sha256):
                entries[rel] = ManifestEntry(rel, info.st_size, hashed.sha256, hashed.text)
            else:
                to_read.append((rel, info))
        return to_read

    def take_all(self) -> Kept:
        """Every file at once (small scopes, and tests)."""
        kept = Kept()
        while not self.done:
            more = self.step(float("inf"))
            kept.blobs.update(more.blobs)
            kept.paths.update(more.paths)
        return kept

    def retake(self, paths: Sequence[str]) -> Kept:
        """These files again, as they are now: changed while the tree was being taken,
        or written earlier in this batch (served from the workspace's overlay, not yet
        on disk). Read whole, not trusted to the stat cache: they are few."""
        kept = Kept()
        for rel in paths:
            if not self.covers(rel):
                continue
            self.entries.pop(rel, None)
            found = self.workspace.fingerprint(rel)
            if found is not None:  # else gone, or no longer a confined regular file
                self._record(found, kept)
        return kept

    def covers(self, rel: str) -> bool:
        """Within the scope, and not ignored."""
        return self._inside(rel) and not self._ignorer.ignored(rel)

    def _take(self, rel: str, info: os.stat_result, kept: Kept) -> None:
        """One file, by the stat the listing took (lstat: never through a symlink)."""
        workspace = self.workspace
        if workspace.removed_pending(rel):  # removed since it was listed (not landed yet)
            return
        known = workspace.stat_cache.known(rel, info)
        if known is not None and (not known.text or not self._store or self._has(known, kept)):
            self.entries[rel] = ManifestEntry(rel, info.st_size, known.sha256, known.text)
            return
        if info.st_size > workspace.max_file_size:
            self.entries[rel] = ManifestEntry(rel, info.st_size, "", held=False)
            return
        hashed_ns = time.time_ns()
        found = workspace.fingerprint(rel, listed=True)
        if found is None:
            workspace.stat_cache.forget(rel)
            return  # gone, or no longer a confined regular file
        entry = self._record(found, kept)
        workspace.stat_cache.remember(rel, info, found.sha256, entry.held, hashed_ns)

    def _record(self, found: Fingerprint, kept: Kept) -> ManifestEntry:
        """A file just read: its entry, and its content to keep if the journal lacks it."""
        self.read += 1
        entry = ManifestEntry(found.path, found.size, found.sha256, found.text is not None)
        self.entries[found.path] = entry
        if entry.held and self._store and not self._has(found.sha256, kept):
            kept.blobs[found.sha256], kept.paths[found.sha256] = found.data, found.path
            self.stored_bytes += found.size
        return entry

    def _has(self, known: str | Hashed, kept: Kept) -> bool:
        digest = known if isinstance(known, str) else known.sha256
        return digest in kept.blobs or self._has_blob(digest)
