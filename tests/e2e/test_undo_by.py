"""`undo --by AGENT` through a real daemon: one agent's writes taken back across files while
another agent's changes to the same files stay; refused all or nothing when the other
agent changed a line it wrote; `--since` a checkpoint or a seq; `--dry-run`; an agent
with no writes; an unknown REF; and the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from editjournal.client import Client, RequestError
from editjournal.schemas.events import EditApplied
from editjournal.schemas.tools import MAX_UNDO_BY_FILES
from tests.conftest import RunningDaemon
from tests.e2e.cli_support import cli

APP = "".join(f"app_{n} = {n}\n" for n in range(1, 11))
LIB = "".join(f"lib_{n} = {n}\n" for n in range(1, 11))
OLD = "legacy = True\n"


@pytest.fixture
def ws(daemon: RunningDaemon) -> RunningDaemon:
    for name, text in (("app.py", APP), ("lib.py", LIB), ("old.py", OLD)):
        (daemon.root / name).write_text(text)
    return daemon


def files(ws: RunningDaemon) -> dict[str, str]:
    """Every file of the workspace (but the journal's own directory) and its text."""
    return {
        p.name: p.read_text()
        for p in sorted(ws.root.iterdir())
        if p.is_file() and not p.name.startswith(".")
    }


def a_works(a: Client) -> None:
    """Agent A: edits both files, creates new.py, deletes old.py."""
    a.edit_file("app.py", "app_2 = 2", "app_2 = 'A'")
    a.edit_file("lib.py", "lib_8 = 8", "lib_8 = 'A'")
    a.edit_file("app.py", "app_9 = 9", "app_9 = 'A'")
    a.write_file("new.py", "made_by_a = 1\n")
    a.apply_patch("*** Begin Patch\n*** Delete File: old.py\n*** End Patch\n")


def b_works(b: Client) -> None:
    """Agent B: other lines of the same files."""
    b.edit_file("app.py", "app_5 = 5", "app_5 = 'B'")
    b.edit_file("lib.py", "lib_1 = 1", "lib_1 = 'B'")


def expected_b_only() -> dict[str, str]:
    return {
        "app.py": APP.replace("app_5 = 5", "app_5 = 'B'"),
        "lib.py": LIB.replace("lib_1 = 1", "lib_1 = 'B'"),
        "old.py": OLD,
    }


def test_undo_by_reverts_one_agents_writes_across_files_and_keeps_the_others(ws: RunningDaemon):
    a, b, c = ws.client("agent-a"), ws.client("agent-b"), ws.client("boss")
    a_works(a)
    b_works(b)
    done = c.undo(by="agent-a")
    assert files(ws) == expected_b_only()
    actions = {f.path: f.action for f in done.files}
    assert actions == {
        "app.py": "reverted", "lib.py": "reverted", "new.py": "removed", "old.py": "recreated",
    }  # fmt: skip
    app = next(f for f in done.files if f.path == "app.py")
    assert len(app.undone_seqs) == 2 and [r["agent"] for r in app.rebased_over] == ["agent-b"]
    assert done.by == "agent-a" and done.since == 0 and not done.dry_run
    # journaled as the caller, with `by` and the seqs it reverted
    undos = [r for r in ws.journal().records(kind="edit_applied") if r.agent == "boss"]
    assert len(undos) == 4 and {f.version for f in done.files} == {r.seq for r in undos}
    for record in undos:
        assert isinstance(record.event, EditApplied) and record.event.writer == "undo"
        (op,) = record.event.operations
        assert op["by"] == "agent-a" and op["since"] == 0 and op["seqs"]
    assert "Undid 5 write(s) by agent-a" in done.message


def test_undo_by_the_caller_of_an_undo_by_puts_it_all_back(ws: RunningDaemon):
    a, b, c = ws.client("agent-a"), ws.client("agent-b"), ws.client("boss")
    a_works(a)
    b_works(b)
    before = files(ws)
    c.undo(by="agent-a")
    c.undo(by="boss")
    assert files(ws) == before


def test_undo_by_is_refused_all_or_nothing_when_another_agent_changed_its_line(
    ws: RunningDaemon,
):
    a, b = ws.client("agent-a"), ws.client("agent-b")
    a_works(a)
    theirs = b.edit_file("app.py", "app_9 = 'A'", "app_9 = 'B'").version
    before, seqs = files(ws), ws.journal().last_seq
    with pytest.raises(RequestError) as e:
        ws.client("boss").undo(by="agent-a")
    assert e.value.code == "undo_conflict"
    assert "agent-b" in e.value.message and "app.py" in e.value.message
    assert "line(s) 9" in e.value.message and "nothing was written" in e.value.message
    details = e.value.details
    assert details["path"] == "app.py" and details["by"] == "agent-a"
    assert [c["seq"] for c in details["conflicts"]] == [theirs]
    assert any(row["line"] == 9 for row in details["delta"]["changed_lines"])
    assert files(ws) == before  # not even lib.py, new.py or old.py
    after = list(ws.journal().records(after_seq=seqs))
    assert all(r.kind == "edit_rejected" for r in after)


def test_undo_by_since_a_checkpoint_takes_back_only_the_writes_after_it(ws: RunningDaemon):
    a, b = ws.client("agent-a"), ws.client("agent-b")
    a.edit_file("app.py", "app_2 = 2", "app_2 = 'early'")
    b.checkpoint_create("turn-1")
    a.edit_file("app.py", "app_3 = 3", "app_3 = 'late'")
    a.edit_file("lib.py", "lib_4 = 4", "lib_4 = 'late'")
    b_works(b)
    done = b.undo(by="agent-a", since="turn-1")
    assert files(ws)["app.py"] == APP.replace("app_2 = 2", "app_2 = 'early'").replace(
        "app_5 = 5", "app_5 = 'B'"
    )
    assert files(ws)["lib.py"] == LIB.replace("lib_1 = 1", "lib_1 = 'B'")
    assert "checkpoint 'turn-1'" in done.message


def test_undo_by_since_a_seq_takes_back_only_the_writes_after_it(ws: RunningDaemon):
    a = ws.client("agent-a")
    early = a.edit_file("app.py", "app_2 = 2", "app_2 = 'early'").version
    a.edit_file("app.py", "app_3 = 3", "app_3 = 'late'")
    done = a.undo(by="agent-a", since=early)
    assert files(ws)["app.py"] == APP.replace("app_2 = 2", "app_2 = 'early'")
    assert done.since == early


def test_dry_run_shows_the_diffs_and_changes_nothing(ws: RunningDaemon):
    a, b = ws.client("agent-a"), ws.client("agent-b")
    a_works(a)
    b_works(b)
    before, last = files(ws), ws.journal().last_seq
    shown = b.undo(by="agent-a", dry_run=True)
    assert files(ws) == before and ws.journal().last_seq == last
    assert shown.dry_run and all(f.version is None for f in shown.files)
    app = next(f for f in shown.files if f.path == "app.py")
    assert "app_2 = 2" in app.diff and "app_9 = 9" in app.diff
    assert shown.message.startswith("Would undo 5 write(s) by agent-a")


def test_an_agent_with_no_writes_has_nothing_to_undo(ws: RunningDaemon):
    ws.client("agent-a").edit_file("app.py", "app_2 = 2", "app_2 = 'A'")
    with pytest.raises(RequestError) as e:
        ws.client("boss").undo(by="nobody")
    assert e.value.code == "nothing_to_undo" and "nobody" in e.value.message
    with pytest.raises(RequestError) as e:
        ws.client("boss").undo(by="agent-a", since="999999")
    assert e.value.code == "invalid_params" and "since" in e.value.message


def test_an_unknown_checkpoint_name_is_checkpoint_not_found(ws: RunningDaemon):
    ws.client("agent-a").edit_file("app.py", "app_2 = 2", "app_2 = 'A'")
    with pytest.raises(RequestError) as e:
        ws.client("boss").undo(by="agent-a", since="no-such-turn")
    assert e.value.code == "checkpoint_not_found"
    assert files(ws)["app.py"] == APP.replace("app_2 = 2", "app_2 = 'A'")


@pytest.mark.parametrize(
    "params",
    [{"by": "a", "path": "app.py"}, {"by": "a", "seq": 3}, {"path": "app.py", "dry_run": True}, {}],
    ids=["by-with-path", "by-with-seq", "dry-run-without-by", "neither"],
)
def test_mixed_params_are_invalid(ws: RunningDaemon, params: dict[str, object]):
    out = cli(ws.root, "call", "undo", stdin=json.dumps(params), agent="boss")
    reply = json.loads(out.stdout)
    assert reply["ok"] is False and reply["error"]["code"] == "invalid_params", reply


def test_cli_undo_by_dry_run_then_for_real(ws: RunningDaemon):
    a_works(ws.client("agent-a"))
    before = files(ws)
    out = cli(ws.root, "undo", "--by", "agent-a", "--dry-run", agent="boss")
    assert out.returncode == 0, out.stderr
    assert "Would undo 5 write(s) by agent-a" in out.stdout and "--- app.py" in out.stdout
    assert files(ws) == before
    out = cli(ws.root, "undo", "--by", "agent-a", agent="boss")
    assert out.returncode == 0, out.stderr
    assert files(ws) == {"app.py": APP, "lib.py": LIB, "old.py": OLD}
    assert not Path(ws.root / "new.py").exists()


def test_cli_undo_by_refusal_exits_nonzero_naming_the_other_agent(ws: RunningDaemon):
    a_works(ws.client("agent-a"))
    ws.client("agent-b").edit_file("lib.py", "lib_8 = 'A'", "lib_8 = 'B'")
    out = cli(ws.root, "undo", "--by", "agent-a", "--since", "0", agent="boss")
    assert out.returncode != 0 and "agent-b" in out.stderr and "lib.py" in out.stderr


def test_an_agents_later_write_over_its_own_line_is_no_conflict(ws: RunningDaemon):
    a, b = ws.client("agent-a"), ws.client("agent-b")
    a.edit_file("app.py", "app_2 = 2", "app_2 = 'first'")
    b.edit_file("app.py", "app_7 = 7", "app_7 = 'B'")
    a.edit_file("app.py", "app_2 = 'first'", "app_2 = 'second'")
    a.edit_file("app.py", "app_4 = 4", "app_4 = 4\nextra_1 = 1\nextra_2 = 2")
    a.edit_file("app.py", "extra_1 = 1\n", "")
    ws.client("boss").undo(by="agent-a")
    assert files(ws)["app.py"] == APP.replace("app_7 = 7", "app_7 = 'B'")


def test_writes_that_cancel_out_leave_the_file_unwritten(ws: RunningDaemon):
    a = ws.client("agent-a")
    a.edit_file("app.py", "app_3 = 3", "app_3 = 'A'")
    a.undo("app.py")  # A's own undo: an applied write of A's too
    a.edit_file("lib.py", "lib_3 = 3", "lib_3 = 'A'")
    done = ws.client("boss").undo(by="agent-a")
    assert {f.path: f.action for f in done.files} == {"app.py": "unchanged", "lib.py": "reverted"}
    assert files(ws) == {"app.py": APP, "lib.py": LIB, "old.py": OLD}
    undos = [r for r in ws.journal().records(kind="edit_applied") if r.agent == "boss"]
    assert [r.event.path for r in undos] == ["lib.py"]


def test_a_sessions_hook_claims_are_rewound_since_its_turns_checkpoint(ws: RunningDaemon):
    """A harness session's writes are claims (`check_write`, the harness's tool writes,
    `claim_write`): `undo --by SESSION --since CHECKPOINT` rewinds them, and only them."""
    session, b = ws.client("claude-code:s1"), ws.client("agent-b")
    session.read_file("app.py")
    session.checkpoint_create("s1-turn-2")
    edit = {"old_string": "app_6 = 6\n", "new_string": "app_6 = 'session'\n"}
    session.check_write("app.py", "claude-code:Edit", edits=[edit])
    (ws.root / "app.py").write_text(APP.replace("app_6 = 6", "app_6 = 'session'"))
    assert session.claim_write("app.py", "claude-code:Edit").recorded
    b.edit_file("app.py", "app_1 = 1", "app_1 = 'B'")
    out = cli(ws.root, "undo", "--by", "claude-code:s1", "--since", "s1-turn-2", agent="boss")
    assert out.returncode == 0, out.stderr
    assert files(ws)["app.py"] == APP.replace("app_1 = 1", "app_1 = 'B'")
    [undo] = [r for r in ws.journal().records(kind="edit_applied") if r.agent == "boss"]
    assert isinstance(undo.event, EditApplied)
    assert undo.event.operations[0]["by"] == "claude-code:s1"


def test_more_files_than_one_undo_may_write_is_invalid_params(daemon: RunningDaemon):
    """One patch makes 1,001 files: past MAX_UNDO_BY_FILES the undo is refused at once,
    before anything is read or planned, and asks for a later since."""
    body = "".join(
        f"*** Add File: many/f{i:04d}.txt\n+x{i}\n" for i in range(MAX_UNDO_BY_FILES + 1)
    )
    daemon.client("agent-a").apply_patch(f"*** Begin Patch\n{body}*** End Patch\n")
    with pytest.raises(RequestError) as e:
        daemon.client("boss").undo(by="agent-a")
    assert e.value.code == "invalid_params" and "more than 1000 files" in e.value.message
    assert e.value.details["max_files"] == MAX_UNDO_BY_FILES
    assert len(list((daemon.root / "many").iterdir())) == MAX_UNDO_BY_FILES + 1
