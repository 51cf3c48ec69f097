"""The first week, round 3 (issue 39): `verify` tells a sound journal from a changed
workspace, and every hint points at something printed.

Each refusal is provoked for real on a real daemon; what an agent reads is the
hint the daemon sent, what a person reads is that error rendered by the CLI's own
code (`hints.suggestion`, `render.error_lines`) in this process, as `editjournal`
renders it, so no CLI process is spent on it. Hints checked: "check the warnings
above" when no warning is listed (one finding is the message itself), "the
closest / most similar lines above" when none were found, "drop the trailing '/'"
for a directory (which would then be `is_a_directory`), and "retry with the fresh
anchors" for edit_file, which takes none.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable, Iterator
from pathlib import Path

import click
import pytest

from editjournal.client import Client, RequestError
from editjournal.client.cli.app import cli as editjournal_group
from editjournal.client.cli.hints import HintContext, suggestion
from editjournal.client.views.render import error_lines
from editjournal.schemas.suggestions import ANCHORED_OPS
from tests.conftest import RunningDaemon, start
from tests.e2e.cli_support import cli

CODE = "def total(a, b):\n    first = a\n    return first + b\n\n\nLIMIT = 10\n"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningDaemon]:
    """One daemon for the hint tests: each test has its own file and agents."""
    root = tmp_path_factory.mktemp("hints") / "ws"
    root.mkdir()
    daemon = start(root)
    try:
        yield daemon
    finally:
        daemon.stop()


def refused(call: Callable[[], object]) -> RequestError:
    with pytest.raises(RequestError) as caught:
        call()
    return caught.value


def shown(error: RequestError, root: Path) -> str:
    """The error as `editjournal` prints it to a person (colours off)."""
    ctx = HintContext(
        command=lambda *words: shlex.join(["editjournal", *words]),
        root=root,
        path=error.details.get("path"),
        program=editjournal_group,
    )
    return click.unstyle("\n".join(error_lines(error, suggestion(error, ctx))))


def put(daemon: RunningDaemon, name: str, text: str = CODE) -> str:
    (daemon.root / name).write_text(text)
    return name


# --- verify ------------------------------------------------------------------------------


def test_verify_reports_a_file_changed_while_no_daemon_ran_and_passes_unless_strict(
    daemon: RunningDaemon, client: Client
):
    (daemon.root / "app.py").write_text(CODE)
    client.read_file("app.py")
    written = client.edit_file("app.py", "LIMIT = 10", "LIMIT = 20")
    assert daemon.stop() == 0
    (daemon.root / "app.py").write_text(CODE.replace("LIMIT = 10", "LIMIT = 30"))

    plain = cli(daemon.root, "verify")
    assert plain.returncode == 0, plain.stdout + plain.stderr
    assert "workspace  changed" in plain.stdout and "FAILED" not in plain.stdout
    assert f"CHANGED workspace: seq {written.version}: app.py: " in plain.stdout
    assert "the journal is intact; 1 file changed while no daemon recorded it" in plain.stdout
    assert "--strict fails on this" in plain.stdout

    strict = cli(daemon.root, "verify", "--strict", "--json")
    assert strict.returncode == 1, strict.stdout + strict.stderr
    found = json.loads(strict.stdout)
    assert found["ok"] is False and found["intact"] is True and found["problems"] == []
    assert found["checks"]["workspace"] == "changed"
    [change] = found["workspace_changes"]
    assert change["path"] == "app.py" and change["seq"] == written.version


# --- hints that point at something printed ---------------------------------------------------


def test_one_safety_finding_points_at_the_message_not_at_warnings_above(served: RunningDaemon):
    path = put(served, "safety.py")
    agent = served.client("safety-agent")
    one = refused(lambda: agent.edit_file(path, "def total(a, b):", "def total(a, b:"))
    assert one.code == "safety_check_failed"
    assert len(one.details["safety_warnings"]) == 1
    assert "safety_warnings" not in (one.hint or "")
    text = shown(one, served.root)
    assert "warnings above" not in text and "safety warnings:" not in text
    assert "the message says what looked wrong), pass --skip-safety-check" in text
    assert "bracket balance" in text.splitlines()[0]  # where "the message" says it


def test_no_similar_line_is_never_called_the_closest_lines_above(served: RunningDaemon):
    path = put(served, "nothing.py")
    agent = served.client("nothing-agent")
    none = refused(lambda: agent.edit_file(path, "qqqzzzxxx wvwvwv", "y"))
    assert none.code == "no_match" and none.details["similar_lines"] == []
    assert none.hint == (
        "copy old_string exactly from the file (no line of the file comes close to it):"
        ' read_file({"path": "nothing.py"})'
    )
    assert "lines above" not in shown(none, served.root)
    close = refused(lambda: agent.edit_file(path, "    return first + c", "y"))
    assert close.details["similar_lines"] and "details.similar_lines" in (close.hint or "")
    text = shown(close, served.root)
    assert "the closest lines above are a hint" in text
    assert text.index("closest similar lines") < text.index("the closest lines above")


def test_a_patch_hunk_with_no_similar_line_names_no_most_similar_lines(served: RunningDaemon):
    path = put(served, "patched.py")
    agent = served.client("patch-agent")
    patch = f"*** Begin Patch\n*** Update File: {path}\n@@\n-qqqzzzxxx wvwvwv\n+y\n*** End Patch\n"
    none = refused(lambda: agent.apply_patch(patch))
    assert none.code == "no_match" and none.details["nearest"] == []
    assert "nearest" not in (none.hint or "")
    assert "most similar" not in shown(none, served.root)
    near = refused(lambda: agent.apply_patch(patch.replace("qqqzzzxxx wvwvwv", "    first = c")))
    assert near.details["nearest"] and "details.nearest" in (near.hint or "")
    text = shown(near, served.root)
    assert "most similar: line 2" in text.splitlines()[0]  # what "above" points at
    assert "the most similar lines above are a hint" in text


def test_a_trailing_slash_on_a_directory_is_is_a_directory_not_drop_the_slash(
    served: RunningDaemon,
):
    (served.root / "pkg").mkdir()
    put(served, "pkg/mod.py")
    agent = served.client("slash-agent")
    directory = refused(lambda: agent.read_file("pkg/"))
    assert directory.code == "is_a_directory", directory
    assert "trailing" not in (directory.hint or "") + directory.message
    file = refused(lambda: agent.read_file("pkg/mod.py/"))
    assert file.code == "invalid_params"
    assert "drop the trailing '/': pkg/mod.py" in (file.hint or "")
    assert agent.read_file("pkg/mod.py").content == CODE  # where that hint leads


def test_a_stale_edit_file_is_told_to_take_old_string_from_the_delta_not_anchors(
    served: RunningDaemon,
):
    path = put(served, "stale.py")
    alice, bob = served.client("stale-alice"), served.client("stale-bob")
    alice.read_file(path)
    bob.read_file(path)
    bob.edit_file(path, "LIMIT = 10", "LIMIT = 11")
    stale = refused(lambda: alice.edit_file(path, "LIMIT = 10", "LIMIT = 12"))
    assert stale.code == "anchor_stale"
    assert [s["op"] for s in stale.details["stale"]] == ["edit_file"]
    assert "edit_file" not in ANCHORED_OPS
    assert stale.hint == (
        "retry at once with an old_string copied from the current lines of details.delta:"
        " no re-read needed"
    )
    assert "fresh anchors of" not in shown(stale, served.root).split("suggested action:")[1]
    [line] = stale.details["delta"]["changed_lines"]
    done = alice.edit_file(path, line["text"], "LIMIT = 12")  # the hint, followed
    assert "LIMIT = 12" in (served.root / path).read_text() and done.version > 0


def test_a_stale_anchored_edit_is_still_told_to_use_the_fresh_anchors(served: RunningDaemon):
    path = put(served, "anchored.py")
    alice, bob = served.client("anchor-alice"), served.client("anchor-bob")
    seen = alice.read_file(path, hashes=True).lines
    assert seen is not None
    bob.read_file(path)
    bob.edit_file(path, "LIMIT = 10", "LIMIT = 11")
    op = {"op": "replace_line", "hash": seen[5].hash, "content": "LIMIT = 12"}
    stale = refused(lambda: alice.edit(path, [op]))
    assert stale.code == "anchor_stale"
    assert stale.hint == "retry at once with the fresh anchors of details.delta: no re-read needed"
