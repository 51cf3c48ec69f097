"""Cases for the stale-edit replay, cut from a real project's history.

A case is one commit's change to one file that has two or more hunks (as
`git diff -U0` cuts them): the parent content, hunk B (which lands first) and
hunk A (written afterwards from the parent, i.e. from a stale view), and the
content with both applied — what a correct tool must produce. Only git reads
the repository; nothing in it is imported or run.
"""

from __future__ import annotations

import lzma
import re
import subprocess
from pathlib import Path

import msgspec

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", re.MULTILINE)
MAX_LINES = 4000  # parent files larger than this are skipped (they only slow the run)


class Hunk(msgspec.Struct, frozen=True):
    """Parent lines [start, end) (0-based) become `new`; start == end inserts before start."""

    start: int
    end: int
    new: tuple[str, ...]


class Case(msgspec.Struct, frozen=True):
    commit: str
    path: str
    parent: str
    b: Hunk
    a: Hunk

    @property
    def lines(self) -> list[str]:
        return self.parent.split("\n")[:-1]

    @property
    def gap(self) -> int:
        """Unchanged parent lines between the two hunks."""
        first, second = sorted((self.a, self.b), key=lambda h: (h.start, h.end))
        return second.start - first.end

    def applied(self, *hunks: Hunk) -> str:
        lines = self.lines
        for h in sorted(hunks, key=lambda h: h.start, reverse=True):
            lines[h.start : h.end] = h.new
        return "".join(line + "\n" for line in lines)


def git(repo: Path, *args: str) -> str:
    """The output of a read-only git command run in `repo` (decoded as UTF-8)."""
    out = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, check=True)
    return out.stdout.decode("utf-8")


def diff_hunks(diff: str, child: list[str]) -> list[Hunk]:
    """The hunks of a `git diff -U0` of one file, their new lines taken from the child."""
    hunks = []
    for m in _HUNK.finditer(diff):
        a, b = int(m.group(1)), int(m.group(2) or 1)
        c, d = int(m.group(3)), int(m.group(4) or 1)
        start = a - 1 if b else a
        hunks.append(Hunk(start, start + b, tuple(child[c - 1 : c - 1 + d] if d else ())))
    return hunks


def extract(repo: Path, count: int, suffix: str = ".py") -> list[Case]:
    """Up to `count` cases, newest commit first, one per changed file with two or more
    hunks: one neighbouring pair (which pair, and which lands first, rotate)."""
    cases: list[Case] = []
    commits = git(repo, "log", "--no-merges", "--format=%H", "--first-parent").split()
    for commit in commits:
        try:
            names = git(repo, "diff", "--name-only", "--diff-filter=M", f"{commit}^", commit)
        except subprocess.CalledProcessError:
            continue  # the root commit
        for path in names.split():
            case = _case(repo, commit, path, len(cases)) if path.endswith(suffix) else None
            if case is not None:
                cases.append(case)
                if len(cases) == count:
                    return cases
    return cases


def changed_file(repo: Path, commit: str, path: str) -> tuple[str, str, list[Hunk]] | None:
    """The file before and after the commit, and its `git diff -U0` hunks; None for a
    file a case cannot be cut from (not UTF-8, CRs, no final newline, too long)."""
    try:
        parent = git(repo, "show", f"{commit}^:{path}")
        child = git(repo, "show", f"{commit}:{path}")
    except (subprocess.CalledProcessError, UnicodeDecodeError):
        return None
    if "\r" in parent + child or not parent.endswith("\n") or not child.endswith("\n"):
        return None
    if parent.count("\n") > MAX_LINES:
        return None
    diff = git(repo, "diff", "-U0", "--no-color", f"{commit}^", commit, "--", path)
    return parent, child, diff_hunks(diff, child.split("\n")[:-1])


def _case(repo: Path, commit: str, path: str, n: int) -> Case | None:
    found = changed_file(repo, commit, path)
    if found is None:
        return None
    parent, _, hunks = found
    if len(hunks) < 2:
        return None
    i = n % (len(hunks) - 1)
    first, second = hunks[i], hunks[i + 1]
    b, a = (first, second) if n % 2 == 0 else (second, first)
    return Case(commit, path, parent, b, a)


def save(cases: list[Case], path: Path) -> None:
    path.write_bytes(lzma.compress(msgspec.json.encode(cases), preset=9))


def load(path: Path) -> list[Case]:
    return msgspec.json.decode(lzma.decompress(path.read_bytes()), type=list[Case])
