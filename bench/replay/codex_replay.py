"""The Codex-envelope replay: real commits as Codex `apply_patch` envelopes, Codex beside us.

A case is one commit: every modified file it changed (parent and child
contents), cut by git alone. Its envelope is made by Codex's own generator
(`envelopes.whole`, one whole-file chunk per file, as the issue measured) or
with Codex's 3 lines of context (`envelopes.focused`). No other agent: the agent
reads each file with `read_file`'s defaults (a 2,000-line window), then applies
the envelope with our `apply_patch`; Codex's implementation
(`apply_patch_in_memory`) applies the same envelope to the same parents.
Judged: ours `applied` (the files are the children), `refused` (an error and
no file changed), `wrong` (anything else); Codex's applied (no error) and exact
(its result is the child).
"""

from __future__ import annotations

import lzma
import subprocess
import tempfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import codex_apply_patch
import msgspec

from bench.replay import envelopes
from bench.replay.cases import MAX_LINES, git
from bench.replay.pinned import Serve, server
from bench.replay.run import isolated_environment
from editjournal.client import Client, RequestError

VARIANTS = ("whole", "focused")


class FileChange(msgspec.Struct, frozen=True):
    path: str
    parent: str
    child: str


class CodexCase(msgspec.Struct, frozen=True):
    commit: str
    files: tuple[FileChange, ...]


def extract(repo: Path, count: int, suffix: str = ".py") -> list[CodexCase]:
    """Up to `count` commits, newest first, with every modified `suffix` file; a commit
    with a file git cannot give as plain LF text is left out whole."""
    cases: list[CodexCase] = []
    for commit in _commits(repo):
        case = _case(repo, commit, suffix)
        if case is not None:
            cases.append(case)
            if len(cases) == count:
                break
    return cases


def _case(repo: Path, commit: str, suffix: str) -> CodexCase | None:
    try:
        names = git(repo, "diff", "--name-only", "--diff-filter=M", f"{commit}^", commit)
        paths = [p for p in names.splitlines() if p.endswith(suffix)]
        files = [
            FileChange(p, git(repo, "show", f"{commit}^:{p}"), git(repo, "show", f"{commit}:{p}"))
            for p in paths
        ]
    except (subprocess.CalledProcessError, UnicodeDecodeError):
        return None  # the root commit, or a file that is not UTF-8
    files = [f for f in files if f.parent != f.child]  # a mode change alone is no patch
    if not files or any(_unplayable(f) for f in files):
        return None
    return CodexCase(commit, tuple(files))


def _unplayable(f: FileChange) -> bool:
    text = f.parent + f.child
    return "\r" in text or not f.parent.endswith("\n") or f.parent.count("\n") > MAX_LINES


def save(cases: list[CodexCase], path: Path) -> None:
    path.write_bytes(lzma.compress(msgspec.json.encode(cases), preset=9))


def load(path: Path) -> list[CodexCase]:
    return msgspec.json.decode(lzma.decompress(path.read_bytes()), type=list[CodexCase])


def envelope(case: CodexCase, prefix: str, variant: str) -> str:
    """The commit's envelope, its paths under `prefix/` (one directory per play)."""
    changes = {f"{prefix}/{f.path}": (f.parent, f.child) for f in case.files}
    if variant == "whole":
        return envelopes.whole_many(changes)
    sections = [envelopes.focused_section(p, a, b) for p, (a, b) in changes.items()]
    return f"{envelopes.BEGIN}\n{''.join(sections)}{envelopes.END}"


@dataclass(frozen=True)
class CodexVerdict:
    case: int
    commit: str
    variant: str
    files: int
    lines: int  # the largest parent's line count
    ours: str  # applied | refused | wrong
    codex_applied: bool
    codex_exact: bool  # Codex's result is the child
    code: str | None = None
    message: str = ""


def run(
    cases: Sequence[CodexCase], variants: Sequence[str] = VARIANTS, serve: Serve | None = None
) -> list[CodexVerdict]:
    with tempfile.TemporaryDirectory(prefix="ej-codex-") as tmp, isolated_environment(Path(tmp)):
        root = Path(tmp) / "ws"
        plays = [(i, v) for i in range(len(cases)) for v in variants]
        for i, v in plays:
            for f in cases[i].files:
                target = root / _prefix(i, v) / f.path
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(f.parent)
        with (serve or server(None))(root), Client(root, "a", autostart=False) as agent:
            return [_play(agent, i, cases[i], v) for i, v in plays]


def _prefix(i: int, variant: str) -> str:
    return f"k{i:03d}_{variant}"


def _play(agent: Client, i: int, case: CodexCase, variant: str) -> CodexVerdict:
    prefix = _prefix(i, variant)
    patch = envelope(case, prefix, variant)
    theirs, codex_exact = _codex(case, prefix, patch)
    lines = max(f.parent.count("\n") for f in case.files)
    verdict = partial(CodexVerdict, i, case.commit, variant, len(case.files), lines)
    for f in case.files:
        agent.read_file(f"{prefix}/{f.path}")  # the defaults: the first 2,000 lines
    try:
        agent.apply_patch(patch)
    except RequestError as e:
        same = _contents(agent.root, prefix, case) == [f.parent for f in case.files]
        ours = "refused" if same else "wrong"
        return verdict(ours, theirs, codex_exact, e.code, e.message[:300])
    exact = _contents(agent.root, prefix, case) == [f.child for f in case.files]
    return verdict("applied" if exact else "wrong", theirs, codex_exact)


def _codex(case: CodexCase, prefix: str, patch: str) -> tuple[bool, bool]:
    """Codex's implementation on the same parents: (applied, its result is the child)."""
    parents = {f"{prefix}/{f.path}": f.parent for f in case.files}
    try:
        got = codex_apply_patch.apply_patch_in_memory(patch, parents).files
    except Exception:  # Codex's refusal, whatever it raises
        return False, False
    return True, all(got.get(f"{prefix}/{f.path}") == f.child for f in case.files)


def _contents(root: Path, prefix: str, case: CodexCase) -> list[str]:
    return [(root / prefix / f.path).read_text() for f in case.files]


@dataclass
class CodexSummary:
    variant: str
    commits: int
    codex_applied: int
    codex_exact: int
    applied: int
    applied_where_codex: int  # of the commits Codex applied, how many we applied
    wrong: int
    codes: dict[str, int] = field(default_factory=dict)

    def row(self) -> str:
        n = max(1, self.commits)
        return (
            f"| {self.variant} | {self.commits} | {100 * self.codex_applied / n:.1f}%"
            f" ({self.codex_applied}; exact {self.codex_exact}) |"
            f" {100 * self.applied / n:.1f}% ({self.applied}) |"
            f" {self.applied_where_codex}/{self.codex_applied} | {self.wrong} | {self.codes} |"
        )


CODEX_HEADER = (
    "| envelope | commits | applied by Codex (result = child) | applied by us |"
    " us where Codex applied | wrong | our refusals |\n|---|---|---|---|---|---|---|"
)


def summarise(verdicts: Sequence[CodexVerdict]) -> list[CodexSummary]:
    out = []
    for variant in dict.fromkeys(v.variant for v in verdicts):
        mine = [v for v in verdicts if v.variant == variant]
        out.append(
            CodexSummary(
                variant=variant,
                commits=len(mine),
                codex_applied=sum(v.codex_applied for v in mine),
                codex_exact=sum(v.codex_exact for v in mine),
                applied=sum(v.ours == "applied" for v in mine),
                applied_where_codex=sum(v.ours == "applied" for v in mine if v.codex_applied),
                wrong=sum(v.ours == "wrong" for v in mine),
                codes=dict(Counter(v.code for v in mine if v.code)),
            )
        )
    return out


def _commits(repo: Path) -> list[str]:
    """Every commit that is not a merge, newest first, on every line of history: a
    project that merges pull requests keeps most of its work off the first-parent line
    (click's 3,799-line core.py is only there)."""
    return git(repo, "log", "--no-merges", "--format=%H").split()
