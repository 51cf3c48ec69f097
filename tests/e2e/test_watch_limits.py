"""The kernel's inotify limits, hit for real: a full event queue, a workspace with
more directories than watches left, no watch at all. The daemon must keep
serving, say so in `status`, and still record every outside change (by
rescanning on a timer) without anyone touching the files through it.

The limits are system-wide sysctls, so each test lowers one only while it
needs it and restores the machine's own value afterwards; they skip where
/proc/sys is not writable (not root).
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from editjournal.client import Client
from tests.conftest import RunningDaemon, start, wait_until
from tests.e2e.test_outside import changes, outside

INOTIFY = Path("/proc/sys/fs/inotify")
FAST_POLL = ("--poll-interval", "0.2")


@contextmanager
def lowered(knob: str, value: int) -> Iterator[None]:
    """Hold an inotify limit at `value`, then put the machine's own value back."""
    path = INOTIFY / knob
    old = path.read_text()
    try:
        path.write_text(f"{value}\n")
    except OSError as e:
        pytest.skip(f"cannot change {path} here ({e.strerror}); run as root")
    try:
        yield
    finally:
        path.write_text(old)


def watches_in_use() -> int:
    """Inotify watches this user holds across all its processes (what the limit counts)."""
    total = 0
    for fdinfo in Path("/proc").glob("[0-9]*/fdinfo/*"):
        try:
            if fdinfo.parent.parent.stat().st_uid != os.getuid():
                continue
            total += sum(line.startswith("inotify ") for line in fdinfo.read_text().splitlines())
        except OSError:
            continue  # the process or descriptor went away meanwhile
    return total


def start_with_watches_left(workspace: Path, left: int, *extra: str) -> RunningDaemon:
    """Start a daemon that may add only `left` more watches; the limit is restored once
    it serves (the daemon's next retry would then succeed: `--watch-retry` is long)."""
    with lowered("max_user_watches", watches_in_use() + left):
        return start(workspace, *extra)


def make_dirs(workspace: Path, count: int) -> list[Path]:
    dirs = [workspace / f"dir{n}" for n in range(count)]
    for d in dirs:
        d.mkdir()
    return dirs


def watcher(client: Client) -> dict:
    return client.status().watcher


def test_an_overflowing_event_queue_triggers_a_rescan_and_loses_nothing(workspace: Path):
    with lowered("max_queued_events", 64):
        running = start(workspace)
    try:
        client = running.client()
        running.proc.send_signal(signal.SIGSTOP)  # stall the daemon so the kernel queue fills
        try:
            for n in range(400):
                (workspace / f"many-{n}.txt").write_text(f"file {n}\n")
        finally:
            running.proc.send_signal(signal.SIGCONT)
        wait_until(lambda: watcher(client)["rescans"] >= 1, 30, "a rescan")
        wait_until(lambda: len({e.path for e in outside(client)}) >= 400, 30, "every file")
        assert watcher(client)["overflows"] >= 1
    finally:
        running.stop()


def test_a_workspace_that_cannot_be_watched_at_all_is_served_and_polled(workspace: Path):
    make_dirs(workspace, 5)
    (workspace / "f.txt").write_text("one\n")
    (workspace / "dir1" / "already-there.txt").write_text("old\n")
    running = start_with_watches_left(workspace, 0, *FAST_POLL)
    try:
        client = running.client()
        health = watcher(client)
        assert health["state"] == "failed"
        assert "max_user_watches" in health["error"] and health["poll_interval_s"] >= 0.2
        client.read_file("f.txt")
        (workspace / "f.txt").write_text("two\n")
        (workspace / "dir3" / "new.txt").write_text("new\n")
        # nobody touches the files through the daemon: the timed rescan finds both
        [modified] = wait_until(lambda: changes(client, "f.txt", "modified"), 20, "f.txt")
        assert running.journal().blob(modified.body["new_sha256"]) == b"two\n"
        wait_until(lambda: changes(client, "dir3/new.txt", "created"), 20, "dir3/new.txt")
        wait_until(lambda: watcher(client)["rescans"] >= 2, 20, "a second rescan")
        assert watcher(client)["state"] == "failed"
        # a rescan compares with what was there at start: an old file is not "created"
        assert not outside(client, "dir1/already-there.txt")
    finally:
        running.stop()


def test_directories_the_kernel_will_not_watch_degrade_and_are_polled(workspace: Path):
    dirs = make_dirs(workspace, 5)
    running = start_with_watches_left(workspace, 1, *FAST_POLL)  # the root only
    try:
        client = running.client()
        health = watcher(client)
        assert health["state"] == "degraded", health
        assert health["unwatched_dirs"] == 5
        assert sorted(health["unwatched_examples"]) == [d.name for d in dirs]
        assert "5 directories are not watched" in health["error"]
        for d in dirs:
            (d / "inside.txt").write_text(d.name)
        for d in dirs:
            wait_until(lambda d=d: changes(client, f"{d.name}/inside.txt", "created"), 20, d.name)
    finally:
        running.stop()


def test_a_directory_created_after_the_limit_ran_out_degrades_the_watcher(workspace: Path):
    make_dirs(workspace, 2)
    # exactly enough: the root, its 2 directories and the daemon's own .editjournal
    with lowered("max_user_watches", watches_in_use() + 4):
        running = start(workspace, *FAST_POLL)
        try:
            client = running.client()
            assert watcher(client)["state"] == "running"
            (workspace / "late").mkdir()
            (workspace / "late" / "file.txt").write_text("late\n")
            wait_until(lambda: watcher(client)["state"] == "degraded", 20, "degraded")
            assert watcher(client)["unwatched_examples"] == ["late"]
            (workspace / "late" / "second.txt").write_text("second\n")
            wait_until(lambda: changes(client, "late/second.txt", "created"), 20, "polled")
        finally:
            running.stop()


def test_watching_resumes_once_the_limit_allows_it(workspace: Path):
    make_dirs(workspace, 3)
    running = start_with_watches_left(workspace, 0, "--watch-retry", "0.5")
    try:
        client = running.client()
        # the limit is back to the machine's own value: the next retry watches everything
        wait_until(lambda: watcher(client)["state"] == "running", 20, "watching to resume")
        health = watcher(client)
        assert health["error"] is None and health["poll_interval_s"] is None
        assert health["unwatched_dirs"] == 0
        (workspace / "dir1" / "after.txt").write_text("after\n")
        wait_until(lambda: changes(client, "dir1/after.txt", "created"), 20, "the watcher")
    finally:
        running.stop()
