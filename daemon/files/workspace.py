"""The workspace: the only code in the daemon that reads and writes workspace files.

It holds three things and nothing else:

* confinement -- every path a caller names is judged and walked by the workspace's
  `PathJudge` (daemon/files/pathjudge.py): nothing outside the root, nothing in the
  daemon's own state directory `.editjournal/`;
* reading -- exact bytes, in binary mode, so CRLF/CR/mixed line endings, a BOM
  and a missing final newline survive untouched, and only UTF-8 text is served
  (`_decode` is the one door; `encoding.py` says what the rest is);
* preparing atomic writes -- checks (`replaceable.py`), then a temp file in the same
  directory (`tempfiles.py`), so that landing it (`preparedwrite.py`: an exchange,
  then a directory fsync) lets a reader or a crash see either the old file or the
  new one, never half of each.

It must never decide anything about anchors, edits or the journal: it does not
parse lines, compare hashes or record events. Every failure leaves as a
`ToolError` from the catalogue, never as a bare `OSError` (`fileio.translate`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import hashlib
import os
import stat as stat_mod
from collections.abc import Iterator
from pathlib import Path

from editjournal.daemon.files.confined import Located
from editjournal.daemon.files.encoding import refusal, utf8_text
from editjournal.daemon.files.fileio import (
    SWAP_RETRIES,
    kept_changing,
    read_up_to,
    require_regular,
    translate,
)
from editjournal.daemon.files.filesnapshot import FileSnapshot, Fingerprint
from editjournal.daemon.files.harnesswrites import HarnessWrites
from editjournal.daemon.files.latewrites import LateWrites
from editjournal.daemon.files.ownwrites import OwnWrites
from editjournal.daemon.files.pathjudge import PathJudge
from editjournal.daemon.files.preparedwrite import PreparedWrite
from editjournal.daemon.files.replaceable import Swapped, check_may_change, replaceable
from editjournal.daemon.files.statcache import StatCache
from editjournal.daemon.files.tempfiles import prepare_temp
from editjournal.schemas.errors import ErrorCode, ToolError
from editjournal.schemas.units import format_binary_size, format_size, limit_that_fits

DEFAULT_MAX_FILE_SIZE = 8 * 1024 * 1024
# a tombstone's sha256: no SHA-256 is spelt so (held.ABSENT's word: "no such file")
_GONE = "absent"

_O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # so opening a FIFO cannot hang the daemon
_O_BINARY = getattr(os, "O_BINARY", 0)  # Windows: never translate newlines


class Workspace:
    """Confined, exact, atomic access to the files under one root directory."""

    def __init__(
        self, root: str | os.PathLike[str], max_file_size: int = DEFAULT_MAX_FILE_SIZE
    ) -> None:
        resolved = Path(os.path.realpath(os.path.abspath(os.fspath(root))))
        if not resolved.is_dir():
            raise ToolError(
                ErrorCode.INVALID_PARAMS,
                f"workspace root {str(root)!r} is not a directory",
                {"workspace": str(resolved)},
            )
        if max_file_size < 1:
            raise ToolError(
                ErrorCode.INVALID_PARAMS,
                f"max_file_size must be positive, got {max_file_size}",
                {"limit": max_file_size},
            )
        self.root: Path = resolved
        self.max_file_size = max_file_size
        # Confinement: every path is judged, and every open, create, rename and unlink
        # walked from a held root fd, by this one judge.
        self._paths = PathJudge(resolved, os.path.normpath(os.path.abspath(os.fspath(root))))
        self.state_dir: Path = self._paths.state_dir
        # Contents prepared in the current batch but not yet renamed into place, by the
        # real workspace-relative path of their target (see daemon/landing/writeround.py): reads
        # serve them, so a later request of the batch plans against an earlier one's write.
        # A removal not yet landed is a tombstone (`tombstone`): served as no file at all.
        self.overlay: dict[str, FileSnapshot] = {}
        # The daemon's last rename of each path, so the watcher knows it without a re-read.
        self.own_writes = OwnWrites(resolved)
        self.harness_writes = HarnessWrites()  # announced by hooks (daemon/files/harnesswrites.py)
        # Files the daemon's writes displaced, held open a moment for late writes to them.
        self.late_writes = LateWrites(max_file_size)
        # What each file hashed to, by its stat: a checkpoint reads only what changed.
        self.stat_cache = StatCache()

    @contextlib.contextmanager
    def one_request(self) -> Iterator[None]:
        """Within this block, `relative` judges each spelling of a path once."""
        with self._paths.one_request():
            yield

    def overlay_key(self, target: str | os.PathLike[str]) -> str:
        """The overlay's key for a path: where it really lands, relative to the root
        (best effort: a link swapped mid-way leaves the name as given)."""
        try:
            real = os.path.realpath(self.root / target)
        except OSError:
            real = os.path.normpath(self.root / target)
        return os.path.relpath(real, self.root)

    def _pending(self, rel: str) -> FileSnapshot | None:
        """The batch's content for `rel`, named as the caller named it, if it wrote one
        (a tombstone, as it is: the caller says there is no file)."""
        found = self.overlay.get(rel) or self.overlay.get(self.overlay_key(rel))
        if found is None or is_tombstone(found):
            return found
        return dataclasses.replace(found, path=rel)

    def removed_pending(self, rel: str) -> bool:
        """`rel` (workspace-relative, as listed) is removed by a write committed or
        planned and not yet landed: on disk still, but no file to every reader."""
        found = self.overlay.get(rel) if self.overlay else None
        return found is not None and is_tombstone(found)

    # ------------------------------------------------------------ confinement

    def relative(self, path: str) -> str:
        """The workspace-relative POSIX path the caller named, judged confined
        (`PathJudge.relative`)."""
        return self._paths.relative(path)

    def file_relative(self, path: str) -> str:
        """`relative`, for a path that must name a file: `inner.txt/` is refused, so every
        read and write path (caches included) judges the spelling before the name."""
        rel = self.relative(path)
        if path.endswith(("/", os.sep)):  # only then the stat: never on the common path
            raise _trailing_slash(path, rel, self._paths.absolute(rel))
        return rel

    def absolute(self, rel: str) -> Path:
        """The absolute path of a workspace path; re-confined so no caller can skip the check."""
        return self._paths.absolute(rel)

    def locate_real(self, rel: str) -> Located | None:
        """The held parent directory of `rel` if it is still exactly where a journaled
        write put it (`PathJudge.locate_real`). The caller closes `parent`."""
        return self._paths.locate_real(rel)

    # ---------------------------------------------------------------- reading

    def read(self, path: str, known: FileSnapshot | None = None) -> FileSnapshot:
        """Read a text file's exact bytes; refuse what is too big or not UTF-8 text.
        `known`: a snapshot the file may still hold (the daemon's own last write); when
        the bytes read are exactly its bytes, its text and SHA-256 are taken, not
        computed again (a compare costs a fraction of a decode and a hash)."""
        rel = self.file_relative(path)
        if self.overlay and (pending := self._pending(rel)) is not None:
            if is_tombstone(pending):  # removed, not yet landed: as if already gone
                raise translate(FileNotFoundError(errno.ENOENT, "removed"), rel)
            return pending  # first: no cache of what is on disk may answer for it
        fd = self._paths.open_confined(rel, os.O_RDONLY | _O_NONBLOCK | _O_BINARY)
        try:
            info = os.fstat(fd)  # on the open fd: the path may change under us
            require_regular(info, rel)
            self._check_size(info.st_size, rel)
            # Read one byte past the limit: the file may grow after fstat.
            data = read_up_to(fd, self.max_file_size + 1)
        except OSError as exc:
            raise translate(exc, rel) from exc
        finally:
            os.close(fd)
        self._check_size(len(data), rel)
        read_only = not info.st_mode & 0o222
        if known is not None and known.path == rel and known.data == data:
            return FileSnapshot(
                rel, known.data, known.text, known.sha256, known.size, info.st_mtime_ns,
                read_only,
            )  # fmt: skip
        return _snapshot(rel, data, info.st_mtime_ns, read_only)

    def stat(self, path: str) -> os.stat_result | None:
        """The stat of a confined path (following symlinks), or None when it is missing.
        What is on disk: a path in `overlay` (written earlier in this batch, or removed
        and not yet landed) has newer content, or none, than this says, so a cache keyed
        by stat must look at `overlay` first."""
        rel = self.relative(path)
        try:
            located = self._paths.locate(rel)
        except ToolError as e:
            if e.code is ErrorCode.FILE_NOT_FOUND:
                return None
            raise
        try:
            return os.stat(located.name, dir_fd=located.parent.fd, follow_symlinks=False)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as exc:
            raise translate(exc, rel) from exc
        finally:
            located.parent.close()

    def fingerprint(self, path: str, *, listed: bool = False) -> Fingerprint | None:
        """Size, mtime and SHA-256 of whatever regular file is there now, text or not.

        For the watcher, which must compare contents it may not serve: None when
        the path is missing, not a regular file, or no longer confined. `text` is
        the decoded content when the file is text within the size limit. `listed`:
        `path` is already workspace-relative and normal, as a walk of the tree lists
        it, so it is not judged again (the open below is confined all the same).
        """
        try:
            rel = path if listed else self.relative(path)
            pending = self._pending(rel) if self.overlay else None
            if pending is not None:
                if is_tombstone(pending):  # removed, not yet landed: no file
                    return None
                return Fingerprint(
                    rel, pending.size, pending.mtime_ns, pending.sha256, pending.data, pending.text
                )
            fd = self._paths.open_confined(rel, os.O_RDONLY | _O_NONBLOCK | _O_BINARY)
        except (ToolError, OSError):
            return None
        try:
            info = os.fstat(fd)
            if not stat_mod.S_ISREG(info.st_mode):
                return None
            with os.fdopen(os.dup(fd), "rb") as handle:
                data = handle.read()
        except OSError:
            return None
        finally:
            os.close(fd)
        # The same test as `_decode`, without asking why: the watcher only needs to
        # know a file is not text, and must not run the encoding detector on every change.
        text = utf8_text(data) if len(data) <= self.max_file_size else None
        return Fingerprint(rel, len(data), info.st_mtime_ns, _sha256(data), data, text)

    def _check_size(self, size: int, rel: str, writing: bool = False) -> None:
        """Sizes in units a person reads; the fix as a command that takes the file."""
        if size <= self.max_file_size:
            return
        subject = f"the new content of {rel} would be" if writing else f"{rel} is"
        raise ToolError(
            ErrorCode.FILE_TOO_LARGE,
            f"{subject} {format_size(size)}, over the {format_binary_size(self.max_file_size)}"
            " limit",
            {"path": rel, "size": size, "limit": self.max_file_size},
            "restart the daemon with a higher limit: editjournal stop && editjournal start"
            f" --max-file-size {limit_that_fits(size)}",
        )

    # ---------------------------------------------------------------- writing

    def append_bytes(self, path: str, data: bytes) -> None:
        """Append `data` to a file in place (`O_APPEND`), as the writer whose lines went
        into a file the daemon had just displaced would have (daemon/files/latewrites.py)."""
        rel = self.relative(path)
        fd = self._paths.open_confined(rel, os.O_WRONLY | os.O_APPEND | _O_NONBLOCK | _O_BINARY)
        try:
            info = os.fstat(fd)
            require_regular(info, rel)
            os.write(fd, data)
        except OSError as exc:
            raise translate(exc, rel) from exc
        finally:
            os.close(fd)

    def write_atomic(self, path: str, data: bytes) -> FileSnapshot:
        """Replace a file's content atomically; on failure the old file is untouched.
        (Tests and tools only: the daemon publishes through its write round.)"""
        prepared = self.prepare_write(path, data)
        swap = prepared.swap_in()
        if swap.displaced is not None:
            prepared.drop_displaced(swap.displaced)
        prepared.sync_directory()
        prepared.close()
        return prepared.snapshot

    def prepare_write(
        self, path: str, data: bytes, durable: bool = True, sha256: str | None = None
    ) -> PreparedWrite:
        """Do everything that can fail (checks, temp file, fsync) but the final rename.

        The daemon prepares a write, commits the journal event that records it,
        and only then publishes: a full disk fails the request before anything
        is journaled, and a journaled write is one rename away from the disk.
        A symlink is written through (its real target is replaced), so the link
        itself survives. The data must be text the daemon could read back.
        `durable=False`: the temp file is not fsynced (the write round's journal commit holds
        the content; daemon/landing/flusher.py fsyncs the file once it has landed).
        `sha256`: the caller's hash of these very bytes, so a big file is not hashed twice.
        """
        rel = self.file_relative(path)
        data = _as_bytes(data, rel)
        self._check_size(len(data), rel, writing=True)
        text = _decode(data, rel)
        located, existing = self._writable(rel)
        try:
            temp, mtime_ns = prepare_temp(located.parent.fd, data, existing, rel, durable)
        except BaseException:
            located.parent.close()
            raise
        target = self.root.joinpath(*located.parts)
        digest = sha256 if sha256 is not None else _sha256(data)
        snapshot = FileSnapshot(rel, data, text, digest, len(data), mtime_ns)
        return PreparedWrite(snapshot, target.parent / temp, target, located.parent)

    def prepare_delete(self, path: str) -> PreparedWrite:
        """Check that a removal can be done; `publish` unlinks the file by the name given
        (a symlink itself, like `rm`), after its event is committed."""
        rel = self.file_relative(path)
        self._paths.refuse_protected(rel)
        located = self._paths.locate(rel, follow_final=False, refuse=self._paths.protected)
        try:
            info = os.stat(located.name, dir_fd=located.parent.fd, follow_symlinks=False)
            if not stat_mod.S_ISLNK(info.st_mode):  # a link is removed like `rm` does
                require_regular(info, rel)
                check_may_change(located, info, rel)  # as any writer would
        except BaseException as exc:
            located.parent.close()
            if isinstance(exc, OSError):
                raise translate(exc, rel) from exc
            raise
        target = self.root.joinpath(*located.parts)
        empty = FileSnapshot(rel, b"", "", _sha256(b""), 0, 0)
        return PreparedWrite(empty, None, target, located.parent)

    def check_may_replace(self, path: str) -> None:
        """The mode checks `prepare_write` and `prepare_delete` make (`check_may_change`),
        alone and early: one stat, so a read-only file refuses a big write before the
        daemon parses and plans it, not after (the write's own checks still run). A
        symlink, or a path that is not there, is left to those checks."""
        rel = self.file_relative(path)
        try:
            located = self._paths.locate(rel, follow_final=False, refuse=self._paths.protected)
        except ToolError:
            return
        try:
            info = os.stat(located.name, dir_fd=located.parent.fd, follow_symlinks=False)
            if stat_mod.S_ISREG(info.st_mode):
                check_may_change(located, info, rel)
        except OSError:
            return
        finally:
            located.parent.close()

    def _writable(self, rel: str) -> tuple[Located, os.stat_result | None]:
        """The located target of a write and the stat of the file it replaces (None: new).
        Parents are created only once the path is known not to be protected."""
        self._paths.refuse_protected(rel)
        for _ in range(SWAP_RETRIES):
            located = self._paths.locate(rel, make_parents=True, refuse=self._paths.protected)
            try:
                return located, replaceable(located, rel)
            except Swapped:
                located.parent.close()
            except BaseException:
                located.parent.close()
                raise
        raise kept_changing(rel)


# -------------------------------------------------------------------- helpers


def tombstone(rel: str) -> FileSnapshot:
    """What the overlay holds for a removal committed and not yet landed: a new object
    each time (the write round tells its own from a later batch's by identity)."""
    return FileSnapshot(rel, b"", "", _GONE, 0, 0)


def is_tombstone(snapshot: FileSnapshot) -> bool:
    """`snapshot` is a removal's tombstone: there is no file, whatever the disk holds."""
    return snapshot.sha256 == _GONE


def _trailing_slash(path: str, rel: str, where: Path) -> ToolError:
    """`inner.txt/` names a directory to the kernel: never serve or write a file for it.
    The refusal says what is there, so its hint leads somewhere: a directory is
    `is_a_directory` (dropping the '/' would only lead there again); only a file is told
    to drop the '/'; nothing at all is said to be nothing (a read without the '/' would
    be `file_not_found`). Never `file_not_found` itself: a writer that creates files
    takes that code for "a new file" and would write `rel`."""
    if where.is_dir():
        return ToolError(ErrorCode.IS_A_DIRECTORY, f"{rel} is a directory", {"path": rel})
    if not where.exists() and not where.is_symlink():
        return ToolError(
            ErrorCode.INVALID_PARAMS,
            f"{path!r} ends with '/', which names a directory, and there is no {rel} in the"
            " workspace (no file, no directory)",
            {"path": path},
            f"check the path: there is no {rel} to read (a file is named without a trailing"
            " '/'; a write creates it)",
        )
    return ToolError(
        ErrorCode.INVALID_PARAMS,
        f"{path!r} ends with '/', which names a directory, not the file {rel}",
        {"path": path},
        f"drop the trailing '/': {rel}",
    )


def _as_bytes(data: bytes, rel: str) -> bytes:
    if isinstance(data, (bytearray, memoryview)):
        return bytes(data)
    if not isinstance(data, bytes):
        raise ToolError(
            ErrorCode.INVALID_PARAMS,
            f"content for {rel} must be bytes, got {type(data).__name__}",
            {"path": rel},
        )
    return data


def _decode(data: bytes, rel: str) -> str:
    """The one decode of file bytes, for reads and writes alike: UTF-8 text, or the
    refusal that says what the bytes are instead (`not_utf8` or `binary_file`)."""
    text = utf8_text(data)
    if text is None:
        raise refusal(data, rel)
    return text


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _snapshot(rel: str, data: bytes, mtime_ns: int, read_only: bool = False) -> FileSnapshot:
    text = _decode(data, rel)
    return FileSnapshot(rel, data, text, _sha256(data), len(data), mtime_ns, read_only)
