"""Path resolution that holds under races: confinement enforced at open time.

Checking a path and then handing it to the kernel lets a symlink swapped in between
redirect the open (or the rename) outside the workspace. Here every component is
opened relative to a held directory fd with `O_NOFOLLOW`, and symlinks are followed
by this code, never by the kernel: a link's target is spliced into the remaining
components and walked the same way, `..` pops a directory we hold, and nothing may
climb above the root or step into the state directory (or a refused name such as
`.git` for writes). The result is the open directory that holds the final name, so
the caller opens, creates, renames or unlinks that name with `dir_fd` and
`O_NOFOLLOW`: a link swapped in after the walk makes the open fail, never escape.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import PurePosixPath

MAX_LINKS = 40  # like the kernel's limit: a loop of links ends as ELOOP
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_LINK_ERRNOS = frozenset({errno.ELOOP, errno.ENOTDIR, errno.EMLINK})  # EMLINK: BSD


class Escape(Exception):
    """The path leaves the root (`kind` "outside"), or reaches a refused name:
    the state directory ("state") or a protected one such as `.git` ("protected")."""

    def __init__(self, kind: str, name: str = "") -> None:
        super().__init__(kind, name)
        self.kind = kind
        self.name = name


class DirHandle:
    """An open directory fd, closed once (and at the latest when garbage collected)."""

    __slots__ = ("fd",)

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def close(self) -> None:
        fd, self.fd = self.fd, -1
        if fd >= 0:
            with contextlib.suppress(OSError):
                os.close(fd)

    def __del__(self) -> None:
        self.close()


@dataclass(frozen=True, slots=True)
class Located:
    """Where a path really is: the open directory holding `name`, and the real
    components from the root (`parts[-1] == name`)."""

    parent: DirHandle
    name: str
    parts: tuple[str, ...]


class Resolver:
    """Walks workspace-relative paths from a held root directory fd."""

    def __init__(self, root: str, bases: tuple[str, ...], state_name: str) -> None:
        self._root_fd = os.open(root, _DIR_FLAGS)
        self._bases = tuple(PurePosixPath(b).parts for b in bases)
        self._state = state_name.casefold()

    def locate(
        self,
        rel: str,
        *,
        follow_final: bool = True,
        make_parents: bool = False,
        refuse: Collection[str] = (),
    ) -> Located:
        """Resolve `rel` (relative to the root) to its real parent directory and name.

        `follow_final`: a final symlink is followed (written through); else it is the
        name itself (removed like `rm` does). `make_parents`: missing directories are
        created, one `mkdir(dir_fd=...)` at a time. `refuse`: casefolded names that
        no component may have. OSError for what the kernel refuses; Escape as above.
        """
        walk = _Walk(self, refuse)
        try:
            return walk.run(rel, follow_final, make_parents)
        finally:
            walk.close()

    def root_relative(self, target: str) -> list[str] | None:
        """An absolute link target's components below the root, or None if elsewhere.
        Lexical on purpose: what follows the root prefix is walked like any path."""
        parts = PurePosixPath(target).parts
        for base in self._bases:
            if parts[: len(base)] == base:
                return list(parts[len(base) :])
        return None

    def state_identity(self) -> tuple[int, int] | None:
        try:
            info = os.stat(self._state, dir_fd=self._root_fd, follow_symlinks=False)
        except OSError:
            return None
        return info.st_dev, info.st_ino

    def close(self) -> None:
        fd, self._root_fd = self._root_fd, -1
        if fd >= 0:
            with contextlib.suppress(OSError):
                os.close(fd)

    def __del__(self) -> None:
        self.close()


class _Walk:
    """One resolution: a stack of held directory fds and the real names to them."""

    def __init__(self, resolver: Resolver, refuse: Collection[str]) -> None:
        self._resolver = resolver
        self._refuse = refuse
        self._fds: list[int] = [os.dup(resolver._root_fd)]
        self._names: list[str] = []
        self._links = 0

    def run(self, rel: str, follow_final: bool, make_parents: bool) -> Located:
        pending = _components(rel)[::-1]  # a stack: the next component is last
        while pending:
            name = pending.pop()
            if name == "..":
                self._up()
                continue
            self._check_name(name)
            final = not pending
            if final:
                target = _readlink(self._fds[-1], name) if follow_final else None
                if target is None:
                    return self._located(name)
            else:
                target = self._descend(name, make_parents)
                if target is None:
                    continue
            pending.extend(self._follow(target)[::-1])
        raise IsADirectoryError(errno.EISDIR, "the path ends at a directory")

    def _up(self) -> None:
        if not self._names:
            raise Escape("outside")
        os.close(self._fds.pop())
        self._names.pop()

    def _check_name(self, name: str) -> None:
        folded = name.casefold()
        if not self._names and folded == self._resolver._state:
            raise Escape("state", name)
        if folded in self._refuse:
            raise Escape("protected", name)

    def _descend(self, name: str, make_parents: bool) -> str | None:
        """Enter directory `name`; or return its link target when it is a symlink."""
        top = self._fds[-1]
        try:
            fd = os.open(name, _DIR_FLAGS | _NOFOLLOW, dir_fd=top)
        except FileNotFoundError:
            if not make_parents:
                raise
            with contextlib.suppress(FileExistsError):
                os.mkdir(name, 0o777, dir_fd=top)
            return self._descend(name, make_parents=False)
        except OSError as exc:
            if exc.errno not in _LINK_ERRNOS:
                raise
            target = _readlink(top, name)
            if target is None:
                raise  # a file where a directory was expected: ENOTDIR
            return target
        self._fds.append(fd)
        self._names.append(name)
        if len(self._names) == 1 and _identity(fd) == self._resolver.state_identity():
            raise Escape("state", name)  # another spelling of it (a case-insensitive fs)
        return None

    def _follow(self, target: str) -> list[str]:
        """The components a symlink stands for, walked from here (or from the root)."""
        self._links += 1
        if self._links > MAX_LINKS:
            raise OSError(errno.ELOOP, os.strerror(errno.ELOOP))
        if not target.startswith("/"):
            return _components(target)
        below = self._resolver.root_relative(target)
        if below is None:
            raise Escape("outside")
        while self._names:
            self._up()
        return below

    def _located(self, name: str) -> Located:
        parent = DirHandle(self._fds.pop())
        return Located(parent, name, (*self._names, name))

    def close(self) -> None:
        for fd in self._fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        self._fds.clear()


def _components(path: str) -> list[str]:
    return [part for part in path.split("/") if part not in ("", ".")]


def _readlink(dir_fd: int, name: str) -> str | None:
    """The target of symlink `name`, or None when it is not a symlink (or is missing)."""
    try:
        return os.readlink(name, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno in (errno.EINVAL, errno.ENOENT, errno.ENOTDIR):
            return None
        raise


def _identity(fd: int) -> tuple[int, int]:
    info = os.fstat(fd)
    return info.st_dev, info.st_ino
