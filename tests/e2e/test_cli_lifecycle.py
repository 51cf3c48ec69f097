"""Starting, finding and stopping daemons from the command line.

Every process these tests start gets its own XDG_RUNTIME_DIR: the registry of
running daemons lives there, so `list` and `stop --all` see only the daemons
of the test, never other tests' or the user's.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from editjournal.client.library.connection import live_endpoint
from tests.conftest import RunningDaemon, pid_alive, wait_until
from tests.e2e.cli_support import BIN, CLI, TIMEOUT, cli, cli_env


@pytest.fixture
def env() -> Iterator[dict[str, str]]:
    """An environment with a private daemon registry; its daemons are stopped after.
    The registry's directory has a short path of its own (as tests/conftest.py's): a
    daemon whose workspace path is too long for a unix socket binds in it, and the
    test's own temp path is long (a parallel worker's is longer still)."""
    own = Path(tempfile.mkdtemp(prefix="ejl"))
    runtime = own / "run"
    runtime.mkdir(mode=0o700)
    environment = cli_env(
        XDG_RUNTIME_DIR=str(runtime),
        EDITJOURNAL_AGENT="cli-test",
        PATH=f"{BIN}{os.pathsep}{os.environ['PATH']}",  # `editjournal` as printed, installed
    )
    try:
        yield environment
    finally:
        cli(None, "stop", "--all", env=environment)
        shutil.rmtree(own, ignore_errors=True)


def make_workspace(tmp_path: Path, name: str) -> Path:
    root = tmp_path / name
    root.mkdir()
    return root


def test_auto_start_says_so_and_the_stop_it_names_works(tmp_path: Path, env: dict[str, str]):
    root = make_workspace(tmp_path, "auto")
    (root / "a.txt").write_text("alpha\n")
    done = cli(root, "read", "a.txt", env=env)
    assert done.returncode == 0, done.stderr
    endpoint = live_endpoint(root)
    assert endpoint is not None
    notice = re.search(
        rf"started daemon pid {endpoint.pid} for {root} \(given by --workspace\);"
        r" `(.+)` ends it",
        done.stderr,
    )
    assert notice is not None, done.stderr
    assert done.stdout == "alpha\n"  # the notice never mixes into the output
    again = cli(root, "read", "a.txt", env=env)
    assert "started daemon" not in again.stderr
    stop = subprocess.run(notice.group(1), shell=True, env=env, capture_output=True, text=True)
    assert stop.returncode == 0, stop.stderr
    wait_until(lambda: not pid_alive(endpoint.pid), what="the daemon to exit")


@pytest.mark.parametrize(
    "args", [("status",), ("read", "a.txt"), ("edit", "a.txt"), ("start",), ("serve",), ("stop",)]
)
def test_a_missing_workspace_exits_2_and_creates_nothing(
    tmp_path: Path, env: dict[str, str], args: tuple[str, ...]
):
    missing = tmp_path / "typo"
    done = cli(missing, *args, env=env, stdin="")  # edit: refused before reading operations
    assert done.returncode == 2, done.stderr
    assert f"editjournal: workspace_not_found: workspace {missing} does not exist" in done.stderr
    assert not missing.exists()
    assert json.loads(cli(None, "list", "--json", env=env).stdout) == []  # no daemon left


def test_start_takes_the_daemon_options_and_file_too_large_names_a_working_command(
    tmp_path: Path, env: dict[str, str]
):
    root = make_workspace(tmp_path, "limits")
    (root / "big.txt").write_text("x" * 99 + "\n" + ("y" * 99 + "\n") * 19)  # 2000 bytes
    started = cli(root, "start", "--max-file-size", "1KiB", "--ignore", "*.log", env=env)
    assert started.returncode == 0, started.stderr
    refused = cli(root, "read", "big.txt", env=env)
    assert refused.returncode == 1
    assert "file_too_large" in refused.stderr
    action = re.search(r"suggested action: [^:]*: `(.+--max-file-size.+)`$", refused.stderr, re.M)
    assert action is not None, refused.stderr
    restarted = subprocess.run(action.group(1), shell=True, env=env, capture_output=True, text=True)
    assert restarted.returncode == 0, restarted.stderr
    assert cli(root, "read", "big.txt", env=env).returncode == 0


def test_start_refuses_a_size_it_cannot_read(tmp_path: Path, env: dict[str, str]):
    root = make_workspace(tmp_path, "sizes")
    done = cli(root, "start", "--max-file-size", "lots", env=env)
    assert done.returncode == 2 and "16MiB" in done.stderr  # says what it accepts
    assert live_endpoint(root) is None


def test_serve_exits_3_when_a_daemon_already_serves(daemon: RunningDaemon):
    done = cli(daemon.root, "serve")
    assert done.returncode == 3
    assert f"daemon_already_running: pid {daemon.proc.pid} already serves" in done.stderr


def test_list_shows_this_users_daemons_and_stop_all_stops_them(
    tmp_path: Path, env: dict[str, str], daemon: RunningDaemon
):
    """`daemon` is registered elsewhere (the default registry): stop --all leaves it."""
    roots = [make_workspace(tmp_path, name) for name in ("one", "two words")]
    for root in roots:
        assert cli(root, "start", env=env).returncode == 0
    pids = [live_endpoint(root).pid for root in roots]  # type: ignore[union-attr]
    listed = cli(None, "list", env=env)
    assert listed.returncode == 0, listed.stderr
    header, *rows = listed.stdout.splitlines()
    assert header.split() == ["WORKSPACE", "PID", "UPTIME", "EVENTS"]
    assert len(rows) == 2
    for row, root, pid in zip(rows, roots, pids, strict=True):
        assert row.startswith(str(root)) and f"  {pid}  " in row, listed.stdout
    as_json = json.loads(cli(None, "list", "--json", env=env).stdout)
    assert [(d["workspace"], d["pid"]) for d in as_json] == list(
        zip(map(str, roots), pids, strict=True)
    )
    assert all(d["events"] >= 1 and d["uptime_s"] >= 0 for d in as_json)
    stopped = cli(None, "stop", "--all", env=env)
    assert stopped.returncode == 0, stopped.stderr
    assert all(f"stopped: pid {pid}" in stopped.stdout for pid in pids)
    wait_until(lambda: not any(pid_alive(pid) for pid in pids), what="the daemons to exit")
    assert cli(None, "list", env=env).stdout.strip() == "no daemons running"
    assert daemon.proc.poll() is None  # another registry's daemon: untouched


def test_stop_waits_for_the_daemon_to_leave(tmp_path: Path, env: dict[str, str]):
    root = make_workspace(tmp_path, "stopping")
    proc = subprocess.Popen(
        [*CLI, "--workspace", str(root), "serve"],
        env=env,
        stderr=subprocess.DEVNULL,
    )
    try:
        endpoint = wait_until(lambda: live_endpoint(root), what="serve to bind")
        done = cli(root, "stop", "--json", env=env)
        assert json.loads(done.stdout) == [
            {"pid": endpoint.pid, "workspace": str(root), "stopped": True}
        ]
        assert proc.wait(TIMEOUT) == 0  # SIGTERM: a clean stop
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
