"""Every suggestion the CLI prints is a command that runs as printed (the README's promise),
from wherever the person stands.

Each kind of error and warning that suggests something is provoked for real — a real
daemon, the real `editjournal` command — from each of four places (`PLACES`): a shell
outside the workspace naming it, its root, a subdirectory holding the file, and a
subdirectory beside the file's (`../lib/t.py`). Every command in what it printed (a
backticked span starting with `editjournal `; `a && b` is two) is taken at its word,
in the same place a person would paste it: one that only looks is run and must
succeed (a path printed relative to the wrong directory fails `file_not_found`); one
that would change something (undo, restore, apply, stop, start) is resolved against
the real click group down to its last option, without running, and the paths it
names must exist where it would look. No placeholder (PATH, FILE, SEQ) may be in a
command, no command may be printed outside backticks, and no call in the daemon's
spelling (`read_file({...})`) or "re-read_file" may appear anywhere in the output.
"""

from __future__ import annotations

import json
import os
import posixpath
import re
import shlex
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
import pytest

from editjournal.client import Client
from editjournal.client.cli.app import cli as editjournal_group
from editjournal.schemas.tools import TOOL_PARAMS
from tests.conftest import RunningDaemon, start, wait_until
from tests.e2e.cli_support import CLI, CLI_MODULE, cli, cli_env, run_program

AGENT = "cli-test"  # the agent `cli` runs as
SOURCE = "def total(a, b):\n    first = a\n    second = b\n    return first + second\n}\n"
COMMAND = re.compile(r"`(editjournal [^`]+)`")
PRINTED = re.compile(r"\beditjournal [a-z][a-z-]*")
WIRE_CALL = re.compile(rf"\b(?:[a-z]+(?:_[a-z]+)+|{'|'.join(TOOL_PARAMS)})\(")
PLACEHOLDER = re.compile(r"^(?:[A-Z]|[A-Z][A-Z_]+|\.\.\.|<[^>]*>|\{[a-z_]+\})$")
# what a command does when run, by its words: these change the workspace or the daemon
CHANGING = {"undo", "apply-file-modification", "discard-hunk", "stop", "start", "serve"}
CHANGING_SUB = {("checkpoint", "restore"), ("checkpoint", "create")}

# Where a test stands (a workspace-relative directory; None: a shell outside the
# workspace, naming it with --workspace) and where its files are.
PLACES: dict[str, tuple[str | None, str]] = {
    "outside": (None, ""),
    "root": ("", ""),
    "subdir": ("pkg", "pkg"),
    "beside": ("pkg", "lib"),
}


@dataclass(frozen=True)
class Place:
    """A test's standpoint: where its commands run, where its files live, and each
    file's path as the daemon has it (`wire`) and as a person there types it (`typed`)."""

    root: Path
    stand: str | None
    home: str
    daemon: RunningDaemon | None = None

    @property
    def cwd(self) -> Path | None:
        return None if self.stand is None else self.root / self.stand

    def client(self, agent: str = AGENT) -> Client:
        """A client with the identity the CLI keeps for `agent`: the CLI commands the
        tests run act on what it made (its hunks, its latest write) as their own."""
        assert self.daemon is not None
        return self.daemon.client(agent, keep_identity=True)

    def wire(self, name: str = "t.py") -> str:
        return posixpath.join(self.home, name) if self.home else name

    def typed(self, name: str = "t.py") -> str:
        if self.stand is None:
            return self.wire(name)
        return posixpath.relpath(self.wire(name), self.stand or ".")

    def file(self, name: str = "t.py") -> Path:
        return self.root / self.wire(name)

    def cli(self, *args: str, **kwargs: Any) -> subprocess.CompletedProcess[str]:
        """The command as a person in this place types it (outside: naming the workspace)."""
        if self.cwd is None:
            return cli(self.root, *args, agent=AGENT, **kwargs)
        return cli(None, *args, agent=AGENT, cwd=self.cwd, **kwargs)


def placed(root: Path, name: str, daemon: RunningDaemon | None = None) -> Place:
    stand, home = PLACES[name]
    for directory in {stand or "", home} - {""}:
        (root / directory).mkdir(exist_ok=True)
    return Place(root, stand, home, daemon)


@pytest.fixture(params=["root", "beside"])
def place(request: pytest.FixtureRequest, daemon: RunningDaemon) -> Place:
    """For a test whose output names a file: at the root, and in a subdirectory beside
    the file's (`../lib/t.py`: a path printed from the root, or from the file's own
    directory, fails there); `EVERYWHERE` for all four places."""
    return placed(daemon.root, request.param, daemon)


EVERYWHERE = pytest.mark.parametrize("place", list(PLACES), indirect=True)


@pytest.fixture(params=["outside", "subdir"])
def somewhere(request: pytest.FixtureRequest, daemon: RunningDaemon) -> Place:
    """Outside and in a subdirectory, for a test whose output names no file."""
    return placed(daemon.root, request.param, daemon)


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


def taken_at_its_word(argv: list[str], place: Place, elsewhere: Path) -> None:
    """Resolve a command that changes something (its paths must be there, seen from
    where it would run); run one that only looks. From outside, it runs in another
    directory, as a person may: it names the workspace itself; from inside, where the
    person stands, as they would paste it."""
    ctx = resolved(argv) if "--help" not in argv else None  # (--help exits at once, 0)
    if place.cwd is None:
        assert "--workspace" in argv, f"{shlex.join(argv)} would serve the directory it runs in"
    else:
        assert "--workspace" not in argv, f"{shlex.join(argv)}: here the workspace is found"
    if changes_something(argv):
        assert ctx is not None
        base = place.cwd or place.root
        for path in named_paths(ctx):
            assert (base / path).exists(), f"{shlex.join(argv)}: no {path} from {base}"
        return
    env = cli_env(EDITJOURNAL_AGENT=AGENT)  # the command's own process (forked: run_program)
    done = run_program(CLI_MODULE, argv[1:], CLI, stdin=None, env=env, cwd=place.cwd or elsewhere)
    assert done.returncode == 0, f"{shlex.join(argv)} failed:\n{done.stderr}"


def named_paths(ctx: click.Context) -> list[str]:
    """The paths a parsed command names: its PATH argument, its --path options."""
    path, paths = ctx.params.get("path"), ctx.params.get("paths") or ()
    return [p for p in (path, *paths) if isinstance(p, str) and p]


def every_suggestion_works(done: subprocess.CompletedProcess[str], place: Place) -> list[list[str]]:
    commands = suggested(done)
    with tempfile.TemporaryDirectory() as elsewhere:
        for argv in commands:
            taken_at_its_word(argv, place, Path(elsewhere))
    return commands


def suggestion_line(done: subprocess.CompletedProcess[str]) -> str:
    found = re.search(r"suggested action: (.+)", done.stderr)
    assert found is not None, done.stderr
    return found.group(1)


def run(place: Place, *args: str, stdin: str | None = None, ok: bool = False):
    done = place.cli(*args, stdin=stdin)
    assert done.returncode == (0 if ok else 1), done.stderr
    return done


def edit_ops(place: Place, ops: list[dict]) -> subprocess.CompletedProcess[str]:
    return run(place, "edit", place.typed(), stdin=json.dumps(ops))


def put(place: Place, name: str = "t.py", text: str = SOURCE) -> Client:
    place.file(name).parent.mkdir(parents=True, exist_ok=True)
    place.file(name).write_text(text)
    return place.client()


def named(commands: list[list[str]], *words: str) -> list[str]:
    """The one suggested command that begins with `words`."""
    [found] = [argv for argv in commands if argv[1 : 1 + len(words)] == list(words)]
    return found


# --- stale anchors ------------------------------------------------------------------------------


@EVERYWHERE
def test_a_stale_edit_says_retry_with_the_delta_and_how_to_see_it_again(place: Place):
    me = put(place)
    seen = me.read_file(place.wire(), hashes=True).lines
    bob = place.client("bob")
    fresh = bob.read_file(place.wire(), hashes=True).lines
    bob.edit(place.wire(), [{"op": "replace_line", "hash": fresh[1].hash, "content": "    x = a"}])
    done = edit_ops(place, [{"op": "replace_line", "hash": seen[1].hash, "content": "    y"}])
    assert "no re-read needed" in suggestion_line(done)
    commands = every_suggestion_works(done, place)
    assert named(commands, "read", place.typed())[3] == "--since"


def test_an_anchor_unknown_in_a_file_never_read_says_which_read_gives_fresh_ones(place: Place):
    put(place)
    done = edit_ops(place, [{"op": "replace_line", "hash": "abcdef", "content": "x"}])
    commands = every_suggestion_works(done, place)
    assert named(commands, "read", place.typed())[3] == "--hashes"


def test_a_patch_on_an_old_base_names_the_read_and_the_flag(place: Place):
    me = put(place)
    base = me.read_file(place.wire()).sha256
    bob = place.client("bob")
    rows = bob.read_file(place.wire(), hashes=True).lines
    bob.edit(
        place.wire(), [{"op": "replace_line", "hash": rows[3].hash, "content": "    return 0"}]
    )
    hunk = "@@ -1,2 +1,2 @@\n-def total(a, b):\n+def add(a, b):\n     first = a\n"
    diff = f"--- a/{place.wire()}\n+++ b/{place.wire()}\n{hunk}"
    done = run(place, "patch", place.typed(), "-", "--base", base, stdin=diff)
    assert "state_mismatch" in done.stderr and "pass --rebase" in done.stderr
    named(every_suggestion_works(done, place), "read", place.typed())


def test_a_low_entropy_target_and_an_unsafe_edit_name_no_tool_words(place: Place):
    rows = put(place).read_file(place.wire(), hashes=True).lines
    brace = edit_ops(place, [{"op": "delete_line", "hash": rows[4].hash}])
    assert "anchor_low_entropy" in brace.stderr
    every_suggestion_works(brace, place)
    unsafe = edit_ops(place, [{"op": "replace_line", "hash": rows[0].hash, "content": "def t(a:"}])
    assert "pass --skip-safety-check" in suggestion_line(unsafe)
    every_suggestion_works(unsafe, place)


# --- the atomic tools and prepared hunks -------------------------------------------------------


def test_edit_file_without_a_match_names_the_read_that_shows_the_file(place: Place):
    put(place)
    done = run(place, "edit-file", place.typed(), "--old-string", "nowhere", "--new-string", "x")
    assert "--old-string" in suggestion_line(done)
    named(every_suggestion_works(done, place), "read", place.typed())


def test_edit_file_with_several_matches_names_the_options(somewhere: Place):
    put(somewhere, text="a = 1\na = 1\n")
    args = ("edit-file", somewhere.typed(), "--old-string", "a = 1", "--new-string", "b")
    done = run(somewhere, *args)
    assert "--expected-replacements 2" in suggestion_line(done)
    every_suggestion_works(done, somewhere)


def test_a_prepare_anchor_that_matches_nothing_names_its_option(place: Place):
    put(place)
    args = ("prepare-file-insert-after", place.typed(), "--anchor", "zzz", "--content", "x")
    done = run(place, *args)
    assert "--anchor" in suggestion_line(done)
    named(every_suggestion_works(done, place), "read", place.typed())
    put(place, text="x = 1\nx = 1\n")
    args = ("prepare-file-insert-after", place.typed(), "--anchor", "x", "--content", "y")
    several = run(place, *args)
    assert "pass --occurrence" in suggestion_line(several)
    every_suggestion_works(several, place)


def test_an_unknown_hunk_names_the_command_that_lists_yours(somewhere: Place):
    done = run(somewhere, "apply-file-modification", "--hunk-id", "hdeadbeef00")
    assert named(every_suggestion_works(done, somewhere), "list-hunks")


def test_a_hunk_applied_twice_names_the_read_that_shows_it(place: Place):
    me = put(place)
    plan = me.prepare_file_append(place.wire(), "# end")
    me.apply_file_modification(plan.hunk_id)
    done = run(place, "apply-file-modification", "--hunk-id", plan.hunk_id)
    assert "hunk_already_applied" in done.stderr
    named(every_suggestion_works(done, place), "read", place.typed())


def test_hunk_refusals_about_kind_and_owner_name_no_tool_words(somewhere: Place):
    me = put(somewhere)
    mine = me.prepare_file_append(somewhere.wire(), "# end")
    args = ("prepare-file-insert-after", somewhere.typed(), "--anchor", "first", "--content", "x")
    kind = run(somewhere, *args, "--existing-hunk-id", mine.hunk_id)
    assert "--existing-hunk-id" in suggestion_line(kind)
    every_suggestion_works(kind, somewhere)
    theirs = somewhere.client("bob").prepare_file_append(somewhere.wire(), "# bob")
    owner = run(somewhere, "apply-file-modification", "--hunk-id", theirs.hunk_id)
    assert "wrong_owner" in owner.stderr
    every_suggestion_works(owner, somewhere)


def test_diff_looking_content_names_the_content_format_option(somewhere: Place):
    put(somewhere)
    diff = "--- a/t.py\n+++ b/t.py\n@@ -1,1 +1,1 @@\n-x\n+y\n"
    done = run(somewhere, "overwrite-entire-file", somewhere.typed(), "--content", diff)
    assert "--content-format text" in suggestion_line(done)
    every_suggestion_works(done, somewhere)


def test_a_prepared_hunk_names_the_command_that_applies_it(place: Place):
    put(place)
    done = run(place, "prepare-file-append", place.typed(), "--content", "# end", ok=True)
    apply = named(every_suggestion_works(done, place), "apply-file-modification")
    assert apply[2] == "--hunk-id"
    assert f"for {place.typed()} (nothing written)" in done.stdout


# --- undo, checkpoints, the journal -------------------------------------------------------------


@EVERYWHERE
def test_nothing_to_undo_names_the_file_history(place: Place):
    put(place).read_file(place.wire())
    done = run(place, "undo", place.typed())
    assert named(every_suggestion_works(done, place), "history", place.typed())
    # a path the journal has no event about (a file just written may or may not be
    # journaled yet, as the watcher settles): a history of it would be refused
    unseen = run(place, "undo", place.typed("unseen.py"))
    assert "check the path" in suggestion_line(unseen)
    assert not every_suggestion_works(unseen, place)


def test_an_undo_over_later_writes_names_the_undo_and_the_read(place: Place):
    me = put(place)
    rows = me.read_file(place.wire(), hashes=True).lines
    me.edit(
        place.wire(), [{"op": "replace_line", "hash": rows[1].hash, "content": "    first = 1"}]
    )
    bob = place.client("bob")
    rows = bob.read_file(place.wire(), hashes=True).lines
    later = bob.edit(
        place.wire(), [{"op": "replace_line", "hash": rows[1].hash, "content": "    f = 2"}]
    )
    done = run(place, "undo", place.typed())
    commands = every_suggestion_works(done, place)
    undos = [argv[2:5] for argv in commands if argv[1] == "undo"]
    assert [place.typed(), "--seq", str(later.version)] in undos
    named(commands, "read", place.typed())


def test_an_unknown_checkpoint_names_the_command_that_lists_them(somewhere: Place):
    put(somewhere)
    for args in (("checkpoint", "restore", "nope"), ("checkpoint-diff", "--id-or-name", "nope")):
        done = run(somewhere, *args)
        named(every_suggestion_works(done, somewhere), "checkpoint", "list")


def test_a_restore_that_leaves_a_file_alone_says_why(place: Place):
    me = put(place)
    place.file("blob.bin").write_bytes(b"\x00\x01")
    me.checkpoint_create("before")
    place.file("blob.bin").write_bytes(b"\x00\x02")
    done = run(place, "checkpoint", "restore", "before", ok=True)
    alone = f"warning: left 1 changed file(s) alone, not text ({place.typed('blob.bin')}:"
    assert alone in done.stderr
    every_suggestion_works(done, place)


@EVERYWHERE
def test_a_restore_that_keeps_new_files_names_the_restore_that_removes_them(place: Place):
    put(place).checkpoint_create("before")
    place.file("new.txt").write_text("new\n")
    done = run(place, "checkpoint", "restore", "before", ok=True)
    assert f"({place.typed('new.txt')})" in done.stderr
    again = named(every_suggestion_works(done, place), "checkpoint", "restore", "before")
    assert "--remove-new" in again


@EVERYWHERE
def test_a_restore_of_some_paths_names_them_as_typed_here(place: Place):
    """The suggested restore carries the checkpoint's --path as the person types it."""
    put(place, "d/a.txt", "a\n")
    run(place, "checkpoint", "create", "part", "--path", place.typed("d"), ok=True)
    place.file("d/new.txt").write_text("new\n")
    done = run(place, "checkpoint", "restore", "part", "--path", place.typed("d"), ok=True)
    again = named(every_suggestion_works(done, place), "checkpoint", "restore", "part")
    assert again[4:6] == ["--path", place.typed("d")] and "--remove-new" in again


def test_an_unknown_seq_names_the_newest_event(somewhere: Place):
    put(somewhere).read_file(somewhere.wire())
    done = run(somewhere, "show", "9999")
    assert named(every_suggestion_works(done, somewhere), "show")


def test_a_file_the_journal_never_saw_names_the_read_that_records_it(place: Place):
    """A file there before the daemon started, never read: the journal has no record."""
    assert place.daemon is not None
    place.daemon.stop()
    place.file().write_text(SOURCE)
    again = start(place.root)
    try:
        done = run(place, "history", place.typed())
        assert "file_not_in_journal" in done.stderr
        named(every_suggestion_works(done, place), "read", place.typed())
    finally:
        again.stop()


@EVERYWHERE
def test_a_version_not_stored_names_the_file_history(place: Place):
    put(place).read_file(place.wire())
    place.file().unlink()

    def deleted() -> int | None:
        records = place.daemon.journal().records(path=place.wire(), kind="outside_change")
        # the deletion, not the file's creation (which the watcher may journal first)
        return next((r.seq for r in records if r.event.change == "deleted"), None)

    gone = wait_until(deleted, what="the deletion journaled")
    done = run(place, "read", place.typed(), "--at-version", str(gone))
    assert "version_not_stored" in done.stderr
    named(every_suggestion_works(done, place), "history", place.typed())


@EVERYWHERE
def test_a_read_only_file_names_no_tool_words(place: Place):
    put(place).read_file(place.wire())
    os.chmod(place.file(), 0o444)
    done = run(place, "append-to-file", place.typed(), "--content", "x")
    assert f"chmod u+w {place.typed()}" in suggestion_line(done)
    every_suggestion_works(done, place)


# --- the daemon itself -------------------------------------------------------------------------


@pytest.mark.parametrize("where", ["outside", "subdir"])
def test_no_daemon_names_the_commands_that_start_one(workspace: Path, where: str):
    (workspace / ".git").mkdir()  # found from its subdirectories
    place = placed(workspace, where)
    done = place.cli("status")
    assert done.returncode == 2
    commands = every_suggestion_works(done, place)
    assert {argv[1] for argv in commands} == {"start", "serve"}


@pytest.mark.parametrize("where", ["outside", "subdir"])
def test_a_file_over_the_size_limit_names_the_restart_that_takes_it(workspace: Path, where: str):
    (workspace / ".git").mkdir()
    place = placed(workspace, where)
    place.file("big.txt").write_text("x" * 2000 + "\n")
    assert place.cli("start", "--max-file-size", "1KiB").returncode == 0
    try:
        done = place.cli("read", place.typed("big.txt"))
        assert done.returncode == 1 and "file_too_large" in done.stderr
        commands = every_suggestion_works(done, place)
        assert [argv[1] for argv in commands] == ["stop", "start"]
    finally:
        place.cli("stop")
