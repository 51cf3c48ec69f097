"""Git AI Standard v3.0.0 authorship logs as git notes, end to end: a real git repository
as the workspace, a real daemon, two agent sessions and a person editing files, then
`git commit` with `editjournal hooks install git`'s hooks. Each note is read back with
git, parsed, held to the standard's grammar (tests/gitai_standard.py) and compared line
range by line range with what the agents wrote and the commit kept. Then the bad
inputs: each a clear message, and nothing else in the repository changed."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

import pytest

from editjournal.client import Client
from editjournal.daemon.audit.authorlog import key_of, parse, prompts_in
from tests.conftest import RunningDaemon
from tests.e2e.cli_support import cli, cli_env
from tests.gitai_standard import problems
from tests.polling import wait_until

ALICE, CLAUDE = "alice", "claude-code:5e55-10n"


def git(root: Path, *args: str, stdin: str | None = None, check: bool = True) -> str:
    done = subprocess.run(
        ["git", *args], cwd=root, input=stdin, capture_output=True, text=True,
        env=cli_env(GIT_EDITOR="true"), timeout=60,
    )  # fmt: skip
    if check and done.returncode != 0:
        raise AssertionError(f"git {' '.join(args)}: {done.stderr}")
    return done.stdout + done.stderr


def init_repo(root: Path) -> None:
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "pat@example.com")
    git(root, "config", "user.name", "Pat Person")


def note(root: Path, rev: str = "HEAD") -> dict[str, dict[str, list[int]]]:
    """The note of `rev`, conforming, as {path: {key: lines}}."""
    text = git(root, "notes", "--ref=ai", "show", rev)
    assert problems(text) == [], text
    return parse(text).files


def has_note(root: Path, rev: str) -> bool:
    return subprocess.run(["git", "notes", "--ref=ai", "show", rev], cwd=root,
                          capture_output=True).returncode == 0  # fmt: skip


def person_writes(client: Client, root: Path, rel: str, text: str) -> None:
    """An editor's save (written in place: closed after writing, the watcher settles it
    at once), waited for in the journal."""
    (root / rel).write_text(text)
    want = hashlib.sha256(text.encode()).hexdigest()

    def recorded() -> bool:
        events = client.log(path=rel, kind="outside_change", limit=1000).events
        return any(e.body.get("new_sha256") == want for e in events)

    wait_until(recorded, 20, f"the person's change of {rel}")


def anchors(client: Client, path: str) -> dict[str, str]:
    return {row.text: row.hash for row in client.read_file(path, hashes=True).lines or []}


def lines(*rows: str) -> str:
    return "".join(r + "\n" for r in rows)


@pytest.fixture
def repo(workspace: Path) -> Path:
    init_repo(workspace)
    (workspace / "a.txt").write_text(lines("l1", "l2", "l3", "l4", "l5"))
    git(workspace, "add", "a.txt")
    git(workspace, "commit", "-q", "-m", "the person's start")
    return workspace


@pytest.fixture
def hooked(repo: Path, daemon: RunningDaemon) -> Path:
    out = cli(repo, "hooks", "install", "git", cwd=repo)
    assert out.returncode == 0 and "post-commit" in out.stdout, out.stderr
    return repo


def two_sessions_and_a_person(root: Path, daemon: RunningDaemon) -> tuple[Client, Client]:
    """alice inserts two lines in a.txt; the Claude Code session replaces its l5 and
    writes b.txt; the person rewrites one line of each agent's."""
    alice, claude = daemon.client(ALICE), daemon.client(CLAUDE)
    alice.edit("a.txt", [{"op": "insert_after", "hash": anchors(alice, "a.txt")["l2"],
                          "content": "alice 1\nalice 2"}])  # fmt: skip
    claude.edit("a.txt", [{"op": "replace_line", "hash": anchors(claude, "a.txt")["l5"],
                           "content": "claude 5"}])  # fmt: skip
    claude.write_file("b.txt", lines("b1", "b2", "b3"))
    person_writes(
        alice, root, "a.txt", lines("l1", "l2", "person 1", "alice 2", "l3", "l4", "claude 5")
    )
    person_writes(alice, root, "b.txt", lines("b1", "B2 by the person", "b3"))
    return alice, claude


def test_a_hooked_commit_attests_exactly_the_agents_committed_lines(
    hooked: Path, daemon: RunningDaemon
):
    root = hooked
    (root / ".editjournal" / "config.toml").write_text("[prompts]\nstore_text = true\n")
    daemon.client(CLAUDE).prompt_checkpoint("replace l5 and write b.txt")  # its hook's
    two_sessions_and_a_person(root, daemon)
    (root / "d.txt").write_text("the person's own file\n")
    git(root, "add", "a.txt", "b.txt", "d.txt")
    said = git(root, "commit", "-q", "-m", "agents and a person")
    assert "editjournal" not in said  # the hook was quiet
    alice, claude = key_of(ALICE), key_of(CLAUDE)
    expected = {"a.txt": {alice: [4], claude: [7]}, "b.txt": {claude: [1, 3]}}
    assert note(root) == expected
    meta = json.loads(git(root, "notes", "--ref=ai", "show", "HEAD").split("\n---\n")[1])
    assert meta["base_commit_sha"] == git(root, "rev-parse", "HEAD").strip()
    assert meta["prompts"][alice] == {
        "agent_id": {"tool": "editjournal", "id": ALICE, "model": "unknown"},
        "total_additions": 2, "total_deletions": 0, "accepted_lines": 1, "overriden_lines": 1,
    }  # fmt: skip
    assert meta["prompts"][claude]["agent_id"]["tool"] == "claude"
    assert [meta["prompts"][claude][k] for k in ("total_additions", "total_deletions",
            "accepted_lines", "overriden_lines")] == [4, 1, 3, 1]  # fmt: skip
    # the prompt the journal kept ([prompts] store_text), as E-002 leaves room for it
    assert "messages" not in meta["prompts"][claude]
    said = prompts_in(meta["prompts"][claude])
    assert [(m["type"], m["text"]) for m in said or []] == [("user", "replace l5 and write b.txt")]

    head = git(root, "rev-parse", "HEAD").strip()
    git(root, "notes", "--ref=ai", "remove", "HEAD")
    git(root, "checkout", "-q", "--detach")  # a detached HEAD is still a commit to note
    out = cli(root, "git-notes", head, cwd=root)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith(f"{head[:12]}: 4 lines by 2 agent sessions in 2 files")
    assert "not attested: d.txt (" in out.stdout  # the person's own file
    assert note(root, head) == expected
    again = cli(root, "git-notes", "HEAD", cwd=root)
    assert "note replaced" in again.stdout and note(root, head) == expected


def test_what_was_staged_is_attested_not_what_the_working_tree_holds_now(
    hooked: Path, daemon: RunningDaemon
):
    root = hooked
    alice = daemon.client(ALICE)
    alice.write_file("s.txt", lines("staged 1", "staged 2"))
    git(root, "add", "s.txt")
    alice.write_file("s.txt", lines("staged 1", "staged 2", "after git add"))
    person_writes(alice, root, "s.txt", lines("person 0", "staged 1", "staged 2", "after git add"))
    git(root, "commit", "-q", "-m", "the staged version")
    assert note(root) == {"s.txt": {key_of(ALICE): [1, 2]}}
    assert git(root, "show", "HEAD:s.txt") == lines("staged 1", "staged 2")


def test_amend_and_a_plain_rebase_keep_the_logs_right(hooked: Path, daemon: RunningDaemon):
    root = hooked
    alice, claude = two_sessions_and_a_person(root, daemon)
    git(root, "checkout", "-q", "-b", "topic")
    git(root, "add", "a.txt", "b.txt")
    git(root, "commit", "-q", "-m", "agents")
    first = git(root, "rev-parse", "HEAD").strip()
    claude.edit("b.txt", [{"op": "insert_after", "hash": anchors(claude, "b.txt")["b3"],
                           "content": "b4"}])  # fmt: skip
    git(root, "add", "b.txt")
    git(root, "commit", "-q", "--amend", "--no-edit")
    amended = git(root, "rev-parse", "HEAD").strip()
    a, c = key_of(ALICE), key_of(CLAUDE)
    expected = {"a.txt": {a: [4], c: [7]}, "b.txt": {c: [1, 3, 4]}}
    assert note(root, amended) == expected
    assert not has_note(root, first)  # the standard: the amended commit's note goes

    git(root, "checkout", "-q", "main")  # the person adds a line on top, on main
    person_writes(alice, root, "a.txt", lines("l0 by the person", "l1", "l2", "l3", "l4", "l5"))
    git(root, "commit", "-q", "-am", "the person, on main")
    git(root, "checkout", "-q", "topic")
    git(root, "rebase", "-q", "main")
    rebased = git(root, "rev-parse", "HEAD").strip()
    assert rebased != amended
    assert note(root, rebased) == {"a.txt": {a: [5], c: [8]}, "b.txt": {c: [1, 3, 4]}}
    assert git(root, "show", f"{rebased}:a.txt").splitlines()[4] == "alice 2"

    # a cherry-pick (post-commit, CHERRY_PICK_HEAD): the source's note carried onto the
    # new commit, and the source keeps its own
    git(root, "checkout", "-q", "-b", "picked", "main~1")
    said = git(root, "cherry-pick", rebased)
    picked = git(root, "rev-parse", "HEAD").strip()
    assert picked != rebased and f"{rebased[:12]} -> {picked[:12]}: 5 lines carried" in said
    assert note(root, picked) == expected and has_note(root, rebased)


# --- bad input: a clear message, and nothing else in the repository changed --------------------


def refs_and_status(root: Path) -> str:
    """What a refusal must leave as it was: every ref (notes included) and the tree."""
    return git(root, "for-each-ref", check=False) + git(root, "status", "--porcelain", check=False)


def refused(root: Path, *args: str, said: str, env: dict[str, str] | None = None) -> None:
    before = refs_and_status(root)
    out = cli(root, *args, cwd=root, env=env)
    assert out.returncode == 2 and said in out.stderr, (out.stdout, out.stderr)
    assert refs_and_status(root) == before


def empty_journal(root: Path) -> Path:
    from editjournal.daemon.store.journal import Journal

    path = root.parent / "journal.db"
    Journal(path).close()
    return path


def test_a_repository_without_commits_is_refused(workspace: Path):
    init_repo(workspace)
    before = refs_and_status(workspace)
    out = cli(workspace, "--json", "git-notes", cwd=workspace)
    error = json.loads(out.stdout)
    assert out.returncode == 2 and error["code"] == "git_refused", (out.stdout, out.stderr)
    assert "has no commits yet" in error["message"] and "commit first" in error["hint"]
    assert refs_and_status(workspace) == before


def test_not_a_git_repository_and_no_git_are_refused(workspace: Path, tmp_path: Path):
    refused(workspace, "git-notes", said=f"not a git repository: {workspace}")
    refused(workspace, "hooks", "install", "git", said="not a git repository")
    init_repo(workspace)
    (workspace / "f").write_text("f\n")
    git(workspace, "add", "f")
    git(workspace, "commit", "-q", "-m", "f")
    no_git = cli_env(PATH=str(tmp_path / "nowhere"))
    refused(workspace, "git-notes", said="git is not installed", env=no_git)


def test_a_shallow_clones_boundary_commit_is_refused(workspace: Path, tmp_path: Path):
    source = tmp_path / "source"
    source.mkdir()
    init_repo(source)
    for n in ("1", "2"):
        (source / "f").write_text(f"{n}\n")
        git(source, "add", "f")
        git(source, "commit", "-q", "-m", n)
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{source}", str(workspace / "c"))
    refused(workspace / "c", "git-notes", "HEAD", said="shallow clone's boundary")


def test_a_submodule_and_files_the_daemon_never_saw_are_named_and_get_no_note(
    workspace: Path, tmp_path: Path
):
    inner = tmp_path / "inner"
    inner.mkdir()
    init_repo(inner)
    git(inner, "commit", "-q", "--allow-empty", "-m", "inner")
    init_repo(workspace)
    (workspace / "x.txt").write_text("x\n")
    git(workspace, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(inner), "sub")
    git(workspace, "add", "x.txt")
    git(workspace, "commit", "-q", "-m", "a submodule and a file")
    before = refs_and_status(workspace)
    out = cli(workspace, "git-notes", "--journal", str(empty_journal(workspace)), cwd=workspace)
    assert out.returncode == 0, out.stderr
    assert "no line an agent wrote: no note written" in out.stdout
    assert "sub (a submodule" in out.stdout and "x.txt (not in the journal)" in out.stdout
    assert refs_and_status(workspace) == before


def test_a_hook_directory_that_cannot_be_written_is_refused_before_any_change(repo: Path):
    git(repo, "config", "core.hooksPath", "/sys")  # not writable, even for root
    refused(repo, "hooks", "install", "git", said="cannot write the hook directory /sys")
    assert not Path("/sys/post-commit").exists()


def test_a_hook_already_there_is_kept_called_first_and_put_back(repo: Path):
    hooks = repo / ".githooks"
    hooks.mkdir()
    git(repo, "config", "core.hooksPath", ".githooks")  # honoured
    mine = hooks / "post-commit"
    mine.write_text('#!/bin/sh\necho mine >> "$(git rev-parse --git-dir)/mine.log"\n')
    mine.chmod(0o755)
    out = cli(repo, "hooks", "install", "git", cwd=repo)
    assert "kept as post-commit.before-editjournal and runs first" in out.stdout, out.stderr
    (repo / ".editjournal").mkdir()
    (repo / ".editjournal" / "journal.db").write_text("not a journal")
    (repo / "g").write_text("g\n")
    git(repo, "add", "g")
    done = subprocess.run(["git", "commit", "-q", "-m", "g"], cwd=repo, capture_output=True,
                          text=True, env=cli_env())  # fmt: skip
    assert done.returncode == 0  # the hook never fails the commit: one line says why
    assert [line for line in done.stderr.splitlines() if line] == [
        line for line in done.stderr.splitlines() if line.startswith("editjournal git-notes: ")
    ] and done.stderr.count("\n") == 1, done.stderr
    assert (repo / ".git" / "mine.log").read_text() == "mine\n"
    out = cli(repo, "hooks", "uninstall", "git", cwd=repo)
    assert "the hook it kept is back" in out.stdout
    assert mine.read_text().startswith("#!/bin/sh\necho mine")
    assert sorted(p.name for p in hooks.iterdir()) == ["post-commit"]
