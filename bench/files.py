"""Synthetic but valid Python sources of any length, and the in-process contenders
(the floors): what reading, hashing and durably rewriting a file costs without
a daemon, and a shadow-git commit per edit."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import xxhash

BLOCK = 9  # lines per generated function


def python_source(lines: int) -> str:
    """`lines` lines of plausible, compilable Python: functions, docstrings, repeats."""
    out: list[str] = []
    for i in range(lines // BLOCK):
        out += [
            f"def handler_{i}(request, limit={i % 50}):",
            f'    """Handle request {i}: validate, look up, answer."""',
            "    if request is None:",
            "        return None",
            f"    value = request.get('key_{i % 97}', {i})",
            "    for item in range(limit):",
            f"        value += item * {i % 13}",
            "    return value",
            "",
        ]
    out += [f"# padding {k}" for k in range(lines - len(out))]
    return "\n".join(out) + "\n"


def value_line(near: int) -> int:
    """The 1-based number of a unique, editable `value = ...` line near line `near`."""
    return max(0, (near - 1) // BLOCK) * BLOCK + 5


def value_text(line: int, tag: str) -> str:
    """New text for `value_line` number `line` (unique per `tag`, still valid Python)."""
    return f"    value = request.get('key_{line // BLOCK}', {line})  # {tag}"


def read_hash(path: Path) -> None:
    """The read floor: read, decode, split, xxh3 every line (what `hashes` needs)."""
    text = path.read_bytes().decode()
    [xxhash.xxh3_64_hexdigest(line.encode()) for line in text.splitlines()]


def durable_replace(path: Path, line: int, text: str) -> None:
    """The write floor: read, replace one line, write a temp file, fsync, rename, fsync
    the directory (without that last fsync a crash can lose the new name)."""
    lines = path.read_text().splitlines(keepends=True)
    lines[line - 1] = text + "\n"
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(temp, "w") as out:
        out.write("".join(lines))
        out.flush()
        os.fsync(out.fileno())
    os.replace(temp, path)
    directory = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)


def durable_edits(path: Path, line: int) -> Callable[[], None]:
    """`durable_replace` again and again, each time with new text."""
    count = [0]

    def edit() -> None:
        count[0] += 1
        durable_replace(path, line, value_text(line, f"local {count[0]}"))

    return edit


class ShadowGit:
    """A git repository beside a work tree, one commit per edit: the usual way to give
    an agent's edits a history without a daemon. git's own defaults (no fsync)."""

    def __init__(self, work: Path, git_dir: Path) -> None:
        self.base = ["git", f"--git-dir={git_dir}", f"--work-tree={work}"]
        self.base += ["-c", "user.name=bench", "-c", "user.email=bench@localhost"]
        self.work = work
        self.run("init", "-q")
        self.run("add", "-A")
        self.run("commit", "-q", "-m", "start")

    def run(self, *argv: str) -> None:
        subprocess.run([*self.base, *argv], check=True, capture_output=True)

    def edits(
        self, name: str, line: int, text: Callable[[int], str] | None = None
    ) -> Callable[[], None]:
        """Replace line `line` of `name` by `text(k)` for the k-th edit (a plain write),
        and commit it."""
        path, count = self.work / name, [0]
        make = text or (lambda k: value_text(line, f"git {k}"))

        def edit() -> None:
            count[0] += 1
            lines = path.read_text().splitlines(keepends=True)
            lines[line - 1] = make(count[0]) + "\n"
            path.write_text("".join(lines))
            self.run("commit", "-q", "-a", "-m", f"edit {count[0]}")

        return edit

    def gc(self) -> None:
        self.run("gc", "-q", "--prune=now")
