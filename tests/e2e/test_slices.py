"""No request holds the daemon's thread for long (issue 40): the big ones are sliced.

A restore or a diff of many changed files and an undo --by over many files plan
their files a slice at a time between other requests (daemon/handlers/slicedwrites.py),
writing their temp files in those slices (daemon/landing/earlywrites.py), and land
them a slice at a time after the commit (daemon/landing/writeround.py): a kill -9
before the commit leaves nothing, one in the middle of the landing leaves it all to
start-up recovery, and another agent's write of a path still landing goes over it;
a many-hunk patch and a many-edit check_write cost O(change) per hunk or edit; a
read-only file refuses a big apply_patch before it is parsed. Each test: a real
daemon, the big request from one client (a thread: the client waits on its socket),
another client pinging in a loop; the longest ping is at most 1 s here (the goal,
100 ms, is measured and written in docs/performance.md: this machine may be busy),
and the result is right to the byte. The issue's full sizes are under `stress`.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from editjournal.daemon.files.tempfiles import DISPLACED_PREFIX, TEMP_PREFIX
from editjournal.schemas.events import CheckpointRestored, EditApplied
from tests.conftest import RunningDaemon, start
from tests.held import Held, held
from tests.patch_support import sha
from tests.polling import wait_until

# A stall guard, not a speed target: a sliced request is shown by `parked`; the 100 ms
# goal is measured (docs/performance.md), for a busy machine stretches every slice.
LONGEST_WAIT_S = 10.0


def tree(root: Path, files: int, lines: int = 8) -> dict[str, bytes]:
    """`files` small files in directories of 100; their contents by relative path."""
    written = {}
    for i in range(files):
        path = f"d{i // 100:02}/f{i:04}.py"
        (root / path).parent.mkdir(exist_ok=True)
        (root / path).write_text("".join(f"line {j} of {i}\n" for j in range(lines)))
        written[path] = (root / path).read_bytes()
    return written


def change_all(daemon: RunningDaemon, contents: dict[str, bytes]) -> None:
    """Change every file from outside, and wait until the watcher journaled each."""
    for path in contents:
        (daemon.root / path).write_bytes(contents[path].replace(b"line 3 ", b"LINE 3 "))
    journaled(daemon, "modified", len(contents))


def journaled(daemon: RunningDaemon, change: str, count: int) -> None:
    """Wait until the watcher journaled `count` outside changes of that kind (a
    checkpoint taken before it journaled a file's creation would see its change as one)."""
    journal = daemon.journal()

    def found() -> int:
        records = journal.records(kind="outside_change")
        return sum(getattr(r.event, "change", None) == change for r in records)

    wait_until(lambda: found() >= count, 120, f"the watcher to journal {count} {change}")


def on_disk(root: Path, contents: dict[str, bytes]) -> dict[str, bytes]:
    return {path: (root / path).read_bytes() for path in contents}


def test_a_restore_and_a_diff_of_many_files_leave_the_others_served(
    daemon: RunningDaemon,
) -> None:
    """Planned in slices: a read-only file in the middle refuses it all (nothing
    written), then the restore puts every file back byte for byte."""
    contents = tree(daemon.root, 250)
    journaled(daemon, "created", len(contents))
    daemon.client().checkpoint_create("before")
    change_all(daemon, contents)
    changed = on_disk(daemon.root, contents)
    diff = held(daemon, lambda c: c.checkpoint_diff("before"))
    assert diff.longest <= LONGEST_WAIT_S and diff.parked
    assert {c.path for c in diff.result.changes if c.change == "modified"} == set(contents)
    locked = daemon.root / "d01/f0125.py"
    locked.chmod(0o444)
    refused = held(daemon, lambda c: c.call("checkpoint_restore", {"id_or_name": "before"}))
    assert refused.longest <= LONGEST_WAIT_S
    assert refused.result.error is not None and refused.result.error.code == "read_only_file"
    assert "all files or none" in refused.result.error.message
    assert on_disk(daemon.root, contents) == changed
    locked.chmod(0o644)
    restored = held(daemon, lambda c: c.checkpoint_restore("before"))
    assert restored.longest <= LONGEST_WAIT_S and restored.parked
    assert len(restored.result.files) == len(contents)
    assert on_disk(daemon.root, contents) == contents


def test_a_file_written_while_a_restore_is_planned_is_planned_again(
    daemon: RunningDaemon,
) -> None:
    """An agent's write between the slices: the restore is planned again on it, and the
    file comes back as the checkpoint had it, over that write."""
    contents = tree(daemon.root, 250)
    journaled(daemon, "created", len(contents))
    daemon.client().checkpoint_create("before")
    change_all(daemon, contents)
    writer, path = daemon.client("writer"), "d02/f0249.py"
    restoring = threading.Thread(
        target=lambda: daemon.client("worker").checkpoint_restore("before")
    )
    restoring.start()
    try:
        wait_until(lambda: writer.status().parked == 1, 60, "the restore to be parked")
        appended = writer.append_to_file(path, "written meanwhile\n")
    finally:
        restoring.join(120)
    assert (daemon.root / path).read_bytes() == contents[path]
    [grouped] = daemon.journal().records(kind="checkpoint_restored")
    assert isinstance(grouped.event, CheckpointRestored)
    assert appended.version < grouped.seq, "the write came after the restore (too fast)"
    [ours] = [
        r.event
        for r in daemon.journal().records(kind="edit_applied", path=path)
        if isinstance(r.event, EditApplied) and r.event.writer == "restore"
    ]
    assert ours.before_sha256 == sha(
        (contents[path].replace(b"line 3 ", b"LINE 3 ")) + b"written meanwhile\n"
    )


def test_an_undo_by_over_many_files_leaves_the_others_served(daemon: RunningDaemon) -> None:
    contents = tree(daemon.root, 150, lines=3)
    alice = daemon.client("alice")
    for path in contents:
        alice.append_to_file(path, "alice was here\n")
    undone = held(daemon, lambda c: c.undo(by="alice"))
    assert undone.longest <= LONGEST_WAIT_S and undone.parked
    assert len(undone.result.files) == len(contents)
    assert on_disk(daemon.root, contents) == contents


def test_a_write_the_agent_makes_while_its_undo_is_planned_is_undone_too(
    daemon: RunningDaemon,
) -> None:
    """The final run finds the agent's writes again only when the journal since holds
    one (or a removal or move): a file alice writes while the undo of her writes is
    parked is taken back with the rest."""
    contents = tree(daemon.root, 400, lines=3)  # planned over many slices
    alice = daemon.client("alice")
    for path in contents:
        alice.append_to_file(path, "alice was here\n")
    undoing = threading.Thread(target=lambda: daemon.client("boss").undo(by="alice"))
    undoing.start()
    try:
        # its planning slices write their temp files early: the job is under way
        wait_until(lambda: bool(leftovers(daemon.root)), 60, "the undo's planning to begin")
        alice.write_file("late.txt", "written while the undo was planned\n")
    finally:
        undoing.join(120)
    assert not undoing.is_alive()
    undone = [
        r.event.path for r in daemon.journal().records(kind="edit_applied") if r.agent == "boss"
    ]
    assert "late.txt" in undone and not (daemon.root / "late.txt").exists()
    assert on_disk(daemon.root, contents) == contents


def caught(predicate: Callable[[], bool], timeout: float = 60.0) -> bool:
    """Poll every millisecond (a landing's slice lasts 50 ms, so wait_until's backoff
    would miss it) until `predicate` holds; False when it never did in `timeout`."""
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


@dataclass
class Restoring:
    """A restore of a changed tree, running in a thread (its client may be left
    waiting on a daemon that is killed)."""

    daemon: RunningDaemon
    thread: threading.Thread

    @classmethod
    def begin(cls, daemon: RunningDaemon) -> Restoring:
        client = daemon.client("worker", timeout=120)

        def run() -> None:
            try:
                client.checkpoint_restore("before")
            except Exception:  # the daemon was killed under it: the test looks at the disk
                return

        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        return cls(daemon, thread)


def restored(root: Path, contents: dict[str, bytes], path: str) -> bool:
    return (root / path).read_bytes() == contents[path]


@pytest.fixture
def unwatched(workspace: Path) -> Iterator[RunningDaemon]:
    """A daemon without the watcher, over a tree checkpointed then changed: the restore
    finds the changes by taking the tree (journaling 600 outside changes as they happen
    cost these tests half their CPU)."""
    running = start(workspace, "--no-watch")
    yield running
    if running.proc.poll() is None:
        running.stop(signal.SIGKILL)


def changed_since_checkpoint(daemon: RunningDaemon, files: int) -> dict[str, bytes]:
    """`files` files checkpointed as "before", then each changed from outside."""
    contents = tree(daemon.root, files)
    daemon.client().checkpoint_create("before")
    for path in contents:
        (daemon.root / path).write_bytes(contents[path].replace(b"line 3 ", b"LINE 3 "))
    return contents


def test_a_kill_before_or_during_a_sliced_landing_leaves_all_or_nothing(
    unwatched: RunningDaemon,
) -> None:
    """kill -9 while the temp files are written in the planning slices: nothing of the
    restore is journaled or visible after the restart, and no temp file is left. kill -9
    with the landing half done: the restart finishes every file, byte for byte."""
    daemon = unwatched
    contents = changed_since_checkpoint(daemon, 300)
    changed = on_disk(daemon.root, contents)
    first, last = sorted(contents)[0], sorted(contents)[-1]
    Restoring.begin(daemon)
    assert caught(lambda: bool(leftovers(daemon.root))), "no temp file was ever written"
    daemon.proc.send_signal(signal.SIGSTOP)
    assert not restored(daemon.root, contents, first), "the restore was committed already"
    daemon.proc.send_signal(signal.SIGKILL)
    daemon.proc.wait(10)
    again = start(daemon.root, "--no-watch")
    try:
        assert on_disk(daemon.root, contents) == changed and leftovers(daemon.root) == []
        assert not list(again.journal().records(kind="checkpoint_restored"))
        Restoring.begin(again)
        assert caught(lambda: restored(again.root, contents, first)), "the landing never began"
        again.proc.send_signal(signal.SIGSTOP)  # frozen: what the disk holds is what a kill leaves
        assert not restored(again.root, contents, last), "the landing was not caught half done"
        again.proc.send_signal(signal.SIGKILL)
        again.proc.wait(10)
    finally:
        if again.proc.poll() is None:
            again.stop(signal.SIGKILL)
    after = start(daemon.root, "--no-watch")
    try:
        assert on_disk(daemon.root, contents) == contents and leftovers(daemon.root) == []
        [grouped] = after.journal().records(kind="checkpoint_restored")
        assert isinstance(grouped.event, CheckpointRestored)
        assert set(grouped.event.files) == set(contents)
    finally:
        after.stop()


def test_a_write_of_a_path_still_landing_goes_over_the_restore(
    unwatched: RunningDaemon,
) -> None:
    """Another agent appends to a restored file whose write has not landed yet: its
    request is served between two slices of the landing, plans over the restored content
    (the overlay serves it), lands that file first, then its own line: nothing lost,
    nothing half applied."""
    daemon = unwatched
    contents = changed_since_checkpoint(daemon, 300)
    first, last = sorted(contents)[0], sorted(contents)[-1]
    writer = daemon.client("writer")
    writer.status()  # connected before the daemon is frozen
    restoring = Restoring.begin(daemon)
    assert caught(lambda: restored(daemon.root, contents, first)), "the landing never began"
    os.kill(daemon.proc.pid, signal.SIGSTOP)
    try:
        assert not restored(daemon.root, contents, last), "the landing was not caught half done"
        assert not bytes_queued_for(daemon.proc.pid), "something else waits for the daemon"
        appending = threading.Thread(target=writer.append_to_file, args=(last, "meanwhile\n"))
        appending.start()  # waits in the socket: served at the next turn, before a slice
        # the frame waits in the stopped daemon's socket: the kernel's queue says so
        assert caught(lambda: bytes_queued_for(daemon.proc.pid)), "the append never arrived"
    finally:
        os.kill(daemon.proc.pid, signal.SIGCONT)
    appending.join(60)
    answered_during = restoring.thread.is_alive()  # the restore's reply waits for its landing
    restoring.thread.join(120)
    assert answered_during, "the write was answered after the restore (not during its landing)"
    assert on_disk(daemon.root, contents) == {**contents, last: contents[last] + b"meanwhile\n"}
    ours, theirs = list(daemon.journal().records(kind="edit_applied", path=last))[-2:]
    assert isinstance(ours.event, EditApplied) and ours.event.writer == "restore"
    assert isinstance(theirs.event, EditApplied) and theirs.agent == "writer"
    assert theirs.event.before_sha256 == sha(contents[last]) and theirs.seq > ours.seq
    assert leftovers(daemon.root) == []


def bytes_queued_for(pid: int) -> bool:
    """Whether one of `pid`'s unix sockets has bytes waiting to be read (`ss`'s Recv-Q):
    a request sent to a stopped daemon has reached it."""
    listing = subprocess.run(["ss", "-xpn"], capture_output=True, text=True, check=True)
    owned = (row.split() for row in listing.stdout.splitlines() if f"pid={pid}," in row)
    return any(int(cols[2]) > 0 for cols in owned)


def lines_file(root: Path, count: int) -> bytes:
    (root / "big.txt").write_text("".join(f"line {i}\n" for i in range(count)))
    return (root / "big.txt").read_bytes()


def test_many_hunks_and_many_edits_cost_their_change(daemon: RunningDaemon) -> None:
    """1,000 one-line hunks (the cap) over 10,000 lines, by safe_patch and by
    apply_patch, and a check_write of 1,000 edits: each answered while others are."""
    before = lines_file(daemon.root, 10_000)
    client = daemon.client()
    client.read_file("big.txt")
    hunks = "".join(f"@@ -{10 * i + 1},1 +{10 * i + 1},1 @@\n-line {10 * i}\n+LINE {10 * i}\n"
                    for i in range(1000))  # fmt: skip
    patched = held(daemon, lambda c: c.safe_patch("big.txt", "--- a\n+++ b\n" + hunks, sha(before)))
    assert patched.longest <= LONGEST_WAIT_S
    assert (daemon.root / "big.txt").read_text().count("LINE") == 1000
    chunks = "".join(f"@@\n-line {10 * i + 1}\n+LINE {10 * i + 1}\n" for i in range(1000))
    envelope = f"*** Begin Patch\n*** Update File: big.txt\n{chunks}*** End Patch\n"
    applied = held(daemon, lambda c: (c.read_file("big.txt"), c.apply_patch(envelope)))
    assert applied.longest <= LONGEST_WAIT_S
    assert (daemon.root / "big.txt").read_text().count("LINE") == 2000
    edits = [{"old_string": f"line {10 * i + 2}\n", "new_string": "x\n"} for i in range(1000)]
    checked = held(
        daemon, lambda c: (c.read_file("big.txt"), c.check_write("big.txt", "t:Edit", edits=edits))
    )
    assert checked.longest <= LONGEST_WAIT_S and checked.result[1].checked == 1000


def test_a_read_only_file_refuses_a_big_apply_patch_before_it_is_parsed(
    daemon: RunningDaemon,
) -> None:
    """A 7 MB Add File then an Update of a read-only file: refused at once, nothing
    written (it took 1.4 s of the thread to parse and plan the Add File first)."""
    (daemon.root / "locked.txt").write_text("old\n")
    (daemon.root / "locked.txt").chmod(0o444)
    added = "+" + ("x" * 70 + "\n+") * 100_000 + "end\n"
    envelope = (
        f"*** Begin Patch\n*** Add File: new.txt\n{added}"
        "*** Update File: locked.txt\n@@\n-old\n+new\n*** End Patch\n"
    )
    refused = held(daemon, lambda c: c.call("apply_patch", {"patch": envelope}))
    error = refused.result.error
    assert error is not None and error.code == "read_only_file"
    assert error.message.startswith("operation 2 (*** Update File: locked.txt)")
    assert refused.longest <= LONGEST_WAIT_S
    assert not (daemon.root / "new.txt").exists()
    assert (daemon.root / "locked.txt").read_text() == "old\n"


@pytest.mark.stress
def test_the_issues_sizes(daemon: RunningDaemon) -> None:
    """5,000 files restored (refused whole, over MAX_RESTORE_FILES, then in the parts
    the refusal names), 1,000 hunks over 200,000 lines: planned, written and landed in
    slices, each answered with every file right; the longest wait is printed for the
    record (what still holds the thread in one step, a restore's final run and its one
    commit: docs/performance.md)."""
    contents = tree(daemon.root, 5000, lines=20)
    journaled(daemon, "created", len(contents))
    daemon.client().checkpoint_create("before")
    change_all(daemon, contents)
    whole = daemon.client().call("checkpoint_restore", {"id_or_name": "before"})
    assert whole.error is not None and whole.error.code == "invalid_params"
    assert on_disk(daemon.root, contents) != contents
    cut: list[list[str]] = whole.error.details["parts"]
    assert len(cut) == 5
    waits = []
    for part in cut:
        one = held(daemon, lambda c, part=part: c.checkpoint_restore("before", paths=part), 900)
        assert one.parked and len(one.result.files) == 1000
        waits.append(one.longest)
    restored = Held(None, max(waits), True)
    assert on_disk(daemon.root, contents) == contents
    assert restored.longest <= LONGEST_WAIT_S and leftovers(daemon.root) == []
    before = lines_file(daemon.root, 200_000)
    daemon.client().read_file("big.txt")
    hunks = "".join(f"@@ -{200 * i + 1},1 +{200 * i + 1},1 @@\n-line {200 * i}\n+LINE {200 * i}\n"
                    for i in range(1000))  # fmt: skip
    patched = held(daemon, lambda c: c.safe_patch("big.txt", "--- a\n+++ b\n" + hunks, sha(before)))
    assert (daemon.root / "big.txt").read_text().count("LINE") == 1000
    waited = f"longest wait {restored.longest:.2f} s; patch: {patched.longest:.2f} s"
    print(f"restore 5,000 in 5 parts: {waited}")
