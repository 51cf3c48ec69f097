"""The kernel's inotify limits, hit for real: a full event queue, a workspace with
more directories than watches left, no watch at all. The daemon must keep
serving, say so in `status`, and still record every outside change (by
rescanning on a timer) without anyone touching the files through it.

No test changes a machine-wide setting: other processes share them, and a test
that lowers one races with every watch they add (it failed that way on a busy
machine). Since Linux 5.11 the watch limit is counted per user namespace, so a
daemon that must run short of watches is started in a user namespace of its
own (`unshare`), whose limit starts with nothing counted against it: "N
watches" there is exact. The event queue's size (`max_queued_events`) is
machine-wide and only read: the daemon is stopped while more events than it
holds are made.

The tests that set the namespace's watch limit run in `make stress` only
(`in_a_namespace_of_its_own`): `make test` writes nothing under /proc/sys, not even
a namespace's own knob. `make test` keeps the full queue's overflow, which only
reads the machine's setting.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from editjournal.client import Client
from editjournal.client.library.connection import live_endpoint
from tests.conftest import RunningDaemon, start, wait_until
from tests.e2e.test_outside import changes, outside

NS_WATCH_LIMIT = "/proc/sys/user/max_inotify_watches"  # the calling user namespace's own
QUEUED_EVENTS = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
HUGE_QUEUE = 65_536  # above this, overflowing the queue takes too long for `make test`
MACHINE_WIDE = [
    *(Path("/proc/sys/fs/inotify") / knob for knob in ("max_user_watches", "max_queued_events")),
    *(Path("/proc/sys/user") / knob for knob in ("max_inotify_watches", "max_inotify_instances")),
]
FAST_POLL = ("--poll-interval", "0.2")


@pytest.fixture(autouse=True)
def _machine_settings_untouched() -> Iterator[None]:
    """Each test leaves every machine-wide inotify setting as it found it."""
    before = {path: path.read_text() for path in MACHINE_WIDE}
    yield
    assert {path: path.read_text() for path in MACHINE_WIDE} == before


def tool(name: str) -> str:
    """A util-linux tool these tests cannot do without: fail, never skip, without it."""
    found = shutil.which(name)
    if found is None:
        pytest.fail(
            f"`{name}` (util-linux) is not installed: these tests hold the inotify watch "
            "limit in a user namespace of their own rather than change the machine's"
        )
    return found


def start_with_watches(workspace: Path, limit: int, *extra: str) -> RunningDaemon:
    """A daemon in a user namespace of its own whose watch limit is `limit`. The
    wrapper execs the daemon, so the pid we hold is the daemon's. It writes the limit
    only once it has checked that it is in a new user namespace: the knob of the
    test's own namespace (the machine's, in CI) is never written."""
    ours = os.readlink("/proc/self/ns/user")
    guard = f'[ "$(readlink /proc/self/ns/user)" != "{ours}" ] || exit 97'
    script = f'{guard} && echo {limit} > {NS_WATCH_LIMIT} && exec "$@"'
    prefix = [tool("unshare"), "--user", "--map-root-user", "sh", "-c", script, "sh"]
    running = start(workspace, *extra, prefix=prefix)
    endpoint = live_endpoint(workspace)
    if endpoint is None or endpoint.pid != running.proc.pid:  # signals and nsenter need it
        running.stop()
        pytest.fail(f"the daemon's pid is not the one started ({endpoint} vs {running.proc.pid})")
    return running


def set_watch_limit(running: RunningDaemon, limit: int) -> None:
    """Change the watch limit of the daemon's own user namespace, from inside it (never
    when the daemon shares the test's namespace: that knob is the machine's)."""
    if os.readlink(f"/proc/{running.proc.pid}/ns/user") == os.readlink("/proc/self/ns/user"):
        pytest.fail("the daemon is not in a user namespace of its own")
    script = f"echo {limit} > {NS_WATCH_LIMIT}"
    command = [tool("nsenter"), "--user", "--target", str(running.proc.pid), "sh", "-c", script]
    done = subprocess.run(command, capture_output=True, text=True, timeout=10, check=False)
    if done.returncode != 0:
        pytest.fail(f"cannot set the daemon's namespace watch limit: {done.stderr.strip()}")


def watches_held(pid: int) -> int:
    """The inotify watches process `pid` holds, from the kernel's own list."""
    fdinfo = Path(f"/proc/{pid}/fdinfo")
    lines = (line for fd in fdinfo.iterdir() for line in _read_lines(fd))
    return sum(line.startswith("inotify ") for line in lines)


def _read_lines(path: Path) -> list[str]:
    try:
        return path.read_text().splitlines()
    except OSError:
        return []  # closed meanwhile


def stopped(pid: int) -> bool:
    """Every thread of `pid` is stopped: none can read the inotify queue any more."""
    return all(_state(task) in ("T", None) for task in Path(f"/proc/{pid}/task").iterdir())


def _state(task: Path) -> str | None:
    """A thread's state letter from its `stat` (after the parenthesised name); None if gone."""
    lines = _read_lines(task / "stat")
    return lines[0].rpartition(")")[2].split()[0] if lines else None


def make_dirs(workspace: Path, count: int) -> list[Path]:
    dirs = [workspace / f"dir{n}" for n in range(count)]
    for d in dirs:
        d.mkdir()
    return dirs


def watcher(client: Client) -> dict[str, Any]:
    return client.status().watcher


def in_a_namespace_of_its_own(test: Callable[..., None]) -> Callable[..., None]:
    """A test that sets an inotify limit (its daemon's user namespace's, never the
    machine's) runs in `make stress` only: `make test` shares CI's machine with other
    work and writes nothing under /proc/sys at all."""
    return pytest.mark.stress(reason="writes a /proc/sys knob of its own namespace")(test)


def heavy_if_the_queue_is_huge(test: Callable[..., None]) -> Callable[..., None]:
    """Overflowing the queue means making more events than it holds; where the machine
    allows very many, that is a stress test (the queue is machine-wide: never lowered)."""
    if QUEUED_EVENTS <= HUGE_QUEUE:
        return test
    reason = f"max_queued_events is {QUEUED_EVENTS}: overflowing it is slow"
    return pytest.mark.stress(reason=reason)(test)


@pytest.mark.slow
@heavy_if_the_queue_is_huge
def test_an_overflowing_event_queue_triggers_a_rescan_and_loses_nothing(workspace: Path):
    # each new file queues at least a create and a close-after-write: 1.5 queues' worth
    names = {f"many-{n}.txt" for n in range(QUEUED_EVENTS * 3 // 4)}
    running = start(workspace)
    try:
        client = running.client()
        running.proc.send_signal(signal.SIGSTOP)  # stall the daemon so the kernel queue fills
        try:
            wait_until(lambda: stopped(running.proc.pid), 10, "the daemon to stop")
            for name in names:
                (workspace / name).write_text(f"{name}\n")
        finally:
            running.proc.send_signal(signal.SIGCONT)
        wait_until(lambda: watcher(client)["overflows"] >= 1, 60, "the overflow")
        wait_until(lambda: watcher(client)["outside_changes"] >= len(names), 120, "every file")
        assert watcher(client)["rescans"] >= 1
        created = client.log(kind="outside_change", limit=100_000).events
        assert names <= {e.path for e in created if e.body["change"] == "created"}
    finally:
        running.stop()


@in_a_namespace_of_its_own
def test_a_workspace_that_cannot_be_watched_at_all_is_served_and_polled(workspace: Path):
    make_dirs(workspace, 5)
    (workspace / "f.txt").write_text("one\n")
    (workspace / "dir1" / "already-there.txt").write_text("old\n")
    running = start_with_watches(workspace, 0, *FAST_POLL)
    try:
        client = running.client()
        health = watcher(client)
        assert health["state"] == "failed", health
        # the limit that applies is named: the namespace's own, not the machine's
        assert "user.max_inotify_watches = 0" in health["error"], health["error"]
        assert health["poll_interval_s"] >= 0.2
        assert watches_held(running.proc.pid) == 0
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


@in_a_namespace_of_its_own
def test_directories_the_kernel_will_not_watch_degrade_and_are_polled(workspace: Path):
    dirs = make_dirs(workspace, 5)
    running = start_with_watches(workspace, 1, *FAST_POLL)  # the root only
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


@in_a_namespace_of_its_own
def test_a_directory_created_after_the_limit_ran_out_degrades_the_watcher(workspace: Path):
    make_dirs(workspace, 2)
    # exactly enough: the root and its 2 directories (.editjournal is ignored: no watch)
    running = start_with_watches(workspace, 3, *FAST_POLL)
    try:
        client = running.client()
        assert watcher(client)["state"] == "running", watcher(client)
        assert watches_held(running.proc.pid) == 3
        (workspace / "late").mkdir()
        (workspace / "late" / "file.txt").write_text("late\n")
        wait_until(lambda: watcher(client)["state"] == "degraded", 20, "degraded")
        assert watcher(client)["unwatched_examples"] == ["late"]
        (workspace / "late" / "second.txt").write_text("second\n")
        wait_until(lambda: changes(client, "late/second.txt", "created"), 20, "polled")
    finally:
        running.stop()


@in_a_namespace_of_its_own
def test_watching_resumes_once_the_limit_allows_it(workspace: Path):
    make_dirs(workspace, 3)
    running = start_with_watches(workspace, 0, "--watch-retry", "0.5")
    try:
        client = running.client()
        assert watcher(client)["state"] == "failed"
        set_watch_limit(running, 100)  # as a person raising the limit would
        wait_until(lambda: watcher(client)["state"] == "running", 20, "watching to resume")
        health = watcher(client)
        assert health["error"] is None and health["poll_interval_s"] is None
        assert health["unwatched_dirs"] == 0
        (workspace / "dir1" / "after.txt").write_text("after\n")
        wait_until(lambda: changes(client, "dir1/after.txt", "created"), 20, "the watcher")
    finally:
        running.stop()
