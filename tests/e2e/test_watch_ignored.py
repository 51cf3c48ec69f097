"""Ignored directories get no inotify watch at all, counted in the kernel's own list.

The daemon's watches are read from /proc/<pid>/fdinfo (`inotify wd:... ino:... sdev:...`
lines) and mapped back to the workspace's directories by device and inode, so every
test states exactly which directories are watched: the not-ignored ones, no more and
no fewer — `.git/`, `.editjournal/`, gitignored trees and `--ignore` patterns cost
nothing, whatever appears in them later.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from editjournal.client import Client
from editjournal.daemon.watch.kernelwatches import DirId, dir_id
from tests.conftest import RunningDaemon, start, wait_until
from tests.e2e.test_outside import wait_for
from tests.e2e.watch_support import outside, settle

VENV_PACKAGES = 50
NORMAL = {".", "src", "src/app", "src/app/views", "docs", "tests"}


def kernel_watches(pid: int) -> set[DirId]:
    """(device, inode) of every inotify watch process `pid` holds."""
    found: set[DirId] = set()
    for fd in Path(f"/proc/{pid}/fdinfo").iterdir():
        try:
            lines = fd.read_text().splitlines()
        except OSError:
            continue  # closed meanwhile
        for line in lines:
            if line.startswith("inotify "):
                fields = dict(part.split(":", 1) for part in line.split()[1:] if ":" in part)
                found.add((int(fields["sdev"], 16), int(fields["ino"], 16)))
    return found


def watched(running: RunningDaemon) -> set[str]:
    """The workspace directories (relative, "." for the root) the daemon watches; a watch
    on anything else shows up as `outside:<inode>`."""
    names: dict[DirId, str] = {}
    for directory, _subdirs, _files in os.walk(running.root):
        found = dir_id(directory)
        if found is not None:
            names[found] = os.path.relpath(directory, running.root)
    return {names.get(i, f"outside:{i[1]}") for i in kernel_watches(running.proc.pid)}


def wait_watched(running: RunningDaemon, expected: set[str], what: str) -> None:
    try:
        wait_until(lambda: watched(running) == expected, 20, what)
    except AssertionError:
        assert watched(running) == expected, what  # the difference, not only "timed out"


@pytest.fixture
def running(workspace: Path) -> Iterator[RunningDaemon]:
    for d in ("objects/ab", "objects/cd", "refs/heads", "hooks"):
        (workspace / ".git" / d).mkdir(parents=True)
    (workspace / ".gitignore").write_text(".venv/\nnode_modules/\n")
    for n in range(VENV_PACKAGES):
        (workspace / ".venv" / "lib" / f"pkg{n}" / "sub").mkdir(parents=True)
    (workspace / "node_modules" / "left-pad" / "lib").mkdir(parents=True)
    (workspace / "generated" / "deep").mkdir(parents=True)
    for d in NORMAL - {"."}:
        (workspace / d).mkdir(parents=True, exist_ok=True)
    daemon = start(workspace, "--ignore", "generated/")
    yield daemon
    daemon.stop()


@pytest.fixture
def client(running: RunningDaemon) -> Client:
    return running.client()


def test_only_directories_that_are_not_ignored_are_watched(running: RunningDaemon, client: Client):
    assert client.status().watcher["state"] == "running"
    assert watched(running) == NORMAL
    assert len(kernel_watches(running.proc.pid)) == len(NORMAL)  # not the ~110 watchdog adds


def test_directories_created_later_are_watched_only_where_not_ignored(
    running: RunningDaemon, client: Client
):
    root = running.root
    for ignored in (
        ".venv/lib/newpkg/sub",
        "node_modules/new-mod/lib",
        "generated/later",
        ".git/x",
    ):
        (root / ignored).mkdir(parents=True)
    (root / "src" / "new" / "inner").mkdir(parents=True)  # after them: inotify keeps order
    wait_watched(running, NORMAL | {"src/new", "src/new/inner"}, "the new directories' watches")
    (root / "src" / "new" / "inner" / "mod.py").write_text("x = 1\n")
    wait_for(client, "src/new/inner/mod.py", "created")
    (root / ".venv" / "lib" / "newpkg" / "sub" / "mod.py").write_text("x = 1\n")
    settle(client, root)
    assert not [e for e in outside(client) if e.path.startswith((".venv", "node_modules"))]
    assert client.status().watcher["state"] == "running"


def test_outside_changes_in_watched_directories_are_still_journaled(
    running: RunningDaemon, client: Client
):
    target = running.root / "src" / "app" / "views" / "page.py"
    target.write_text("one\n")
    wait_for(client, "src/app/views/page.py", "created")
    client.read_file("src/app/views/page.py")
    target.write_text("two\n")
    wait_for(client, "src/app/views/page.py", "modified")


def test_a_gitignore_change_moves_the_watches(running: RunningDaemon, client: Client):
    gitignore = running.root / ".gitignore"
    gitignore.write_text(".venv/\nnode_modules/\ndocs/\n")
    wait_watched(running, NORMAL - {"docs"}, "docs/ to lose its watch")
    gitignore.write_text(".venv/\nnode_modules/\n")
    wait_watched(running, NORMAL, "docs/ to be watched again")
    assert client.status().watcher["state"] == "running"


def test_a_directory_moved_under_an_ignored_one_loses_its_watches(
    running: RunningDaemon, client: Client
):
    root = running.root
    os.rename(root / "src" / "app", root / "node_modules" / "app")
    wait_watched(running, NORMAL - {"src/app", "src/app/views"}, "the moved tree's watches to go")
    os.rename(root / "node_modules" / "app", root / "docs" / "app")
    wait_watched(
        running, NORMAL - {"src/app", "src/app/views"} | {"docs/app", "docs/app/views"}, ""
    )
    (root / "docs" / "app" / "views" / "late.md").write_text("late\n")
    wait_for(client, "docs/app/views/late.md", "created")


def test_a_directory_moved_out_of_the_workspace_loses_its_watches(
    running: RunningDaemon, tmp_path: Path
):
    os.rename(running.root / "src" / "app", tmp_path / "app")
    wait_watched(running, NORMAL - {"src/app", "src/app/views"}, "no watch left outside")
