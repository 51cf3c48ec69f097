"""Outside changes: a real watchdog observer, real files, a real daemon.

Each test waits on the journal with a bounded poll. To know the watcher has
handled everything up to a point, a test writes a *sentinel* file afterwards
and waits for its event: inotify delivers in order, and the debouncer flushes
the earlier paths no later than the sentinel.
"""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

import pytest

from editjournal.client import Client
from editjournal.daemon.model.state import fold
from tests.conftest import RunningDaemon, start, wait_until
from tests.e2e.edit_support import anchors_of
from tests.e2e.watch_support import not_sentinels, outside, settle


def changes(client: Client, path: str, change: str) -> list:
    return [e for e in outside(client, path) if e.body["change"] == change]


def wait_for(client: Client, path: str, change: str) -> list:
    return wait_until(lambda: changes(client, path, change), 20, f"{path} {change}")


def test_modification_of_a_known_file_is_recorded_once_with_its_content(
    daemon: RunningDaemon, client: Client
):
    target = daemon.root / "known.py"
    target.write_text("alpha = 1\n")
    client.read_file("known.py")
    target.write_text("alpha = 2\n")
    [event] = wait_for(client, "known.py", "modified")
    assert event.agent is None
    assert event.body["new_sha256"] == hashlib.sha256(b"alpha = 2\n").hexdigest()
    assert daemon.journal().blob(event.body["new_sha256"]) == b"alpha = 2\n"
    settle(client, daemon.root)
    assert len(changes(client, "known.py", "modified")) == 1


def test_creation_of_an_unknown_file_is_a_lightweight_event(daemon: RunningDaemon, client: Client):
    (daemon.root / "fresh.bin").write_bytes(b"\x00\x01binary")
    [event] = wait_for(client, "fresh.bin", "created")
    body = event.body
    assert body["change"] == "created" and body["size"] == 8
    assert body["new_sha256"] == hashlib.sha256(b"\x00\x01binary").hexdigest()
    assert body["content_stored"] is False
    assert daemon.journal().blob(body["new_sha256"]) is None  # no content for unknown files


def test_deletion_is_recorded_once(daemon: RunningDaemon, client: Client):
    target = daemon.root / "doomed.txt"
    target.write_text("bye\n")
    client.read_file("doomed.txt")
    target.unlink()
    wait_for(client, "doomed.txt", "deleted")
    settle(client, daemon.root)
    assert len(changes(client, "doomed.txt", "deleted")) == 1


def test_move_is_recorded_and_the_new_name_keeps_its_history(daemon: RunningDaemon, client: Client):
    for attempt in range(6):
        old, new = f"old{attempt}.py", f"new{attempt}.py"
        (daemon.root / old).write_text("value = 1\n")
        client.read_file(old)
        os.rename(daemon.root / old, daemon.root / new)
        wait_until(lambda old=old: outside(client, old), 20, f"{old}'s rename journaled")
        if changes(client, old, "moved"):
            break
        # a starved watcher may get the rename's two halves unpaired (watchdog pairs them
        # within its delay): a deletion and a creation, nothing wrong journaled; again
    else:
        pytest.fail("the watcher never journaled the rename as a move")
    [moved] = changes(client, old, "moved")
    assert moved.body["moved_to"] == new
    [created] = wait_for(client, new, "created")
    assert created.body["content_stored"] is True  # tracked under its new name too
    assert daemon.journal().blob(created.body["new_sha256"]) == b"value = 1\n"


def test_files_there_before_the_daemon_are_modified_deleted_or_moved_not_created(
    tmp_path: Path,
):
    for attempt in range(4):
        if _there_before(tmp_path / f"ws{attempt}"):
            return
        # a starved watcher got the rename's two halves unpaired (see the move test above)
    pytest.fail("the watcher never journaled the rename as a move")


def _there_before(workspace: Path) -> bool:
    """False when the rename was journaled as a deletion and a creation."""
    workspace.mkdir()
    for name in ("edited", "removed", "renamed", "untouched"):
        (workspace / f"{name}.txt").write_text(f"{name} before\n")
    running = start(workspace)
    try:
        client = running.client()
        (workspace / "edited.txt").write_text("edited after\n")
        (workspace / "removed.txt").unlink()
        (workspace / "renamed.txt").rename(workspace / "renamed-now.txt")
        [edited] = wait_for(client, "edited.txt", "modified")
        assert edited.body["old_sha256"] is None  # it was there, but never known
        wait_for(client, "removed.txt", "deleted")
        wait_until(lambda: outside(client, "renamed.txt"), 20, "renamed.txt journaled")
        if not changes(client, "renamed.txt", "moved"):
            return False
        [moved] = changes(client, "renamed.txt", "moved")
        assert moved.body["moved_to"] == "renamed-now.txt"
        settle(client, workspace)
        recorded = {(e.path, e.body["change"]) for e in outside(client)}
        assert {p for p, _ in recorded} == {
            "edited.txt",
            "removed.txt",
            "renamed.txt",
            "renamed-now.txt",
            *(p for p, _ in recorded if p.startswith("sentinel")),
        }
        assert ("edited.txt", "created") not in recorded
        return True
    finally:
        running.stop()


def test_atomic_save_is_one_modification_of_the_original(daemon: RunningDaemon, client: Client):
    target = daemon.root / "doc.md"
    target.write_text("# Title\n")
    client.read_file("doc.md")
    before = len(outside(client))
    temp = daemon.root / ".doc.md.swp"
    temp.write_text("# Title\n\nMore.\n")
    os.replace(temp, target)  # how editors save
    settle(client, daemon.root)
    found = [(e.path, e.body["change"]) for e in not_sentinels(outside(client)[before:])]
    assert found == [("doc.md", "modified")]


def test_a_slowly_written_temp_file_renamed_over_the_original_leaves_no_trace(
    daemon: RunningDaemon, client: Client
):
    """Like `sed -i` on a big file: the temp file is written for much longer than the
    settle time; it is not looked at until closed, and by then it has been renamed."""
    target = daemon.root / "big.txt"
    target.write_text("old\n")
    client.read_file("big.txt")
    before = len(outside(client))
    temp = daemon.root / "sedAbc123"
    with open(temp, "w") as out:
        for chunk in range(20):  # a writer taking ~200 ms, ten times the settle time
            out.write(f"chunk {chunk}\n" * 1000)
            out.flush()
            time.sleep(0.01)
    os.replace(temp, target)
    settle(client, daemon.root)
    found = [(e.path, e.body["change"]) for e in not_sentinels(outside(client)[before:])]
    assert found == [("big.txt", "modified")]


@pytest.mark.parametrize("delay_s", [0.1, 0.3])
def test_an_atomic_save_renamed_well_after_its_temp_file_was_closed_is_one_modification(
    daemon: RunningDaemon, client: Client, delay_s: float
):
    """Like Python's `atomicwrites` or an editor that fsyncs: the temp file is closed,
    then renamed over the original only later — far past the 20 ms settle time."""
    target = daemon.root / "late.md"
    target.write_text("# Title\n")
    client.read_file("late.md")
    before = len(outside(client))
    temp = daemon.root / ".late.md.tmp8f3a"
    temp.write_text("# Title\n\nMore.\n")
    time.sleep(delay_s)  # the writer's own pause (an fsync), not a wait for the daemon
    os.replace(temp, target)
    [event] = wait_for(client, "late.md", "modified")
    assert event.body["new_sha256"] == hashlib.sha256(b"# Title\n\nMore.\n").hexdigest()
    settle(client, daemon.root)
    found = [(e.path, e.body["change"]) for e in not_sentinels(outside(client)[before:])]
    assert found == [("late.md", "modified")]


def test_a_file_whose_name_is_not_utf8_does_not_stop_watching(workspace: Path):
    running = start(workspace)
    try:
        client = running.client()
        with open(os.path.join(os.fsencode(workspace), b"bad\xff.txt"), "wb") as out:
            out.write(b"x\n")
        (workspace / "later.txt").write_text("later\n")
        wait_for(client, "later.txt", "created")
        assert client.status().watcher["state"] == "running"
        assert not [e for e in outside(client) if "bad" in e.path]
        log_text = (workspace / ".editjournal" / "daemon.log").read_text()
        assert "not UTF-8" in log_text
    finally:
        running.stop()


def test_the_daemons_own_edits_never_look_like_outside_changes(
    daemon: RunningDaemon, client: Client
):
    target = daemon.root / "busy.py"
    target.write_text("".join(f"line_{n} = {n}\n" for n in range(50)))
    rows = client.read_file("busy.py", hashes=True).lines
    for n in range(500):
        row = rows[n % 50]
        result = client.edit(
            "busy.py",
            [{"op": "replace_line", "hash": row.hash, "content": f"line_{n % 50} = {n}  # edit"}],
        )
        rows[n % 50] = next(r for r in result.changed_lines)
    settle(client, daemon.root)
    assert not_sentinels(outside(client)) == []  # not even the file's own creation


def test_a_burst_of_5000_writes_loses_no_final_content(daemon: RunningDaemon, client: Client):
    paths = [f"burst/f{i}.txt" for i in range(50)]
    (daemon.root / "burst").mkdir()
    for rel in paths:
        (daemon.root / rel).write_text("start\n")
        client.read_file(rel)
    for n in range(5000):
        (daemon.root / paths[n % 50]).write_text(f"write {n}\n")
    expected = {rel: hashlib.sha256((daemon.root / rel).read_bytes()).hexdigest() for rel in paths}

    def all_recorded() -> bool:
        files = fold(daemon.journal().records()).files
        return all(files[rel].sha256 == sha for rel, sha in expected.items())

    wait_until(all_recorded, 60, "every final content to be journaled")
    for rel, sha in expected.items():
        assert daemon.journal().blob(sha) == (daemon.root / rel).read_bytes()


def test_a_change_while_the_daemon_was_down_is_found_at_start_up(workspace: Path):
    (workspace / "kept.txt").write_text("one\n")
    (workspace / "gone.txt").write_text("two\n")
    first = start(workspace)
    reader = first.client()
    reader.read_many_files(["kept.txt", "gone.txt"])
    first.stop()
    (workspace / "kept.txt").write_text("one, edited offline\n")
    (workspace / "gone.txt").unlink()
    second = start(workspace)
    try:
        client = second.client()
        changes = {(e.path, e.body["change"]) for e in outside(client)}
        assert {("kept.txt", "modified"), ("gone.txt", "deleted")} <= changes
        started = next(e.seq for e in client.log(kind="daemon_started").events[-1:])
        assert all(e.seq > started for e in outside(client) if e.body["change"] != "created")
    finally:
        second.stop()


def test_ignored_paths_produce_nothing(workspace: Path):
    (workspace / ".gitignore").write_text("*.log\nbuild/\n")
    (workspace / "sub").mkdir()
    (workspace / "sub" / ".gitignore").write_text("secret.txt\n")
    running = start(workspace, "--ignore", "*.tmp")
    try:
        client = running.client()
        (workspace / ".git").mkdir()
        (workspace / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
        (workspace / "debug.log").write_text("noise\n")
        (workspace / "build").mkdir()
        (workspace / "build" / "out.o").write_bytes(b"\x7fELF")
        (workspace / "sub" / "secret.txt").write_text("hidden\n")
        (workspace / "scratch.tmp").write_text("temp\n")
        (workspace / "sub" / "visible.txt").write_text("seen\n")
        settle(client, workspace)
        paths = {e.path for e in outside(client) if not e.path.startswith("sentinel")}
        assert paths == {"sub/visible.txt"}
        assert client.status().watcher["ignore"] == ["*.tmp"]
    finally:
        running.stop()


def test_status_reports_the_watchers_health(daemon: RunningDaemon, client: Client):
    settle(client, daemon.root)
    watcher = client.status().watcher
    assert watcher["state"] == "running"
    assert watcher["paths_checked"] >= 1 and watcher["outside_changes"] >= 1


def test_outside_changes_make_baseline_mixed_and_are_conflicts(
    daemon: RunningDaemon, client: Client
):
    target = daemon.root / "m.py"
    target.write_text("first = 1\nsecond = 2\nthird = 3\n")
    seen = anchors_of(client, "m.py")
    target.write_text("first = 1\nsecond = 22\nthird = 3\n")  # a person edits line 2
    wait_for(client, "m.py", "modified")
    result = client.edit("m.py", [{"op": "replace_line", "hash": seen[3], "content": "third = 33"}])
    assert result.details.baseline_continuity == "mixed"
    assert [(c["agent"], c["kind"]) for c in result.rebased_over] == [(None, "outside_change")]
