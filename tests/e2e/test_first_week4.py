"""The first week, round 3's last small truths (issue 39): every refusal and warning
says what is true for the tool that got it.

Each refusal is provoked for real on one daemon (each test its own file and agents):
a whole-file or section write is never told to retry "with the fresh anchors" (it
takes none), `missing/` is not told to drop its '/', and a write_file after a ranged
re-read is explained from the agent's last full view (who changed which lines), or not
warned about at all when nothing changed since that view.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from editjournal.client import Client, RequestError
from tests.conftest import RunningDaemon, start
from tests.e2e.cli_support import cli
from tests.e2e.hook_support import claude_payload, run_hook

DOC = "# Notes\n\n## One\nfirst = 1\n\n## Two\nsecond = 2\nLIMIT = 10\n"
ROWS = "".join(f"v{n} = {n}\n" for n in range(1, 21))
COMMAND = "editjournal hook claude-code"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningDaemon]:
    """One daemon for the refusal tests: each test has its own file and agents."""
    root = tmp_path_factory.mktemp("week4") / "ws"
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


def changed_by_bob(served: RunningDaemon, name: str, prefix: str) -> tuple[Client, Client]:
    """`name` read by alice and bob, then a line of it changed by bob."""
    (served.root / name).write_text(DOC)
    alice, bob = served.client(f"{prefix}-alice"), served.client(f"{prefix}-bob")
    alice.read_file(name)
    bob.read_file(name)
    bob.edit_file(name, "LIMIT = 10", "LIMIT = 11")
    return alice, bob


# --- whole-file and section writes take no anchors ------------------------------------------


def test_a_stale_update_section_is_told_to_keep_the_changed_lines_not_to_use_anchors(
    served: RunningDaemon,
):
    alice, _ = changed_by_bob(served, "section.md", "section")
    stale = refused(lambda: alice.update_section("section.md", "## Two", "second = 3\n"))
    assert stale.code == "anchor_stale"
    assert [s["op"] for s in stale.details["stale"]] == ["update_section"]
    assert stale.hint == (
        "retry your update_section at once with a new body that keeps the changed lines of"
        " details.delta: no re-read needed"
    )
    [line] = stale.details["delta"]["changed_lines"]
    body = f"second = 3\n{line['text']}\n"  # the hint, followed
    assert alice.update_section("section.md", "## Two", body).version > 0
    assert "LIMIT = 11" in (served.root / "section.md").read_text()


@pytest.mark.parametrize("kind", ["Add File", "Delete File"])
def test_a_stale_whole_file_patch_is_told_what_to_keep_not_to_use_anchors(
    served: RunningDaemon, kind: str
):
    name = f"{kind.split()[0].lower()}.md"
    alice, _ = changed_by_bob(served, name, kind.split()[0].lower())
    body = "\n+x" if kind == "Add File" else ""
    patch = f"*** Begin Patch\n*** {kind}: {name}{body}\n*** End Patch\n"
    stale = refused(lambda: alice.apply_patch(patch))
    assert stale.code == "anchor_stale"
    assert "fresh anchors" not in (stale.hint or "") + stale.message
    if kind == "Add File":
        assert stale.details["whole_file"] == "replace"
        assert f"would replace all 8 lines of {name}" in stale.message
        assert stale.hint == (
            "redo the whole-file write at once with the changed lines of details.delta kept in"
            " its content (they are not yours to drop): no re-read needed"
        )
    else:
        assert stale.details["whole_file"] == "delete"
        assert f"would delete {name} and its 8 lines" in stale.message
        assert stale.hint == (
            "see what changed in details.delta, and delete the file again only if those"
            " changes may go too: no re-read needed"
        )


# --- a trailing '/' on nothing ----------------------------------------------------------------


def test_a_trailing_slash_on_nothing_is_not_found_not_drop_the_slash(served: RunningDaemon):
    agent = served.client("slash-agent")
    for ask in (lambda: agent.read_file("missing/"), lambda: agent.write_file("missing/", "x")):
        nothing = refused(ask)
        assert nothing.code == "invalid_params", nothing  # file_not_found would create it
        assert "there is no missing in the workspace (no file, no directory)" in nothing.message
        assert nothing.hint == (
            "check the path: there is no missing to read (a file is named without a trailing"
            " '/'; a write creates it)"
        )
    assert not (served.root / "missing").exists()  # the write made nothing
    (served.root / "real.txt").write_text("x\n")
    file = refused(lambda: agent.read_file("real.txt/"))
    assert file.code == "invalid_params" and "drop the trailing '/': real.txt" in (file.hint or "")


# --- write_file after a ranged re-read ------------------------------------------------------


def _ranged_reread(served: RunningDaemon, name: str, prefix: str, bob_edits: bool) -> Client:
    (served.root / name).write_text(ROWS)
    alice, bob = served.client(f"{prefix}-alice"), served.client(f"{prefix}-bob")
    alice.read_file(name)
    if bob_edits:
        bob.read_file(name)
        bob.edit_file(name, "v3 = 3", "v3 = 33")
    alice.read_file(name, range="10-12")  # its latest read: after bob's change, partial
    return alice


def test_write_file_after_a_ranged_reread_names_who_changed_which_lines_since_the_full_view(
    served: RunningDaemon,
):
    alice = _ranged_reread(served, "ranged.py", "ranged", bob_edits=True)
    written = alice.write_file("ranged.py", "z = 1\n")
    assert alice.last_response is not None
    [warning] = alice.last_response.warnings
    assert "which you had not read since" not in warning
    assert warning.startswith("write_file replaced all 20 lines of ranged.py; your latest read (")
    assert "showed lines 10-12 of it, and since you last saw all of it (version " in warning
    assert "line(s) 3 changed — by ranged-bob (edit_applied, seq " in warning
    assert written.overwrote_unseen and written.overwrote_unseen[0]["agent"] == "ranged-bob"


def test_write_file_after_a_ranged_reread_of_an_unchanged_file_warns_of_nothing(
    served: RunningDaemon,
):
    alice = _ranged_reread(served, "quiet.py", "quiet", bob_edits=False)
    written = alice.write_file("quiet.py", "z = 1\n")
    assert alice.last_response is not None and not alice.last_response.warnings
    assert not written.overwrote_unseen


# --- a hook that finds no daemon says so once -----------------------------------------------


def _prompt(root: Path, session: str) -> dict[str, str]:
    return {
        "session_id": session,
        "cwd": str(root),
        "hook_event_name": "UserPromptSubmit",
        "prompt": "go on",
    }


def test_a_hook_that_finds_no_daemon_says_so_once_per_session_until_one_serves(workspace: Path):
    (workspace / "app.py").write_text("x = 1\n")
    state = workspace / ".editjournal"
    state.mkdir(mode=0o700)
    state.chmod(0o777)  # not this user's alone: no daemon can be started there
    first = run_hook("claude-code", _prompt(workspace, "s1"))
    assert first.returncode == 0 and first.stdout == ""
    [said] = first.stderr.splitlines()
    assert f"no daemon serves {workspace} and none could be started" in said
    assert "said once: this session's hooks allow every call without a word until" in said
    again = run_hook("claude-code", _prompt(workspace, "s1"))  # its next prompt
    edit = run_hook(
        "claude-code",
        claude_payload(workspace, "s1", "PreToolUse", "Edit", old_string="x", new_string="y"),
    )
    assert (again.returncode, again.stdout, again.stderr) == (0, "", "")
    assert (edit.returncode, edit.stdout, edit.stderr) == (0, "", "")  # allowed, quietly
    other = run_hook("claude-code", _prompt(workspace, "s2"))  # another session is told
    assert "none could be started" in other.stderr
    state.chmod(0o700)
    daemon = start(workspace)
    try:
        back = run_hook("claude-code", claude_payload(workspace, "s1", "PostToolUse", "Read"))
        assert (back.returncode, back.stderr) == (0, "")
    finally:
        daemon.stop()
    state.chmod(0o777)  # gone again: told again, once
    told = run_hook("claude-code", _prompt(workspace, "s1"))
    assert "none could be started" in told.stderr
    assert run_hook("claude-code", _prompt(workspace, "s1")).stderr == ""


# --- hooks in two scopes ---------------------------------------------------------------------

PROJECT_HOOKS = {  # as a teammate committed them: the command PATH finds
    "hooks": {
        event: [{"matcher": matcher, "hooks": [{"type": "command", "command": COMMAND}]}]
        for event, matcher in (("PreToolUse", "Edit|MultiEdit|Write"), ("PostToolUse", "Read"))
    }
}


def test_hooks_in_the_project_and_local_scopes_are_said_to_journal_twice(workspace: Path):
    (workspace / ".claude").mkdir()
    (workspace / ".claude" / "settings.json").write_text(json.dumps(PROJECT_HOOKS))
    local = cli(workspace, "hooks", "install", "claude-code", "--scope", "local")
    assert local.returncode == 0, local.stderr
    [note] = [line for line in local.stdout.splitlines() if "journaled twice" in line]
    assert note.startswith(
        "note: Claude Code runs the hooks of every scope, so editjournal's run twice for"
        " PreToolUse Edit|MultiEdit|Write ("
    )
    assert f"the project scope runs {COMMAND}; the local scope runs " in note
    assert note.endswith(
        "Keep one: `editjournal hooks uninstall claude-code --scope local` leaves the"
        " project scope's"
    )
    found = json.loads(cli(workspace, "--json", "hooks", "status", "claude-code").stdout)
    assert found["notes"] == [note.removeprefix("note: ")]
    cli(workspace, "hooks", "uninstall", "claude-code", "--scope", "local")
    alone = json.loads(cli(workspace, "--json", "hooks", "status", "claude-code").stdout)
    assert alone["notes"] == []


# --- prepare_file_insert_after among identical lines --------------------------------------

# lines 2 and 4 are twins with identical neighbours (a `?` anchor each); 1, 3, 5 are not
TWINS = "x = 1\nvalue = compute()\nx = 1\nvalue = compute()\nx = 1\n"


def test_an_insert_anchor_among_twins_is_resolved_by_the_line_number_it_was_read_at(
    served: RunningDaemon,
):
    path = served.root / "twins.py"
    path.write_text(TWINS)
    alice, bob = served.client("twin-alice"), served.client("twin-bob")
    read = alice.read_file("twins.py", hashes=True)
    assert read.rendered is not None and read.lines is not None
    assert "?|" in read.rendered.splitlines()[3]  # line 4: a twin
    rows = {row.line: f"{row.line}#{row.hash}" for row in read.lines}
    bob.read_file("twins.py")
    bob.prepend_to_file("twins.py", "# bob\n")  # every line moved down one
    plan = alice.prepare_file_insert_after("twins.py", rows[4], "extra = 2")
    assert plan.evidence.start_line == 5 and plan.evidence.occurrence is None
    alice.apply_file_modification(plan.hunk_id)
    assert path.read_text() == (
        "# bob\nx = 1\nvalue = compute()\nx = 1\nvalue = compute()\nextra = 2\nx = 1\n"
    )
