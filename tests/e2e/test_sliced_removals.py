"""Many removals in one request are prepared in its job's slices and land a slice at a
time (issue 40: no request holds the daemon's thread for long).

A patch of many `*** Delete File` operations, or an undo --by of an agent's created
files, plans its files a slice at a time; each removal's checks are made in the slice
that plans it (daemon/landing/earlywrites.py), and after the one commit the removals land
a slice at a time (daemon/landing/writeround.py), the overlay serving each as a tombstone
until it has landed: a read of such a path says there is no file, a write of it lands
after the removal, and a kill -9 in the middle leaves the rest to start-up recovery
(all or nothing). Each test: a real daemon without the watcher, on files put in place
before it started; the big request from its own client in a thread. The longest ping
is a stall guard here, not the 100 ms goal (measured with /tmp/r48/patchturn.py).
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest

from editjournal.client import RequestError
from editjournal.daemon.files.tempfiles import DISPLACED_PREFIX, TEMP_PREFIX
from editjournal.schemas.events import EditApplied
from tests.conftest import RunningDaemon, start
from tests.held import held

FILES = 300  # removals of each request: over the 64 planned and landed at once
LANDED = 600  # removals of the tests that catch the landing half done: a wider window
LONGEST_WAIT_S = 10.0  # a stall guard: a busy machine stretches every slice


def path_of(i: int) -> str:
    return f"d{i // 100:02}/f{i:04}.txt"


def text_of(i: int) -> str:
    return "".join(f"line {j} of {i}\n" for j in range(8))


def envelope(*operations: str) -> str:
    return "*** Begin Patch\n" + "".join(operations) + "*** End Patch\n"


def added(i: int) -> str:
    """An Add File's lines of `text_of(i)`."""
    return "".join(f"+{line}" for line in text_of(i).splitlines(keepends=True))


def removals(count: int, prefix: str = "") -> str:
    return envelope(*(f"*** Delete File: {prefix}{path_of(i)}\n" for i in range(count)))


def put(root: Path, count: int, prefix: str = "") -> list[str]:
    """`count` files under `root` (their paths, in order)."""
    paths = [f"{prefix}{path_of(i)}" for i in range(count)]
    for i, path in enumerate(paths):
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text_of(i))
    return paths


def present(root: Path, paths: list[str]) -> list[str]:
    return [path for path in paths if (root / path).exists()]


def serving(workspace: Path, count: int) -> tuple[RunningDaemon, list[str]]:
    """`count` files in place before the daemon starts (none an outside change)."""
    paths = put(workspace, count)
    return start(workspace, "--no-watch"), paths


@pytest.fixture
def stopped() -> Iterator[list[RunningDaemon]]:
    """The daemons a test started, killed at its end if still running."""
    running: list[RunningDaemon] = []
    yield running
    for daemon in running:
        if daemon.proc.poll() is None:
            daemon.stop(signal.SIGKILL)


def applied(daemon: RunningDaemon, agent: str | None = None) -> list[tuple[int, EditApplied]]:
    """(seq, event) of every edit_applied journaled (of `agent`'s, when named)."""
    journal = daemon.journal()
    try:
        found = journal.records(kind="edit_applied")
        return [
            (r.seq, r.event)
            for r in found
            if isinstance(r.event, EditApplied) and (agent is None or r.agent == agent)
        ]
    finally:
        journal.close()


def caught(predicate: Callable[[], bool], timeout: float = 60.0) -> bool:
    """Poll every millisecond (a landing's slice lasts 50 ms) until `predicate` holds;
    False when it never did in `timeout`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.001)  # a bounded poll: the daemon needs the CPU meanwhile
    return False


def leftovers(root: Path) -> list[str]:
    """The daemon's transient files left anywhere in the workspace."""
    return [
        str(p.relative_to(root))
        for p in root.rglob(".editjournal-*")
        if p.name.startswith((TEMP_PREFIX, DISPLACED_PREFIX))
    ]


def bytes_queued_for(pid: int) -> bool:
    """Whether one of `pid`'s unix sockets has bytes waiting to be read (`ss`'s Recv-Q):
    a request sent to a stopped daemon has reached it."""
    listing = subprocess.run(["ss", "-xpn"], capture_output=True, text=True, check=True)
    owned = (row.split() for row in listing.stdout.splitlines() if f"pid={pid}," in row)
    return any(int(cols[2]) > 0 for cols in owned)


def patching(daemon: RunningDaemon, patch: str) -> tuple[threading.Thread, dict[str, Any]]:
    """`patch` applied by its own client in a thread (the daemon may be killed under it)."""
    client, out = daemon.client("worker", timeout=120), {}

    def run() -> None:
        try:
            out["result"] = client.apply_patch(patch)
        except Exception as e:  # a killed daemon: the test looks at the disk
            out["error"] = e

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, out


def test_a_patch_of_many_removals_is_sliced_and_removes_every_file(
    workspace: Path, stopped: list[RunningDaemon]
) -> None:
    """Parked while planned; every file gone; the reply's files in the patch's order at
    consecutive seqs, one `deleted` edit_applied each, in that order; nothing left over."""
    daemon, paths = serving(workspace, FILES)
    stopped.append(daemon)
    done = held(daemon, lambda c: c.apply_patch(removals(FILES)))
    assert done.parked and done.longest <= LONGEST_WAIT_S
    result = done.result
    assert present(daemon.root, paths) == [] and leftovers(daemon.root) == []
    assert [f.path for f in result.files] == paths
    assert {f.action for f in result.files} == {"deleted"}
    first = result.files[0].version
    assert [f.version for f in result.files] == list(range(first, first + FILES))
    assert result.message.splitlines()[1:] == [f"D {path}" for path in paths]
    events = applied(daemon)
    assert [e.path for _, e in events] == paths and events[0][0] == first
    assert all(e.deleted and e.writer == "apply_patch" for _, e in events)


def test_a_sliced_removal_patch_answers_as_the_inline_path_does(
    workspace: Path, stopped: list[RunningDaemon]
) -> None:
    """The removals of two copies of the files: one patch of 100 (sliced) and two of 50
    (each planned and landed at once) give the same reply and the same events, file for
    file, but for the paths and the seqs."""
    sliced_paths, inline_paths = put(workspace, 100, "a/"), put(workspace, 100, "b/")
    daemon = start(workspace, "--no-watch")
    stopped.append(daemon)
    client = daemon.client("worker", timeout=120)
    sliced = client.apply_patch(removals(100, "a/")).files
    inline = [
        f
        for half in (range(50), range(50, 100))
        for f in client.apply_patch(
            envelope(*(f"*** Delete File: b/{path_of(i)}\n" for i in half))
        ).files
    ]

    def shown(items: list[Any]) -> list[dict[str, Any]]:
        return [{**msgspec.to_builtins(f), "path": None, "version": None} for f in items]

    def journaled(path: str) -> dict[str, Any]:  # but for its path and its operation's
        return {**msgspec.to_builtins(events[path]), "path": None, "operations": None}

    assert shown(sliced) == shown(inline)
    events = {e.path: e for _, e in applied(daemon)}
    assert [journaled(a) for a in sliced_paths] == [journaled(b) for b in inline_paths]
    assert present(daemon.root, [*sliced_paths, *inline_paths]) == []


def test_a_read_and_a_write_of_a_path_still_being_removed(
    workspace: Path, stopped: list[RunningDaemon]
) -> None:
    """Frozen with its removals half landed: another client's read of a path still on
    disk says there is no file (the tombstone, not the old content), and a write of
    another such path lands after that path's removal: the file ends with the new
    content, journaled as created after the removal. A checkpoint taken then lists none
    of the removed files. Every other file is gone."""
    daemon, paths = serving(workspace, LANDED)
    stopped.append(daemon)
    first, read, written = paths[0], paths[-1], paths[-2]
    reader, writer = daemon.client("reader"), daemon.client("writer")
    checker = daemon.client("checker", timeout=120)
    reader.status(), writer.status()  # connected before the freeze
    checker.checkpoint_create("before")  # the files known by their stat from now on
    patch, _ = patching(daemon, removals(LANDED))
    got: dict[str, Any] = {}

    def read_it() -> None:
        try:
            got["read"] = reader.read_file(read)
        except RequestError as e:
            got["read"] = e.code

    assert caught(lambda: not (daemon.root / first).exists()), "the landing never began"
    os.kill(daemon.proc.pid, signal.SIGSTOP)
    try:
        assert present(daemon.root, [read, written]) == [read, written], "not caught half done"
        reading = threading.Thread(target=read_it)
        writing = threading.Thread(target=writer.write_file, args=(written, "new\n"))
        checking = threading.Thread(target=lambda: got.update(taken=checker.checkpoint_create()))
        for thread in (reading, writing, checking):  # served at the next turn, before a slice
            thread.start()
        assert caught(lambda: bytes_queued_for(daemon.proc.pid)), "no request arrived"
        time.sleep(0.05)  # the others too
    finally:
        os.kill(daemon.proc.pid, signal.SIGCONT)
    for thread in (reading, writing, checking, patch):
        thread.join(120)
    assert got["read"] == "file_not_found"
    assert {f.path for f in got["taken"].files} <= {written}  # it, if taken after its write
    assert (daemon.root / written).read_text() == "new\n"
    assert present(daemon.root, paths) == [written] and leftovers(daemon.root) == []
    removed, created = [(s, e) for s, e in applied(daemon) if e.path == written]
    assert removed[1].deleted and removed[1].writer == "apply_patch"
    assert not created[1].deleted and created[0] > removed[0]
    assert created[1].lines_before == 0 and created[1].before_sha256 == removed[1].after_sha256


def test_a_kill_before_or_during_a_sliced_removal_landing_leaves_all_or_nothing(
    workspace: Path, stopped: list[RunningDaemon]
) -> None:
    """kill -9 while the removals are planned: after the restart every file is there and
    nothing of the patch is journaled. kill -9 with the landing half done: the restart
    finishes every removal, and leaves no file moved aside."""
    daemon, paths = serving(workspace, LANDED)
    stopped.append(daemon)
    first, last = paths[0], paths[-1]
    pinger = daemon.client("pinger")
    patching(daemon, removals(LANDED))
    assert caught(lambda: pinger.status().parked > 0), "the patch was never parked"
    daemon.proc.send_signal(signal.SIGSTOP)
    assert (daemon.root / first).exists(), "the patch was committed already"
    daemon.proc.send_signal(signal.SIGKILL)
    daemon.proc.wait(10)
    again = start(workspace, "--no-watch")
    stopped.append(again)
    assert present(again.root, paths) == paths and leftovers(again.root) == []
    assert [e for _, e in applied(again) if e.deleted] == []
    patching(again, removals(LANDED))
    assert caught(lambda: not (again.root / first).exists()), "the landing never began"
    again.proc.send_signal(signal.SIGSTOP)  # frozen: what the disk holds is what a kill leaves
    assert (again.root / last).exists(), "the landing was not caught half done"
    again.proc.send_signal(signal.SIGKILL)
    again.proc.wait(10)
    after = start(workspace, "--no-watch")
    stopped.append(after)
    assert present(after.root, paths) == [] and leftovers(after.root) == []
    assert [e.path for _, e in applied(after) if e.deleted] == paths


def test_an_undo_by_of_an_agents_many_created_files_removes_them_all(
    workspace: Path, stopped: list[RunningDaemon]
) -> None:
    """alice creates 300 files; the undo of her writes is parked while planned and removes
    every one of them, each undo journaled, nothing left over. With the watcher on: the
    removals it sees land in slices are the daemon's own, never an outside change."""
    daemon = start(workspace)
    stopped.append(daemon)
    paths = [path_of(i) for i in range(FILES)]
    alice = daemon.client("alice", timeout=120)
    alice.apply_patch(envelope(*(f"*** Add File: {p}\n{added(i)}" for i, p in enumerate(paths))))
    assert present(daemon.root, paths) == paths
    done = held(daemon, lambda c: c.undo(by="alice"))
    assert done.parked and done.longest <= LONGEST_WAIT_S
    assert len(done.result.files) == FILES
    assert present(daemon.root, paths) == [] and leftovers(daemon.root) == []
    undone = [e.path for _, e in applied(daemon, "worker") if e.deleted]
    assert sorted(undone) == paths
    time.sleep(0.5)  # the watcher's events of the last removals, looked at
    journal = daemon.journal()
    try:
        assert list(journal.records(kind="outside_change")) == []
    finally:
        journal.close()
