"""A daemon that dies is honest about it, and a Client outlives it.

- A crash that ends the loop is journaled as `daemon_stopped` with reason `crash: ...`,
  its traceback is in daemon.log, and the next `daemon_started` says the previous run
  did not stop cleanly; a clean stop (SIGTERM) is none of that.
- A Client whose daemon died notices (pid, then socket) instead of waiting out its
  timeout, and is served by a new daemon on its next call.
- A request the daemon died on is sent again only when that is safe: a read-only one
  transparently, a keyed one (`idempotency_key`) once and answered from the journal if
  it was applied; any other write is reported as "may or may not have been applied".

The crashes are real ones of real daemon processes: the test-only daemon options
`--crash-on-method METHOD` (a request of that method ends the loop by an exception the
request boundary lets through) and `--kill-after-commit` (SIGKILL between a write's
commit and its rename), and plain kill -9. Clients started here with auto-start leave a
detached daemon behind; the `autostarted` fixture stops it.
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from editjournal.client import AsyncClient, Client, DaemonUnavailable
from editjournal.client.library.connection import live_endpoint
from editjournal.daemon.store.journal import Journal, Record
from editjournal.schemas.endpoint import JOURNAL_FILE, LOG_FILE, STATE_DIR_NAME
from editjournal.schemas.events import DaemonStarted, DaemonStopped
from editjournal.schemas.wire import Response
from tests.conftest import RunningDaemon, pid_alive, start, wait_until
from tests.e2e.test_loose_ends import many_files

CRASH_LOG_LINE = "the loop ended by a crash"


class Daemons:
    """The daemons and clients of one test, all stopped afterwards, whatever failed:
    those started here and the one an auto-starting client left serving."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.started: list[RunningDaemon] = []
        self.clients: list[Client] = []

    def start(self, *extra: str) -> RunningDaemon:
        running = start(self.root, "--no-watch", *extra)
        self.started.append(running)
        return running

    def crashing(self, method: str) -> RunningDaemon:
        """A daemon that crashes on a request of `method`, serving a.txt."""
        (self.root / "a.txt").write_text("one\ntwo\n")
        return self.start("--crash-on-method", method)

    def reviving_client(self) -> Client:
        """A Client that may start a new daemon when its own one dies."""
        client = Client(self.root, "agent-a", autostart=True)
        self.clients.append(client)
        return client

    def close(self) -> None:
        for client in self.clients:
            client.close()
        for running in self.started:
            if running.proc.poll() is None:
                running.stop(signal.SIGKILL)
        endpoint = live_endpoint(self.root)
        if endpoint is not None:
            os.kill(endpoint.pid, signal.SIGTERM)
            wait_until(lambda: not pid_alive(endpoint.pid), 15, "the started daemon to stop")


@pytest.fixture
def daemons(workspace: Path) -> Iterator[Daemons]:
    tracked = Daemons(workspace)
    yield tracked
    tracked.close()


def journal(root: Path) -> Journal:
    return Journal(root / STATE_DIR_NAME / JOURNAL_FILE)


def daemon_log(root: Path) -> str:
    return (root / STATE_DIR_NAME / LOG_FILE).read_text()


def stops(records: list[Record]) -> list[DaemonStopped]:
    return [r.event for r in records if isinstance(r.event, DaemonStopped)]


def latest_start(running: RunningDaemon) -> DaemonStarted:
    [started] = running.journal().records(kind="daemon_started", newest_first=True, limit=1)
    assert isinstance(started.event, DaemonStarted)
    return started.event


def crash_of(running: RunningDaemon) -> DaemonStopped:
    """The `daemon_stopped` a crashed daemon journaled (waits for it to exit)."""
    assert running.proc.wait(timeout=10) != 0  # the exception ends the process
    [stopped] = running.journal().records(kind="daemon_stopped", newest_first=True, limit=1)
    assert isinstance(stopped.event, DaemonStopped)
    assert stopped.event.pid == running.proc.pid
    return stopped.event


def second_line_anchor(client: Client) -> str:
    rows = client.read_file("a.txt", hashes=True).lines or []
    return next(row.hash for row in rows if row.text == "two")


# --- crash journaling ---------------------------------------------------------------------


def test_a_crash_ending_the_loop_is_journaled_as_one_with_its_traceback_in_the_log(
    daemons: Daemons,
) -> None:
    running = daemons.crashing("status")
    client = running.client()
    client.ping()  # other methods are served as usual
    with pytest.raises(DaemonUnavailable):  # read-only, resent: but no daemon is left
        client.status()
    stopped = crash_of(running)
    assert stopped.reason.startswith("crash: InjectedCrash: crash requested by agent-a")
    log = daemon_log(daemons.root)
    assert CRASH_LOG_LINE in log
    assert "Traceback (most recent call last)" in log and "InjectedCrash" in log
    assert live_endpoint(daemons.root) is None  # its run files are gone, not left stale


def test_a_clean_stop_is_not_journaled_as_a_crash(daemons: Daemons) -> None:
    running = daemons.start()
    running.client().ping()
    assert running.stop(signal.SIGTERM) == 0
    [stopped] = stops(list(running.journal().records()))
    assert stopped.reason == "SIGTERM"
    assert CRASH_LOG_LINE not in daemon_log(daemons.root)
    assert latest_start(daemons.start()).previous_unclean is False


def test_the_start_after_a_crash_says_the_previous_run_did_not_stop_cleanly(
    daemons: Daemons,
) -> None:
    crashed = daemons.crashing("status")
    with pytest.raises(DaemonUnavailable):
        crashed.client().status()
    crash_of(crashed)
    [stopped] = crashed.journal().records(kind="daemon_stopped")
    started = latest_start(daemons.start())
    assert started.previous_unclean is True
    assert started.previous_pid == crashed.proc.pid
    assert started.previous_last_seen_ms == stopped.ts
    assert "did not stop cleanly" in started.summary()


# --- a Client outlives its daemon -------------------------------------------------------


def test_a_client_whose_daemon_was_killed_is_served_by_a_new_one_on_its_next_call(
    daemons: Daemons,
) -> None:
    (daemons.root / "a.txt").write_text("one\n")
    first = daemons.start()
    client = daemons.reviving_client()
    assert client.read_file("a.txt").content == "one\n"
    first.stop(signal.SIGKILL)
    # The client's timeout is 30 s: a client that waited for the dead daemon would fail
    # with `timeout` here instead of being answered.
    assert client.read_file("a.txt").content == "one\n"
    assert client.started_daemon is not None
    assert client.daemon_pid not in (None, first.proc.pid)


def test_without_auto_start_a_dead_daemon_is_reported_at_once_and_a_new_one_is_found(
    daemons: Daemons,
) -> None:
    first = daemons.start()
    client = first.client()
    client.ping()
    first.proc.kill()
    first.proc.wait(timeout=10)
    with pytest.raises(DaemonUnavailable) as gone:  # not a `timeout` 30 s later
        client.ping()
    assert gone.value.code == "daemon_unavailable"
    second = daemons.start()
    assert client.ping().pid == second.proc.pid  # the same Client, served again


def test_a_write_the_daemon_died_on_is_reported_as_maybe_applied_and_not_resent(
    daemons: Daemons,
) -> None:
    crashed = daemons.crashing("edit")
    client = daemons.reviving_client()
    op = {"op": "replace_line", "hash": second_line_anchor(client), "content": "TWO"}
    with pytest.raises(DaemonUnavailable) as unknown:
        client.edit("a.txt", [op])
    assert unknown.value.code == "daemon_unavailable"
    assert "may or may not have been applied" in unknown.value.message
    assert unknown.value.details["method"] == "edit"
    assert unknown.value.details["pid"] == crashed.proc.pid
    crash_of(crashed)
    # the next call is served by a new daemon, which never saw the edit
    assert client.read_file("a.txt").content == "one\ntwo\n"
    assert client.daemon_pid != crashed.proc.pid
    kinds = {r.kind for r in journal(daemons.root).records()}
    assert not kinds & {"edit_applied", "edit_rejected"}


def test_a_read_the_daemon_died_on_is_resent_to_a_new_daemon(daemons: Daemons) -> None:
    crashed = daemons.crashing("read_file")
    client = daemons.reviving_client()
    client.ping()
    assert client.read_file("a.txt").content == "one\ntwo\n"  # no error at all
    assert client.daemon_pid != crashed.proc.pid
    assert crash_of(crashed).reason.startswith("crash: InjectedCrash")
    records = list(journal(daemons.root).records())
    [read] = [r for r in records if r.kind == "file_read"]
    [restarted] = [r for r in records if r.kind == "daemon_started"][1:]
    assert read.seq > restarted.seq  # answered by the new daemon


def test_a_keyed_write_the_daemon_died_on_is_resent_and_applied_once(daemons: Daemons) -> None:
    crashed = daemons.crashing("edit")
    client = daemons.reviving_client()
    op = {"op": "insert_after", "hash": second_line_anchor(client), "content": "three"}
    params = {"path": "a.txt", "operations": [op]}
    first = client.call("edit", params, idempotency_key="k1")
    assert first.ok, first.error
    assert client.daemon_pid != crashed.proc.pid
    crash_of(crashed)
    again = client.call("edit", params, idempotency_key="k1")
    assert again.ok and again.seq == first.seq
    assert (daemons.root / "a.txt").read_text() == "one\ntwo\nthree\n"
    assert [r.kind for r in journal(daemons.root).records()].count("edit_applied") == 1


def test_a_keyed_write_applied_before_the_daemon_was_killed_is_answered_not_reapplied(
    daemons: Daemons,
) -> None:
    """Killed between the commit and the rename: the reply never left, but the write
    and its reply are journaled. The resent request gets that reply from the new daemon
    (which finished the rename), and the file changes once."""
    (daemons.root / "a.txt").write_text("one\n")
    killed = daemons.start("--kill-after-commit")
    client = daemons.reviving_client()
    params = {"path": "a.txt", "content": "two\n", "skip_safety_check": True}
    answered = client.call("append_to_file", params, idempotency_key="k1")
    assert killed.proc.wait(timeout=10) == -signal.SIGKILL
    assert answered.ok, answered.error
    assert any("retry" in w for w in answered.warnings)  # the journaled first reply
    assert client.daemon_pid != killed.proc.pid
    assert (daemons.root / "a.txt").read_text() == "one\ntwo\n"
    [applied] = journal(daemons.root).records(kind="edit_applied")
    assert answered.seq == applied.seq


def test_a_client_served_by_a_daemon_someone_else_started_learns_its_pid(
    daemons: Daemons,
) -> None:
    """autostart=False: the Client does not start the new daemon, but once it answers on
    the same socket, the Client knows the new pid (what `editjournal mcp` reports), and
    stops probing the socket on every call."""
    first = daemons.start()
    client = Client(daemons.root, "agent-a", autostart=False)
    daemons.clients.append(client)
    assert client.daemon_pid == first.proc.pid
    first.stop(signal.SIGKILL)
    second = daemons.start()  # someone else's start, on the same ipc path
    assert client.ping().pong
    assert client.address == live_endpoint(daemons.root).socket  # type: ignore[union-attr]
    assert client.daemon_pid == second.proc.pid


def test_a_request_a_stopping_daemon_did_not_run_is_sent_to_the_next_one(
    daemons: Daemons,
) -> None:
    """`daemon_stopping` means not run: the Client waits for the stopping daemon to go,
    starts the next one and sends the request there, once (any method, keyed or not).
    The request here is a checkpoint whose tree is taken in slices, parked at the stop."""
    many_files(daemons.root, "x\n", 4_000)  # a tree of ~0.3 s: many slices to stop in
    stopping = daemons.start()
    client = daemons.reviving_client()
    reply = _stopped_while_parked(stopping, lambda: client.call("checkpoint_create", {"name": "a"}))
    assert reply.ok, reply.error
    assert client.daemon_pid != stopping.proc.pid
    _run_once_by_the_next_daemon(daemons.root)


def test_the_async_client_sends_a_request_a_stopping_daemon_did_not_run_to_the_next_one(
    daemons: Daemons,
) -> None:
    many_files(daemons.root, "x\n", 4_000)
    stopping = daemons.start()

    async def create() -> Response:
        async with AsyncClient(daemons.root, "agent-a", autostart=True) as client:
            return await client.call("checkpoint_create", {"name": "a"})

    reply = _stopped_while_parked(stopping, lambda: asyncio.run(create()))
    assert reply.ok, reply.error
    _run_once_by_the_next_daemon(daemons.root)


def _stopped_while_parked(stopping: RunningDaemon, call: Callable[[], Response]) -> Response:
    """`call`'s reply, its request parked when the daemon was told to stop (SIGTERM)."""
    watcher = stopping.client("watcher")
    with ThreadPoolExecutor(1) as pool:
        sent = pool.submit(call)
        wait_until(lambda: watcher.status().parked == 1, what="the checkpoint to be parked")
        stopping.proc.send_signal(signal.SIGTERM)
        reply = sent.result(timeout=60)
    assert stopping.proc.wait(15) == 0
    return reply


def _run_once_by_the_next_daemon(root: Path) -> None:
    [created] = journal(root).records(kind="checkpoint_created")
    [restarted] = list(journal(root).records(kind="daemon_started"))[1:]
    assert created.seq > restarted.seq
