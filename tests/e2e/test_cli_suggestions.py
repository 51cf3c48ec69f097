"""Every suggestion the CLI prints is a command that runs as printed (the README's promise).

Each kind of error and warning that suggests something is provoked for real — a real
daemon, the real `editjournal` command — and every command in what it printed (a
backticked span starting with `editjournal `; `a && b` is two) is taken at its word:
one that only looks is run and must succeed; one that would change something (undo,
restore, apply, stop, start) is resolved against the real click group down to its last
option, without running. No placeholder (PATH, FILE, SEQ) may be in a command, no
command may be printed outside backticks, and no call in the daemon's spelling
(`read_file({...})`) or "re-read_file" may appear anywhere in the output.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import tempfile
from pathlib import Path

import click

from editjournal.client import Client
from editjournal.client.cli import cli as editjournal_group
from editjournal.schemas.tools import TOOL_PARAMS
from tests.conftest import RunningDaemon, wait_until
from tests.e2e.cli_support import CLI, TIMEOUT, cli, cli_env

AGENT = "cli-test"  # the agent `cli` runs as
SOURCE = "def total(a, b):\n    first = a\n    second = b\n    return first + second\n}\n"
COMMAND = re.compile(r"`(editjournal [^`]+)`")
PRINTED = re.compile(r"\beditjournal [a-z][a-z-]*")
WIRE_CALL = re.compile(rf"\b(?:[a-z]+(?:_[a-z]+)+|{'|'.join(TOOL_PARAMS)})\(")
PLACEHOLDER = re.compile(r"^(?:[A-Z]|[A-Z][A-Z_]+|\.\.\.|<[^>]*>|\{[a-z_]+\})$")
# what a command does when run, by its words: these change the workspace or the daemon
CHANGING = {"undo", "apply-file-modification", "discard-hunk", "stop", "start", "serve"}
CHANGING_SUB = {("checkpoint", "restore"), ("checkpoint", "create")}


# --- taking the CLI at its word -------------------------------------------------------------


def suggested(done: subprocess.CompletedProcess[str]) -> list[list[str]]:
    """Every command `done` printed, checked for what may never be printed."""
    text = done.stdout + done.stderr
    assert not WIRE_CALL.search(text), f"a call in the daemon's spelling:\n{text}"
    assert "re-read_file" not in text, text
    spans = [(m.start(1), m.end(1)) for m in COMMAND.finditer(text)]
    for printed in PRINTED.finditer(text):
        inside = any(start <= printed.start() < end for start, end in spans)
        assert inside, f"a command outside backticks: {printed.group(0)!r} in\n{text}"
    commands = [shlex.split(part) for span in COMMAND.findall(text) for part in span.split(" && ")]
    for argv in commands:
        holders = [word for word in argv if PLACEHOLDER.match(word)]
        assert not holders, f"placeholder {holders} in {shlex.join(argv)}"
    return commands


def resolved(argv: list[str]) -> click.Context:
    """`argv` parsed by the real `editjournal` group, down to the command it names: a
    usage error (an unknown option, a missing argument) raises."""
    command: click.Command = editjournal_group
    name, rest, parent = argv[0], argv[1:], None
    while True:
        ctx = command.make_context(name, list(rest), parent=parent)
        if not isinstance(command, click.Group):
            assert not ctx.args, f"left over: {ctx.args}"
            return ctx
        rest = [*getattr(ctx, "_protected_args", []), *ctx.args]
        found, sub, rest = command.resolve_command(ctx, rest)
        assert sub is not None and found is not None, argv
        name, command, parent = found, sub, ctx


def changes_something(argv: list[str]) -> bool:
    words = [w for w in argv[1:] if not w.startswith("-")]
    return argv[1] in CHANGING or tuple(words[:2]) in CHANGING_SUB


def taken_at_its_word(argv: list[str], elsewhere: Path) -> None:
    """Resolve a command that changes something; run one that only looks — from another
    directory, as a person may: it names the workspace itself."""
    if "--help" not in argv:  # (which would exit at once, 0, to print the help)
        resolved(argv)
    assert "--workspace" in argv, f"{shlex.join(argv)} would serve whatever directory it runs in"
    if changes_something(argv):
        return
    done = subprocess.run(
        [*CLI, *argv[1:]], cwd=elsewhere, capture_output=True, text=True, timeout=TIMEOUT,
        env=cli_env(EDITJOURNAL_AGENT=AGENT),
    )  # fmt: skip
    assert done.returncode == 0, f"{shlex.join(argv)} failed:\n{done.stderr}"


def every_suggestion_works(done: subprocess.CompletedProcess[str]) -> list[list[str]]:
    commands = suggested(done)
    with tempfile.TemporaryDirectory() as elsewhere:
        for argv in commands:
            taken_at_its_word(argv, Path(elsewhere))
    return commands


def suggestion_line(done: subprocess.CompletedProcess[str]) -> str:
    found = re.search(r"suggested action: (.+)", done.stderr)
    assert found is not None, done.stderr
    return found.group(1)


def run(daemon: RunningDaemon, *args: str, stdin: str | None = None, ok: bool = False):
    done = cli(daemon.root, *args, stdin=stdin, agent=AGENT)
    assert done.returncode == (0 if ok else 1), done.stderr
    return done


def edit_ops(daemon: RunningDaemon, ops: list[dict]) -> subprocess.CompletedProcess[str]:
    return run(daemon, "edit", "t.py", stdin=json.dumps(ops))


def put(daemon: RunningDaemon, path: str = "t.py", text: str = SOURCE) -> Client:
    (daemon.root / path).write_text(text)
    return daemon.client(AGENT)


def named(commands: list[list[str]], *words: str) -> list[str]:
    """The one suggested command that begins with `words`."""
    [found] = [argv for argv in commands if argv[1 : 1 + len(words)] == list(words)]
    return found


# --- stale anchors ------------------------------------------------------------------------------


def test_a_stale_edit_says_retry_with_the_delta_and_how_to_see_it_again(daemon: RunningDaemon):
    me = put(daemon)
    seen = me.read_file("t.py", hashes=True).lines
    bob = daemon.client("bob")
    fresh = bob.read_file("t.py", hashes=True).lines
    bob.edit("t.py", [{"op": "replace_line", "hash": fresh[1].hash, "content": "    x = a"}])
    done = edit_ops(daemon, [{"op": "replace_line", "hash": seen[1].hash, "content": "    y"}])
    assert "no re-read needed" in suggestion_line(done)
    commands = every_suggestion_works(done)
    assert named(commands, "read", "t.py")[3] == "--since"


def test_an_anchor_unknown_in_a_file_never_read_says_which_read_gives_fresh_ones(
    daemon: RunningDaemon,
):
    put(daemon)
    done = edit_ops(daemon, [{"op": "replace_line", "hash": "abcdef", "content": "x"}])
    commands = every_suggestion_works(done)
    assert named(commands, "read", "t.py")[3] == "--hashes"


def test_a_patch_on_an_old_base_names_the_read_and_the_flag(daemon: RunningDaemon):
    me = put(daemon)
    base = me.read_file("t.py").sha256
    bob = daemon.client("bob")
    rows = bob.read_file("t.py", hashes=True).lines
    bob.edit("t.py", [{"op": "replace_line", "hash": rows[3].hash, "content": "    return 0"}])
    hunk = "@@ -1,2 +1,2 @@\n-def total(a, b):\n+def add(a, b):\n     first = a\n"
    diff = f"--- a/t.py\n+++ b/t.py\n{hunk}"
    done = run(daemon, "patch", "t.py", "-", "--base", base, stdin=diff)
    assert "state_mismatch" in done.stderr and "pass --rebase" in done.stderr
    named(every_suggestion_works(done), "read", "t.py")


def test_a_low_entropy_target_and_an_unsafe_edit_name_no_tool_words(daemon: RunningDaemon):
    rows = put(daemon).read_file("t.py", hashes=True).lines
    brace = edit_ops(daemon, [{"op": "delete_line", "hash": rows[4].hash}])
    assert "anchor_low_entropy" in brace.stderr
    every_suggestion_works(brace)
    unsafe = edit_ops(daemon, [{"op": "replace_line", "hash": rows[0].hash, "content": "def t(a:"}])
    assert "pass --skip-safety-check" in suggestion_line(unsafe)
    every_suggestion_works(unsafe)


# --- the atomic tools and prepared hunks -------------------------------------------------------


def test_edit_file_without_a_match_names_the_read_that_shows_the_file(daemon: RunningDaemon):
    put(daemon)
    done = run(daemon, "edit-file", "t.py", "--old-string", "nowhere", "--new-string", "x")
    assert "--old-string" in suggestion_line(done)
    named(every_suggestion_works(done), "read", "t.py")


def test_edit_file_with_several_matches_names_the_options(daemon: RunningDaemon):
    put(daemon, text="a = 1\na = 1\n")
    done = run(daemon, "edit-file", "t.py", "--old-string", "a = 1", "--new-string", "b")
    assert "--expected-replacements 2" in suggestion_line(done)
    every_suggestion_works(done)


def test_a_prepare_anchor_that_matches_nothing_names_its_option(daemon: RunningDaemon):
    put(daemon)
    args = ("prepare-file-insert-after", "t.py", "--anchor", "zzz", "--content", "x")
    done = run(daemon, *args)
    assert "--anchor" in suggestion_line(done)
    named(every_suggestion_works(done), "read", "t.py")
    put(daemon, text="x = 1\nx = 1\n")
    several = run(daemon, "prepare-file-insert-after", "t.py", "--anchor", "x", "--content", "y")
    assert "pass --occurrence" in suggestion_line(several)
    every_suggestion_works(several)


def test_an_unknown_hunk_names_the_command_that_lists_yours(daemon: RunningDaemon):
    done = run(daemon, "apply-file-modification", "--hunk-id", "hdeadbeef00")
    assert named(every_suggestion_works(done), "list-hunks")


def test_a_hunk_applied_twice_names_the_read_that_shows_it(daemon: RunningDaemon):
    me = put(daemon)
    plan = me.prepare_file_append("t.py", "# end")
    me.apply_file_modification(plan.hunk_id)
    done = run(daemon, "apply-file-modification", "--hunk-id", plan.hunk_id)
    assert "hunk_already_applied" in done.stderr
    named(every_suggestion_works(done), "read", "t.py")


def test_hunk_refusals_about_kind_and_owner_name_no_tool_words(daemon: RunningDaemon):
    me = put(daemon)
    mine = me.prepare_file_append("t.py", "# end")
    args = ("prepare-file-insert-after", "t.py", "--anchor", "first", "--content", "x")
    kind = run(daemon, *args, "--existing-hunk-id", mine.hunk_id)
    assert "--existing-hunk-id" in suggestion_line(kind)
    every_suggestion_works(kind)
    theirs = daemon.client("bob").prepare_file_append("t.py", "# bob")
    owner = run(daemon, "apply-file-modification", "--hunk-id", theirs.hunk_id)
    assert "wrong_owner" in owner.stderr
    every_suggestion_works(owner)


def test_diff_looking_content_names_the_content_format_option(daemon: RunningDaemon):
    put(daemon)
    diff = "--- a/t.py\n+++ b/t.py\n@@ -1,1 +1,1 @@\n-x\n+y\n"
    done = run(daemon, "overwrite-entire-file", "t.py", "--content", diff)
    assert "--content-format text" in suggestion_line(done)
    every_suggestion_works(done)


def test_a_prepared_hunk_names_the_command_that_applies_it(daemon: RunningDaemon):
    put(daemon)
    done = run(daemon, "prepare-file-append", "t.py", "--content", "# end", ok=True)
    apply = named(every_suggestion_works(done), "apply-file-modification")
    assert apply[2] == "--hunk-id"


# --- undo, checkpoints, the journal -------------------------------------------------------------


def test_nothing_to_undo_names_the_file_history(daemon: RunningDaemon):
    put(daemon).read_file("t.py")
    done = run(daemon, "undo", "t.py")
    assert named(every_suggestion_works(done), "history", "t.py")
    (daemon.root / "unseen.py").write_text("x = 1\n")
    unseen = run(daemon, "undo", "unseen.py")  # a history would be refused: no command
    assert "check the path" in suggestion_line(unseen) and not every_suggestion_works(unseen)


def test_an_undo_over_later_writes_names_the_undo_and_the_read(daemon: RunningDaemon):
    me = put(daemon)
    rows = me.read_file("t.py", hashes=True).lines
    mine = me.edit(
        "t.py", [{"op": "replace_line", "hash": rows[1].hash, "content": "    first = 1"}]
    )
    bob = daemon.client("bob")
    rows = bob.read_file("t.py", hashes=True).lines
    later = bob.edit("t.py", [{"op": "replace_line", "hash": rows[1].hash, "content": "    f = 2"}])
    done = run(daemon, "undo", "t.py")
    commands = every_suggestion_works(done)
    named(commands, "undo", "t.py", "--seq", str(later.version))  # the later write first,
    named(commands, "undo", "t.py", "--seq", str(mine.version))  # then this one, by seq
    named(commands, "read", "t.py")


def test_an_unknown_checkpoint_names_the_command_that_lists_them(daemon: RunningDaemon):
    put(daemon)
    for args in (("checkpoint", "restore", "nope"), ("checkpoint-diff", "--id-or-name", "nope")):
        done = run(daemon, *args)
        named(every_suggestion_works(done), "checkpoint", "list")


def test_a_restore_that_leaves_a_file_alone_says_why(daemon: RunningDaemon):
    me = put(daemon)
    (daemon.root / "blob.bin").write_bytes(b"\x00\x01")
    me.checkpoint_create("before")
    (daemon.root / "blob.bin").write_bytes(b"\x00\x02")
    done = run(daemon, "checkpoint", "restore", "before", ok=True)
    assert "warning: left 1 changed file(s) alone, not text (blob.bin:" in done.stderr
    every_suggestion_works(done)


def test_a_restore_that_keeps_new_files_names_the_restore_that_removes_them(
    daemon: RunningDaemon,
):
    put(daemon).checkpoint_create("before")
    (daemon.root / "new.txt").write_text("new\n")
    done = run(daemon, "checkpoint", "restore", "before", ok=True)
    again = named(every_suggestion_works(done), "checkpoint", "restore", "before")
    assert "--remove-new" in again


def test_an_unknown_seq_names_the_newest_event(daemon: RunningDaemon):
    put(daemon).read_file("t.py")
    done = run(daemon, "show", "9999")
    assert named(every_suggestion_works(done), "show")


def test_a_file_the_journal_never_saw_names_the_read_that_records_it(daemon: RunningDaemon):
    put(daemon)
    done = run(daemon, "history", "t.py")
    assert "file_not_in_journal" in done.stderr
    named(every_suggestion_works(done), "read", "t.py")


def test_a_version_not_stored_names_the_file_history(daemon: RunningDaemon):
    put(daemon).read_file("t.py")
    (daemon.root / "t.py").unlink()

    def deleted() -> int | None:
        records = daemon.journal().records(path="t.py", kind="outside_change")
        return next((r.seq for r in records), None)

    gone = wait_until(deleted, what="the deletion journaled")
    done = run(daemon, "read", "t.py", "--at-version", str(gone))
    assert "version_not_stored" in done.stderr
    named(every_suggestion_works(done), "history", "t.py")


def test_a_read_only_file_names_no_tool_words(daemon: RunningDaemon):
    put(daemon).read_file("t.py")
    os.chmod(daemon.root / "t.py", 0o444)
    done = run(daemon, "append-to-file", "t.py", "--content", "x")
    assert "chmod u+w t.py" in suggestion_line(done)
    every_suggestion_works(done)


# --- the daemon itself -------------------------------------------------------------------------


def test_no_daemon_names_the_commands_that_start_one(workspace: Path):
    done = cli(workspace, "status")
    assert done.returncode == 2
    commands = every_suggestion_works(done)
    assert {argv[1] for argv in commands} == {"start", "serve"}


def test_a_file_over_the_size_limit_names_the_restart_that_takes_it(workspace: Path):
    (workspace / "big.txt").write_text("x" * 2000 + "\n")
    env = cli_env(EDITJOURNAL_AGENT=AGENT)
    assert cli(workspace, "start", "--max-file-size", "1KiB", env=env).returncode == 0
    try:
        done = cli(workspace, "read", "big.txt", env=env)
        assert done.returncode == 1 and "file_too_large" in done.stderr
        commands = every_suggestion_works(done)
        assert [argv[1] for argv in commands] == ["stop", "start"]
    finally:
        cli(workspace, "stop", env=env)
