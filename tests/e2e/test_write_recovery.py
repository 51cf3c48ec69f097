"""Crash honesty: a kill -9 between a write's commit and its rename is finished at the
next start (no phantom `edit_applied`, no fake `outside_change`), leftover temp files
are removed, and a full disk is `disk_full` with nothing half-written.

The crash point is reached deterministically with the daemon's test-only option
`--kill-after-commit` (it SIGKILLs itself right after the first commit of a batch
that writes). The full disk is a real one: a 64 KiB tmpfs mounted over one
directory of the workspace in a user and mount namespace of the daemon's own
(`unshare`, no root privileges), so ENOSPC comes from the kernel.
"""

from __future__ import annotations

import json
import shutil
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from editjournal.client import RequestError
from editjournal.daemon.files.tempfiles import TEMP_PREFIX
from editjournal.daemon.model.state import fold
from editjournal.daemon.store.journal import Journal
from tests.conftest import RunningDaemon, start, wait_until


def temp_files(root: Path) -> list[Path]:
    return [p for p in root.rglob(f"{TEMP_PREFIX}*") if ".editjournal" not in p.parts]


def since_last_start(journal: Journal, kind: str) -> list[str | None]:
    """Paths of `kind` events recorded after the newest `daemon_started`."""
    [started] = journal.records(kind="daemon_started", newest_first=True, limit=1)
    return [r.event.path for r in journal.records(after_seq=started.seq, kind=kind)]


def killed_after_commit(workspace: Path, write: str) -> Path:
    """A daemon killed by its own hook between the commit of `write`'s batch and the
    rename; returns the temp file it left (proof that the crash point was reached)."""
    running = start(workspace, "--kill-after-commit")
    client = running.client(timeout=5)
    client.read_file("a.txt")
    with pytest.raises(RequestError):  # no reply: the daemon died before answering
        client.append_to_file("a.txt", write)
    assert running.proc.wait(timeout=10) == -signal.SIGKILL
    running.stop()
    [temp] = temp_files(workspace)
    return temp


def test_a_kill_between_commit_and_rename_is_rolled_forward(workspace: Path):
    (workspace / "a.txt").write_text("one\n")
    temp = killed_after_commit(workspace, "two\n")
    assert (workspace / "a.txt").read_text() == "one\n"  # the rename never happened
    assert temp.read_text() == "one\ntwo\n"  # but the temp file is there

    running = start(workspace)
    try:
        client = running.client()
        assert (workspace / "a.txt").read_text() == "one\ntwo\n"
        assert temp_files(workspace) == []
        recovered = client.status().group_commit["recovered"]
        assert recovered["rolled_forward"] == ["a.txt"] and recovered["unfinished"] == []
        assert client.read_file("a.txt").content == "one\ntwo\n"
        journal = running.journal()
        assert since_last_start(journal, "outside_change") == []  # nothing fake
        [applied] = journal.records(kind="edit_applied")  # the one edit, never a phantom
        assert journal.blob(applied.event.after_sha256) == b"one\ntwo\n"
        assert journal.verify().ok
    finally:
        running.stop()


def test_a_change_made_while_down_is_not_clobbered_by_the_roll_forward(workspace: Path):
    (workspace / "a.txt").write_text("one\n")
    killed_after_commit(workspace, "two\n")
    (workspace / "a.txt").write_text("someone else\n")

    running = start(workspace)
    try:
        client = running.client()
        assert (workspace / "a.txt").read_text() == "someone else\n"
        assert client.status().group_commit["recovered"]["unfinished"] == ["a.txt"]
        wait_until(
            lambda: since_last_start(running.journal(), "outside_change") == ["a.txt"],
            what="the change made while down to be journaled",
        )
        assert temp_files(workspace) == []
    finally:
        running.stop()


def test_a_kill_right_after_the_swap_keeps_the_outside_change_it_displaced(workspace: Path):
    """Killed after a write was exchanged into place but before it judged what it
    displaced (which lies under the temp file's name): an outside change in it is kept
    beside the file, never removed with the temp files."""
    (workspace / "a.txt").write_text("one\n")
    temp = killed_after_commit(workspace, "two\n")
    (workspace / "a.txt").write_text(temp.read_text())  # the exchange, as it would have been
    temp.write_text("one\nsaved by an editor\n")  # what it displaced: an outside change

    running = start(workspace)
    try:
        client = running.client()
        assert (workspace / "a.txt").read_text() == "one\ntwo\n"
        assert client.status().group_commit["recovered"]["already_done"] == 1
        [kept] = workspace.glob("a.txt.editjournal-displaced-*")
        assert kept.read_text() == "one\nsaved by an editor\n"
        assert temp_files(workspace) == []
    finally:
        running.stop()


def test_temp_files_left_by_a_crash_are_removed_at_start(workspace: Path):
    running = start(workspace)
    running.client().write_file("deep/er/b.txt", "b\n")
    leftovers = [workspace / f"{TEMP_PREFIX}x1", workspace / "deep" / "er" / f"{TEMP_PREFIX}x2"]
    for leftover in leftovers:
        leftover.write_text("half")
    (workspace / ".git").mkdir()
    not_ours = workspace / ".git" / f"{TEMP_PREFIX}x3"  # .git/ is never touched
    not_ours.write_text("git's")
    running.stop(signal.SIGKILL)

    running = start(workspace)
    try:
        assert not any(p.exists() for p in leftovers)
        assert not_ours.exists()
        assert running.client().status().group_commit["recovered"]["temps_removed"] == 2
        assert (workspace / "deep" / "er" / "b.txt").read_text() == "b\n"
    finally:
        running.stop()


def tool(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        pytest.fail(f"`{name}` (util-linux) is needed to give the daemon a small disk")
    return found


def start_with_small_disk(workspace: Path) -> RunningDaemon:
    """A daemon whose `small/` is a 64 KiB tmpfs of its own mount namespace: the test
    sees an empty directory there, the daemon a nearly full disk."""
    (workspace / "small").mkdir()
    script = 'mount -t tmpfs -o size=64k tmpfs "$0/small" && shift && exec "$@"'
    prefix = [tool("unshare"), "--user", "--map-root-user", "--mount", "sh", "-c", script]
    return start(workspace, prefix=[*prefix, str(workspace), "sh"])


def test_a_full_disk_is_disk_full_and_nothing_is_half_written(workspace: Path):
    running = start_with_small_disk(workspace)
    try:
        client = running.client()
        client.write_file("small/a.txt", "hello\n")
        with pytest.raises(RequestError) as refused:
            client.write_file("small/a.txt", "x" * 100_000 + "\n")
        assert refused.value.code == "disk_full"
        assert "small/a.txt" in str(refused.value)
        # nothing half-written, nothing recorded, and the daemon goes on serving
        assert client.read_file("small/a.txt").content == "hello\n"
        applied = [r.event.path for r in running.journal().records(kind="edit_applied")]
        assert applied == ["small/a.txt"]
        client.write_file("small/a.txt", "bye\n")
        assert client.read_file("small/a.txt").content == "bye\n"
        listing = subprocess.run(
            [tool("nsenter"), "--user", "--mount", "--target", str(running.proc.pid),
             "ls", "-a", str(workspace / "small")],
            capture_output=True, text=True, timeout=10, check=True,
        ).stdout.split()  # fmt: skip
        assert sorted(listing) == [".", "..", "a.txt"]  # no temp file left behind
    finally:
        running.stop()


KILLS, STORM_CLIENTS, STORM_APPENDS = 6, 8, 300


@pytest.mark.stress
def test_kill_9_storm_loses_no_acknowledged_write_and_leaves_no_phantom(
    workspace: Path, tmp_path: Path
):
    """8 client processes append while the daemon is killed -9 again and again: every
    acknowledged line is on disk, in order; the disk is exactly the journal's fold;
    nobody else wrote, so the journal never records an outside change."""
    running = start(workspace)
    paths = [f"storm/f{i}.txt" for i in range(STORM_CLIENTS)]
    workers = [
        subprocess.Popen(
            [sys.executable, "-m", "tests.e2e.commit_worker", str(workspace), f"agent-{i}",
             path, str(STORM_APPENDS), str(tmp_path / f"report-{i}.json"), "survive"],
            stderr=subprocess.PIPE,
        )
        for i, path in enumerate(paths)
    ]  # fmt: skip
    for kill in range(1, KILLS + 1):
        wait_until(lambda: applied_count(workspace) >= 100 * kill, 120, "edits before a kill")  # noqa: B023
        running.stop(signal.SIGKILL)
        running = start(workspace)
    for worker in workers:
        assert worker.wait(timeout=900) == 0, worker.stderr.read().decode()  # type: ignore[union-attr]
    running.stop()
    reports = [json.loads((tmp_path / f"report-{i}.json").read_text()) for i in range(len(paths))]

    journal = Journal(workspace / ".editjournal" / "journal.db")
    assert journal.verify().ok
    assert [r.event.path for r in journal.records(kind="outside_change")] == []
    state = fold(journal.records())
    acked_seqs = {a["seq"] for r in reports for a in r["acked"]}
    assert acked_seqs <= {r.seq for r in journal.records(kind="edit_applied")}
    for path, report in zip(paths, reports, strict=True):
        on_disk = (workspace / path).read_bytes()
        assert journal.blob(state.files[path].sha256) == on_disk  # disk == journal
        lines = on_disk.decode().splitlines()
        acked = [a["line"] for a in report["acked"]]
        assert [line for line in lines if line in set(acked)] == acked  # all, in order
    assert temp_files(workspace) == []
    assert sum(len(r["acked"]) for r in reports) > STORM_CLIENTS * STORM_APPENDS // 2


def applied_count(workspace: Path) -> int:
    """`edit_applied` events committed so far, read beside the running daemon (WAL)."""
    db = sqlite3.connect(f"file:{workspace / '.editjournal' / 'journal.db'}?mode=ro", uri=True)
    try:
        return int(
            db.execute("SELECT COUNT(*) FROM events WHERE kind = 'edit_applied'").fetchone()[0]
        )
    finally:
        db.close()


def test_a_parent_swapped_for_a_link_to_outside_is_not_rolled_forward_through_it(
    workspace: Path, tmp_path: Path
):
    """While the daemon was down, the target's directory was moved out of the workspace
    and a link to it put in its place: the roll-forward must not follow the link."""
    (workspace / "sub").mkdir()
    (workspace / "sub" / "a.txt").write_text("one\n")
    running = start(workspace, "--kill-after-commit")
    client = running.client(timeout=5)
    client.read_file("sub/a.txt")
    with pytest.raises(RequestError):
        client.append_to_file("sub/a.txt", "two\n")
    assert running.proc.wait(timeout=10) == -signal.SIGKILL
    running.stop()
    outside_dir = tmp_path / "elsewhere"
    (workspace / "sub").rename(outside_dir)  # the temp file goes with it
    (workspace / "sub").symlink_to(outside_dir)
    before = {p.name: p.read_bytes() for p in outside_dir.iterdir()}
    assert before["a.txt"] == b"one\n" and len(before) == 2  # a.txt and the temp file

    running = start(workspace)
    try:
        recovered = running.client().status().group_commit["recovered"]
        assert recovered["unfinished"] == ["sub/a.txt"] and recovered["rolled_forward"] == []
        assert {p.name: p.read_bytes() for p in outside_dir.iterdir()} == before  # untouched
    finally:
        running.stop()


def test_a_request_that_fails_after_staging_its_write_leaves_no_trace(workspace: Path):
    """The request boundary answers the failure, removes the temp file the request
    prepared and drops the events it staged: no temp file waits for an unclean start,
    and no `edit_applied` is committed for a write that never happened."""
    (workspace / "a.txt").write_text("one\n")
    running = start(workspace, "--no-watch", "--fail-after-prepare", "append_to_file")
    try:
        client = running.client()
        with pytest.raises(RequestError) as failed:
            client.append_to_file("a.txt", "two\n")
        assert failed.value.code == "internal_error"
        assert temp_files(workspace) == []
        client.write_file("b.txt", "b\n")  # the daemon serves on, and writes
        assert (workspace / "a.txt").read_text() == "one\n"
        assert temp_files(workspace) == []
        assert [e.path for e in client.log(kind="edit_applied").events] == ["b.txt"]
        live_digest = client.status().state_digest
    finally:
        running.stop()
    journal = Journal(workspace / ".editjournal" / "journal.db")
    try:
        records = list(journal.records())
    finally:
        journal.close()
    assert not [r for r in records if r.kind == "edit_applied" and r.event.path == "a.txt"]
    assert fold(r for r in records if r.kind != "daemon_stopped").digest() == live_digest
