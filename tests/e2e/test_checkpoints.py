"""Checkpoints through a real daemon: a checkpoint covers the workspace (every file not
ignored, read or not), restore means restore (all or nothing, byte for byte, whoever
changed a file), diff shows what changed; across restarts and from the CLI."""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import time
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


def test_a_checkpoint_covers_every_file_of_the_workspace_read_or_not(files: RunningDaemon):
    a = files.client("agent-a")  # nothing read: the journal knows no file
    (files.root / "src").mkdir()
    (files.root / "src" / "old.txt").write_bytes(b"never read\n")
    made = a.checkpoint_create("before-work")
    assert made.name == "before-work" and made.id == made.version
    assert {f.path for f in made.files} == {"app.py", "notes.md", "src/old.txt"}
    assert (made.file_count, made.total_bytes) == (3, len(APP) + len(NOTES) + 11)
    listed = a.checkpoint_list().checkpoints
    assert [(c.id, c.name, c.file_count, c.scope, c.agent) for c in listed] == [
        (made.id, "before-work", 3, [], "agent-a")
    ]
    [record] = files.journal().records(kind="checkpoint_created")
    assert isinstance(record.event, CheckpointCreated) and record.event.manifest
    digests = {f.path: f.sha256 for f in made.files}
    assert files.journal().blob(digests["app.py"]) == APP
    assert files.journal().verify().ok  # the manifest's chunks and every content it names

    a.edit_file("src/old.txt", "never read", "changed by an agent")
    restored = a.checkpoint_restore("before-work")
    assert [(f.path, f.action) for f in restored.files] == [("src/old.txt", "restored")]
    assert (files.root / "src" / "old.txt").read_bytes() == b"never read\n"
    assert restored.unchanged_count == 2


def test_a_file_written_a_moment_before_is_covered(files: RunningDaemon):
    a = files.client("agent-a")
    (files.root / "just-now.txt").write_bytes(b"written a moment ago\n")  # no waiting
    made = a.checkpoint_create("at-once")
    assert "just-now.txt" in {f.path for f in made.files}
    (files.root / "just-now.txt").write_bytes(b"then changed\n")
    a.checkpoint_restore("at-once")
    assert (files.root / "just-now.txt").read_bytes() == b"written a moment ago\n"


def test_ignored_files_are_not_covered_and_never_removed(files: RunningDaemon):
    a = files.client("agent-a")
    (files.root / ".gitignore").write_text("build/\n")
    (files.root / ".editjournalignore").write_text("*.log\n")
    (files.root / "build").mkdir()
    (files.root / "build" / "out.txt").write_text("artifact\n")
    (files.root / "run.log").write_text("log\n")
    made = a.checkpoint_create("clean")
    paths = {f.path for f in made.files}
    assert paths == {".gitignore", ".editjournalignore", "app.py", "notes.md"}
    (files.root / "build" / "later.txt").write_text("built later\n")
    (files.root / "run.log").write_text("more log\n")
    restored = a.checkpoint_restore("clean", remove_new=True)
    assert restored.files == [] and restored.kept_new == []
    assert (files.root / "build" / "later.txt").exists()
    assert (files.root / "run.log").read_text() == "more log\n"


def test_a_binary_file_is_listed_not_held_and_left_alone_with_why(files: RunningDaemon):
    a = files.client("agent-a")
    (files.root / "logo.png").write_bytes(b"\x89PNG\x00\x01\x02")
    made = a.checkpoint_create("with-binary")
    assert made.not_text == 1
    assert {f.path: f.sha256 for f in made.files}["logo.png"] == ""
    (files.root / "logo.png").write_bytes(b"\x89PNG\x00\x03")
    (files.root / "notes.md").write_bytes(b"changed\n")
    restored = a.checkpoint_restore("with-binary")
    assert [f.path for f in restored.files] == ["notes.md"]
    assert [x["path"] for x in restored.left_alone] == ["logo.png"]
    assert "binary" in restored.left_alone[0]["why"]
    assert (files.root / "logo.png").read_bytes() == b"\x89PNG\x00\x03"


def test_diff_shows_what_changed_since_without_restoring(files: RunningDaemon):
    a, b = files.client("agent-a"), files.client("agent-b")
    a.checkpoint_create("base")
    b.edit_file("notes.md", "starting", "half way")
    (files.root / "app.py").unlink()
    b.write_file("new.txt", "fresh\n")
    found = a.checkpoint_diff("base")
    by_path = {c.path: c for c in found.changes}
    assert {p: c.change for p, c in by_path.items()} == {
        "notes.md": "modified",
        "app.py": "deleted",
        "new.txt": "created",
    }
    notes = by_path["notes.md"]
    assert (notes.lines_added, notes.lines_removed) == (1, 1)
    assert notes.diff is not None and "-starting" in notes.diff and "+half way" in notes.diff
    assert [c["agent"] for c in notes.changed_by] == ["agent-b"]
    assert found.unchanged == 0 and "1 modified" in found.message
    assert (files.root / "notes.md").read_bytes() != NOTES  # nothing restored
    quiet = a.checkpoint_diff("base", paths=["notes.md"], patch=False)
    assert [(c.path, c.diff) for c in quiet.changes] == [("notes.md", None)]


def test_a_second_checkpoint_reads_and_stores_only_what_changed(files: RunningDaemon):
    a = files.client("agent-a")
    for i in range(200):
        (files.root / f"f{i:03}.txt").write_text(f"file {i}\n" * 20)
    first = a.checkpoint_create("first")
    # 202 files, and again those the watcher reports changed while the tree was taken
    # (on a busy machine the 200 writes' events can arrive during it): re-read, not trusted
    assert first.read_files >= 202 and first.stored_bytes > 0
    # the stat cache trusts no file changed within 2 s of its hashing (racily clean)
    old = time.time() - 10
    for path in files.root.glob("*"):
        if path.is_file():
            os.utime(path, (old, old))
    a.checkpoint_create("warm")  # hashes them once more, now with old mtimes
    (files.root / "f007.txt").write_text("changed\n")
    grown = stored_bytes(files.root)
    second = a.checkpoint_create("second")
    assert second.read_files == 1 and second.stored_bytes == len("changed\n")
    assert second.file_count == 202
    assert stored_bytes(files.root) - grown < 64 * 1024  # one small chunk, one event


def stored_bytes(root: Path) -> int:
    """Bytes the journal's rows hold (events and blobs): what a checkpoint adds, which the
    file's size tells only roughly (WAL frames are whole pages, more per commit when a
    busy machine groups fewer writes into one)."""
    uri = f"file:{root / '.editjournal' / 'journal.db'}?mode=ro"
    with contextlib.closing(sqlite3.connect(uri, uri=True)) as db:
        events = db.execute("SELECT total(length(body)) FROM events").fetchone()[0]
        blobs = db.execute("SELECT total(length(data)) FROM blobs").fetchone()[0]
    return int(events + blobs)


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
    assert restored.kept_new == ["src/new.py"] and restored.unchanged_count == 0
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
    assert removed.unchanged == ["app.py", "notes.md"]


def test_named_paths_checkpoint_and_a_file_that_did_not_exist(files: RunningDaemon):
    a = files.client("agent-a")
    cp = a.checkpoint_create("two-files", paths=["notes.md", "later.txt"])
    assert cp.scope == ["notes.md", "later.txt"]
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


def test_a_directory_checkpoint_covers_what_is_below_it(files: RunningDaemon):
    a = files.client("agent-a")
    (files.root / "src" / "pkg").mkdir(parents=True)
    (files.root / "src" / "pkg" / "mod.py").write_text("x = 1\n")
    cp = a.checkpoint_create("src-only", paths=["src"])
    assert [f.path for f in cp.files] == ["src/pkg/mod.py"] and cp.scope == ["src"]
    a.edit_file("src/pkg/mod.py", "x = 1", "x = 2")
    a.write_file("src/extra.py", "y = 1\n")
    a.write_file("notes.md", "outside the scope\n")
    restored = a.checkpoint_restore("src-only", remove_new=True)
    assert sorted((f.path, f.action) for f in restored.files) == [
        ("src/extra.py", "removed"),
        ("src/pkg/mod.py", "restored"),
    ]
    assert (files.root / "notes.md").read_text() == "outside the scope\n"


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


def test_the_cli_checkpoint_group(files: RunningDaemon):
    done = cli(files.root, "checkpoint", "create", "grouped")
    assert done.returncode == 0, done.stderr
    assert "Checkpoint 'grouped'" in done.stdout and "2 files" in done.stdout
    (files.root / "notes.md").write_bytes(b"# Notes\n\n## State\nmoved on\n")
    done = cli(files.root, "checkpoint", "diff", "grouped")
    assert done.returncode == 0, done.stderr
    assert "M notes.md" in done.stdout and "+moved on" in done.stdout
    done = cli(files.root, "checkpoint", "restore", "grouped")
    assert done.returncode == 0, done.stderr
    assert (files.root / "notes.md").read_bytes() == NOTES
    done = cli(files.root, "checkpoint", "list")
    assert "grouped" in done.stdout and "2 files" in done.stdout


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
    assert "cli-point  by cli-test" in done.stdout and "2 files" in done.stdout
    (files.root / "notes.md").write_bytes(b"scribbled\n")
    done = cli(files.root, "checkpoint-restore", "--id-or-name", "cli-point")
    assert done.returncode == 0, done.stderr
    assert "Restored checkpoint 'cli-point'" in done.stdout
    assert "restored notes.md" in done.stdout and "an outside writer" in done.stdout
    assert (files.root / "notes.md").read_bytes() == NOTES
