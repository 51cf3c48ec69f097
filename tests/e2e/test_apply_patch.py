"""`apply_patch` through a real daemon: OpenAI's patch envelope (Codex's "V4A") and the
Responses API's operations, many files all or nothing, carried over other agents'
changes or refused naming them, moves that history and blame follow, a kill -9
between commit and rename rolled forward, and the CLI run from a subdirectory.

Every refusal is checked to leave every file of the workspace byte for byte as it was
(`refused`). Files are put in place before the daemon starts, so none of them is an
outside change.
"""

from __future__ import annotations

import signal
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from editjournal.client import Client, RequestError
from editjournal.daemon.files.tempfiles import TEMP_PREFIX
from editjournal.schemas.endpoint import STATE_DIR_NAME
from tests.conftest import RunningDaemon, start
from tests.e2e.cli_support import cli

SUCCESS = "Success. Updated the following files:\n"
Serve = Callable[..., RunningDaemon]


def envelope(*body: str) -> str:
    """The patch text: `body` lines between Codex's markers."""
    return "\n".join(["*** Begin Patch", *body, "*** End Patch"]) + "\n"


def numbered(count: int) -> str:
    return "".join(f"line {n}\n" for n in range(1, count + 1))


def tree(root: Path) -> dict[str, bytes]:
    """Every file of the workspace (the daemon's own state left out), with its bytes."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and STATE_DIR_NAME not in p.relative_to(root).parts
    }


def texts(files: Mapping[str, str]) -> dict[str, bytes]:
    return {path: text.encode() for path, text in sorted(files.items())}


def refused(client: Client, call: Callable[[], Any]) -> RequestError:
    """The refusal of `call`, checked to have changed no file of the workspace."""
    before = tree(client.root)
    try:
        call()
    except RequestError as e:
        assert tree(client.root) == before, "a refused patch changed a file"
        return e
    raise AssertionError("the patch was applied")


def last_seq(running: RunningDaemon) -> int:
    journal = running.journal()
    try:
        return next(journal.records(newest_first=True, limit=1)).seq
    finally:
        journal.close()


def writes_since(running: RunningDaemon, seq: int, agent: str) -> list[tuple[str, str | None]]:
    """`agent`'s journaled writes and refusals after `seq`: (kind, path), in order."""
    journal = running.journal()
    try:
        kinds = ("edit_applied", "edit_rejected")
        found = journal.records(after_seq=seq, agent=agent)
        return [(r.kind, r.path) for r in found if r.kind in kinds]
    finally:
        journal.close()


def temp_files(root: Path) -> list[Path]:
    return [p for p in root.rglob(f"{TEMP_PREFIX}*") if STATE_DIR_NAME not in p.parts]


@pytest.fixture
def serve(workspace: Path) -> Iterator[Serve]:
    """`serve(files, *options)`: `files` (path: text) written into the workspace, then a
    daemon started on it with `options`; every daemon started is stopped afterwards."""
    started: list[RunningDaemon] = []

    def serve(files: Mapping[str, str], *options: str) -> RunningDaemon:
        for path, text in files.items():
            target = workspace / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
        started.append(start(workspace, *options))
        return started[-1]

    yield serve
    for running in started:
        if running.proc.poll() is None:
            running.stop()


# --- add, update, delete, move -----------------------------------------------------------------

FOUR_WAYS = {"keep.txt": "k1\nk2\nk3\n", "gone.txt": "g\n", "old.txt": "o1\no2\no3\n"}
FOUR_WAYS_PATCH = envelope(
    "*** Add File: new/n.txt",
    "+hello",
    "+world",
    "*** Update File: keep.txt",
    "@@",
    " k1",
    "-k2",
    "+K2",
    "*** Delete File: gone.txt",
    "*** Update File: old.txt",
    "*** Move to: moved/m.txt",
    "@@",
    " o1",
    "-o2",
    "+O2",
)


def test_add_update_delete_and_move_apply_with_codexs_summary(serve: Serve):
    running = serve(FOUR_WAYS)
    client = running.client()
    for path in FOUR_WAYS:
        client.read_file(path)
    result = client.apply_patch(FOUR_WAYS_PATCH)
    assert tree(running.root) == texts(
        {"new/n.txt": "hello\nworld\n", "keep.txt": "k1\nK2\nk3\n", "moved/m.txt": "o1\nO2\no3\n"}
    )
    assert result.message == SUCCESS + "A new/n.txt\nM keep.txt\nD gone.txt\nM moved/m.txt"
    assert [(f.path, f.action, f.moved_from) for f in result.files] == [
        ("new/n.txt", "added", None),
        ("keep.txt", "updated", None),
        ("gone.txt", "deleted", None),
        ("moved/m.txt", "moved", "old.txt"),
    ]
    assert client.last_response is not None and client.last_response.warnings == []
    journal = running.journal()
    try:
        applied = {r.path: r for r in journal.records(kind="edit_applied")}
    finally:
        journal.close()
    assert sorted(applied) == ["gone.txt", "keep.txt", "moved/m.txt", "new/n.txt", "old.txt"]
    for written in result.files:  # each file's version is the seq of its edit_applied
        assert written.version == applied[written.path].seq, written.path
        assert applied[written.path].event.writer == "apply_patch"
    assert (applied["old.txt"].event.moved_to, applied["moved/m.txt"].event.moved_from) == (
        "moved/m.txt",
        "old.txt",
    )
    assert applied["old.txt"].seq + 1 == applied["moved/m.txt"].seq  # one move, two events
    assert [f.sha256 is None for f in result.files] == [False, False, True, False]


def test_a_patch_whose_third_operation_fails_changes_no_file(serve: Serve):
    running = serve({"x1.txt": "a\n", "x2.txt": "b\n", "x3.py": "def f():\n    return 1\n"})
    client = running.client()
    before = last_seq(running)
    patch = envelope(
        "*** Update File: x1.txt",
        "@@",
        "-a",
        "+A",
        "*** Delete File: x2.txt",
        "*** Update File: x3.py",
        "@@ def f():",
        "-    return 2",
        "+    return 3",
    )
    error = refused(client, lambda: client.apply_patch(patch))
    assert (running.root / "x1.txt").read_bytes() == b"a\n"
    assert (running.root / "x2.txt").read_bytes() == b"b\n"
    assert error.code == "no_match"
    assert error.message.startswith("operation 3 (*** Update File: x3.py): hunk 1")
    details = error.details
    assert (details["operation"], details["path"], details["hunk"]) == (3, "x3.py", 1)
    assert details["header"] == "def f():" and details["unmatched"] == "    return 2"
    assert details["nearest"][0] == {"line": 2, "text": "    return 1"}
    [why] = details["refused"]  # the only operation refused: the others were fine
    assert (why["code"], why["operation"], why["path"]) == ("no_match", 3, "x3.py")
    # one refusal journaled, at the seq the error names, and nothing applied
    assert writes_since(running, before, "agent-a") == [("edit_rejected", "x3.py")]
    journal = running.journal()
    try:
        [rejected] = journal.records(after_seq=before, kind="edit_rejected")
    finally:
        journal.close()
    assert rejected.seq == error.seq
    assert (rejected.event.writer, rejected.event.code) == ("apply_patch", "no_match")


def test_a_kill_between_commit_and_renames_is_rolled_forward_for_every_file(serve: Serve):
    files = {"u.txt": "u1\nu2\n", "d.txt": "d\n", "m.txt": "m1\nm2\n"}
    running = serve(files, "--kill-after-commit")
    client = running.client(timeout=5)
    for path in files:
        client.read_file(path)
    patch = envelope(
        "*** Update File: u.txt",
        "@@",
        "-u1",
        "+U1",
        "*** Delete File: d.txt",
        "*** Update File: m.txt",
        "*** Move to: n/m.txt",
        "@@",
        " m1",
        "-m2",
        "+M2",
    )
    with pytest.raises(RequestError):  # no reply: the daemon died before answering
        client.apply_patch(patch)
    assert running.proc.wait(timeout=10) == -signal.SIGKILL
    running.stop()
    # committed, not renamed: every file as it was, the new contents fsynced beside them
    temps = temp_files(running.root)
    assert sorted(t.read_bytes() for t in temps) == [b"U1\nu2\n", b"m1\nM2\n"]
    assert {k: v for k, v in tree(running.root).items() if TEMP_PREFIX not in k} == texts(files)

    running = serve({})
    client = running.client()
    assert tree(running.root) == texts({"u.txt": "U1\nu2\n", "n/m.txt": "m1\nM2\n"})
    assert temp_files(running.root) == []
    recovered = client.status().group_commit["recovered"]
    assert sorted(recovered["rolled_forward"]) == ["d.txt", "m.txt", "n/m.txt", "u.txt"]
    assert recovered["unfinished"] == []
    assert client.read_file("n/m.txt").content == "m1\nM2\n"
    journal = running.journal()
    try:
        applied = [r.path for r in journal.records(kind="edit_applied")]
        assert applied == ["u.txt", "d.txt", "m.txt", "n/m.txt"]  # once each, no phantom
        assert [r.path for r in journal.records(kind="outside_change")] == []  # nothing fake
        assert journal.verify().ok
    finally:
        journal.close()


# --- two agents --------------------------------------------------------------------------------

SHARED = {"f1.txt": numbered(20), "f2.txt": "alpha\nbeta\ngamma\n"}


def two_readers(serve: Serve) -> tuple[RunningDaemon, Client, Client]:
    running = serve(SHARED)
    a, b = running.client("agent-a"), running.client("agent-b")
    for agent in (a, b):
        for path in SHARED:
            agent.read_file(path)
    return running, a, b


A_PATCH = envelope(  # written against what agent-a read
    "*** Update File: f1.txt",
    "@@",
    " line 6",
    " line 7",
    "-line 8",
    "+line EIGHT",
    " line 9",
    "*** Update File: f2.txt",
    "@@",
    " alpha",
    "-beta",
    "+BETA",
)


def test_a_patch_from_an_older_read_lands_in_both_files_keeping_the_others_change(
    serve: Serve,
):
    running, a, b = two_readers(serve)
    b.edit_file("f1.txt", "line 18\n", "line EIGHTEEN\n")  # far from agent-a's hunk
    result = a.apply_patch(A_PATCH)
    expected = numbered(20).replace("line 8\n", "line EIGHT\n").replace("18\n", "EIGHTEEN\n")
    assert tree(running.root) == texts({"f1.txt": expected, "f2.txt": "alpha\nBETA\ngamma\n"})
    assert [(f.path, f.action) for f in result.files] == [
        ("f1.txt", "updated"),
        ("f2.txt", "updated"),
    ]
    # every hunk was found in the file as it is: nothing to carry (its lines were seen)
    assert [f.rebased_from_version for f in result.files] == [None, None]
    assert result.files[0].hunks[0].line == 8


def test_a_hunk_whose_context_another_agent_changed_is_carried_and_says_from_where(
    serve: Serve,
):
    running, a, b = two_readers(serve)
    seen = a.read_file("f1.txt").version
    theirs = b.edit_file("f1.txt", "line 7\n", "line SEVEN\n").version  # agent-a's context
    result = a.apply_patch(A_PATCH)
    expected = numbered(20).replace("line 8\n", "line EIGHT\n").replace("line 7\n", "line SEVEN\n")
    assert tree(running.root) == texts({"f1.txt": expected, "f2.txt": "alpha\nBETA\ngamma\n"})
    f1, f2 = result.files
    assert f1.rebased_from_version == seen  # found in agent-a's snapshot, carried
    assert [c["seq"] for c in f1.rebased_over] == [theirs]
    [note] = [c for c in f1.auto_corrections if c.type == "context_carried"]
    assert "agent-b" in note.detail
    assert f2.rebased_from_version is None


def test_a_hunk_whose_copy_another_agent_inserted_above_lands_where_its_author_saw_it(
    serve: Serve,
):
    running, a, b = two_readers(serve)
    copy = "line 6\nline 7\nline 8\nline 9\n"
    b.edit_file("f1.txt", "line 2\n", "line 2\n" + copy)  # the same block, above agent-a's
    result = a.apply_patch(A_PATCH)
    lines = numbered(20).replace("line 2\n", "line 2\n" + copy)
    at = lines.index("line 8\n", lines.index("line 7\nline 8\nline 9\nline 10"))
    expected = lines[:at] + "line EIGHT\n" + lines[at + len("line 8\n") :]
    assert tree(running.root)["f1.txt"] == expected.encode()  # agent-b's copy is untouched
    assert result.files[0].rebased_from_version is not None  # planned in agent-a's read


def test_a_hunk_over_lines_another_agent_changed_is_refused_whole(serve: Serve):
    running, a, b = two_readers(serve)
    theirs = b.edit_file("f1.txt", "line 8\n", "line eight\n").version
    patch = envelope(
        "*** Update File: f2.txt",
        "@@",
        " alpha",
        "-beta",
        "+BETA",
        "*** Update File: f1.txt",
        "@@",
        " line 7",
        "-line 8",
        "+line EIGHT",
    )
    error = refused(a, lambda: a.apply_patch(patch))
    assert error.code == "anchor_stale"
    assert (running.root / "f2.txt").read_text() == SHARED["f2.txt"]  # the other file too
    assert (error.details["operation"], error.details["path"]) == (2, "f1.txt")
    assert [c["seq"] for c in error.details["conflicts"]] == [theirs]
    assert error.details["conflicts"][0]["agent"] == "agent-b"
    fresh = error.details["delta"]["changed_lines"]
    assert [(row["line"], row["text"]) for row in fresh] == [(8, "line eight")]
    assert "agent-b" in error.message and f"seq {theirs}" in error.message


# --- Add File and Delete File ------------------------------------------------------------------


def test_add_file_over_a_file_never_read_overwrites_and_names_what_it_replaced(serve: Serve):
    running = serve({"a.txt": "mine\n"})
    a, b = running.client("agent-a"), running.client("agent-b")
    theirs = b.append_to_file("a.txt", "from b\n").version
    result = a.apply_patch(envelope("*** Add File: a.txt", "+fresh"))
    assert tree(running.root) == texts({"a.txt": "fresh\n"})
    assert result.message == SUCCESS + "A a.txt"
    [warning] = a.last_response.warnings if a.last_response else []
    assert "a.txt" in warning and "never read" in warning
    assert "agent-b" in warning and f"seq {theirs}" in warning
    assert [c["seq"] for c in result.files[0].overwrote_unseen] == [theirs]


def test_add_file_over_a_file_changed_since_it_was_read_is_refused(serve: Serve):
    running = serve({"a.txt": "seen\n"})
    a, b = running.client("agent-a"), running.client("agent-b")
    a.read_file("a.txt")
    theirs = b.edit_file("a.txt", "seen\n", "changed\n").version
    error = refused(a, lambda: a.apply_patch(envelope("*** Add File: a.txt", "+fresh")))
    assert error.code == "anchor_stale"
    assert (running.root / "a.txt").read_text() == "changed\n"
    assert [c["seq"] for c in error.details["conflicts"]] == [theirs]
    assert error.details["delta"]["changed_lines"][0]["text"] == "changed"


def test_delete_or_update_of_a_missing_file_is_file_not_found(serve: Serve):
    running = serve({"here.txt": "x\n"})
    client = running.client()
    for operation in (
        ["*** Delete File: nope.txt"],
        ["*** Update File: nope.txt", "@@", "-x", "+y"],
    ):
        patch = envelope("*** Update File: here.txt", "@@", "-x", "+X", *operation)
        error = refused(client, lambda patch=patch: client.apply_patch(patch))
        assert error.code == "file_not_found", operation
        assert (error.details["operation"], error.details["path"]) == (2, "nope.txt")
    assert not (running.root / "nope.txt").exists()


# --- moves -------------------------------------------------------------------------------------


def test_a_moved_file_keeps_its_history_and_blame(serve: Serve):
    running = serve({"a.txt": "one\ntwo\nthree\nfour\n"})
    client = running.client()
    read = client.read_file("a.txt").version
    edited = client.edit_file("a.txt", "two\n", "TWO\n").version
    patch = envelope(
        "*** Update File: a.txt", "*** Move to: b/c.txt", "@@", " three", "-four", "+FOUR"
    )
    [moved] = client.apply_patch(patch).files
    assert (moved.path, moved.action, moved.moved_from) == ("b/c.txt", "moved", "a.txt")
    assert tree(running.root) == texts({"b/c.txt": "one\nTWO\nthree\nFOUR\n"})
    versions = client.history("b/c.txt").versions
    assert [(v.seq, v.path, v.moved_from) for v in versions] == [
        (read, "a.txt", None),
        (edited, "a.txt", None),
        (moved.version, None, "a.txt"),
    ]
    blame = client.blame("b/c.txt")
    assert blame.version == moved.version
    assert [(line.text, line.seq) for line in blame.lines] == [
        ("one", read),  # untouched lines: the writes before the move, never the move
        ("TWO", edited),
        ("three", read),
        ("FOUR", moved.version),
    ]


def test_a_move_onto_a_file_never_read_overwrites_it_and_says_so(serve: Serve):
    running = serve({"src.txt": "s1\n", "dest.txt": "d1\n"})
    a, b = running.client("agent-a"), running.client("agent-b")
    theirs = b.append_to_file("dest.txt", "from b\n").version
    a.read_file("src.txt")
    result = a.apply_patch(envelope("*** Update File: src.txt", "*** Move to: dest.txt"))
    assert tree(running.root) == texts({"dest.txt": "s1\n"})
    assert result.message == SUCCESS + "M dest.txt"
    [warning] = a.last_response.warnings if a.last_response else []
    assert "dest.txt" in warning and "never read" in warning and f"seq {theirs}" in warning
    [moved] = result.files
    assert (moved.path, moved.moved_from) == ("dest.txt", "src.txt")
    assert [c["seq"] for c in moved.overwrote_unseen] == [theirs]


# --- refusals before anything is planned -------------------------------------------------------


def test_a_malformed_patch_is_invalid_diff_naming_its_line(serve: Serve):
    running = serve({"f.txt": "x\n"})
    client = running.client()
    stray = envelope("*** Update File: f.txt", "@@", "-x", "+y", "stray")
    error = refused(client, lambda: client.apply_patch(stray))
    assert error.code == "invalid_diff" and error.details == {"line": 6}
    assert "line 6" in error.message and "'stray'" in error.message
    no_begin = "*** Update File: f.txt\n@@\n-x\n+y\n*** End Patch\n"
    error = refused(client, lambda: client.apply_patch(no_begin))
    assert error.code == "invalid_diff" and error.details == {"line": 1}


def test_two_operations_on_one_file_are_invalid_params(serve: Serve):
    running = serve({"f.txt": "x\n"})
    client = running.client()
    twice = envelope("*** Update File: f.txt", "@@", "-x", "+y", "*** Delete File: f.txt")
    error = refused(client, lambda: client.apply_patch(twice))
    assert error.code == "invalid_params"
    assert error.details == {"operations": [1, 2], "path": "f.txt"}
    onto = envelope("*** Add File: q.txt", "+q", "*** Update File: f.txt", "*** Move to: q.txt")
    error = refused(client, lambda: client.apply_patch(onto))
    assert error.code == "invalid_params"
    assert error.details == {"operations": [1, 2], "path": "q.txt"}


def test_patch_and_operations_are_one_or_the_other(serve: Serve):
    running = serve({"f.txt": "x\n"})
    client = running.client()
    patch = envelope("*** Delete File: f.txt")
    operations = [{"type": "delete_file", "path": "f.txt"}]
    error = refused(client, lambda: client.apply_patch(patch, operations=operations))
    assert error.code == "invalid_params" and error.message.startswith("both of patch")
    error = refused(client, lambda: client.apply_patch())
    assert error.code == "invalid_params" and error.message.startswith("neither of patch")


def test_a_path_outside_the_workspace_is_refused_naming_its_operation(serve: Serve, tmp_path: Path):
    running = serve({"f.txt": "x\n"})
    client = running.client()
    escape = tmp_path / "escape.txt"
    escape.write_text("outside\n")
    for operation, number in (
        (["*** Add File: ../escape.txt", "+pwned"], 2),
        (["*** Update File: f.txt", "*** Move to: ../escape.txt"], 1),
    ):
        first = [] if number == 1 else ["*** Add File: ok.txt", "+ok"]
        patch = envelope(*first, *operation)
        error = refused(client, lambda patch=patch: client.apply_patch(patch))
        assert error.code == "path_outside_workspace", operation
        assert (error.details["operation"], error.details["path"]) == (number, "../escape.txt")
        assert error.message.count("operation ") == 1  # named once, for the right operation
        assert error.message.startswith(f"operation {number} (")
        assert escape.read_text() == "outside\n"


def test_git_files_are_never_written_by_a_patch(serve: Serve):
    running = serve({".git/config": "[core]\n", "f.txt": "x\n"})
    client = running.client()
    assert client.read_file(".git/config").content == "[core]\n"  # reading is harmless
    for operations in (
        ["*** Add File: ok.txt", "+ok", "*** Add File: .git/hooks/pre-commit", "+#!/bin/sh"],
        ["*** Update File: .git/config", "@@", "+[alias]"],
        ["*** Delete File: .git/config"],
        ["*** Update File: f.txt", "*** Move to: .git/config"],
    ):
        patch = envelope(*operations)
        error = refused(client, lambda patch=patch: client.apply_patch(patch))
        assert error.code == "path_protected", operations
        assert ".git/" in error.message
    assert not (running.root / ".git" / "hooks").exists()  # refused before parents were made


# --- the Responses API's shape -----------------------------------------------------------------


def test_responses_api_operations_apply_like_the_envelope(serve: Serve):
    running = serve({"f.txt": "x\n", "g.txt": "g\n"})
    client = running.client()
    result = client.apply_patch(
        operations=[
            {"type": "create_file", "path": "n.txt", "diff": "+a\n+b\n"},
            {"type": "update_file", "path": "f.txt", "diff": "@@\n-x\n+y\n"},
            {"type": "delete_file", "path": "g.txt"},
        ]
    )
    assert tree(running.root) == texts({"n.txt": "a\nb\n", "f.txt": "y\n"})
    assert result.message == SUCCESS + "A n.txt\nM f.txt\nD g.txt"
    assert [f.action for f in result.files] == ["added", "updated", "deleted"]
    moved = client.apply_patch(
        operations=[{"type": "update_file", "path": "f.txt", "move_to": "m/f.txt"}]
    )
    assert moved.message == SUCCESS + "M m/f.txt"
    assert tree(running.root) == texts({"n.txt": "a\nb\n", "m/f.txt": "y\n"})


def test_a_bad_line_in_an_operations_diff_names_the_operation_and_line(serve: Serve):
    running = serve({"f.txt": "x\n"})
    client = running.client()
    operations = [
        {"type": "create_file", "path": "n.txt", "diff": "+a\n"},
        {"type": "update_file", "path": "f.txt", "diff": "@@\n-x\n+y\nbad\n"},
    ]
    error = refused(client, lambda: client.apply_patch(operations=operations))
    assert error.code == "invalid_diff" and error.details == {"operation": 2, "line": 4}
    assert "operation 2 (update_file f.txt), line 4 of its diff" in error.message
    create = [{"type": "create_file", "path": "n.txt", "diff": "+a\nb\n"}]
    error = refused(client, lambda: client.apply_patch(operations=create))
    assert error.details == {"operation": 1, "line": 2}
    assert not (running.root / "n.txt").exists()


# --- the CLI -----------------------------------------------------------------------------------


def test_cli_applies_a_patch_from_a_file_or_stdin_with_paths_from_where_it_stands(
    serve: Serve, tmp_path: Path
):
    running = serve({"sub/a.txt": "one\ntwo\n", "sub/b.txt": "b\n", "a.txt": "top\n"})
    sub = running.root / "sub"
    patch_file = tmp_path / "fix.patch"
    patch_file.write_text(
        envelope("*** Update File: a.txt", "@@", "-one", "+ONE", "*** Add File: deep/n.txt", "+new")
    )
    done = cli(None, "apply-patch", str(patch_file), cwd=sub)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(SUCCESS + "M a.txt\nA deep/n.txt\n")  # as typed in sub/
    piped = envelope("*** Delete File: b.txt")
    done = cli(None, "apply-patch", cwd=sub, stdin=piped)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(SUCCESS + "D b.txt\n")
    assert "never read" in done.stderr  # the daemon's warning, on stderr
    assert tree(running.root) == texts(
        {"a.txt": "top\n", "sub/a.txt": "ONE\ntwo\n", "sub/deep/n.txt": "new\n"}
    )
    assert writes_since(running, 0, "cli-test") == [
        ("edit_applied", "sub/a.txt"),
        ("edit_applied", "sub/deep/n.txt"),
        ("edit_applied", "sub/b.txt"),
    ]


def test_cli_a_refused_patch_exits_non_zero_with_the_code(serve: Serve):
    running = serve({"sub/a.txt": "one\n"})
    before = tree(running.root)
    stale = envelope("*** Add File: ok.txt", "+ok", "*** Update File: a.txt", "@@", "-zzz", "+q")
    done = cli(None, "apply-patch", "-", cwd=running.root / "sub", stdin=stale)
    assert done.returncode != 0 and done.stdout == ""
    assert "no_match" in done.stderr and "operation 2 (*** Update File: a.txt)" in done.stderr
    assert tree(running.root) == before
