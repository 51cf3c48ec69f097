"""Checkpoints through a real daemon: create, list, restore (all or nothing, byte for byte,
reporting what it overwrote and who had changed it), across restarts and from the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from editjournal.client import Client, RequestError
from editjournal.schemas.events import CheckpointCreated, CheckpointRestored, EditApplied
from tests.conftest import RunningDaemon, start
from tests.e2e.cli_support import cli

# a BOM, CRLF endings and no final newline: what a restore must give back byte for byte
APP = b"\xef\xbb\xbfdef one():\r\n    return 1\r\n\r\ndef two():\r\n    return 2"
NOTES = b"# Notes\n\n## State\nstarting\n"


@pytest.fixture
def files(daemon: RunningDaemon) -> RunningDaemon:
    (daemon.root / "app.py").write_bytes(APP)
    (daemon.root / "notes.md").write_bytes(NOTES)
    return daemon


def anchors(client: Client, path: str) -> dict[str, str]:
    return {line.text: line.hash for line in client.read_file(path, hashes=True).lines or []}


def test_checkpoint_records_every_known_file_by_content(files: RunningDaemon):
    a = files.client("agent-a")
    a.read_file("app.py")
    a.read_file("notes.md")
    made = a.checkpoint_create("before-work")
    assert made.name == "before-work" and made.id == made.version
    assert {f.path for f in made.files} == {"app.py", "notes.md"}
    listed = a.checkpoint_list().checkpoints
    assert [(c.id, c.name, c.all_files, c.agent) for c in listed] == [
        (made.id, "before-work", True, "agent-a")
    ]
    event = next(files.journal().records(kind="checkpoint")).event
    assert isinstance(event, CheckpointCreated)
    assert files.journal().blob(event.files["app.py"]) == APP


def test_edits_by_two_agents_and_an_outside_writer_are_restored_and_reported(
    files: RunningDaemon,
):
    a, b = files.client("agent-a"), files.client("agent-b")
    a.read_file("app.py")
    b.read_file("notes.md")
    a.checkpoint_create("base")
    edit = a.edit("app.py", [{"op": "replace_line", "hash": anchors(a, "app.py")["    return 1"],
                              "content": "    return 100"}])  # fmt: skip
    appended = b.append_to_file("notes.md", "- agent-b was here\n")
    app_py = files.root / "app.py"
    app_py.write_bytes(app_py.read_bytes().replace(b"two", b"deux"))  # an outside writer
    b.write_file("src/new.py", "print('new')\n")

    restored = b.checkpoint_restore("base")

    assert (files.root / "app.py").read_bytes() == APP
    assert (files.root / "notes.md").read_bytes() == NOTES
    assert (files.root / "src" / "new.py").exists(), "new files stay unless remove_new"
    assert restored.kept_new == ["src/new.py"] and restored.unchanged == []
    by_path = {f.path: f for f in restored.files}
    assert set(by_path) == {"app.py", "notes.md"}
    app = by_path["app.py"]
    assert app.action == "restored" and app.overwrote_sha256 is not None
    seen = [(c["agent"], c["kind"]) for c in app.changed_since]
    assert seen[0] == ("agent-a", "edit_applied")
    assert app.changed_since[0]["seq"] == edit.version
    assert (None, "outside_change") in seen
    assert [(c["seq"], c["agent"]) for c in by_path["notes.md"].changed_since] == [
        (appended.version, "agent-b")
    ]
    assert "-2|    return 100" in app.diff and "-4|def deux():" in app.diff


def test_restore_journals_one_write_per_file_grouped_by_one_event(files: RunningDaemon):
    a = files.client("agent-a")
    a.read_file("app.py")
    a.read_file("notes.md")
    cp = a.checkpoint_create()
    assert cp.name == f"checkpoint-{cp.id}"
    a.write_file("notes.md", "rewritten\n")
    (files.root / "app.py").write_bytes(b"gone\n")
    restored = a.checkpoint_restore(str(cp.id))
    journal = files.journal()
    group = next(journal.records(kind="checkpoint_restored")).event
    assert isinstance(group, CheckpointRestored) and group.checkpoint == cp.id
    assert restored.version == next(journal.records(kind="checkpoint_restored")).seq
    assert set(group.files) == {"app.py", "notes.md"}
    for path, seq in group.files.items():
        write = next(journal.records(after_seq=seq - 1, limit=1)).event
        assert isinstance(write, EditApplied)
        assert (write.path, write.writer) == (path, "restore")
        assert write.operations[0]["checkpoint"] == cp.id
        assert {f.path: f.version for f in restored.files}[path] == seq


def test_new_files_are_removed_only_with_remove_new(files: RunningDaemon):
    a = files.client("agent-a")
    a.read_file("app.py")
    cp = a.checkpoint_create("clean")
    a.write_file("scratch.txt", "temporary\n")
    kept = a.checkpoint_restore("clean")
    assert kept.kept_new == ["scratch.txt"] and (files.root / "scratch.txt").exists()
    assert any("remove_new" in w for w in a.last_response.warnings)  # type: ignore[union-attr]
    removed = a.checkpoint_restore(cp.id, remove_new=True)
    assert not (files.root / "scratch.txt").exists()
    assert [(f.path, f.action, f.sha256) for f in removed.files] == [
        ("scratch.txt", "removed", None)
    ]
    assert removed.unchanged == ["app.py"]


def test_named_paths_checkpoint_and_a_file_that_did_not_exist(files: RunningDaemon):
    a = files.client("agent-a")
    cp = a.checkpoint_create("two-files", paths=["notes.md", "later.txt"])
    assert [f.path for f in cp.files] == ["notes.md"] and cp.absent == ["later.txt"]
    a.write_file("later.txt", "made after\n")
    a.write_file("notes.md", "changed\n")
    (files.root / "app.py").write_bytes(b"not in the checkpoint\n")
    only_notes = a.checkpoint_restore("two-files", paths=["notes.md"])
    assert [f.path for f in only_notes.files] == ["notes.md"]
    assert (files.root / "notes.md").read_bytes() == NOTES
    assert (files.root / "later.txt").exists()
    a.checkpoint_restore("two-files", remove_new=True)
    assert not (files.root / "later.txt").exists()
    assert (files.root / "app.py").read_bytes() == b"not in the checkpoint\n"
    with pytest.raises(RequestError) as e:
        a.checkpoint_restore("two-files", paths=["app.py"])
    assert e.value.code == "invalid_params" and "does not cover app.py" in e.value.message


def test_a_file_the_journal_did_not_know_at_the_checkpoint_is_never_new(workspace: Path):
    (workspace / "old.py").write_bytes(b"x = 1\n")  # there before the daemon, never read
    running = start(workspace)
    try:
        a = running.client("agent-a")
        a.checkpoint_create("empty-journal")
        a.edit_file("old.py", "x = 1", "x = 2")
        a.write_file("fresh.txt", "made after the checkpoint\n")
        restored = a.checkpoint_restore("empty-journal", remove_new=True)
        assert [(f.path, f.action) for f in restored.files] == [("fresh.txt", "removed")]
        assert (workspace / "old.py").read_bytes() == b"x = 2\n"
        with pytest.raises(RequestError) as e:
            a.checkpoint_restore("empty-journal", paths=["old.py"], remove_new=True)
        assert e.value.code == "invalid_params" and "does not cover old.py" in e.value.message
    finally:
        running.stop()


def test_a_deleted_file_is_recreated(files: RunningDaemon):
    a = files.client("agent-a")
    a.read_file("app.py")
    a.checkpoint_create("with-app")
    (files.root / "app.py").unlink()
    restored = a.checkpoint_restore("with-app", paths=["app.py"])
    assert [(f.path, f.action, f.overwrote_sha256) for f in restored.files] == [
        ("app.py", "recreated", None)
    ]
    assert (files.root / "app.py").read_bytes() == APP


def test_names_are_unique_and_unknown_checkpoints_are_named_errors(files: RunningDaemon):
    a = files.client("agent-a")
    a.checkpoint_create("v1")
    with pytest.raises(RequestError) as e:
        a.checkpoint_create("v1")
    assert e.value.code == "checkpoint_exists" and "'v1'" in e.value.message
    with pytest.raises(RequestError) as e:
        a.checkpoint_create("42")
    assert e.value.code == "invalid_params"
    with pytest.raises(RequestError) as e:
        a.checkpoint_restore("v2")
    assert e.value.code == "checkpoint_not_found" and "v1" in e.value.message
    assert len(a.checkpoint_list().checkpoints) == 1


def test_a_refused_restore_writes_nothing(files: RunningDaemon):
    a = files.client("agent-a")
    a.read_file("app.py")
    a.read_file("notes.md")
    a.checkpoint_create("base")
    a.write_file("notes.md", "changed\n")
    (files.root / "app.py").write_bytes(b"changed too\n")
    config = files.root / ".editjournal" / "config.toml"
    config.write_text('[access]\nread_only = ["agent-a"]\n')
    with pytest.raises(RequestError) as e:
        a.checkpoint_restore("base")
    assert e.value.code == "write_access_denied"
    assert {r["code"] for r in e.value.details["refused"]} == {"write_access_denied"}
    assert (files.root / "notes.md").read_bytes() == b"changed\n"
    assert (files.root / "app.py").read_bytes() == b"changed too\n"
    assert not list(files.journal().records(kind="checkpoint_restored"))


def test_checkpoints_survive_a_restart(workspace: Path):
    first = start(workspace)
    (workspace / "app.py").write_bytes(APP)
    a = first.client("agent-a")
    a.read_file("app.py")
    made = a.checkpoint_create("kept")
    digest = a.status().state_digest
    first.stop()
    (workspace / "app.py").write_bytes(b"edited while the daemon was down\n")
    second = start(workspace)
    try:
        a = second.client("agent-a")
        assert [c.name for c in a.checkpoint_list().checkpoints] == ["kept"]
        assert a.checkpoint_list().checkpoints[0].id == made.id
        a.checkpoint_restore("kept")
        assert (workspace / "app.py").read_bytes() == APP
        assert a.status().state_digest != digest  # folded again, with the restore in it
    finally:
        second.stop()


def test_the_cli_creates_lists_and_restores(files: RunningDaemon):
    a = files.client("agent-a")
    a.read_file("notes.md")
    done = cli(files.root, "checkpoint-create", "--name", "cli-point")
    assert done.returncode == 0, done.stderr
    assert "Checkpoint 'cli-point'" in done.stdout
    done = cli(files.root, "checkpoint-list", "--json")
    assert done.returncode == 0, done.stderr
    assert [c["name"] for c in json.loads(done.stdout)["checkpoints"]] == ["cli-point"]
    done = cli(files.root, "checkpoint-list")
    assert "cli-point  by cli-test" in done.stdout and "1 file" in done.stdout
    (files.root / "notes.md").write_bytes(b"scribbled\n")
    done = cli(files.root, "checkpoint-restore", "--id-or-name", "cli-point")
    assert done.returncode == 0, done.stderr
    assert "Restored checkpoint 'cli-point'" in done.stdout
    assert "restored notes.md" in done.stdout and "an outside writer" in done.stdout
    assert (files.root / "notes.md").read_bytes() == NOTES
