"""Issue 40's loose ends, each a scenario a real daemon process serves.

- A client that only shares an agent's name could announce (`check_write`) a path over
  the agent's own pending announcement, and the agent's claim was then `wrong_owner`:
  an announcement is now bound to its credential as a hunk is.
- A request waiting in the socket when the daemon stops was dropped with the socket:
  its client waited to notice the daemon gone and was told it may or may not have been
  applied. It is now answered `daemon_stopping` (never applied: send it again), as a
  parked one is.
- The credentials the CLI and the hooks keep (one file per workspace and agent, a hook
  session each) were never removed: one unused for 14 days now goes at the next
  command that keeps one.
- With `--no-watch` a WAL unlinked while idle was taken back only at the next write (a
  kill -9 before it lost what the unlinked WAL held); `journal.db-shm` was not watched.
  Both are now looked at every turn of the loop.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import msgspec
import pytest

from editjournal.client import RequestError
from editjournal.client.library.credentials import (
    DAY_S,
    KEEP_DAYS,
    SWEPT,
    credential_file,
    kept_credential,
    sweep,
)
from editjournal.client.library.errors import DaemonStopping
from editjournal.schemas.events import EditApplied
from editjournal.schemas.tools import TOOL_PARAMS
from tests.conftest import RunningDaemon, start
from tests.e2e.cli_support import cli
from tests.polling import wait_until

APP = "".join(f"v{n} = {n}\n" for n in range(1, 11))
EDIT: dict[str, Any] = {"old_string": "v5 = 5\n", "new_string": "v5 = 50\n", "replace_all": False}
OTHER: dict[str, Any] = {"old_string": "v7 = 7\n", "new_string": "v7 = 0\n", "replace_all": False}


def refused(code: str, call: Any, *args: Any, **kwargs: Any) -> RequestError:
    with pytest.raises(RequestError) as caught:
        call(*args, **kwargs)
    assert caught.value.code == code, caught.value
    return caught.value


def test_a_same_named_client_cannot_replace_an_agents_announcement(workspace: Path):
    """Before: mallory's check_write replaced alice's announcement, and alice's claim
    of her own write was refused `wrong_owner`."""
    (workspace / "app.py").write_text(APP)
    running = start(workspace, "--no-watch")
    try:
        alice, mallory = running.client("claude-code:s1"), running.client("claude-code:s1")
        alice.read_file("app.py")
        alice.check_write("app.py", "claude-code:Edit", edits=[EDIT])
        error = refused("wrong_owner", mallory.check_write, "app.py", "x", edits=[OTHER])
        assert "another client named 'claude-code:s1'" in error.message
        assert error.details["announced_by"] == ["claude-code:s1"]
        alice.check_write("app.py", "claude-code:Edit", edits=[EDIT])  # hers to renew

        (workspace / "app.py").write_text(APP.replace("v5 = 5\n", "v5 = 50\n"))
        refused("wrong_owner", mallory.claim_write, "app.py", "claude-code:Edit")
        claimed = alice.claim_write("app.py", "claude-code:Edit")
        assert claimed.recorded
        [applied] = list(running.journal().records(kind="edit_applied"))
        assert isinstance(applied.event, EditApplied)
        assert (applied.agent, applied.event.identity) == ("claude-code:s1", alice.identity)
        # once claimed, the path is free to announce for whoever holds the name
        mallory.check_write("app.py", "claude-code:Edit", edits=[OTHER])
    finally:
        running.stop()
    assert "does not declare" not in (workspace / ".editjournal" / "daemon.log").read_text()


def _held(pid: int) -> bool:
    """Whether every thread of `pid` is stopped: a signal is delivered asynchronously, and
    libzmq's thread still running could take in what the test sends next."""
    tasks = Path(f"/proc/{pid}/task")
    return all(
        (t / "stat").read_text().rsplit(")", 1)[1].split()[0] == "T" for t in tasks.iterdir()
    )


def _queued(address: str) -> bool:
    """Whether the daemon's end of a connection to `address` holds unread bytes (`ss`)."""
    path = address.removeprefix("ipc://")
    shown = subprocess.run(["ss", "-x", "-n"], capture_output=True, text=True, check=True)
    rows = [row.split() for row in shown.stdout.splitlines() if f" {path} " in row]
    return any(int(row[2]) > 0 for row in rows)


@pytest.mark.skipif(shutil.which("ss") is None, reason="needs ss (iproute2)")
def test_a_request_waiting_when_the_daemon_stops_is_answered_daemon_stopping(workspace: Path):
    """The daemon is held (SIGSTOP) with a write in its socket, then stopped. Before: the
    write was dropped with the socket, and its client, once it saw the daemon gone, was
    told it may or may not have been applied."""
    running: RunningDaemon = start(workspace, "--no-watch")
    client = running.client(timeout=30)
    client.ping()  # connected: what it sends next goes straight into the daemon's socket
    os.kill(running.proc.pid, signal.SIGSTOP)
    wait_until(lambda: _held(running.proc.pid), 10, "the daemon to be held")
    with ThreadPoolExecutor(1) as pool:
        try:
            sent = pool.submit(client.append_to_file, "a.txt", "x\n")
            wait_until(lambda: _queued(client.address), 10, "the write in the socket")
            os.kill(running.proc.pid, signal.SIGTERM)
        finally:  # before the pool waits for the call: a held daemon would keep it waiting
            os.kill(running.proc.pid, signal.SIGCONT)
        with pytest.raises(DaemonStopping) as caught:
            sent.result(timeout=30)
    assert running.proc.wait(15) == 0
    error = caught.value
    assert error.code == "daemon_stopping" and error.details["reason"] == "SIGTERM"
    assert "send it again" in (error.hint or "")
    assert not (workspace / "a.txt").exists()
    assert list(running.journal().records(kind="edit_applied")) == []
    again = start(workspace, "--no-watch")  # the retry, to the daemon serving then
    try:
        assert again.client().append_to_file("a.txt", "x\n").version > 0
    finally:
        again.stop()
    assert (workspace / "a.txt").read_text() == "x\n"


AGED = ("claude-code:old-session", "claude-code:recent", "cli-test")


def _age(path: Path, days: float) -> None:
    then = time.time() - days * DAY_S
    os.utime(path, (then, then))


def test_kept_credentials_unused_for_two_weeks_are_removed_by_the_next_command(
    workspace: Path,
):
    """Before: one 0600 file per workspace and agent (a hook: per session) was kept in
    the runtime directory for ever. Now a CLI command or hook removes those unused for
    KEEP_DAYS, once a day at most; one in use has its mark refreshed and stays."""
    running = start(workspace, "--no-watch")
    try:
        before = [kept_credential(workspace, agent) for agent in AGED][-1]
        gone, recent, used = (credential_file(workspace, agent) for agent in AGED)
        _age(gone, KEEP_DAYS + 1)
        _age(recent, KEEP_DAYS - 1)
        _age(used, KEEP_DAYS + 1)  # old, but the command below uses it
        _age(gone.parent / SWEPT, 1.5)  # the last sweep was yesterday
        done = cli(workspace, "call", "ping", stdin="{}", agent="cli-test")
        assert done.returncode == 0, done.stderr
    finally:
        running.stop()
    assert not gone.exists()
    assert recent.exists() and used.exists()
    assert time.time() - used.stat().st_mtime < DAY_S  # marked as used
    assert kept_credential(workspace, "cli-test") == before  # the same identity
    assert sorted(p.name for p in gone.parent.iterdir()) == sorted([SWEPT, recent.name, used.name])
    _age(recent, KEEP_DAYS + 1)  # swept today already: left until tomorrow's sweep
    assert sweep(gone.parent) == [] and recent.exists()
    assert sweep(gone.parent, force=True) == [recent.name]


def _journal_file(root: Path, suffix: str = "") -> Path:
    return root / ".editjournal" / f"journal.db{suffix}"


def _acked_survive_a_kill(running: RunningDaemon, root: Path, acked: list[int]) -> None:
    """kill -9, then a new daemon: every acknowledged seq is in its journal."""
    running.stop(signal.SIGKILL)
    again = start(root, "--no-watch")
    try:
        journal = again.journal()
        try:
            kept = {record.seq for record in journal.records()}
        finally:
            journal.close()
    finally:
        again.stop()
    assert not sorted(set(acked) - kept), "acknowledged and lost"


def test_with_no_watcher_a_wal_unlinked_while_idle_is_taken_back_without_a_request(
    workspace: Path,
):
    """Before: with --no-watch only the next commit looked, so a kill -9 before any
    write lost every event the unlinked WAL held (the next start refused: the journal
    ended before its chain anchor's seq). Now each turn of the loop looks."""
    running = start(workspace, "--no-watch")
    try:
        client = running.client()
        acked = [client.append_to_file("log.txt", f"line {k}\n").version for k in range(5)]
        _journal_file(workspace, "-wal").unlink()
        wait_until(_journal_file(workspace, "-wal").exists, 10, "a fresh WAL, with no request")
        client.close()
    except BaseException:
        running.stop(signal.SIGKILL)
        raise
    _acked_survive_a_kill(running, workspace, acked)


def _mapped_deleted(pid: int, path: Path) -> bool:
    """Whether `pid` maps `path` only as a deleted file (/proc/PID/maps)."""
    maps = Path(f"/proc/{pid}/maps").read_text()
    return f"{path} (deleted)" in maps


def test_the_wal_index_unlinked_is_taken_back(workspace: Path):
    """`rm journal.db-shm`: before, the daemon went on with an index no other process
    could open (the next reader built another, and the two no longer saw each other's
    commits and locks). Now the journal reopens over a fresh index at the path."""
    running = start(workspace, "--no-watch")
    shm = _journal_file(workspace, "-shm")
    try:
        client = running.client()
        acked = [client.append_to_file("log.txt", f"line {k}\n").version for k in range(5)]
        assert shm.exists()
        shm.unlink()
        wait_until(shm.exists, 10, "a fresh WAL index, with no request")
        assert not _mapped_deleted(running.proc.pid, shm)
        acked += [client.append_to_file("log.txt", f"line {k}\n").version for k in range(5, 10)]
        reader = running.journal()  # another process's connection shares the daemon's index
        try:
            assert max(record.seq for record in reader.records()) >= max(acked)
        finally:
            reader.close()
        client.close()
    except BaseException:
        running.stop(signal.SIGKILL)
        raise
    _acked_survive_a_kill(running, workspace, acked)
    assert (workspace / "log.txt").read_text() == "".join(f"line {k}\n" for k in range(10))


# what a refusal-prone call of each method is made of: its required params, each path
# one of BAD_PATHS (the other fields as a careless agent might give them)
FIELDS: dict[str, Any] = {
    "anchor": "x = 1", "base_content_sha256": "0" * 64, "content": "z\n", "hunk_id": "hnope",
    "id_or_name": "nope", "new_block": "y", "new_content": "q", "new_string": "x = 3",
    "old_block": "x = 1", "old_string": "x = 1", "section_header": "## A", "seq": 10**6,
    "operations": [{"op": "replace_line", "hash": "abcdef", "content": "q"}],
    "phase": "close", "tool": "claude-code:Edit", "window": "w1",
    "unified_diff": "--- a\n+++ b\n@@ -1 +1 @@\n-x = 1\n+x = 2\n",
    "edits": [{"old_string": "x", "new_string": "y", "replace_all": False}],
}  # fmt: skip
BAD_PATHS = ("a.py", "missing.txt", "d", "bin.dat", ".editjournal/journal.db", "../out.txt",
             ".git/config", "ro.txt")  # fmt: skip


def _careless_calls() -> Iterator[tuple[str, dict[str, Any]]]:
    for method, params in sorted(TOOL_PARAMS.items()):
        required = [f.name for f in msgspec.structs.fields(params) if f.required]
        for path in BAD_PATHS if {"path", "paths"} & set(required) else ("",):
            given = {name: FIELDS.get(name) for name in required}
            given |= {"path": path} if "path" in given else {}
            given |= {"paths": [path]} if "paths" in given else {}
            yield method, given


def test_every_refusal_a_careless_agent_meets_is_declared_for_its_method(workspace: Path):
    """The table `schemas/toolerrors.py` is what each tool's guidance is checked
    against; the daemon logs any refusal its method does not declare. Every method,
    with each path an agent gets wrong (missing, a directory, binary, the journal's own,
    outside, under .git/, read-only): none goes undeclared. Before the table met a real
    daemon, history, blame, log, list_hunks and checkpoint_create answered
    permission_denied (log and list_hunks path_outside_workspace too) undeclared: a
    wider probe of ~6,000 calls found them; this one meets some of them at a fraction
    of its cost."""
    (workspace / "a.py").write_text("x = 1\ny = 2\n")
    (workspace / "bin.dat").write_bytes(b"\x00\x01")
    (workspace / "d").mkdir()
    (workspace / "ro.txt").write_text("ro\n")
    (workspace / "ro.txt").chmod(0o444)
    running = start(workspace, "--no-watch")
    try:
        client = running.client()
        client.read_file("a.py")
        replies = [client.call(method, params) for method, params in _careless_calls()]
        codes = {reply.error.code for reply in replies if reply.error is not None}
    finally:
        running.stop()
    assert {"file_not_found", "permission_denied", "path_protected", "read_only_file"} <= codes
    log = (workspace / ".editjournal" / "daemon.log").read_text()
    assert [line for line in log.splitlines() if "does not declare" in line] == []
