"""editjournal's git hooks: `post-commit` notes each new commit (`editjournal git-notes
--hook HEAD`), `post-rewrite` carries the notes of amended and rebased commits onto
their new commits (`git-notes --hook --rewritten amend|rebase`, git's pairs on stdin).

Where: the directory git runs hooks from, as git itself says it (`git rev-parse
--git-path hooks`), so `core.hooksPath` is honoured. A hook file that is not ours is
never overwritten nor edited: it is kept, renamed `NAME.before-editjournal`, and ours
calls it first with the same arguments and input and exits with its status (what
pre-commit's installer does with a "legacy" hook); `uninstall` puts it back. Ours is
known by its marker line. A hook of ours never fails the git command: editjournal's
own failure is one line on stderr, and only the kept hook's status is returned.

Nothing here needs a daemon. Every change is a whole file written beside its target
and renamed over it; a directory that cannot be written is refused before any change.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from editjournal.schemas.errors import EditJournalError

MARKER = "# editjournal-git-hook"
KEPT_SUFFIX = ".before-editjournal"
HOOKS = ("post-commit", "post-rewrite")


class GitHookError(EditJournalError):
    """A hook directory that cannot be found or written; nothing was changed."""


def hooks_dir(start: Path) -> Path:
    """Where git runs this repository's hooks from (`core.hooksPath` honoured)."""
    try:
        top = _git(start, "rev-parse", "--show-toplevel")
        found = _git(Path(top), "rev-parse", "--git-path", "hooks")
    except FileNotFoundError as e:
        raise GitHookError("git is not installed: no `git` program on PATH") from e
    except subprocess.CalledProcessError as e:
        raise GitHookError(f"not a git repository: {start}") from e
    return Path(top) / found  # an absolute `found` (core.hooksPath) stays itself


def _git(where: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=where, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def script(hook: str, program: list[str]) -> str:
    """Our hook's text: the kept hook first, then editjournal, whose failure never counts."""
    me = shlex.join([*program, "git-notes", "--hook"])
    kept = f'kept="$(dirname "$0")/{hook}{KEPT_SUFFIX}"'
    head = f"#!/bin/sh\n{MARKER}: {hook} (`editjournal hooks uninstall git` removes it)\n"
    if hook == "post-rewrite":  # the pairs on stdin go to both
        body = (
            f'{kept}\nstatus=0\ninput="$(cat)"\n'
            'if [ -x "$kept" ]; then printf \'%s\\n\' "$input" | "$kept" "$@"; status=$?; fi\n'
            f'printf \'%s\\n\' "$input" | {me} --rewritten "$1" || true\n'
        )
    else:
        body = (
            f'{kept}\nstatus=0\nif [ -x "$kept" ]; then "$kept" "$@"; status=$?; fi\n'
            f"{me} HEAD </dev/null || true\n"
        )
    return head + body + "exit $status\n"


def is_ours(path: Path) -> bool:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return any(line.startswith(MARKER) for line in f.read(4096).splitlines()[:3])
    except (FileNotFoundError, IsADirectoryError):
        return False


@dataclass(frozen=True)
class Done:
    hook: str
    path: Path
    outcome: (
        str  # installed | updated | unchanged | chained | removed | restored | absent | foreign
    )


def install(directory: Path, program: list[str], dry_run: bool = False) -> list[Done]:
    _writable(directory)
    done = []
    for hook in HOOKS:
        path, text = directory / hook, script(hook, program)
        if is_ours(path):
            outcome = "unchanged" if path.read_text() == text else "updated"
        elif path.exists() or path.is_symlink():
            kept = directory / f"{hook}{KEPT_SUFFIX}"
            if kept.exists() or kept.is_symlink():
                raise GitHookError(f"{path} is not editjournal's and {kept} exists: move one away")
            outcome = "chained"
        else:
            outcome = "installed"
        if not dry_run and outcome != "unchanged":
            _write(path, text, keep=outcome == "chained")
        done.append(Done(hook, path, outcome))
    return done


def uninstall(directory: Path, dry_run: bool = False) -> list[Done]:
    done = []
    for hook in HOOKS:
        path, kept = directory / hook, directory / f"{hook}{KEPT_SUFFIX}"
        if not is_ours(path):
            done.append(Done(hook, path, "foreign" if path.exists() else "absent"))
            continue
        _writable(directory)
        restored = kept.exists() or kept.is_symlink()
        if not dry_run:
            if restored:
                os.replace(kept, path)
            else:
                path.unlink()
        done.append(Done(hook, path, "restored" if restored else "removed"))
    return done


def state(directory: Path) -> dict[str, str]:
    """Per hook: installed, chained (a kept hook is called first), missing or foreign."""
    found = {}
    for hook in HOOKS:
        path = directory / hook
        if is_ours(path):
            chained = (directory / f"{hook}{KEPT_SUFFIX}").exists()
            found[hook] = "installed, calling the kept hook first" if chained else "installed"
        else:
            found[hook] = "not editjournal's" if path.exists() else "missing"
    return found


def _writable(directory: Path) -> None:
    """Refuse before any change: a directory we could not finish writing in."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=directory, prefix=".editjournal-probe.")
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        raise GitHookError(
            f"cannot write the hook directory {directory}: {e.strerror}; nothing changed"
        ) from e


def _write(path: Path, text: str, keep: bool) -> None:
    """Ours in place of `path`; with `keep`, the hook there first renamed to its kept
    name (and put back if ours could not be put in its place)."""
    kept = path.with_name(f"{path.name}{KEPT_SUFFIX}")
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".new")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(temp, 0o755)
        if keep:
            os.rename(path, kept)
        try:
            os.replace(temp, path)
        except BaseException:
            if keep:
                os.rename(kept, path)
            raise
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)
        raise
