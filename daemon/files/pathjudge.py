"""A caller's path judged against the workspace root, and walked to where it really is.

Confinement in two steps. First a judgement (`relative`): the caller's path becomes
the workspace-relative POSIX path it names, refused when any spelling of it resolves
(through `..` or symlinks) outside the root or into the daemon's own state directory
`.editjournal/`. That judgement is lexical and `realpath` based, so a link may change
after it; the second step is what really confines: every open, create, rename and
unlink walks the judged path from a held root fd (`locate`, daemon/files/confined.py),
so a symlink swapped in meanwhile makes the open fail, never escape.

It opens a file only to hand the fd to its caller (`open_confined`): it never reads,
writes or decides what a file may hold. Every failure is a catalogue `ToolError`.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterator
from pathlib import Path

from editjournal.daemon.files.confined import Escape, Located, Resolver
from editjournal.daemon.files.fileio import SWAP_RETRIES, kept_changing, translate
from editjournal.schemas.errors import ErrorCode, ToolError

STATE_DIR_NAME = ".editjournal"

_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


class PathJudge:
    """Judges and walks the paths under one root (an existing, resolved directory)."""

    def __init__(self, root: Path, given: str) -> None:
        self.root: Path = root
        self.state_dir: Path = root / STATE_DIR_NAME
        # Absolute paths may name the root as the caller knew it (`given`, e.g. through a
        # symlinked parent), so both spellings count as "inside" lexically.
        self._bases: tuple[str, ...] = tuple(dict.fromkeys((str(root), given)))
        # Every open, create, rename and unlink is walked from this held root fd.
        self._resolver = Resolver(str(root), self._bases, STATE_DIR_NAME)
        # Names no write may pass through (casefolded): `.git` holds hooks and config
        # that run code on the user's next git command.
        self.protected: frozenset[str] = frozenset({".git"})
        # `relative`'s answers while one request runs (`one_request`): a request names
        # its path several times (stat, read, snapshot) and each answer costs realpath
        # walks; a link may change between requests, so the memo lives for one only.
        self._judged: dict[str, str] | None = None

    @contextlib.contextmanager
    def one_request(self) -> Iterator[None]:
        """Within this block, `relative` judges each spelling of a path once (nested
        blocks share the outer one's answers)."""
        if self._judged is not None:
            yield
            return
        self._judged = {}
        try:
            yield
        finally:
            self._judged = None

    # ------------------------------------------------------------- judgement

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
        try:  # a first, lexical judgement; the open itself is what confines (locate)
            rel = self._lexical_relative(path)
            real = self._check_confined(path, rel)
            is_root = rel == "." or real == str(self.root)
        except OSError as exc:  # realpath met a link swapped mid-way
            raise kept_changing(path) from exc
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

    # ------------------------------------------------------------------ walks

    def locate(
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
                raise translate(exc, rel) from exc
            raise ToolError(
                ErrorCode.INVALID_PARAMS,
                f"cannot create {rel}: a parent of it is an existing file",
                {"path": rel},
                "choose a path whose parents are directories",
            ) from exc
        except OSError as exc:
            raise translate(exc, rel) from exc

    def locate_real(self, rel: str) -> Located | None:
        """The held parent directory of `rel`, a path already walked to its real location
        (a journaled write's target), if it still is exactly there: no component swapped
        for a link or moved. None otherwise. The caller closes `parent`."""
        try:
            located = self.locate(rel, follow_final=False, refuse=self.protected)
        except ToolError:
            return None
        if located.parts != Path(rel).parts:  # the walk followed a link on the way
            located.parent.close()
            return None
        return located

    def open_confined(self, rel: str, flags: int) -> int:
        """Open the file `rel` really names, never following a link the walk did not check."""
        for _ in range(SWAP_RETRIES):
            located = self.locate(rel)
            try:
                return os.open(
                    located.name, flags | _O_NOFOLLOW | _O_CLOEXEC, dir_fd=located.parent.fd
                )
            except OSError as exc:
                if exc.errno not in (errno.ELOOP, errno.EMLINK):
                    raise translate(exc, rel) from exc
            finally:
                located.parent.close()
        raise kept_changing(rel)

    def refuse_protected(self, rel: str) -> None:
        """Refuse a path through a protected name (`.git`), before any walk creates parents."""
        for part in Path(rel).parts:
            if part.casefold() in self.protected:
                raise _protected(rel, part)


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


def _check_syntax(path: str) -> None:
    """Refuse what no file system could name, before any lookup."""
    if not isinstance(path, str) or not path:
        raise ToolError(ErrorCode.INVALID_PARAMS, "path must be a non-empty string", {"path": path})
    if "\x00" in path:
        raise ToolError(ErrorCode.INVALID_PARAMS, "path contains a NUL character", {"path": path})


def _is_within(path: str, base: str) -> bool:
    """Lexical containment on absolute, normalised paths (`/a/bc` is not in `/a/b`)."""
    if os.sep == "/":  # a prefix test, exact for normalised POSIX paths; commonpath is slow
        return path == base or path.startswith(base if base.endswith("/") else base + "/")
    try:
        return os.path.commonpath([path, base]) == base
    except ValueError:  # different drives on Windows
        return False
