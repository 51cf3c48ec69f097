"""`undo` through a real daemon: a clean revert, a refused one that names the later events,
a revert rebased over other agents' and outside edits elsewhere, undo of an undo, of a
creation and of a restore, and the journal records it all."""

from __future__ import annotations

import json

import pytest

from editjournal.client import Client, RequestError
from editjournal.schemas.events import EditApplied, EditRejected
from tests.conftest import RunningDaemon
from tests.e2e.cli_support import cli

LINES = [f"value_{n} = {n}" for n in range(1, 13)]
TEXT = "\n".join(LINES) + "\n"


@pytest.fixture
def ws(daemon: RunningDaemon) -> RunningDaemon:
    (daemon.root / "conf.py").write_text(TEXT)
    return daemon


def replace(client: Client, path: str, old: str, new: str) -> int:
    """Read with anchors, replace the line `old` with `new`; the write's version."""
    rows = {line.text: line.hash for line in client.read_file(path, hashes=True).lines or []}
    done = client.edit(path, [{"op": "replace_line", "hash": rows[old], "content": new}])
    return done.version


def content(ws: RunningDaemon) -> str:
    return (ws.root / "conf.py").read_text()


def test_clean_undo_gives_back_the_bytes_before_the_write(ws: RunningDaemon):
    crlf = TEXT.replace("\n", "\r\n").encode()
    (ws.root / "conf.py").write_bytes(crlf)
    a = ws.client("agent-a")
    seq = replace(a, "conf.py", "value_3 = 3", "value_3 = 300")
    undone = a.undo("conf.py")
    assert (ws.root / "conf.py").read_bytes() == crlf
    assert undone.undone["seq"] == seq and undone.undone["agent"] == "agent-a"
    assert undone.message == f"Undid seq {seq} (edit by agent-a) on conf.py"
    record = next(ws.journal().records(after_seq=undone.version - 1, limit=1))
    assert isinstance(record.event, EditApplied) and record.event.writer == "undo"
    assert record.event.operations == [
        {"op": "undo", "seq": seq, "writer": "edit", "agent": "agent-a"}
    ]


def test_undo_is_refused_when_another_agent_changed_those_lines(ws: RunningDaemon):
    a, b = ws.client("agent-a"), ws.client("agent-b")
    mine = replace(a, "conf.py", "value_5 = 5", "value_5 = 50")
    theirs = replace(b, "conf.py", "value_5 = 50", "value_5 = 500")
    before = content(ws)
    with pytest.raises(RequestError) as e:
        a.undo("conf.py")
    assert e.value.code == "undo_conflict"
    assert f"cannot undo seq {mine}" in e.value.message and "agent-b" in e.value.message
    assert e.value.details["conflicts"] == [
        {**e.value.details["conflicts"][0], "seq": theirs, "agent": "agent-b",
         "kind": "edit_applied", "lines": [5]}
    ]  # fmt: skip
    assert content(ws) == before
    rejected = list(ws.journal().records(kind="edit_rejected"))
    assert isinstance(rejected[-1].event, EditRejected)
    assert (rejected[-1].event.writer, rejected[-1].event.code) == ("undo", "undo_conflict")


def test_undo_is_rebased_over_edits_elsewhere_in_the_file(ws: RunningDaemon):
    a, b = ws.client("agent-a"), ws.client("agent-b")
    mine = replace(a, "conf.py", "value_5 = 5", "value_5 = 50")
    theirs = replace(b, "conf.py", "value_10 = 10", "value_10 = 1000")
    b.prepend_to_file("conf.py", "import os\nimport sys\n")
    outside = content(ws).replace("value_2 = 2\n", "value_2 = 2\n# a comment\n")
    (ws.root / "conf.py").write_text(outside)  # an outside writer, above the undone line
    undone = a.undo("conf.py")
    expected = outside.replace("value_5 = 50", "value_5 = 5")
    assert content(ws) == expected
    assert undone.undone["seq"] == mine
    over = [(c["seq"], c["agent"], c["kind"]) for c in undone.rebased_over]
    assert over[0] == (theirs, "agent-b", "edit_applied")
    assert "outside_change" in {kind for _, _, kind in over}, over


def test_undo_of_an_undo_restores_the_undone_write(ws: RunningDaemon):
    a = ws.client("agent-a")
    replace(a, "conf.py", "value_4 = 4", "value_4 = 44")
    edited = content(ws)
    first = a.undo("conf.py")
    assert content(ws) == TEXT
    again = a.undo("conf.py")  # the agent's latest write is now the undo itself
    assert again.undone["seq"] == first.version and again.undone["writer"] == "undo"
    assert content(ws) == edited
    a.undo("conf.py", seq=first.version + 1)  # by seq: the redo, undone
    assert content(ws) == TEXT


def test_undo_of_an_older_write_by_seq_and_of_another_agents_write(ws: RunningDaemon):
    a, b = ws.client("agent-a"), ws.client("agent-b")
    old = replace(a, "conf.py", "value_1 = 1", "value_1 = 10")
    replace(a, "conf.py", "value_9 = 9", "value_9 = 90")
    replace(b, "conf.py", "value_12 = 12", "value_12 = 120")
    a.undo("conf.py", seq=old)
    assert "value_1 = 1\n" in content(ws) and "value_9 = 90" in content(ws)
    a.undo("conf.py", agent="agent-b")
    assert "value_12 = 12\n" in content(ws) and "value_9 = 90" in content(ws)


def test_undo_of_a_created_file_removes_it_and_its_undo_brings_it_back(ws: RunningDaemon):
    a = ws.client("agent-a")
    a.write_file("made.txt", "fresh\n")
    gone = a.undo("made.txt")
    assert gone.deleted and not (ws.root / "made.txt").exists()
    back = a.undo("made.txt")
    assert back.created and (ws.root / "made.txt").read_text() == "fresh\n"


def test_undo_of_a_restore(ws: RunningDaemon):
    a = ws.client("agent-a")
    a.read_file("conf.py")
    a.checkpoint_create("start")
    replace(a, "conf.py", "value_6 = 6", "value_6 = 66")
    edited = content(ws)
    restored = a.checkpoint_restore("start")
    assert content(ws) == TEXT
    undone = a.undo("conf.py", seq=restored.version)  # the restore's seq names its write
    assert undone.undone["writer"] == "restore"
    assert content(ws) == edited


def test_nothing_to_undo_is_a_clear_error(ws: RunningDaemon):
    a = ws.client("agent-a")
    read = a.read_file("conf.py")
    with pytest.raises(RequestError) as e:
        a.undo("conf.py")
    assert e.value.code == "nothing_to_undo" and "agent-a has no applied write" in e.value.message
    with pytest.raises(RequestError) as e:
        a.undo("conf.py", seq=read.version)
    assert e.value.code == "nothing_to_undo" and "file_read" in e.value.message
    with pytest.raises(RequestError) as e:
        a.undo("conf.py", seq=10_000)
    assert e.value.code == "nothing_to_undo"


def test_undo_from_the_cli(ws: RunningDaemon):
    a = ws.client("cli-test", keep_identity=True)  # the CLI's identity: its plain undo is ours
    seq = replace(a, "conf.py", "value_8 = 8", "value_8 = 80")
    done = cli(ws.root, "undo", "conf.py")
    assert done.returncode == 0, done.stderr
    assert f"Undid seq {seq}" in done.stdout
    assert content(ws) == TEXT
    done = cli(ws.root, "undo", "conf.py", "--seq", str(seq))
    assert done.returncode == 1 and "undo_conflict" in done.stderr
    theirs = replace(ws.client("agent-b"), "conf.py", "value_11 = 11", "value_11 = 110")
    done = cli(ws.root, "undo", "conf.py", "--of", "agent-b", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["undone"]["seq"] == theirs
    assert content(ws) == TEXT
