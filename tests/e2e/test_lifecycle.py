"""The daemon as a process: start, refuse a second, stop cleanly, restart, recover."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

import editjournal
from editjournal.client import Client, DaemonUnavailable, RequestTimeout
from editjournal.client.library.connection import live_endpoint, read_endpoint
from editjournal.daemon.model.state import fold
from editjournal.schemas.endpoint import ENDPOINT_FILE, PID_FILE, STATE_DIR_NAME
from editjournal.schemas.wire import PROTOCOL_VERSION
from tests.conftest import RunningDaemon, pid_alive, spawn, start, wait_until


def test_ping_and_status_describe_the_running_daemon(daemon: RunningDaemon, client: Client):
    (daemon.root / "a.txt").write_text("hello\n")
    client.read_file("a.txt")
    pong = client.ping()
    assert pong.pong and pong.pid == daemon.proc.pid
    assert (pong.version, pong.protocol) == (editjournal.__version__, PROTOCOL_VERSION)
    status = client.status()
    assert (status.version, status.protocol) == (editjournal.__version__, PROTOCOL_VERSION)
    assert status.workspace == str(daemon.root.resolve())
    assert status.pid == daemon.proc.pid
    assert status.event_count == 2  # daemon_started + file_read
    assert status.known_files == 1
    assert status.journal_bytes > 0
    assert status.uptime_s >= 0
    assert status.socket.startswith("ipc://")


def test_state_directory_is_private(daemon: RunningDaemon):
    mode = (daemon.root / STATE_DIR_NAME).stat().st_mode & 0o777
    assert mode == 0o700
    assert (daemon.root / STATE_DIR_NAME / ENDPOINT_FILE).stat().st_mode & 0o077 == 0


def test_second_daemon_for_the_same_workspace_is_refused(daemon: RunningDaemon):
    second = spawn(daemon.root)
    assert second.wait(15) == 3
    message = second.stderr.read().decode()
    assert f"pid {daemon.proc.pid}" in message
    assert "daemon_already_running" in message  # the catalogue's code
    assert daemon.client().ping().pid == daemon.proc.pid  # the first still serves


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signal_stops_cleanly_and_journals_the_stop(workspace: Path, sig: int):
    running = start(workspace)
    assert running.stop(sig) == (130 if sig == signal.SIGINT else 0)  # 130: interrupted
    state_dir = workspace / STATE_DIR_NAME
    assert not (state_dir / ENDPOINT_FILE).exists()
    assert not (state_dir / PID_FILE).exists()
    assert live_endpoint(workspace) is None
    kinds = [r.kind for r in running.journal().records()]
    assert kinds == ["daemon_started", "daemon_stopped"]
    last = list(running.journal().records())[-1]
    assert last.event.reason == signal.Signals(sig).name


def test_restart_keeps_the_journal_and_continues_the_seq(workspace: Path):
    (workspace / "f.py").write_text("x = 1\n")
    first = start(workspace)
    version = first.client().read_file("f.py").version
    first.stop()
    second = start(workspace)
    try:
        again = second.client().read_file("f.py")
        assert again.version == version + 3  # stopped, started, then this read
        journal = second.journal()
        assert [r.seq for r in journal.records()] == list(range(1, again.version + 1))
        assert journal.verify().ok
    finally:
        second.stop()


def test_live_state_equals_the_fold_of_the_journal(daemon: RunningDaemon):
    for name in ("a", "b"):
        (daemon.root / name).write_text(f"{name}\n")
    a, b = daemon.client("agent-a"), daemon.client("agent-b")
    a.read_file("a")
    b.read_file("a", range="1-1")
    (daemon.root / "a").write_text("changed\n")
    b.read_many_files(["a", "b", "missing"])
    live = a.status().state_digest
    assert fold(daemon.journal().records()).digest() == live


def test_daemon_starts_after_a_crash_left_stale_files(workspace: Path):
    crashed = start(workspace)
    crashed.stop(signal.SIGKILL)
    assert (workspace / STATE_DIR_NAME / ENDPOINT_FILE).exists()  # left behind
    assert live_endpoint(workspace) is None  # but nobody listens
    restarted = start(workspace)
    try:
        assert restarted.client().ping().pid == restarted.proc.pid
        assert restarted.journal().verify().ok
    finally:
        restarted.stop()


def test_client_autostarts_a_daemon_when_none_serves(workspace: Path):
    client = Client(workspace, "agent-a")
    pid = client.ping().pid
    try:
        assert read_endpoint(workspace).pid == pid
    finally:
        client.close()
        os.kill(pid, signal.SIGTERM)
        wait_until(lambda: not pid_alive(pid), what="the autostarted daemon to exit")


def test_client_without_autostart_reports_no_daemon(workspace: Path):
    with pytest.raises(DaemonUnavailable) as caught:
        Client(workspace, "agent-a", autostart=False)
    assert caught.value.code == "daemon_unavailable"
    assert str(workspace) in caught.value.message


def test_client_times_out_with_a_clear_error_when_the_daemon_hangs(daemon: RunningDaemon):
    client = daemon.client(timeout=0.3)
    os.kill(daemon.proc.pid, signal.SIGSTOP)
    try:
        with pytest.raises(RequestTimeout) as caught:
            client.ping()
    finally:
        os.kill(daemon.proc.pid, signal.SIGCONT)
    assert caught.value.code == "timeout"
    assert "did not answer ping" in caught.value.message
    client.timeout = 10
    assert client.ping().pong  # the late reply to the first ping is skipped


def test_long_workspace_path_falls_back_to_a_runtime_socket(tmp_path: Path):
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    deep.mkdir(parents=True)
    running = start(deep)
    try:
        endpoint = read_endpoint(deep)
        assert not endpoint.socket.startswith(f"ipc://{deep}")
        assert running.client().ping().pong
        sock_dir = Path(endpoint.socket.removeprefix("ipc://")).parent
        assert sock_dir.stat().st_mode & 0o777 == 0o700
    finally:
        running.stop()


def test_concurrent_autostarts_end_with_one_daemon(workspace: Path):
    clients = [Client(workspace, f"agent-{i}") for i in range(3)]
    pids = {c.ping().pid for c in clients}
    for c in clients:
        c.close()
    assert len(pids) == 1
    pid = pids.pop()
    os.kill(pid, signal.SIGTERM)
    wait_until(lambda: not pid_alive(pid), what="the daemon to exit")
