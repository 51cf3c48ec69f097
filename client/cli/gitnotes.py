"""`editjournal git-notes [REV...]`: the Git AI Standard's authorship log of commits, from
the journal, as git notes under `refs/notes/ai`.

An offline reader (docs/architecture.md): it opens the workspace's journal file
read-only, as `verify` and `replay` do, so no daemon is needed, and it imports the
daemon's read-only audit code (`daemon.audit.authorship`) inside the command only.
Everything git is asked goes through `Git` here: the committed blobs (never the
working tree), git's own diff of each file against the first parent (the lines the
commit added, as `git blame` will credit them), and the note, written as a blob and
attached with `git notes --ref=ai add -f -C BLOB` (`-f`: a note already there is
replaced; the standard allows one log per commit). Nothing else in the repository
changes, and a refusal (no commits, a shallow clone's boundary, not a repository, no
git) changes nothing at all.

`--rewritten amend|rebase` is the `post-rewrite` hook's (git's "OLD NEW" lines on
stdin): each old commit's note moved onto the new one through a diff of each file,
as the standard's section 2 asks (an amend's fresh note, computed by `post-commit`,
wins on the lines both name; a rebase keeps the carried one, then the old note of an
amend goes). `--hook` never fails: a problem is one line on stderr, exit 0.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from editjournal.client.cli.common import (
    EXIT_OK,
    BadInput,
    global_options,
    print_json,
    settings,
)
from editjournal.client.cli.help import verbatim
from editjournal.client.views.render import emit
from editjournal.schemas.endpoint import JOURNAL_FILE, STATE_DIR_NAME
from editjournal.schemas.errors import ErrorCode

if TYPE_CHECKING:
    from editjournal.daemon.audit.authorlog import AuthorshipLog, Prompt
    from editjournal.daemon.audit.authorship import CommittedFile, Computed
    from editjournal.daemon.audit.timeline import JournalReader

NOTES_REF = "refs/notes/ai"  # authorlog.NOTES_REF: the client does not load it at import
GITLINK, SYMLINK = "160000", "120000"
HUNK = re.compile(rb"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@", re.M)


class GitRefused(BadInput):
    """What git or the repository does not allow (exit 2, as any unusable input; `--json`
    says `git_refused`); nothing was changed."""

    code = ErrorCode.GIT_REFUSED


@dataclass
class Git:
    """One repository, through the `git` program."""

    top: Path

    @classmethod
    def at(cls, start: Path) -> Git:
        out = run_git(start, "rev-parse", "--show-toplevel", refuse=None)
        if out is None:
            raise GitRefused(f"not a git repository: {start}")
        return cls(Path(os.fsdecode(out.strip())))

    def __call__(self, *args: str, stdin: bytes | None = None) -> bytes:
        out = run_git(self.top, *args, stdin=stdin, refuse="git " + args[0])
        assert out is not None
        return out

    def maybe(self, *args: str) -> bytes | None:
        return run_git(self.top, *args, refuse=None)

    def commit(self, rev: str) -> str:
        found = self.maybe("rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}")
        if found:
            return found.decode().strip()
        if self.maybe("rev-parse", "--verify", "--quiet", "HEAD") is None:
            raise GitRefused(f"the repository {self.top} has no commits yet: nothing to note")
        raise GitRefused(f"{rev} names no commit in {self.top}")

    def parent(self, sha: str) -> str | None:
        """The first parent; a commit at a shallow clone's boundary is refused (its
        parent is not here, so what it changed cannot be told)."""
        if sha in self._shallow():
            raise GitRefused(
                f"{sha[:12]} is at the shallow clone's boundary: its parent is not here, so"
                " what it changed cannot be told (`git fetch --deepen=1` brings it)"
            )
        words = self("rev-list", "--parents", "-n", "1", sha).split()
        return words[1].decode() if len(words) > 1 else None

    def _shallow(self) -> set[str]:
        path = self.maybe("rev-parse", "--git-path", "shallow")
        if path is None:
            return set()
        file = self.top / os.fsdecode(path.strip())
        return set(file.read_text().split()) if file.is_file() else set()

    def git_path(self, name: str) -> Path:
        return self.top / os.fsdecode(self("rev-parse", "--git-path", name).strip())

    def blob(self, oid: str) -> bytes:
        return self("cat-file", "blob", oid)

    def note(self, sha: str) -> str | None:
        found = self.maybe("notes", f"--ref={NOTES_REF}", "show", sha)
        return None if found is None else found.decode("utf-8", "replace")

    def write_note(self, sha: str, text: str) -> None:
        """As one blob, attached as it is (`-C`: no clean-up of its lines)."""
        blob = self("hash-object", "-w", "--stdin", stdin=text.encode()).decode().strip()
        self("notes", f"--ref={NOTES_REF}", "add", "-f", "-C", blob, sha)

    def remove_note(self, sha: str) -> None:
        self.maybe("notes", f"--ref={NOTES_REF}", "remove", "--ignore-missing", sha)

    def committed_ms(self, sha: str) -> int:
        """When the commit was made (its committer time, to the second) as ms, rounded
        up: what was recorded by then may have gone into it."""
        return (int(self("show", "-s", "--format=%ct", sha).strip()) + 1) * 1000

    def rebasing(self) -> bool:
        return any(self.git_path(d).is_dir() for d in ("rebase-merge", "rebase-apply"))


def run_git(
    where: Path, *args: str, stdin: bytes | None = None, refuse: str | None = None
) -> bytes | None:
    """git's output; on failure None, or (`refuse` naming the step) `GitRefused`."""
    try:
        done = subprocess.run(
            ["git", "-c", "core.quotePath=false", *args],
            cwd=where,
            input=stdin,
            capture_output=True,
            env={**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"},
        )
    except FileNotFoundError as e:
        raise GitRefused("git is not installed: no `git` program on PATH") from e
    except NotADirectoryError as e:
        raise GitRefused(f"not a directory: {where}") from e
    if done.returncode == 0:
        return done.stdout
    if refuse is None:
        return None
    said = done.stderr.decode("utf-8", "replace").strip().splitlines()
    raise GitRefused(f"{refuse} failed: {said[-1] if said else f'exit {done.returncode}'}")


# --- a commit's files ------------------------------------------------------------------------


@dataclass(frozen=True)
class Skipped:
    path: str
    why: str


def changed(git: Git, parent: str | None, sha: str) -> Iterator[tuple[str, str, str, str, str]]:
    """(status, new mode, old blob, new blob, path) of each file the commit changed."""
    base = [parent] if parent else ["--root"]
    out = git("diff-tree", "-r", "-z", "--no-renames", "--no-commit-id", *base, sha)
    fields = out.split(b"\0")
    for i in range(0, len(fields) - 1, 2):
        meta = fields[i].decode().lstrip(":").split()
        if len(meta) == 5:  # old mode, new mode, old blob, new blob, status
            yield meta[4], meta[1], meta[2], meta[3], os.fsdecode(fields[i + 1])


def added_lines(git: Git, parent: str | None, sha: str, path: str, count: int) -> tuple[int, ...]:
    """The 1-based lines git's diff says the commit added to `path` (every line of a new
    file), as `git blame` will credit them to this commit."""
    if parent is None:
        return tuple(range(1, count + 1))
    out = git(
        "diff", "-U0", "--no-color", "--no-ext-diff", "--no-textconv", "--text", "--no-renames",
        parent, sha, "--", f":(literal){path}",
    )  # fmt: skip
    lines: list[int] = []
    for m in HUNK.finditer(out):
        start, size = int(m.group(1)), int(m.group(2) or 1)
        lines.extend(range(start, start + size))
    return tuple(lines)


def committed_files(
    git: Git, root: Path, parent: str | None, sha: str
) -> tuple[list[CommittedFile], list[Skipped]]:
    from editjournal.daemon.audit.authorlog import writable
    from editjournal.daemon.audit.authorship import CommittedFile
    from editjournal.daemon.audit.diffs import lines_of

    files: list[CommittedFile] = []
    skipped: list[Skipped] = []
    for status, mode, old, new, path in changed(git, parent, sha):
        if status == "D":
            continue
        why = _unusable(mode, path, writable(path))
        content = b"" if why else git.blob(new)
        if not why and b"\0" in content:
            why = "binary"
        if why:
            skipped.append(Skipped(path, why))
            continue
        before = git.blob(old) if status != "A" and parent else None
        count = len(lines_of(content))
        files.append(
            CommittedFile(
                path, in_workspace(git.top / path, root), content, before,
                added_lines(git, parent, sha, path, count),
            )
        )  # fmt: skip
    return files, skipped


def _unusable(mode: str, path: str, writable: bool) -> str | None:
    if mode == GITLINK:
        return "a submodule: its own commits get their notes inside it"
    if mode == SYMLINK:
        return "a symbolic link"
    if not writable:
        return "a name a note cannot hold (a newline or a double quote)"
    return None


def in_workspace(path: Path, root: Path) -> str | None:
    """The journal's name for a repository file: relative to the workspace (None: outside)."""
    real = Path(os.path.realpath(path.parent)) / path.name
    try:
        return real.relative_to(root).as_posix()
    except ValueError:
        return None


# --- one commit ----------------------------------------------------------------------------


@dataclass
class Noted:
    commit: str
    written: bool
    lines: int
    sessions: int
    files: int
    skipped: list[Skipped]
    replaced: bool = False

    def as_json(self) -> dict[str, Any]:
        return {**self.__dict__, "skipped": [s.__dict__ for s in self.skipped]}

    def line(self) -> str:
        head = f"{self.commit[:12]}: "
        if self.written:
            head += (
                f"{_n(self.lines, 'line')} by {_n(self.sessions, 'agent session')} in"
                f" {_n(self.files, 'file')}: note {'replaced' if self.replaced else 'written'}"
                f" under {NOTES_REF}"
            )
        else:
            head += "no line an agent wrote: no note written"
        if self.skipped:
            head += "; not attested: " + ", ".join(f"{s.path} ({s.why})" for s in self.skipped)
        return head


def _n(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def note_commit(
    git: Git,
    journal: JournalReader,
    root: Path,
    sha: str,
    parent: str | None,
    prompts: dict[str, list[Prompt]] | None = None,
) -> Noted:
    """`prompts`: the sessions' prompts the journal kept (`authorship.prompts_of`); a
    record carries those recorded by the commit's time."""
    from editjournal.daemon.audit.authorlog import render
    from editjournal.daemon.audit.authorship import authorship, prompts_until

    files, skipped = committed_files(git, root, parent, sha)
    kept = prompts_until(prompts, git.committed_ms(sha)) if prompts else None
    computed: Computed = authorship(journal, sha, files, kept)
    skipped += [Skipped(path, why) for path, why in computed.unknown.items()]
    log = computed.log
    noted = Noted(sha, False, log.attested, len(log.metadata["prompts"]), len(log.files), skipped)
    if log.attested:
        noted.replaced = git.note(sha) is not None
        git.write_note(sha, render(log))
        noted.written = True
        noted.sessions = len({k for keys in log.files.values() for k in keys})
    return noted


def carry_notes(git: Git, pairs: Sequence[tuple[str, str]], how: str) -> list[str]:
    """Each old commit's note onto its new commit (post-rewrite; post-commit for a
    cherry-pick, whose source keeps its own note); lines said per pair."""
    from editjournal.daemon.audit.authorlog import NoteError, merged, parse, render

    said: list[str] = []
    for old, new in pairs:
        text = git.note(old)
        if text is None:
            continue
        try:
            moved = _moved(git, parse(text), old, new)
        except NoteError as e:
            said.append(f"{old[:12]}: its note is not an authorship log ({e}): not carried")
            continue
        fresh_text = git.note(new)
        if fresh_text is not None:
            fresh = parse(fresh_text)  # ours, by post-commit
            fresh_first = how in ("amend", "cherry-pick")
            moved = merged(fresh, moved, new) if fresh_first else merged(moved, fresh, new)
        git.write_note(new, render(moved))
        if how == "amend":
            git.remove_note(old)  # the standard: the amended commit's note SHOULD go
        said.append(f"{old[:12]} -> {new[:12]}: {_n(moved.attested, 'line')} carried")
    return said


def _moved(git: Git, log: AuthorshipLog, old: str, new: str) -> AuthorshipLog:
    from editjournal.daemon.audit.authorlog import carried, line_map
    from editjournal.daemon.audit.diffs import lines_of

    maps: dict[str, dict[int, int] | None] = {}
    for path in log.files:
        before = git.maybe("cat-file", "blob", f"{old}:{path}")
        after = git.maybe("cat-file", "blob", f"{new}:{path}")
        if before is not None and after is not None:
            maps[path] = line_map(lines_of(before), lines_of(after))
    return carried(log, maps, new)


def read_pairs(text: str) -> list[tuple[str, str]]:
    """git's post-rewrite input: `OLD NEW [EXTRA]` per line."""
    pairs = []
    for row in text.splitlines():
        words = row.split()
        if len(words) >= 2:
            pairs.append((words[0], words[1]))
    return pairs


# --- the command ---------------------------------------------------------------------------


@click.command(
    name="git-notes",
    epilog=verbatim(
        """Examples:
  editjournal git-notes                      the note of HEAD
  editjournal git-notes HEAD~3 HEAD~2 main   of these commits
  git notes --ref=ai show HEAD               read one back
  editjournal hooks install git              on every commit from now on"""
    ),
)
@click.argument("revs", nargs=-1, metavar="[REV]...")
@click.option("--journal", "journal_file", type=click.Path(dir_okay=False), metavar="FILE",
              help="A journal file (default: the workspace's).")  # fmt: skip
@click.option("--rewritten", type=click.Choice(["amend", "rebase"]), hidden=True,
              help="post-rewrite: carry notes OLD -> NEW, pairs on stdin.")  # fmt: skip
@click.option("--hook", is_flag=True, hidden=True, help="Run by a git hook: never fail.")
@global_options()
def git_notes(revs: tuple[str, ...], journal_file: str | None, rewritten: str | None,
              hook: bool) -> int:  # fmt: skip
    """Attach to each commit the Git AI Standard v3.0.0 authorship log of its lines.

    For every file a commit added or changed, the lines it added that an agent session
    last wrote, by the journal (what was committed, not the working tree): git notes
    under refs/notes/ai, one per commit, replacing one already there. Lines a person or
    an unattributed process wrote are not attested. No daemon needed; the journal is
    only read. Default REV: HEAD."""
    if not hook:
        return _git_notes(revs, journal_file, rewritten)
    try:
        return _git_notes(revs, journal_file, rewritten, hook=True)
    except Exception as e:  # a hook never fails the user's git command
        message = e.format_message() if isinstance(e, click.ClickException) else repr(e)
        print(f"editjournal git-notes: {message}", file=sys.stderr)
        return EXIT_OK


def _git_notes(
    revs: tuple[str, ...], journal_file: str | None, rewritten: str | None, hook: bool = False
) -> int:
    from editjournal.client.cli.audit import opened

    git = _repository()
    if hook and rewritten is None and git.rebasing():
        return EXIT_OK  # post-rewrite carries each commit's note when the rebase is done
    if rewritten is not None:
        emit(carry_notes(git, read_pairs(sys.stdin.read()), rewritten))
        return EXIT_OK
    # every commit named is checked before the journal is opened or anything written
    commits = [(sha, git.parent(sha)) for sha in map(git.commit, revs or ("HEAD",))]
    root = settings().root
    path = Path(journal_file) if journal_file else root / STATE_DIR_NAME / JOURNAL_FILE
    if not path.is_file():
        if hook:
            return EXIT_OK  # a repository editjournal never served: nothing to say
        raise BadInput(f"no journal at {path}: editjournal has not served {root}")
    from editjournal.daemon.audit.authorship import prompts_of

    with opened(str(path)) as journal:
        # the prompts the harnesses' hooks recorded and config.toml let the journal keep
        kept = prompts_of(journal.records(kind="checkpoint_created"))
        done = [note_commit(git, journal, root, sha, parent, kept) for sha, parent in commits]
    if hook:
        _carry_picked(git, commits[0][0])
    if settings().json:
        print_json({"notes": [n.as_json() for n in done]})
    else:
        emit([n.line() for n in done])
    return EXIT_OK


def _carry_picked(git: Git, sha: str) -> None:
    """A cherry-pick's commit carries its source's note too. post-rewrite does not run
    for a cherry-pick (nor does `notes.rewrite.*` cover it), but post-commit does, with
    CHERRY_PICK_HEAD naming the source: its note is moved onto the new commit's lines,
    the note just computed from the journal winning where both name a line."""
    source = git.maybe("rev-parse", "--quiet", "--verify", "CHERRY_PICK_HEAD^{commit}")
    picked = source.decode().strip() if source else None
    if picked and picked != sha:
        emit(carry_notes(git, [(picked, sha)], "cherry-pick"))


def _repository() -> Git:
    """The repository where one stands, else the workspace's (`--workspace` from afar)."""
    try:
        return Git.at(Path.cwd())
    except GitRefused:
        root = settings().root
        if Path.cwd() == root:
            raise
        return Git.at(root)


COMMANDS = [git_notes]
