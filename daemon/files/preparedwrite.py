"""A write prepared but not yet landed, and the steps that land it.

`Workspace.prepare_write` does everything that can fail (checks, temp file)
and returns a `PreparedWrite`; the write round (daemon/landing/writeround.py) commits
the journal event that records it, and only then the landing (daemon/landing/exchange.py)
uses the steps here: `swap_in` puts the new content in place in one atomic step that
keeps whatever it replaces, readable under the temp file's name, so the landing can
compare it with what the write was planned against and drop it (`drop_displaced`) or
put it back (`restore`); `extended` carries an outside writer's appended lines over.

Every rename, open and unlink happens relative to the write's held directory fd
(daemon/files/confined.py), never through a path: a symlink swapped into the path
cannot redirect them. Failures that must stop the write leave as catalogue
`ToolError`s; the fsyncs after the new content is visible only log, since calling
the write failed then would be a lie the journal would record.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import logging
import os
import stat as stat_mod
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from editjournal.daemon.files import renames
from editjournal.daemon.files.confined import DirHandle
from editjournal.daemon.files.fileio import (
    READ_CHUNK,
    SWAP_RETRIES,
    kept_changing,
    read_up_to,
    translate,
)
from editjournal.daemon.files.filesnapshot import FileSnapshot
from editjournal.daemon.files.tempfiles import displaced_name

_log = logging.getLogger(__name__)
_O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # so opening a FIFO cannot hang the daemon
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_TEMP_READ = os.O_RDONLY | _O_CLOEXEC | _O_NOFOLLOW


class DisplacedFile(NamedTuple):
    """A file a swap displaced, as read back: `data` None when over the size limit."""

    info: os.stat_result
    data: bytes | None
    sha256: str | None  # set only when `data` is None


class Swap(NamedTuple):
    """What a publish displaced: the name, in the write's held directory, under which the
    file that was at the target now lies (None: there was none), and whether the
    displaced file could be kept at all (False: no `renameat2` here, a plain rename)."""

    displaced: str | None
    checked: bool = True


@dataclass(frozen=True, slots=True)
class PreparedWrite:
    """A fully written temp file waiting to be renamed over its target
    (`temp` None: a removal, waiting to move the target away)."""

    snapshot: FileSnapshot
    temp: Path | None
    target: Path
    # The held directory of `target` (see daemon/files/confined.py): every rename and unlink
    # happens relative to it, so a symlink swapped into the path cannot redirect them.
    directory: DirHandle

    def swap_in(self) -> Swap:
        """Put the new content in place (or move the file away, for a removal) in one
        atomic step that keeps whatever it replaces: an exchange of the temp file and
        the target, so the displaced file is readable under the temp file's name. The
        caller compares it with what the write was planned against (daemon/landing/writeround.py)
        and drops or keeps it; the directory is fsynced by `sync_directory`."""
        try:
            if self.temp is None:
                return self.move_away()
            return self._exchange(self.temp.name)
        except OSError as exc:
            self.discard()
            raise translate(exc, self.snapshot.path) from exc

    def _exchange(self, temp: str) -> Swap:
        held, name = self.directory.fd, self.target.name
        for _ in range(SWAP_RETRIES):
            try:
                renames.exchange(held, temp, name)
                return Swap(temp)
            except FileNotFoundError:  # no file at the target (now): create it, never clobber
                pass
            except renames.Unsupported:
                os.replace(temp, name, src_dir_fd=held, dst_dir_fd=held)
                return Swap(None, checked=False)
            try:
                renames.rename_noreplace(held, temp, name)
                return Swap(None)
            except FileExistsError:  # created meanwhile: exchange with it after all
                continue
        raise kept_changing(self.snapshot.path)

    def move_away(self, aside: str | None = None) -> Swap:
        """The target moved aside under `aside` (a fresh displaced name when None), or
        removed where the file system cannot rename without replacing."""
        held, name = self.directory.fd, self.target.name
        aside = aside or displaced_name()
        try:
            renames.rename_noreplace(held, name, aside)
        except FileNotFoundError:
            return Swap(None)
        except renames.Unsupported:
            os.unlink(name, dir_fd=held)
            return Swap(None, checked=False)
        return Swap(aside)

    def stat_displaced(self, name: str) -> os.stat_result:
        return os.stat(name, dir_fd=self.directory.fd, follow_symlinks=False)

    def read_displaced(self, name: str, limit: int) -> DisplacedFile:
        """A displaced file's stat and content (up to `limit` bytes); past the limit, or
        not a regular file, no content but a SHA-256 (else left for the caller to take:
        hashing is kept out of a landing's race)."""
        fd = os.open(name, _TEMP_READ | _O_NONBLOCK, dir_fd=self.directory.fd)
        try:
            info = os.fstat(fd)
            if not stat_mod.S_ISREG(info.st_mode):
                return DisplacedFile(info, None, f"not-regular:{info.st_ino}")
            data = read_up_to(fd, limit + 1)
            if len(data) <= limit:
                return DisplacedFile(info, data, None)
            digest = hashlib.sha256(data)
            while chunk := os.read(fd, READ_CHUNK):
                digest.update(chunk)
        finally:
            os.close(fd)
        return DisplacedFile(info, None, digest.hexdigest())

    def extended(self, added: bytes) -> PreparedWrite | None:
        """This write with `added` (whole lines of UTF-8 text) appended to its temp file:
        the cheap carry over an outside writer that only appended. None when it cannot."""
        if self.temp is None:
            return None
        try:
            text = added.decode("utf-8")
        except UnicodeDecodeError:
            return None
        flags = os.O_WRONLY | os.O_APPEND | _O_CLOEXEC | _O_NOFOLLOW
        try:
            fd = os.open(self.temp.name, flags, dir_fd=self.directory.fd)
            try:
                os.write(fd, added)
            finally:
                os.close(fd)
        except OSError:
            return None
        old = self.snapshot
        data = old.data + added
        snapshot = FileSnapshot(old.path, data, old.text + text, "", len(data), old.mtime_ns)
        return dataclasses.replace(self, snapshot=snapshot)

    def restore(self, name: str | None) -> str | None:
        """Undo `swap_in`: put the displaced file `name` back at the target (None: there
        was none, so the target goes away again). Returns the name under which what
        this write had put in place now lies (None: nothing). A name that appeared at the
        target meanwhile is never clobbered: the displaced file then stays aside."""
        held, target = self.directory.fd, self.target.name
        try:
            if self.temp is None:  # a removal: its displaced file goes back to its name
                if name is not None:
                    renames.rename_noreplace(held, name, target)
                return None
            if name is not None:
                renames.exchange(held, name, target)
                return name
            aside = displaced_name()
            renames.rename_noreplace(held, target, aside)
            return aside
        except OSError as exc:
            _log.error("%s: could not put the displaced file back: %s", self.snapshot.path, exc)
            return None

    def drop_displaced(self, name: str) -> None:
        with contextlib.suppress(OSError):
            os.unlink(name, dir_fd=self.directory.fd)

    def sync_target(self) -> None:
        """fsync what is now at the target (this write's content, once it has landed)."""
        try:
            fd = os.open(self.target.name, _TEMP_READ | _O_NONBLOCK, dir_fd=self.directory.fd)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        except OSError as exc:
            _log.warning("could not fsync %s: %s", self.snapshot.path, exc)

    def sync_directory(self) -> None:
        """Make the rename durable: fsync the held directory, never a path (a directory
        swapped for a link since must not take the fsync elsewhere). Logged, not raised:
        the new content is already visible, and calling the write failed would be a lie
        the journal would record."""
        if self.directory.fd < 0:
            return
        try:
            os.fsync(self.directory.fd)
        except OSError as exc:
            _log.warning("could not fsync the directory of %s: %s", self.snapshot.path, exc)

    def close(self) -> None:
        self.directory.close()

    def discard(self) -> None:
        if self.temp is not None and self.directory.fd >= 0:
            with contextlib.suppress(OSError):
                os.unlink(self.temp.name, dir_fd=self.directory.fd)
        self.directory.close()
