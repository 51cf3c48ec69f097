"""Which workspace paths the watcher ignores (and a checkpoint does not cover).

Always: `.git/`, the daemon's own `.editjournal/`, and the daemon's temp
files. Then the workspace's `.gitignore` and `.editjournalignore` files (the
root ones and nested ones, each applying below its own directory, with
gitignore semantics from the `pathspec` library rather than hand-rolled
globbing; `.editjournalignore` is for what git tracks but the daemon should
leave alone) and a configurable extra list of gitignore-style patterns. Specs
are loaded lazily and dropped when one of their files changes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import pathspec

from editjournal.daemon.files.pathjudge import STATE_DIR_NAME
from editjournal.daemon.files.tempfiles import TEMP_PREFIX

ALWAYS_IGNORED_DIRS = frozenset({".git", STATE_DIR_NAME})
GITIGNORE = ".gitignore"
IGNORE_FILES = (GITIGNORE, ".editjournalignore")


def is_ignore_file(path: str) -> bool:
    """Whether `path` (relative, or a bare name) is a file of ignore rules."""
    return path.rpartition("/")[2] in IGNORE_FILES


class Ignorer:
    """Answers "is this workspace-relative path ignored?"; not thread-safe."""

    def __init__(self, root: Path, extra_patterns: Sequence[str] = ()) -> None:
        self.root = root
        self.extra_patterns = list(extra_patterns)
        self._extra = pathspec.GitIgnoreSpec.from_lines(self.extra_patterns)
        self._specs: dict[str, pathspec.GitIgnoreSpec | None] = {}

    def ignored(self, rel: str, is_dir: bool = False) -> bool:
        parts = rel.split("/")
        if parts[0] in ALWAYS_IGNORED_DIRS or parts[-1].startswith(TEMP_PREFIX):
            return True
        if self.extra_patterns and self._extra.match_file(rel + "/" if is_dir else rel):
            return True
        for depth in range(len(parts)):
            directory = "/".join(parts[:depth])
            spec = self._spec(directory)
            below = "/".join(parts[depth:]) + ("/" if is_dir else "")
            if spec is not None and spec.match_file(below):
                return True
        return False

    def files_ignored_in(self, directory: str) -> Callable[[str], bool]:
        """A test for the names of files directly in `directory`, for walks over big
        trees: where no `.gitignore` and no extra pattern applies, only names count."""
        parts = directory.split("/") if directory else []
        if self.extra_patterns or any(
            self._spec("/".join(parts[:depth])) is not None for depth in range(len(parts) + 1)
        ):
            prefix = directory + "/" if directory else ""
            return lambda name: self.ignored(prefix + name)
        at_root = not directory
        return lambda name: (
            name.startswith(TEMP_PREFIX) or (at_root and name in ALWAYS_IGNORED_DIRS)
        )

    def forget(self, gitignore_rel: str) -> None:
        """A `.gitignore` (or `.editjournalignore`) changed: reload its directory's rules
        on next use."""
        directory = gitignore_rel.rpartition("/")[0]
        self._specs.pop(directory, None)

    def _spec(self, directory: str) -> pathspec.GitIgnoreSpec | None:
        if directory not in self._specs:
            self._specs[directory] = self._load(directory)
        return self._specs[directory]

    def _load(self, directory: str) -> pathspec.GitIgnoreSpec | None:
        lines: list[str] = []
        found = False
        for name in IGNORE_FILES:
            try:
                text = (self.root / directory / name).read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            found = True
            lines += text.splitlines()
        return pathspec.GitIgnoreSpec.from_lines(lines) if found else None
