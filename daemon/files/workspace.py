"""The workspace: the only code in the daemon that touches workspace files.

It holds three things and nothing else:

* confinement -- turning a caller's path into a workspace-relative POSIX path,
  refusing anything that resolves (through `..` or symlinks) outside the root,
  and refusing the daemon's own state directory `.editjournal/`;
* reading -- exact bytes, in binary mode, so CRLF/CR/mixed line endings, a BOM
  and a missing final newline survive untouched, and only UTF-8 text is served
  (`_decode` is the one door; `encoding.py` says what the rest is);
* atomic writing -- temp file in the same directory, fsync, `os.replace`,
  directory fsync, so a reader or a crash sees either the old file or the new
  one, never half of each.

It must never decide anything about anchors, edits or the journal: it does not
parse lines, compare hashes or record events. Every failure leaves as a
`ToolError` from the catalogue, never as a bare `OSError`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import hashlib
import logging
import os
import secrets
import stat as stat_mod
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, NamedTuple

from editjournal.daemon.files import renames
from editjournal.daemon.files.confined import DirHandle, Escape, Located, Resolver
from editjournal.daemon.files.encoding import refusal, utf8_text
from editjournal.daemon.files.latewrites import LateWrites
from editjournal.daemon.files.ownwrites import OwnWrites
from editjournal.schemas.errors import ErrorCode, ToolError
from editjournal.schemas.units import format_binary_size, format_size, limit_that_fits

DEFAULT_MAX_FILE_SIZE = 8 * 1024 * 1024
STATE_DIR_NAME = ".editjournal"
TEMP_PREFIX = ".editjournal-tmp-"
# A file a write displaced while its content is judged: never removed by start-up cleanup
DISPLACED_PREFIX = ".editjournal-displaced-"
NEW_FILE_MODE = 0o644  # the kernel applies the umask to it at creation

_log = logging.getLogger(__name__)
_O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # so opening a FIFO cannot hang the daemon
_O_BINARY = getattr(os, "O_BINARY", 0)  # Windows: never translate newlines
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_SWAP_RETRIES = 3  # a symlink swapped in between the walk and the open: walk again
_TEMP_ATTEMPTS = 16
_READ_CHUNK = 1024 * 1024
_TEMP_READ = os.O_RDONLY | _O_CLOEXEC | _O_NOFOLLOW


@dataclass(frozen=True, slots=True)
class FileSnapshot:
    """One file's exact content at one moment, as read from or written to disk."""

    path: str
    data: bytes
    text: str
    sha256: str
    size: int
    mtime_ns: int


@dataclass(frozen=True, slots=True)
class Fingerprint:
    """What a file is now, whatever it holds (see `Workspace.fingerprint`)."""

    path: str
    size: int
    mtime_ns: int
    sha256: str
    data: bytes
    text: str | None  # None: binary, not UTF-8, or over the size limit


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

    def sync(self) -> None:
        """fsync the temp file (prepared with `durable=False`): the group commit's round."""
        if self.temp is None:
            return
        try:
            fd = os.open(self.temp.name, _TEMP_READ, dir_fd=self.directory.fd)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        except OSError as exc:
            raise _translate(exc, self.snapshot.path) from exc

    def swap_in(self) -> Swap:
        """Put the new content in place (or move the file away, for a removal) in one
        atomic step that keeps whatever it replaces: an exchange of the temp file and
        the target, so the displaced file is readable under the temp file's name. The
        caller compares it with what the write was planned against (daemon/landing/writeround.py)
        and drops or keeps it; the directory is fsynced by `sync_directory`."""
        try:
            if self.temp is None:
                return self._move_away()
            return self._exchange(self.temp.name)
        except OSError as exc:
            self.discard()
            raise _translate(exc, self.snapshot.path) from exc

    def _exchange(self, temp: str) -> Swap:
        held, name = self.directory.fd, self.target.name
        for _ in range(_SWAP_RETRIES):
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
        raise _kept_changing(self.snapshot.path)

    def _move_away(self) -> Swap:
        held, name = self.directory.fd, self.target.name
        aside = _displaced_name()
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
            data = _read_up_to(fd, limit + 1)
            if len(data) <= limit:
                return DisplacedFile(info, data, None)
            digest = hashlib.sha256(data)
            while chunk := os.read(fd, _READ_CHUNK):
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
            aside = _displaced_name()
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
        self.state_dir: Path = resolved / STATE_DIR_NAME
        self.max_file_size = max_file_size
        # Absolute paths may name the root as the caller knew it (e.g. through a
        # symlinked parent), so both spellings count as "inside" lexically.
        given = os.path.normpath(os.path.abspath(os.fspath(root)))
        self._bases: tuple[str, ...] = tuple(dict.fromkeys((str(resolved), given)))
        # Every open, create, rename and unlink is walked from this held root fd.
        self._resolver = Resolver(str(resolved), self._bases, STATE_DIR_NAME)
        # Names no write may pass through (casefolded): `.git` holds hooks and config
        # that run code on the user's next git command.
        self.protected: frozenset[str] = frozenset({".git"})
        # Contents prepared in the current batch but not yet renamed into place, by the
        # real workspace-relative path of their target (see daemon/landing/writeround.py): reads
        # serve them, so a later request of the batch plans against an earlier one's write.
        self.overlay: dict[str, FileSnapshot] = {}
        # The daemon's last rename of each path, so the watcher knows it without a re-read.
        self.own_writes = OwnWrites(resolved)
        # Files the daemon's writes displaced, held open a moment for late writes to them.
        self.late_writes = LateWrites(max_file_size)
        # `relative`'s answers while one request runs (`one_request`): a request names
        # its path several times (stat, read, snapshot) and each answer costs realpath
        # walks; a link may change between requests, so the memo lives for one only.
        self._judged: dict[str, str] | None = None

    @contextlib.contextmanager
    def one_request(self) -> Iterator[None]:
        """Within this block, `relative` judges each spelling of a path once."""
        self._judged = {}
        try:
            yield
        finally:
            self._judged = None

    def overlay_key(self, target: str | os.PathLike[str]) -> str:
        """The overlay's key for a path: where it really lands, relative to the root
        (best effort: a link swapped mid-way leaves the name as given)."""
        try:
            real = os.path.realpath(self.root / target)
        except OSError:
            real = os.path.normpath(self.root / target)
        return os.path.relpath(real, self.root)

    def _pending(self, rel: str) -> FileSnapshot | None:
        """The batch's content for `rel`, named as the caller named it, if it wrote one."""
        found = self.overlay.get(rel) or self.overlay.get(self.overlay_key(rel))
        return None if found is None else dataclasses.replace(found, path=rel)

    # ------------------------------------------------------------ confinement

    def relative(self, path: str) -> str:
        """Normalise `path` to the workspace-relative POSIX path the caller named.

        The returned path keeps the caller's naming (lexically normalised), so a
        symlink stays known by its own name; confinement is judged on the real
        location, so no spelling can reach outside the root or into the state dir.
        """
        judged = self._judged
        if judged is not None and (known := judged.get(path)) is not None:
            return known
        rel = self._judge(path)
        if judged is not None:
            judged[path] = rel
        return rel

    def _judge(self, path: str) -> str:
        _check_syntax(path)
        try:  # a first, lexical judgement; the open itself is what confines (_locate)
            rel = self._lexical_relative(path)
            real = self._check_confined(path, rel)
            is_root = rel == "." or real == str(self.root)
        except OSError as exc:  # realpath met a link swapped mid-way
            raise _kept_changing(path) from exc
        if is_root:
            raise ToolError(
                ErrorCode.IS_A_DIRECTORY,
                f"{path!r} is the workspace root",
                {"path": path, "workspace": str(self.root)},
            )
        return Path(rel).as_posix()

    def absolute(self, rel: str) -> Path:
        """The absolute path of a workspace path; re-confined so no caller can skip the check."""
        return self.root / self.relative(rel)

    def _lexical_relative(self, path: str) -> str:
        """Relative path as named, or the real one when only the real one is inside."""
        joined = os.path.normpath(os.path.join(self.root, path))
        for base in self._bases:
            if _is_within(joined, base):
                return os.path.relpath(joined, base)
        real = os.path.realpath(joined)
        if _is_within(real, str(self.root)):
            return os.path.relpath(real, self.root)
        raise self._outside(path)

    def _check_confined(self, path: str, rel: str) -> str:
        """Refuse paths whose real location is outside the root or in the state dir;
        return the real location of `rel`.

        Both the normalised and the raw spelling are resolved: `link/..` means
        different things lexically and to the kernel, and neither may escape (one
        spelling, the common case, is resolved once: each realpath is a walk).
        """
        normal, raw = str(self.root / rel), os.path.join(self.root, path)
        real = os.path.realpath(normal)
        reals = {real} if raw == normal else {real, os.path.realpath(raw)}
        if not all(_is_within(each, str(self.root)) for each in reals):
            raise self._outside(path)
        in_state = Path(rel).parts[:1] == (STATE_DIR_NAME,) or any(
            _is_within(each, str(self.state_dir)) for each in reals
        )
        if in_state:
            raise ToolError(
                ErrorCode.PERMISSION_DENIED,
                f"{path!r} is inside {STATE_DIR_NAME}/, the daemon's own state",
                {"path": path},
                "use a path outside .editjournal/",
            )
        return real

    def _outside(self, path: str) -> ToolError:
        return ToolError(
            ErrorCode.PATH_OUTSIDE_WORKSPACE,
            f"{path!r} resolves outside the workspace",
            {"path": path, "workspace": str(self.root)},
        )

    # ---------------------------------------------------------------- reading

    def read(self, path: str) -> FileSnapshot:
        """Read a text file's exact bytes; refuse what is too big or not UTF-8 text."""
        rel = self.relative(path)
        _refuse_trailing_slash(path, rel)
        if self.overlay and (pending := self._pending(rel)) is not None:
            return pending  # first: no cache of what is on disk may answer for it
        fd = self._open_confined(rel, os.O_RDONLY | _O_NONBLOCK | _O_BINARY)
        try:
            info = os.fstat(fd)  # on the open fd: the path may change under us
            _require_regular(info, rel)
            self._check_size(info.st_size, rel)
            # Read one byte past the limit: the file may grow after fstat.
            data = _read_up_to(fd, self.max_file_size + 1)
        except OSError as exc:
            raise _translate(exc, rel) from exc
        finally:
            os.close(fd)
        self._check_size(len(data), rel)
        return _snapshot(rel, data, info.st_mtime_ns)

    def stat(self, path: str) -> os.stat_result | None:
        """The stat of a confined path (following symlinks), or None when it is missing.
        What is on disk: a path in `overlay` (written earlier in this batch) has newer
        content than this says, so a cache keyed by stat must look at `overlay` first."""
        rel = self.relative(path)
        try:
            located = self._locate(rel)
        except ToolError as e:
            if e.code is ErrorCode.FILE_NOT_FOUND:
                return None
            raise
        try:
            return os.stat(located.name, dir_fd=located.parent.fd, follow_symlinks=False)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as exc:
            raise _translate(exc, rel) from exc
        finally:
            located.parent.close()

    def fingerprint(self, path: str) -> Fingerprint | None:
        """Size, mtime and SHA-256 of whatever regular file is there now, text or not.

        For the watcher, which must compare contents it may not serve: None when
        the path is missing, not a regular file, or no longer confined. `text` is
        the decoded content when the file is text within the size limit.
        """
        try:
            rel = self.relative(path)
            pending = self._pending(rel) if self.overlay else None
            if pending is not None:
                return Fingerprint(
                    rel, pending.size, pending.mtime_ns, pending.sha256, pending.data, pending.text
                )
            fd = self._open_confined(rel, os.O_RDONLY | _O_NONBLOCK | _O_BINARY)
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
        fd = self._open_confined(rel, os.O_WRONLY | os.O_APPEND | _O_NONBLOCK | _O_BINARY)
        try:
            info = os.fstat(fd)
            _require_regular(info, rel)
            os.write(fd, data)
        except OSError as exc:
            raise _translate(exc, rel) from exc
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
        `durable=False`: the temp file is not fsynced here; `PreparedWrite.sync` does it.
        `sha256`: the caller's hash of these very bytes, so a big file is not hashed twice.
        """
        rel = self.relative(path)
        _refuse_trailing_slash(path, rel)
        data = _as_bytes(data, rel)
        self._check_size(len(data), rel, writing=True)
        text = _decode(data, rel)
        located, existing = self._writable(rel)
        try:
            temp, mtime_ns = _prepare_temp(located.parent.fd, data, existing, rel, durable)
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
        rel = self.relative(path)
        _refuse_trailing_slash(path, rel)
        self._refuse_protected(rel)
        located = self._locate(rel, follow_final=False, refuse=self.protected)
        try:
            info = os.stat(located.name, dir_fd=located.parent.fd, follow_symlinks=False)
            if not stat_mod.S_ISLNK(info.st_mode):  # a link is removed like `rm` does
                _require_regular(info, rel)
                _check_may_change(located, info, rel)  # as any writer would
        except BaseException as exc:
            located.parent.close()
            if isinstance(exc, OSError):
                raise _translate(exc, rel) from exc
            raise
        target = self.root.joinpath(*located.parts)
        empty = FileSnapshot(rel, b"", "", _sha256(b""), 0, 0)
        return PreparedWrite(empty, None, target, located.parent)

    # ------------------------------------------------------- confined access

    def _locate(
        self,
        rel: str,
        *,
        follow_final: bool = True,
        make_parents: bool = False,
        refuse: frozenset[str] = frozenset(),
    ) -> Located:
        """Walk `rel` from the held root fd (daemon/files/confined.py); errors as ToolErrors."""
        try:
            return self._resolver.locate(
                rel, follow_final=follow_final, make_parents=make_parents, refuse=refuse
            )
        except Escape as e:
            if e.kind == "state":
                raise _in_state_dir(rel) from None
            if e.kind == "protected":
                raise _protected(rel, e.name) from None
            raise self._outside(rel) from None
        except (FileExistsError, NotADirectoryError) as exc:
            if not make_parents:
                raise _translate(exc, rel) from exc
            raise ToolError(
                ErrorCode.INVALID_PARAMS,
                f"cannot create {rel}: a parent of it is an existing file",
                {"path": rel},
                "choose a path whose parents are directories",
            ) from exc
        except OSError as exc:
            raise _translate(exc, rel) from exc

    def locate_real(self, rel: str) -> Located | None:
        """The held parent directory of `rel`, a path already walked to its real location
        (a journaled write's target), if it still is exactly there: no component swapped
        for a link or moved. None otherwise. The caller closes `parent`."""
        try:
            located = self._locate(rel, follow_final=False, refuse=self.protected)
        except ToolError:
            return None
        if located.parts != Path(rel).parts:  # the walk followed a link on the way
            located.parent.close()
            return None
        return located

    def _open_confined(self, rel: str, flags: int) -> int:
        """Open the file `rel` really names, never following a link the walk did not check."""
        for _ in range(_SWAP_RETRIES):
            located = self._locate(rel)
            try:
                return os.open(
                    located.name, flags | _O_NOFOLLOW | _O_CLOEXEC, dir_fd=located.parent.fd
                )
            except OSError as exc:
                if exc.errno not in (errno.ELOOP, errno.EMLINK):
                    raise _translate(exc, rel) from exc
            finally:
                located.parent.close()
        raise _kept_changing(rel)

    def _writable(self, rel: str) -> tuple[Located, os.stat_result | None]:
        """The located target of a write and the stat of the file it replaces (None: new).
        Parents are created only once the path is known not to be protected."""
        self._refuse_protected(rel)
        for _ in range(_SWAP_RETRIES):
            located = self._locate(rel, make_parents=True, refuse=self.protected)
            try:
                return located, _replaceable(located, rel)
            except _Swapped:
                located.parent.close()
            except BaseException:
                located.parent.close()
                raise
        raise _kept_changing(rel)

    def _refuse_protected(self, rel: str) -> None:
        for part in Path(rel).parts:
            if part.casefold() in self.protected:
                raise _protected(rel, part)


# -------------------------------------------------------------------- helpers


class _Swapped(Exception):
    """The final name became a symlink between the walk and the stat: walk again."""


def _replaceable(located: Located, rel: str) -> os.stat_result | None:
    """Refuse to replace what `open(path, "w")` could not write, or a hard-linked file."""
    try:
        info = os.stat(located.name, dir_fd=located.parent.fd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise _translate(exc, rel) from exc
    if stat_mod.S_ISLNK(info.st_mode):
        raise _Swapped
    _require_regular(info, rel)
    if info.st_nlink > 1:
        raise ToolError(
            ErrorCode.HARD_LINKED,
            f"{rel} has {info.st_nlink} hard links; the daemon does not replace a linked file",
            {"path": rel, "links": info.st_nlink},
        )
    _check_may_change(located, info, rel)
    return info


def _check_may_change(located: Located, info: os.stat_result, rel: str) -> None:
    """Refuse to replace or remove what `open(path, "w")` could not write: a file without
    a write bit (for root too, as editors and `rm` ask first), one the daemon's user may
    not write, and one whose owner a replacement would change."""
    if not info.st_mode & 0o222:
        raise ToolError(
            ErrorCode.READ_ONLY_FILE,
            f"{rel} is read-only (mode {stat_mod.filemode(info.st_mode)}); nothing was changed",
            {"path": rel, "mode": oct(stat_mod.S_IMODE(info.st_mode))},
            f"make it writable first (chmod u+w {rel}) if it is meant to change",
        )
    writable = os.access(
        located.name,
        os.W_OK,
        dir_fd=located.parent.fd,
        effective_ids=os.access in os.supports_effective_ids,
        follow_symlinks=False,
    )
    if not writable:
        raise ToolError(
            ErrorCode.PERMISSION_DENIED,
            f"{rel} is not writable by the daemon (mode {stat_mod.filemode(info.st_mode)},"
            f" owner uid {info.st_uid}, daemon uid {os.geteuid()}); nothing was written",
            {"path": rel, "mode": oct(stat_mod.S_IMODE(info.st_mode)), "uid": info.st_uid},
        )
    if not _keeps_owner(info):
        raise ToolError(
            ErrorCode.PERMISSION_DENIED,
            f"{rel} belongs to uid {info.st_uid} gid {info.st_gid}; replacing it as uid"
            f" {os.geteuid()} would change its owner, so nothing was written",
            {"path": rel, "uid": info.st_uid, "gid": info.st_gid},
        )


def _keeps_owner(info: os.stat_result) -> bool:
    """Whether the replacement can carry the old owner: root may give files away; anyone
    else only keeps their own, with one of their own groups."""
    if not hasattr(os, "geteuid") or os.geteuid() == 0:
        return True
    groups = {os.getegid(), *os.getgroups()}
    return info.st_uid == os.geteuid() and info.st_gid in groups


def _refuse_trailing_slash(path: str, rel: str) -> None:
    """`inner.txt/` names a directory to the kernel: never serve or write a file for it."""
    if path.endswith(("/", os.sep)):
        raise ToolError(
            ErrorCode.INVALID_PARAMS,
            f"{path!r} ends with '/', which names a directory, not the file {rel}",
            {"path": path},
            f"drop the trailing '/': {rel}",
        )


def _in_state_dir(rel: str) -> ToolError:
    return ToolError(
        ErrorCode.PERMISSION_DENIED,
        f"{rel!r} is inside {STATE_DIR_NAME}/, the daemon's own state",
        {"path": rel},
        "use a path outside .editjournal/",
    )


def _protected(rel: str, name: str) -> ToolError:
    return ToolError(
        ErrorCode.PATH_PROTECTED,
        f"{rel} is inside {name}/: the daemon never writes git's own files",
        {"path": rel},
    )


def _kept_changing(rel: str) -> ToolError:
    return ToolError(
        ErrorCode.FILE_CHANGING,
        f"{rel} kept changing while it was opened (a symlink swapped over it); nothing was done",
        {"path": rel},
    )


def _check_syntax(path: str) -> None:
    """Refuse what no file system could name, before any lookup."""
    if not isinstance(path, str) or not path:
        raise ToolError(ErrorCode.INVALID_PARAMS, "path must be a non-empty string", {"path": path})
    if "\x00" in path:
        raise ToolError(ErrorCode.INVALID_PARAMS, "path contains a NUL character", {"path": path})


def _read_up_to(fd: int, limit: int) -> bytes:
    """Read until EOF or `limit` bytes, in binary: os.read may return short counts."""
    chunks: list[bytes] = []
    remaining = limit
    while remaining > 0:
        chunk = os.read(fd, min(remaining, _READ_CHUNK))
        if not chunk:
            break
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def _is_within(path: str, base: str) -> bool:
    """Lexical containment on absolute, normalised paths (`/a/bc` is not in `/a/b`)."""
    if os.sep == "/":  # a prefix test, exact for normalised POSIX paths; commonpath is slow
        return path == base or path.startswith(base if base.endswith("/") else base + "/")
    try:
        return os.path.commonpath([path, base]) == base
    except ValueError:  # different drives on Windows
        return False


def _require_regular(info: os.stat_result, rel: str) -> None:
    """Only regular files are served: reading a FIFO or a device could hang or never end."""
    if stat_mod.S_ISDIR(info.st_mode):
        raise ToolError(ErrorCode.IS_A_DIRECTORY, f"{rel} is a directory", {"path": rel})
    if not stat_mod.S_ISREG(info.st_mode):
        raise ToolError(
            ErrorCode.BINARY_FILE,
            f"{rel} is not a regular file",
            {"path": rel, "reason": "not a regular file"},
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


def _snapshot(rel: str, data: bytes, mtime_ns: int) -> FileSnapshot:
    return FileSnapshot(rel, data, _decode(data, rel), _sha256(data), len(data), mtime_ns)


def _prepare_temp(
    directory: int, data: bytes, existing: os.stat_result | None, rel: str, durable: bool = True
) -> tuple[str, int]:
    """Write `data` to a temp file in the held `directory`; return its name and mtime_ns."""
    fd, temp = _create_temp(directory, rel)
    try:
        with os.fdopen(fd, "wb") as handle:  # owns fd from here on, closes it on error
            mtime_ns = _fill_temp(handle, data, existing, durable)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(temp, dir_fd=directory)
        if isinstance(exc, OSError):
            raise _translate(exc, rel) from exc
        raise
    return temp, mtime_ns


def _displaced_name() -> str:
    return f"{DISPLACED_PREFIX}{secrets.token_hex(8)}"


def _create_temp(directory: int, rel: str) -> tuple[int, str]:
    """Create an exclusive temp file; mode 0o644 so the kernel applies the umask.

    Not `tempfile.mkstemp`: it creates 0o600, and reading the umask to widen it
    again (`os.umask` set-and-restore) is racy in a threaded daemon.
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_BINARY | _O_CLOEXEC | _O_NOFOLLOW
    for _ in range(_TEMP_ATTEMPTS):
        temp = f"{TEMP_PREFIX}{secrets.token_hex(8)}"
        try:
            return os.open(temp, flags, NEW_FILE_MODE, dir_fd=directory), temp
        except FileExistsError:
            continue
        except OSError as exc:
            raise _translate(exc, rel) from exc
    raise ToolError(
        ErrorCode.INTERNAL_ERROR, f"could not create a temp file beside {rel}", {"path": rel}
    )


def _fill_temp(
    handle: BinaryIO, data: bytes, existing: os.stat_result | None, durable: bool = True
) -> int:
    """Write, carry over owner and mode, fsync (if `durable`); return the final mtime_ns."""
    handle.write(data)
    handle.flush()
    fd = handle.fileno()
    if existing is not None:
        _copy_owner_and_mode(fd, existing)
    if durable:
        os.fsync(fd)
    return os.fstat(fd).st_mtime_ns


def _copy_owner_and_mode(fd: int, existing: os.stat_result) -> None:
    """Keep the replaced file's permission bits and its owner.

    chown first: changing the owner clears setuid/setgid bits that chmod restores.
    """
    if hasattr(os, "fchown") and (existing.st_uid, existing.st_gid) != _owner(fd):
        os.fchown(fd, existing.st_uid, existing.st_gid)  # `_keeps_owner` said it may
    if hasattr(os, "fchmod"):
        os.fchmod(fd, stat_mod.S_IMODE(existing.st_mode))


def _owner(fd: int) -> tuple[int, int]:
    info = os.fstat(fd)
    return info.st_uid, info.st_gid


_REFUSED = frozenset({errno.EACCES, errno.EPERM, errno.EROFS})
_BAD_NAME = frozenset({errno.ELOOP, errno.ENAMETOOLONG})
_NO_SPACE = frozenset({errno.ENOSPC, errno.EDQUOT})


def _translate(exc: OSError, rel: str) -> ToolError:
    """Map an OSError onto the catalogue, so no bare OSError leaves the workspace."""
    details = {"path": rel}
    if isinstance(exc, (FileNotFoundError, NotADirectoryError)):
        return ToolError(ErrorCode.FILE_NOT_FOUND, f"{rel} does not exist", details)
    if isinstance(exc, IsADirectoryError):
        return ToolError(ErrorCode.IS_A_DIRECTORY, f"{rel} is a directory", details)
    if exc.errno in _REFUSED:
        return ToolError(ErrorCode.PERMISSION_DENIED, f"{rel}: {exc.strerror}", details)
    if exc.errno in _NO_SPACE:
        return ToolError(
            ErrorCode.DISK_FULL,
            f"no space left to write {rel} ({exc.strerror}); nothing was written",
            {"path": rel, "errno": errno.errorcode.get(exc.errno or 0, "unknown")},
        )
    if exc.errno in _BAD_NAME:
        return ToolError(ErrorCode.INVALID_PARAMS, f"{rel}: {exc.strerror}", details)
    name = errno.errorcode.get(exc.errno or 0, "unknown")
    return ToolError(
        ErrorCode.INTERNAL_ERROR,
        f"{rel}: {exc.strerror or exc}",
        {"path": rel, "errno": name},
    )


def is_utf8_name(name: str) -> bool:
    """False for a file name whose bytes are not UTF-8 (decoded with surrogate escapes):
    the journal and the protocol speak UTF-8, so such files are left alone."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
