"""The `editjournal` command, run as a real process against a real daemon."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from client.connection import live_endpoint
from tests.conftest import RunningDaemon, pid_alive, wait_until

CLI = [sys.executable, "-m", "client.cli"]


def cli(root: Path, *args: str, stdin: str | None = None, agent: str = "cli-test"):
    env = {**os.environ, "EDITJOURNAL_AGENT": agent}
    env.pop("EDITJOURNAL_WORKSPACE", None)
    return subprocess.run(
        [sys.executable, "-m", "client.cli", "--workspace", str(root), *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )


def test_call_prints_the_envelope_and_exits_0(daemon: RunningDaemon):
    (daemon.root / "a.txt").write_text("alpha\n")
    done = cli(daemon.root, "call", "read_file", stdin='{"path": "a.txt", "hashes": true}')
    assert done.returncode == 0, done.stderr
    envelope = json.loads(done.stdout)
    assert envelope["ok"] is True
    assert envelope["result"]["content"] == "alpha\n"
    assert envelope["seq"] == envelope["result"]["version"]


def test_call_exits_1_on_an_error_reply(daemon: RunningDaemon):
    done = cli(daemon.root, "call", "read_file", stdin='{"path": "nope"}')
    assert done.returncode == 1
    assert json.loads(done.stdout)["error"]["code"] == "file_not_found"


def test_call_exits_2_on_input_that_is_not_json(daemon: RunningDaemon):
    done = cli(daemon.root, "call", "read_file", stdin="{path:")
    assert done.returncode == 2
    assert "not JSON" in done.stderr


def test_call_with_empty_stdin_sends_no_params(daemon: RunningDaemon):
    done = cli(daemon.root, "call", "ping", stdin="")
    assert done.returncode == 0 and json.loads(done.stdout)["result"]["pong"] is True


def test_status_without_a_daemon_exits_2(workspace: Path):
    done = cli(workspace, "status")
    assert done.returncode == 2
    assert "no daemon serves" in done.stderr


def test_unknown_command_is_a_usage_error(workspace: Path):
    assert cli(workspace, "frobnicate").returncode == 2


def test_read_prints_anchored_rows(daemon: RunningDaemon):
    (daemon.root / "a.py").write_text("def f():\n    return 1\n")
    done = cli(daemon.root, "read", "a.py", "--hashes", "--range", "2-2")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("2#") and done.stdout.rstrip().endswith("|    return 1")
    assert "version" in done.stderr


def test_read_json_and_error_exit_codes(daemon: RunningDaemon):
    (daemon.root / "a.py").write_text("x = 1\n")
    done = cli(daemon.root, "read", "a.py", "--json")
    assert json.loads(done.stdout)["content"] == "x = 1\n"
    missing = cli(daemon.root, "read", "zz.py")
    assert missing.returncode == 1
    assert "file_not_found" in missing.stderr and "suggested action" in missing.stderr


def test_log_filters_by_path_and_agent(daemon: RunningDaemon):
    for name in ("a.txt", "b.txt"):
        (daemon.root / name).write_text(name)
    cli(daemon.root, "read", "a.txt", agent="alice")
    cli(daemon.root, "read", "b.txt", agent="bob")
    by_path = json.loads(cli(daemon.root, "log", "--path", "a.txt", "--json").stdout)
    reads = [e["agent"] for e in by_path["events"] if e["kind"] == "file_read"]
    assert reads == ["alice"]
    by_agent = json.loads(cli(daemon.root, "log", "--agent", "bob", "--json").stdout)
    assert [e["path"] for e in by_agent["events"]] == ["b.txt"]
    text = cli(daemon.root, "log", "--limit", "2").stdout.splitlines()
    assert len(text) == 2 and "bob" in text[-1] and "file_read" in text[-1]


def test_status_prints_fields(daemon: RunningDaemon):
    done = cli(daemon.root, "status")
    assert done.returncode == 0
    assert f"pid: {daemon.proc.pid}" in done.stdout
    assert json.loads(cli(daemon.root, "status", "--json").stdout)["event_count"] >= 1


def test_start_status_stop(workspace: Path):
    started = cli(workspace, "start")
    assert started.returncode == 0 and "started: pid" in started.stdout
    pid = live_endpoint(workspace).pid
    assert "already running" in cli(workspace, "start").stdout
    stopped = cli(workspace, "stop")
    assert stopped.returncode == 0 and f"stopped: pid {pid}" in stopped.stdout
    wait_until(lambda: not pid_alive(pid), what="the daemon to exit")
    assert "not running" in cli(workspace, "stop").stdout


def test_serve_runs_in_the_foreground_and_logs_to_the_terminal(workspace: Path):
    proc = subprocess.Popen(
        [sys.executable, "-m", "client.cli", "--workspace", str(workspace), "serve"],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        endpoint = wait_until(lambda: live_endpoint(workspace), what="serve to bind")
        assert endpoint.pid == proc.pid  # serve execs the daemon in place
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=15)
    assert proc.returncode == 0
    assert "serving" in err and "daemon_stopped" not in err  # human lines, not kinds
    assert "stopped (SIGINT)" in err


def test_watch_prints_events_live(daemon: RunningDaemon):
    (daemon.root / "w.txt").write_text("watched\n")
    proc = subprocess.Popen(
        [*CLI, "--workspace", str(daemon.root), "watch", "w.txt", "--count", "1", "--json"],
        stdout=subprocess.PIPE,
        text=True,
    )
    reader = daemon.client("reader")
    try:
        wait_until(lambda: reader.read_file("w.txt") and proc.poll() is not None, 20, "an event")
    finally:
        if proc.poll() is None:
            proc.kill()
    event = json.loads(proc.stdout.read().splitlines()[0])
    assert event["kind"] == "file_read" and event["path"] == "w.txt"
    assert event["agent"] == "reader"


def test_agent_status_and_read_since(daemon: RunningDaemon):
    target = daemon.root / "s.txt"
    target.write_text("one line\nanother line\n")
    first = json.loads(cli(daemon.root, "read", "s.txt", "--json", agent="alice").stdout)
    target.write_text("one line\nchanged line\n")
    daemon.client("bob").read_file("s.txt")  # notices the outside change
    status = cli(daemon.root, "agent-status", "alice")
    assert status.returncode == 0
    assert "1 stale" in status.stdout and "outside_change by outside" in status.stdout
    since = cli(daemon.root, "read", "s.txt", "--since", str(first["version"]), agent="alice")
    assert "-2|another line" in since.stdout and "|changed line" in since.stdout
    assert "0 stale" in cli(daemon.root, "agent-status", "alice").stdout
