"""Reliability loose ends of issue 40, each a scenario a real daemon process serves.

- Under `ulimit -n 1024` (the usual soft limit, which an autostarted daemon inherits,
  set here on the daemon alone with `prlimit`), a restore of 1,000 files and an
  `apply_patch` of 1,000 Updates used to fail `internal_error` "Too many open files"
  (about two fds held per file until the commit): the daemon raises its soft limit to
  the hard one at start-up (daemon/runtime/fdlimit.py).
"""

from __future__ import annotations

import os
import signal
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any

import msgspec
import pytest
import zmq

from editjournal.client import Client, DaemonUnavailable
from editjournal.client.library.subscription import Subscription
from editjournal.schemas.endpoint import ENDPOINT_FILE, Endpoint
from editjournal.schemas.wire import PROTOCOL_VERSION, PublishedEvent, Response
from tests.conftest import STATE_DIR_NAME, RunningDaemon, start, wait_until
from tests.e2e.cli_support import cli
from tests.e2e.hook_support import run_hook

# the issue's figures, under `make stress`; `make test` runs the same at a tenth of the
# size: 100 files held against a soft limit of 64 fds fail the same way
ISSUE_SIZE = (1_000, 1_024)
SMALL_SIZE = (100, 64)


def many_files(root: Path, text: str, count: int) -> list[str]:
    names = [f"m/f{i:05}.txt" for i in range(count)]
    (root / "m").mkdir(exist_ok=True)
    for name in names:
        (root / name).write_text(text)
    return names


def low_fd_daemon(root: Path, soft: int) -> RunningDaemon:
    """A daemon started with a soft limit of `soft` fds and a hard one above it (as a
    login session has): only the daemon gets it, never the machine or the test."""
    return start(root, "--no-watch", prefix=("prlimit", f"--nofile={soft}:8192", "--"))


def restore_under(workspace: Path, size: tuple[int, int]) -> None:
    names = many_files(workspace, "before\n", size[0])
    running = low_fd_daemon(workspace, size[1])
    try:
        client = running.client(timeout=120)
        client.checkpoint_create("start")
        for name in names:
            (workspace / name).write_text("after\n")
        restored = client.checkpoint_restore("start")
        assert len(restored.files) == size[0]
        assert all((workspace / name).read_text() == "before\n" for name in names)
    finally:
        running.stop()


def apply_patch_under(workspace: Path, size: tuple[int, int]) -> None:
    names = many_files(workspace, "old\n", size[0])
    running = low_fd_daemon(workspace, size[1])
    try:
        client = running.client(timeout=120)
        body = [row for name in names for row in (f"*** Update File: {name}", "@@", "-old", "+new")]
        patch = "\n".join(["*** Begin Patch", *body, "*** End Patch"]) + "\n"
        client.apply_patch(patch)
        assert all((workspace / name).read_text() == "new\n" for name in names)
    finally:
        running.stop()


def test_a_restore_of_100_files_under_a_soft_limit_of_64_fds_succeeds(workspace: Path) -> None:
    restore_under(workspace, SMALL_SIZE)


def test_an_apply_patch_of_100_updates_under_a_soft_limit_of_64_fds_succeeds(
    workspace: Path,
) -> None:
    apply_patch_under(workspace, SMALL_SIZE)


@pytest.mark.stress
def test_a_restore_of_1000_files_under_a_soft_limit_of_1024_fds_succeeds(
    workspace: Path,
) -> None:
    restore_under(workspace, ISSUE_SIZE)


@pytest.mark.stress
def test_an_apply_patch_of_1000_updates_under_a_soft_limit_of_1024_fds_succeeds(
    workspace: Path,
) -> None:
    apply_patch_under(workspace, ISSUE_SIZE)


# --- the protocol's loose ends ------------------------------------------------------------


def raw_socket(address: str) -> zmq.Socket[bytes]:
    sock: zmq.Socket[bytes] = zmq.Context.instance().socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.connect(address)
    return sock


def test_an_unknown_envelope_key_is_refused_by_name(daemon: RunningDaemon, client: Client) -> None:
    """A misspelt `idempotency_key` used to be ignored: the retry it was meant to make
    safe then applied twice."""
    sock = raw_socket(client.address)
    try:
        frame = {"id": 4, "method": "ping", "agent": "a", "idempotency_kye": "k1"}
        sock.send(msgspec.msgpack.encode(frame))
        assert sock.poll(10_000), "no reply"
        reply = msgspec.msgpack.decode(sock.recv(), type=Response)
    finally:
        sock.close()
    assert not reply.ok and reply.error is not None and reply.id == 4
    assert reply.error.code == "bad_request"
    assert "unknown envelope key 'idempotency_kye'" in reply.error.message
    assert reply.error.message.endswith("- at `$.idempotency_kye`")
    assert reply.error.details["unknown_envelope_key"] == "idempotency_kye"
    assert "idempotency_key" in reply.error.details["envelope_keys"]


def test_a_client_sends_nothing_to_a_daemon_of_another_protocol(daemon: RunningDaemon) -> None:
    path = daemon.root / STATE_DIR_NAME / ENDPOINT_FILE
    endpoint = msgspec.json.decode(path.read_bytes(), type=Endpoint)
    newer = msgspec.structs.replace(endpoint, protocol=PROTOCOL_VERSION + 1)
    path.write_bytes(msgspec.json.encode(newer))  # as a newer daemon would have written it
    try:
        with pytest.raises(DaemonUnavailable) as refused:
            Client(daemon.root, "agent-a", autostart=False)
        told = cli(daemon.root, "status")  # a daemon serves: the advice is not to start one
    finally:
        path.write_bytes(msgspec.json.encode(endpoint))
    assert refused.value.code == "daemon_unavailable"
    assert f"speaks protocol {PROTOCOL_VERSION + 1}" in refused.value.message
    assert refused.value.details["client_protocol"] == PROTOCOL_VERSION
    assert told.returncode != 0 and "editjournal" in told.stderr
    assert "stop it, then start one of this version" in told.stderr, told.stderr


def test_a_parked_request_is_answered_when_the_daemon_stops(workspace: Path) -> None:
    """A checkpoint's tree is taken in slices while its request waits, parked; a stop
    used to leave it unanswered until the client's own timeout."""
    many_files(workspace, "x\n", 4_000)  # a tree of ~0.3 s: many slices to stop in
    running = start(workspace, "--no-watch")
    client = running.client(timeout=60)
    watcher = running.client("watcher")
    with ThreadPoolExecutor(1) as pool:
        sent = pool.submit(client.call, "checkpoint_create", {"name": "big"})
        wait_until(lambda: watcher.status().parked == 1, what="the checkpoint to be parked")
        running.proc.send_signal(signal.SIGTERM)
        reply = sent.result(timeout=30)
    assert running.proc.wait(15) == 0
    assert not reply.ok and reply.error is not None
    assert reply.error.code == "daemon_stopping"
    assert "stopped (SIGTERM) before this request's work was done" in reply.error.message
    journal = running.journal()
    try:
        assert list(journal.records(kind="checkpoint_created")) == []
    finally:
        journal.close()


def test_a_failed_flush_is_retried_shown_in_status_and_on_the_feed(
    daemon: RunningDaemon, client: Client
) -> None:
    """A landed file swapped for a FIFO before the flusher's fsync (which then fails,
    EINVAL) is retried every second; `status` and the PUB feed say so, and the retry
    that finds the FIFO gone reports the write durable."""
    target = daemon.root / "a.txt"
    feed = client.subscribe(["a.txt"])
    try:
        health = _fail_a_flush(client, target)
        assert health["failures"] >= 1 and health["retrying"] == 1
        assert "Invalid argument" in (health["last_error"] or "")
        failed = _next_notice(feed, "flush_failed")
        assert failed.seq == 0 and failed.path == "a.txt" and "fsync" in failed.summary
        target.unlink()  # the retry finds nothing to sync: that write is over
        retried = _next_notice(feed, "flush_retried")
        assert retried.path == "a.txt"
        done = wait_until(lambda: client.status().group_commit["flush"]["retrying"] == 0)
        assert done and client.status().group_commit["flush"]["retried_ok"] >= 1
    finally:
        feed.close()
        target.unlink(missing_ok=True)


def _fail_a_flush(client: Client, target: Path) -> dict[str, Any]:
    """Write, then swap the landed file for a FIFO inside the flusher's gathering window
    (20 ms): tried a few times, since a busy machine may let the flush win the race."""
    fifo = target.with_name("fifo")
    for attempt in range(20):
        client.write_file("a.txt", f"version {attempt}\n")
        os.mkfifo(fifo)
        os.replace(fifo, target)
        try:
            health = wait_until(partial(_failing, client), 0.5, "the flush to fail")
        except AssertionError:
            target.unlink()
            continue
        assert health is not None
        return health
    raise AssertionError("the landed file was never swapped before its flush")


def _failing(client: Client) -> dict[str, Any] | None:
    health: dict[str, Any] = client.status().group_commit["flush"]
    return health if health["failures"] else None


def _next_notice(feed: Subscription, kind: str) -> PublishedEvent:
    def found() -> PublishedEvent | None:
        event = feed.next_event(timeout=0.1)
        return event if event is not None and event.kind == kind else None

    event = wait_until(found, 15, f"a {kind} notice")
    assert event is not None
    return event


def test_the_hook_sends_nothing_to_a_daemon_of_another_protocol(daemon: RunningDaemon) -> None:
    """The hook speaks the wire itself (client/harness/hook.py): it checks the protocol as
    the Client does, and allows the call saying why (a hook never wedges its harness)."""
    (daemon.root / "a.txt").write_text("one\n")
    path = daemon.root / STATE_DIR_NAME / ENDPOINT_FILE
    endpoint = msgspec.json.decode(path.read_bytes(), type=Endpoint)
    newer = msgspec.structs.replace(endpoint, protocol=PROTOCOL_VERSION + 1)
    path.write_bytes(msgspec.json.encode(newer))
    payload = {
        "session_id": "s1",
        "cwd": str(daemon.root),
        "hook_event_name": "PostToolUse",
        "tool_name": "Read",
        "tool_input": {"file_path": str(daemon.root / "a.txt")},
        "tool_response": {},
    }
    try:
        done = run_hook("claude-code", payload, cwd=daemon.root)
    finally:
        path.write_bytes(msgspec.json.encode(endpoint))
    assert done.returncode == 0 and done.stdout == ""
    assert f"speaks protocol {PROTOCOL_VERSION + 1}" in done.stderr
    assert not list(daemon.journal().records(kind="file_read"))  # nothing was sent
