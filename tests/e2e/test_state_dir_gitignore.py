"""`.editjournal/` carries its own `.gitignore` (`*`): `git add -A` in a served workspace
stages the workspace's files and nothing of the journal, the log or the run files.
Checked with the real `git`."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from editjournal.schemas.endpoint import STATE_DIR_NAME
from tests.conftest import start


def git(workspace: Path, *args: str) -> str:
    found = shutil.which("git")
    if found is None:
        pytest.fail("`git` is not installed: this test needs the real one")
    done = subprocess.run(
        [found, "-C", str(workspace), *args], capture_output=True, text=True, timeout=30, check=True
    )
    return done.stdout


def test_git_add_all_stages_nothing_of_the_state_directory(workspace: Path):
    git(workspace, "init", "-q")
    (workspace / "main.py").write_text("print('hi')\n")
    running = start(workspace)
    try:
        running.client().read_file("main.py")  # the journal, log and run files all exist now
        state = workspace / STATE_DIR_NAME
        assert {"journal.db", "daemon.log", "daemon.json"} <= {p.name for p in state.iterdir()}
        git(workspace, "add", "-A")
        staged = git(workspace, "diff", "--cached", "--name-only").split()
        assert staged == ["main.py"]
        assert git(workspace, "status", "--porcelain", "--ignored=no") == "A  main.py\n"
    finally:
        running.stop()


def test_an_existing_state_gitignore_is_left_as_it_is(workspace: Path):
    state = workspace / STATE_DIR_NAME
    state.mkdir(mode=0o700)
    (state / ".gitignore").write_text("# mine\n*.db\n")
    running = start(workspace)
    running.stop()
    assert (state / ".gitignore").read_text() == "# mine\n*.db\n"


def test_a_state_directory_from_before_gets_its_gitignore(workspace: Path):
    (workspace / STATE_DIR_NAME).mkdir(mode=0o700)  # as an older version left it
    running = start(workspace)
    running.stop()
    lines = (workspace / STATE_DIR_NAME / ".gitignore").read_text().splitlines()
    assert "*" in lines
