"""`editjournal patch PATH DIFF --base SHA`: safe_patch from a terminal or a script."""

from __future__ import annotations

import difflib
import hashlib
import json
from pathlib import Path

from tests.conftest import RunningDaemon
from tests.e2e.cli_support import cli

BEFORE = "def greet():\n    return 'hi'\n\n\ndef part():\n    return 'bye'\n"
AFTER = "def greet():\n    return 'hello'\n\n\ndef part():\n    return 'bye'\n"


def unified(before: str, after: str, name: str = "g.py") -> str:
    rows = difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True), f"a/{name}", f"b/{name}"
    )
    return "".join(rows)


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def test_patch_from_a_file_applies_and_prints_the_new_version(
    daemon: RunningDaemon, tmp_path: Path
):
    (daemon.root / "g.py").write_text(BEFORE)
    diff_file = tmp_path / "fix.diff"
    diff_file.write_text(unified(BEFORE, AFTER))
    done = cli(daemon.root, "patch", "g.py", str(diff_file), "--base", sha(BEFORE))
    assert done.returncode == 0, done.stderr
    assert (daemon.root / "g.py").read_text() == AFTER
    assert "g.py version" in done.stdout and sha(AFTER) in done.stdout
    assert "lines 6 -> 6 (+0)" in done.stdout


def test_patch_from_stdin_with_json_output(daemon: RunningDaemon):
    (daemon.root / "g.py").write_text(BEFORE)
    done = cli(
        daemon.root, "patch", "g.py", "--base", sha(BEFORE), "--json",
        stdin=unified(BEFORE, AFTER),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    reply = json.loads(done.stdout)
    assert reply["success"] is True
    assert reply["latest_file_state"]["sha256"] == sha(AFTER)
    assert reply["latest_file_state"]["content"] is None  # the CLI never asks for the content


def test_patch_against_a_changed_file_is_refused_with_a_command_to_recover(
    daemon: RunningDaemon, tmp_path: Path
):
    (daemon.root / "g.py").write_text(BEFORE)
    diff = unified(BEFORE, AFTER)
    (daemon.root / "g.py").write_text(BEFORE + "# changed meanwhile\n")
    done = cli(daemon.root, "patch", "g.py", "--base", sha(BEFORE), stdin=diff)
    assert done.returncode == 1
    assert "state_mismatch" in done.stderr
    assert "File has changed on disk since it was last read" in done.stderr
    assert "read g.py --json" in done.stderr  # a real command, not a wire field
    assert (daemon.root / "g.py").read_text() == BEFORE + "# changed meanwhile\n"


def test_patch_whose_context_is_not_in_the_file_is_an_invalid_diff(daemon: RunningDaemon):
    (daemon.root / "g.py").write_text(BEFORE)
    wrong = unified("def other():\n    return 1\n", "def other():\n    return 2\n")
    done = cli(daemon.root, "patch", "g.py", "--base", sha(BEFORE), "--json", stdin=wrong)
    assert done.returncode == 1
    assert json.loads(done.stdout)["code"] == "invalid_diff"
    assert (daemon.root / "g.py").read_text() == BEFORE


def test_patch_with_an_empty_diff_is_bad_input(daemon: RunningDaemon):
    (daemon.root / "g.py").write_text(BEFORE)
    done = cli(daemon.root, "patch", "g.py", "--base", sha(BEFORE), stdin="")
    assert done.returncode == 2
    assert "no diff on stdin" in done.stderr
