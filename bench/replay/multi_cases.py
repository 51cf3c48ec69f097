"""Cases for the multi-hunk ("memory") replay, cut from a real project's history.

A case is one commit's change to one file with two or more hunks (as `git diff
-U0` cuts them): the parent content, every hunk, and which one B lands first
(rotating over the cases, as `cases.extract` rotates). A then writes all the
others, top to bottom, from its memory. Only git reads the repository; nothing
in it is imported or run.
"""

from __future__ import annotations

import lzma
import subprocess
from pathlib import Path

import msgspec

from bench.replay.cases import Hunk, changed_file, git


class MultiCase(msgspec.Struct, frozen=True):
    """One commit's change to one file; `hunks` in file order, `hunks[b]` lands first."""

    commit: str
    path: str
    parent: str
    hunks: tuple[Hunk, ...]
    b: int

    @property
    def lines(self) -> list[str]:
        return self.parent.split("\n")[:-1]

    @property
    def b_hunk(self) -> Hunk:
        return self.hunks[self.b]

    @property
    def a_hunks(self) -> list[Hunk]:
        """A's hunks, top to bottom: the order A writes them."""
        return [h for i, h in enumerate(self.hunks) if i != self.b]

    def gap(self, h: Hunk) -> int:
        """Unchanged parent lines between `h` and B's hunk."""
        first, second = sorted((h, self.b_hunk), key=lambda x: (x.start, x.end))
        return second.start - first.end

    @property
    def min_gap(self) -> int:
        """The nearest A hunk's distance to B's: a play is "far apart" when this is."""
        return min(self.gap(h) for h in self.a_hunks)

    def applied(self, *hunks: Hunk) -> str:
        """The parent with `hunks` applied (disjoint parent ranges, any order)."""
        return applied(self.lines, hunks)

    @property
    def expected(self) -> str:
        """What a correct play leaves: the parent with every hunk of the commit."""
        return self.applied(*self.hunks)


def applied(lines: list[str], hunks: tuple[Hunk, ...] | list[Hunk]) -> str:
    """`lines` (a parent, without endings) with `hunks` applied, as file text."""
    out = list(lines)
    for h in sorted(hunks, key=lambda h: (h.start, h.end), reverse=True):
        out[h.start : h.end] = h.new
    return "".join(line + "\n" for line in out)


def extract(repo: Path, count: int, suffix: str = ".py") -> list[MultiCase]:
    """Up to `count` cases, newest commit first: every modified file with two or more
    hunks; which hunk B lands rotates with the case's number."""
    cases: list[MultiCase] = []
    for commit, path in _modified(repo, suffix):
        case = _case(repo, commit, path, len(cases))
        if case is not None:
            cases.append(case)
            if len(cases) == count:
                break
    return cases


def _modified(repo: Path, suffix: str) -> list[tuple[str, str]]:
    """(commit, path) of every modified file ending in `suffix`, newest commit first."""
    out = []
    for commit in _commits(repo):
        try:
            names = git(repo, "diff", "--name-only", "--diff-filter=M", f"{commit}^", commit)
        except subprocess.CalledProcessError:
            continue  # the root commit
        out += [(commit, path) for path in names.splitlines() if path.endswith(suffix)]
    return out


def _case(repo: Path, commit: str, path: str, n: int) -> MultiCase | None:
    found = changed_file(repo, commit, path)
    if found is None:
        return None
    parent, child, found_hunks = found
    hunks = tuple(found_hunks)
    if len(hunks) < 2 or applied(parent.split("\n")[:-1], hunks) != child:
        return None  # a diff we cannot replay exactly is not a case
    return MultiCase(commit, path, parent, hunks, n % len(hunks))


def save(cases: list[MultiCase], path: Path) -> None:
    path.write_bytes(lzma.compress(msgspec.json.encode(cases), preset=9))


def load(path: Path) -> list[MultiCase]:
    return msgspec.json.decode(lzma.decompress(path.read_bytes()), type=list[MultiCase])


def _commits(repo: Path) -> list[str]:
    """Every commit that is not a merge, newest first, on every line of history: a
    project that merges pull requests keeps most of its work off the first-parent line
    (click's 3,799-line core.py is only there)."""
    return git(repo, "log", "--no-merges", "--format=%H").split()
