"""Every writer carries its change over others' edits (the writing path's carrying):
context lines find the place and do not refuse; a change whose own lines changed is
refused with who changed them and a small delta holding them with fresh anchors."""

from __future__ import annotations

from pathlib import Path

import msgspec

from editjournal.client import Client, RequestError, StaleAnchor
from tests.conftest import RunningDaemon
from tests.e2e.edit_support import anchors_of
from tests.patch_support import sha, unified

FILE = "".join(f"def step_{n}(state):\n    return state + {n}\n\n" for n in range(1, 401))


def _setup(daemon: RunningDaemon) -> tuple[Path, Client, Client]:
    target = daemon.root / "steps.py"
    target.write_text(FILE)
    a, b = daemon.client("agent-a"), daemon.client("agent-b")
    a.read_file("steps.py")
    b.read_file("steps.py")
    return target, a, b


def _b_changes(b: Client, old: str, new: str) -> int:
    return b.edit_file("steps.py", old, new).version


def _refused(call) -> RequestError:  # type: ignore[no-untyped-def]
    try:
        call()
    except RequestError as e:
        return e
    raise AssertionError("the write was applied")


def _full_read_bytes(client: Client) -> int:
    client.read_file("steps.py", hashes=True, max_lines=100_000)
    return len(msgspec.json.encode(client.last_response))


def test_edit_file_from_a_stale_view_lands_when_only_its_context_changed(daemon: RunningDaemon):
    target, a, b = _setup(daemon)
    seq = _b_changes(b, "    return state + 5\n", "    return state + 50\n")
    # A's old_string (as A saw the file) holds B's line as context: it no longer matches now
    old = "    return state + 5\n\ndef step_6(state):\n    return state + 6\n"
    new = "    return state + 5\n\ndef step_6(state):\n    return state * 6\n"
    result = a.edit_file("steps.py", old, new)
    text = target.read_text()
    assert "    return state + 50\n" in text and "    return state * 6\n" in text
    assert text.count("\n") == FILE.count("\n")
    [note] = [c for c in result.auto_corrections if c.type == "context_carried"]
    assert "agent-b" in note.detail and f"seq {seq}" in note.detail
    assert result.lines == [(17, 17)]  # the one line A changed, where it is now


def test_edit_file_whose_own_lines_changed_is_refused_with_who_and_a_small_delta(
    daemon: RunningDaemon,
):
    target, a, b = _setup(daemon)
    seq = _b_changes(b, "    return state + 6\n", "    return state - 6\n")
    after_b = target.read_bytes()
    old = "def step_6(state):\n    return state + 6\n"
    error = _refused(lambda: a.edit_file("steps.py", old, "def step_6(state):\n    return 0\n"))
    assert error.code == "anchor_stale" and target.read_bytes() == after_b
    assert isinstance(error, StaleAnchor)  # the client raises the family's class
    [conflict] = error.details["conflicts"]
    assert (conflict["seq"], conflict["agent"], conflict["lines"]) == (seq, "agent-b", [17])
    fresh = error.details["delta"]["changed_lines"]
    assert [(row["line"], row["text"]) for row in fresh] == [(17, "    return state - 6")]
    assert len(msgspec.json.encode(a.last_response)) < 0.05 * _full_read_bytes(a)
    # the fresh anchor works without a re-read
    a.edit("steps.py", [{"op": "replace_line", "hash": f"17#{fresh[0]['hash']}", "content": "x"}])
    assert target.read_text().splitlines()[16] == "x"


def test_edit_file_matching_neither_version_is_no_match_with_few_hints(daemon: RunningDaemon):
    _, a, _ = _setup(daemon)
    old = "".join(f"    return state + {n} # nowhere\n" for n in range(1, 30))
    error = _refused(lambda: a.edit_file("steps.py", old, "x\n"))
    assert error.code == "no_match"
    similar = error.details["similar_lines"]
    assert len(similar) <= 3 and all(len(s["lines"]) <= 4 for s in similar)


def test_safe_patch_rebase_carries_changed_context_and_says_so(daemon: RunningDaemon):
    target, a, b = _setup(daemon)
    seq = _b_changes(b, "def step_8(state):\n", "def step_eight(state):\n")
    mine = FILE.replace("    return state + 8\n", "    return state + 800\n")
    result = a.safe_patch("steps.py", unified(FILE, mine), sha(FILE), rebase=True)
    text = target.read_text()
    assert "def step_eight(state):\n    return state + 800\n" in text
    [note] = [c for c in result.auto_corrections if c.type == "context_carried"]
    assert f"seq {seq}" in note.detail
    assert result.hunks[0].applied_line == result.hunks[0].stated_line


def test_prepared_hunk_is_carried_over_a_change_beside_it(daemon: RunningDaemon):
    target, a, b = _setup(daemon)
    hunk = a.prepare_file_range_edit("steps.py", "    return 0\n", start_line=20, end_line=20)
    _b_changes(b, "def step_7(state):\n", "def step_seven(state):\n")
    _b_changes(b, "    return state + 7\n", "    return state + 7\n    # seven\n")
    applied = a.apply_file_modification(hunk.hunk_id)
    assert applied.apply_evidence.rebased
    lines = target.read_text().splitlines()
    assert lines[18:21] == ["def step_seven(state):", "    return 0", "    # seven"]


def test_an_anchor_from_an_own_reply_is_explained_after_a_carried_edit(daemon: RunningDaemon):
    """The issue's trace: A edits line 4 and keeps the anchor its reply gave; B edits
    line 4; A's edit of line 9 is carried over B's change; A's line-4 anchor names who
    changed that line since, and the delta holds it with its fresh anchor."""
    target, a, b = _setup(daemon)
    seen = anchors_of(a, "steps.py")
    mine = a.edit("steps.py", [{"op": "replace_line", "hash": seen[4], "content": "def four():"}])
    [line4] = [row for row in mine.changed_lines if row.line == 4]
    theirs = b.edit(
        "steps.py",
        [{"op": "replace_line", "hash": anchors_of(b, "steps.py")[4], "content": "def FOUR():"}],
    )
    a.edit("steps.py", [{"op": "replace_line", "hash": seen[11], "content": "    pass"}])
    after = target.read_bytes()
    error = _refused(
        lambda: a.edit(
            "steps.py", [{"op": "replace_line", "hash": f"4#{line4.hash}", "content": "y"}]
        )
    )
    assert error.code == "anchor_stale" and target.read_bytes() == after
    assert [c["seq"] for c in error.details["conflicts"]] == [theirs.version]
    fresh = {row["line"]: row["text"] for row in error.details["delta"]["changed_lines"]}
    assert fresh.get(4) == "def FOUR():"


NUL_WRITES = {
    "edit": lambda c, anchors: c.edit(
        "steps.py", [{"op": "replace_line", "hash": anchors[1], "content": "a\x00b"}]
    ),
    "safe_patch": lambda c, _: c.safe_patch(
        "steps.py", unified(FILE, FILE.replace("step_1(", "step\x00(")), sha(FILE)
    ),
    "edit_file": lambda c, _: c.edit_file("steps.py", "def step_1(", "def \x00("),
    "append_to_file": lambda c, _: c.append_to_file("steps.py", "x\x00\n"),
    "write_file": lambda c, _: c.write_file("steps.py", "\x00"),
    "overwrite_entire_file": lambda c, _: c.overwrite_entire_file("steps.py", "\x00\n"),
}


def test_no_writer_writes_a_nul_character(daemon: RunningDaemon):
    """The writing path refuses it, for every tool, and journals the refusal."""
    target, a, _ = _setup(daemon)
    anchors = anchors_of(a, "steps.py")
    for tool, call in NUL_WRITES.items():
        error = _refused(lambda call=call: call(a, anchors))
        # a diff with a NUL is not even a diff to the parser: invalid_diff, before the path
        assert error.code == ("invalid_diff" if tool == "safe_patch" else "invalid_params"), tool
        assert tool == "safe_patch" or "NUL" in error.message, tool
        assert target.read_text() == FILE, tool
    rejected = [r.body["writer"] for r in a.log(path="steps.py", kind="edit_rejected").events]
    assert sorted(rejected) == sorted(NUL_WRITES)


def test_events_name_their_sibling_events_by_the_seq_they_got(daemon: RunningDaemon):
    """A hunk_applied names its write's edit_applied, a checkpoint_restored each file's
    write: the server sets those seqs as it stages the events (no handler predicts them)."""
    target, a, b = _setup(daemon)
    a.checkpoint_create(name="start")
    hunk = a.prepare_file_range_edit("steps.py", "    return 0\n", start_line=2, end_line=2)
    a.apply_file_modification(hunk.hunk_id)
    (daemon.root / "other.py").write_text("x = 1\n")
    b.edit_file("steps.py", "    return state + 3\n", "    return 3\n")
    a.checkpoint_restore("start")
    journal = daemon.journal()
    [applied] = journal.records(kind="hunk_applied")
    write = next(journal.records(after_seq=applied.event.edit_seq - 1, limit=1))
    assert (write.kind, write.event.writer) == ("edit_applied", "apply_file_modification")
    [restored] = journal.records(kind="checkpoint_restored")
    [(path, seq)] = restored.event.files.items()
    write = next(journal.records(after_seq=seq - 1, limit=1))
    assert (path, write.kind, write.event.writer, write.path) == (
        "steps.py",
        "edit_applied",
        "restore",
        "steps.py",
    )
    assert target.read_text() == FILE
