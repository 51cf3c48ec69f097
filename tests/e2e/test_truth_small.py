"""Small answers that must be true (issue 34): a version that never existed is not
"(unchanged)", and a sha256 prefix of the file as it is now names it even before the
journal has recorded that content."""

from __future__ import annotations

import difflib
import hashlib
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import RunningDaemon, start
from tests.e2e.cli_support import cli

BEFORE = "def greet():\n    return 'hi'\n"
AFTER = "def greet():\n    return 'hello'\n"


def test_reading_since_a_version_that_never_existed_is_refused(daemon: RunningDaemon):
    (daemon.root / "f.txt").write_text("one\n")
    first = cli(daemon.root, "read", "f.txt", "--json")
    assert first.returncode == 0, first.stderr
    done = cli(daemon.root, "read", "f.txt", "--since", "99999")
    assert done.returncode == 1
    assert "unknown_seq" in done.stderr and "no version 99999 exists" in done.stderr
    assert "(unchanged)" not in done.stdout


def test_reading_since_the_newest_version_is_unchanged(daemon: RunningDaemon):
    (daemon.root / "f.txt").write_text("one\n")
    version = json.loads(cli(daemon.root, "read", "f.txt", "--json").stdout)["version"]
    done = cli(daemon.root, "read", "f.txt", "--since", str(version))
    assert done.returncode == 0, done.stderr
    assert "(unchanged)" in done.stdout


@pytest.fixture
def unwatched(workspace: Path) -> Iterator[RunningDaemon]:
    """A daemon that journals a file only when asked about it: whatever is written
    stays unknown to the journal until then (as in the moment before the watcher
    settles on a daemon that watches)."""
    running = start(workspace, "--no-watch")
    yield running
    running.stop()


def test_a_prefix_of_the_current_content_names_a_file_not_journaled_yet(
    unwatched: RunningDaemon,
):
    (unwatched.root / "g.py").write_text(BEFORE)
    prefix = hashlib.sha256(BEFORE.encode()).hexdigest()[:12]
    diff = "".join(
        difflib.unified_diff(
            BEFORE.splitlines(keepends=True), AFTER.splitlines(keepends=True), "a/g.py", "b/g.py"
        )
    )
    history = cli(unwatched.root, "history", "g.py")
    assert "file_not_in_journal" in history.stderr  # the journal has no version of it
    done = cli(unwatched.root, "patch", "g.py", "--base", prefix, stdin=diff)
    assert done.returncode == 0, done.stderr
    assert (unwatched.root / "g.py").read_text() == AFTER


def test_shipping_a_workspace_no_daemon_served_says_to_serve_it(workspace: Path):
    done = cli(workspace, "ship", "--to", "postgresql://nobody@127.0.0.1:9/none")
    assert done.returncode == 1
    assert "has no journal" in done.stderr and "nothing to ship" in done.stderr
    assert "editjournal start" in done.stderr
    assert (
        "read the file first" not in done.stderr
        and "journal.db" not in done.stderr.split("nothing to ship")[1]
    )
