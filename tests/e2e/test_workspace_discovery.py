"""Which workspace a command means, found as git finds its repository (issue 24).

From anywhere inside a served workspace the CLI and the Python client talk to its
daemon: one daemon, one journal, the edit the agent's own. With no `.editjournal/`
around, a git work tree's root is the workspace; a workspace named is used as given;
`/` and the home directory itself are refused (`workspace_too_broad`) unless asked
for. Real daemons on real directories; `/` is only ever refused, never served (the
home directory is the test's own, so serving it is fine).
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from editjournal.client import Client
from editjournal.client.library.connection import live_endpoint
from editjournal.client.library.errors import WorkspaceTooBroad
from editjournal.schemas.endpoint import STATE_DIR_NAME
from tests.conftest import RunningDaemon, pid_alive, spawn, start, wait_until
from tests.e2e.cli_support import BIN, TIMEOUT, cli, cli_env

SOURCE = "def greet():\n    return 'hi'\n"
ROOT = Path("/")


def writes(daemon: RunningDaemon, path: str) -> list[tuple[str, str | None]]:
    """The journal's content changes to `path`: (kind, agent), oldest first."""
    journal = daemon.journal()
    try:
        changes = ("edit_applied", "outside_change")
        return [(r.kind, r.agent) for r in journal.records(path=path) if r.kind in changes]
    finally:
        journal.close()


def daemons() -> list[int]:
    listed = cli(None, "list", "--json")
    assert listed.returncode == 0, listed.stderr
    return [d["pid"] for d in json.loads(listed.stdout)]


def stop(root: Path) -> None:
    endpoint = live_endpoint(root)
    cli(root, "stop")
    if endpoint is not None:
        wait_until(lambda: not pid_alive(endpoint.pid), what="the daemon to exit")


def mcp_from(cwd: Path) -> subprocess.CompletedProcess[str]:
    """`editjournal mcp` as a host starts it: no workspace named, in `cwd`."""
    return subprocess.run(
        [str(BIN / "editjournal"), "mcp"],
        cwd=cwd,
        env=cli_env(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )


# --- inside a served workspace ----------------------------------------------------------


@pytest.fixture
def served(workspace: Path) -> Iterator[RunningDaemon]:
    """The workspace's daemon, started once its files are in place (so that none of them
    is an outside change): scratch/app.py and src/pkg/mod.py."""
    for path in (workspace / "scratch" / "app.py", workspace / "src" / "pkg" / "mod.py"):
        path.parent.mkdir(parents=True)
        path.write_text(SOURCE)
    running = start(workspace)
    yield running
    if running.proc.poll() is None:
        running.stop()


def test_from_a_subdirectory_the_cli_uses_the_served_workspaces_daemon(served: RunningDaemon):
    daemon = served
    scratch = daemon.root / "scratch"
    app = scratch / "app.py"
    read = cli(None, "read", str(app), "--json", cwd=scratch)
    assert read.returncode == 0, read.stderr
    assert "started daemon" not in read.stderr
    assert json.loads(read.stdout)["file_path"] == "scratch/app.py"
    edit = cli(
        None, "edit-file", str(app), "--old-string", "'hi'", "--new-string", "'hello'",
        cwd=scratch,
    )  # fmt: skip
    assert edit.returncode == 0, edit.stderr
    assert app.read_text() == SOURCE.replace("'hi'", "'hello'")
    assert daemons() == [daemon.proc.pid]
    assert not (scratch / STATE_DIR_NAME).exists()
    with daemon.client("observer") as observer:  # a read compares the disk with the journal
        assert observer.read_file("scratch/app.py").content == app.read_text()
    assert writes(daemon, "scratch/app.py") == [("edit_applied", "cli-test")]


def test_from_a_subdirectory_the_python_client_uses_the_served_workspaces_daemon(
    served: RunningDaemon, monkeypatch: pytest.MonkeyPatch
):
    daemon = served
    monkeypatch.chdir(daemon.root / "src" / "pkg")
    with Client(agent="py-agent") as client:
        assert client.root == daemon.root.resolve()
        assert (client.started_daemon, client.daemon_pid) == (None, daemon.proc.pid)
        read = client.read_file("src/pkg/mod.py", hashes=True)
        operation = {"op": "replace_line", "hash": read.lines[1].hash, "content": "    return 1"}
        client.edit("src/pkg/mod.py", [operation])
        assert client.read_file("src/pkg/mod.py").content == "def greet():\n    return 1\n"
    assert daemons() == [daemon.proc.pid]
    assert writes(daemon, "src/pkg/mod.py") == [("edit_applied", "py-agent")]


def test_a_workspace_served_before_is_found_from_below_and_its_daemon_started(tmp_path: Path):
    ws = tmp_path / "ws"
    scratch = ws / "scratch"
    scratch.mkdir(parents=True)
    (scratch / "a.txt").write_text("alpha\n")
    assert cli(ws, "start").returncode == 0
    stop(ws)  # its .editjournal/ stays: a known workspace
    try:
        done = cli(None, "read", str(scratch / "a.txt"), cwd=scratch)
        assert done.returncode == 0, done.stderr
        endpoint = live_endpoint(ws)
        assert endpoint is not None
        assert (
            f"started daemon pid {endpoint.pid} for {ws} (found {STATE_DIR_NAME}/ in {ws});"
            " `editjournal stop` ends it"  # found from here: no --workspace to name
        ) in done.stderr
        assert not (scratch / STATE_DIR_NAME).exists()
    finally:
        stop(ws)


def test_a_git_work_tree_inside_a_served_workspace_is_still_the_workspaces(
    daemon: RunningDaemon,
):
    inner = daemon.root / "vendor" / "lib"
    (inner / ".git").mkdir(parents=True)
    (inner / "x.txt").write_text("x\n")
    done = cli(None, "read", str(inner / "x.txt"), cwd=inner)
    assert done.returncode == 0, done.stderr
    assert "started daemon" not in done.stderr
    assert daemons() == [daemon.proc.pid]


# --- no .editjournal/ around: the git work tree, else the directory -----------------------


@pytest.mark.parametrize("marker", ["directory", "file"])
def test_with_no_workspace_around_the_git_work_trees_root_is_chosen(tmp_path: Path, marker: str):
    repo = tmp_path / "repo"
    deep = repo / "src" / "deep"
    deep.mkdir(parents=True)
    if marker == "directory":
        (repo / ".git").mkdir()
    else:  # a linked worktree's or a submodule's .git is a file
        (repo / ".git").write_text(f"gitdir: {tmp_path}/main/.git/worktrees/repo\n")
    (deep / "a.txt").write_text("alpha\n")
    try:
        done = cli(None, "read", str(deep / "a.txt"), cwd=deep)
        assert done.returncode == 0, done.stderr
        endpoint = live_endpoint(repo)
        assert endpoint is not None
        assert f"started daemon pid {endpoint.pid} for {repo} (git work tree {repo});" in (
            done.stderr
        )
        assert not (deep / STATE_DIR_NAME).exists()
    finally:
        stop(repo)


def test_outside_any_workspace_or_work_tree_the_directory_itself_is_chosen(tmp_path: Path):
    plain = tmp_path / "plain"
    plain.mkdir()
    try:
        started = cli(None, "start", cwd=plain)
        assert started.returncode == 0, started.stderr
        assert f"serves {plain} (the current directory) on" in started.stdout
    finally:
        stop(plain)


# --- named: used as given ----------------------------------------------------------------


def test_a_named_workspace_is_used_as_given_without_walking(
    daemon: RunningDaemon, monkeypatch: pytest.MonkeyPatch
):
    scratch = daemon.root / "scratch"
    scratch.mkdir()
    (scratch / "s.txt").write_text("s\n")
    by_env = cli_env(EDITJOURNAL_AGENT="cli-test", EDITJOURNAL_WORKSPACE=str(scratch))
    try:
        started = cli(None, "start", env=by_env, cwd=scratch)
        assert started.returncode == 0, started.stderr
        assert f"serves {scratch} (given by EDITJOURNAL_WORKSPACE) on" in started.stdout
        nested = live_endpoint(scratch)
        assert nested is not None and nested.pid != daemon.proc.pid
        # --workspace beats the environment, and the daemon around the directory
        named = cli(daemon.root, "status", "--json", env=by_env, cwd=scratch)
        assert json.loads(named.stdout)["pid"] == daemon.proc.pid
        monkeypatch.chdir(scratch)
        with Client(scratch, "py-agent", autostart=False) as client:
            assert client.daemon_pid == nested.pid
        monkeypatch.setenv("EDITJOURNAL_WORKSPACE", str(scratch))
        monkeypatch.chdir(daemon.root)
        with Client(agent="py-agent", autostart=False) as client:
            assert client.daemon_pid == nested.pid
    finally:
        stop(scratch)


# --- too broad: / and the home directory -------------------------------------------------


def test_the_file_systems_root_is_refused_and_nothing_is_created_there():
    had_state_dir = (ROOT / STATE_DIR_NAME).exists()
    attempts = [
        cli(ROOT, "start", "--no-watch"),
        cli(ROOT, "serve", "--no-watch"),
        cli(None, "start", "--no-watch", cwd=ROOT),  # run in /, no workspace named
        mcp_from(ROOT),  # an MCP host that starts its servers in /
    ]
    for done in attempts:
        assert done.returncode == 2, done.stderr
        assert "workspace_too_broad: refusing to serve /, the file system's root" in done.stderr
        assert "--allow-broad" in done.stderr
    as_json = cli(ROOT, "start", "--no-watch", "--json")
    assert as_json.returncode == 2
    error = json.loads(as_json.stdout)
    assert (error["code"], error["details"]) == ("workspace_too_broad", {"workspace": "/"})
    with pytest.raises(WorkspaceTooBroad):
        Client(ROOT, "py-agent", daemon_options=["--no-watch"])
    assert (ROOT / STATE_DIR_NAME).exists() == had_state_dir
    assert daemons() == []


def test_the_daemon_itself_refuses_the_file_systems_root():
    proc = spawn(ROOT, "--no-watch")  # in the foreground: it must exit at once
    try:
        assert proc.wait(TIMEOUT) == 1
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.stderr is not None
    assert "editjournal: workspace_too_broad" in proc.stderr.read().decode()


def test_the_home_directory_is_refused_unless_allowed_and_then_served_from_below(
    monkeypatch: pytest.MonkeyPatch,
):
    home = Path(os.environ["HOME"]).resolve()  # the test's own (tests/conftest.py)
    notes = home / "notes"
    notes.mkdir()
    (home / "todo.txt").write_text("- a\n")
    refused = cli(None, "read", "todo.txt", "--json", cwd=home)
    assert refused.returncode == 2
    assert json.loads(refused.stdout)["code"] == "workspace_too_broad"
    for done in (cli(home, "start"), cli(None, "read", "todo.txt", cwd=home), mcp_from(home)):
        assert done.returncode == 2
        assert f"refusing to serve {home}, the home directory itself" in done.stderr
    monkeypatch.chdir(home)
    with pytest.raises(WorkspaceTooBroad):
        Client(agent="py-agent")  # found from ~: ~ itself
    assert not (home / STATE_DIR_NAME).exists()
    try:
        started = cli(None, "start", "--allow-broad", cwd=home)
        assert started.returncode == 0, started.stderr
        endpoint = live_endpoint(home)
        assert endpoint is not None
        for where in (home, notes):  # served on purpose: used from it and below it
            done = cli(None, "read", str(home / "todo.txt"), cwd=where)
            assert done.returncode == 0, done.stderr
            assert "started daemon" not in done.stderr
        assert daemons() == [endpoint.pid]
    finally:
        stop(home)
    # Stopped, the .editjournal/ it left no longer gathers the directories under ~, nor
    # does a dotfiles repository there: from ~/notes, ~/notes is the workspace.
    (home / ".git").mkdir()
    try:
        started = cli(None, "start", cwd=notes)
        assert started.returncode == 0, started.stderr
        assert f"serves {notes} (the current directory) on" in started.stdout
    finally:
        stop(notes)


def test_a_relative_path_from_a_subdirectory_is_read_where_the_user_stands(
    workspace: Path,
) -> None:
    """As git reads paths: from ws/src, `app.py` is ws/src/app.py (not ws/app.py),
    whether the workspace is found from there or named; what is printed is as typed."""
    (workspace / "app.py").write_text("root app\n")
    (workspace / "src").mkdir()
    (workspace / "src" / "app.py").write_text("src app\n")
    (workspace / ".git").mkdir()
    daemon = start(workspace)
    try:
        here = workspace / "src"
        done = cli(None, "read", "app.py", cwd=here)
        assert done.returncode == 0, done.stderr
        assert done.stdout == "src app\n" and "-- app.py version" in done.stderr
        done = cli(None, "read", "../app.py", cwd=here)
        assert done.stdout == "root app\n", done.stderr
        done = cli(None, "append-to-file", "app.py", "--content", "more\n", cwd=here)
        assert done.returncode == 0, done.stderr
        assert (workspace / "src" / "app.py").read_text() == "src app\nmore\n"
        done = cli(None, "history", "app.py", cwd=here)
        assert done.returncode == 0 and "edit_applied" in done.stdout  # src/app.py's
        done = cli(None, "read", "app.py", "--workspace", str(workspace), cwd=here)
        assert done.stdout == "src app\nmore\n", done.stderr  # named: the same rule
        done = cli(None, "read", "../../outside.txt", cwd=here)
        assert done.returncode != 0 and "outside" in (done.stdout + done.stderr).lower()
    finally:
        daemon.stop()


def test_mcp_serves_the_home_directory_only_when_asked() -> None:
    """`editjournal mcp --allow-broad` from ~ runs (and ends when its stdin closes);
    without it, refused at once. No tool call is made, so no daemon starts."""
    home = Path(os.environ["HOME"]).resolve()  # the test's own (tests/conftest.py)
    assert mcp_from(home).returncode == 2
    done = subprocess.run(
        [str(BIN / "editjournal"), "mcp", "--allow-broad"],
        cwd=home,
        env=cli_env(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert done.returncode == 0, done.stderr
    assert f"editjournal mcp: workspace {home}" in done.stderr
