"""Another local user cannot impersonate the daemon to the client.

As root, the test plays both sides: the attacker is `nobody` (a forked child that
drops to uid 65534), the victim is the test's own user running the real CLI. In a
shared (0777) workspace and a shared runtime directory the attacker plants what the
client reads: an endpoint naming his socket and the victim's pid, a registry entry,
a `daemon.log` symlink to the victim's file. The client refuses each with
`untrusted_run_file` naming the file, sends nothing, signals no pid and appends to
no file (client/library/trust.py).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.e2e.cli_support import cli, cli_env

NOBODY = 65534
pytestmark = pytest.mark.skipif(
    os.geteuid() != 0, reason="needs root: the attacker is another user (nobody), made here"
)


def as_attacker(action: Callable[[], None]) -> None:
    """Run `action` in a forked child as nobody; fail the test if it fails."""
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        status = 1
        try:
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            os.umask(0)
            action()
            status = 0
        finally:
            os._exit(status)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, "the attacker's setup failed"


@pytest.fixture
def shared() -> Iterator[Path]:
    """A directory everyone may write (outside pytest's private temp tree): the shared
    workspace `ws` and the runtime directory `run` (sticky, like /tmp) live in it."""
    with tempfile.TemporaryDirectory(prefix="editjournal-imp-") as top:
        root = Path(top)
        root.chmod(0o777)
        (root / "ws").mkdir(mode=0o777)
        (root / "ws").chmod(0o777)
        (root / "run").mkdir()
        (root / "run").chmod(0o1777)
        (root / "ws" / "a.txt").write_text("x = 1\n")
        yield root


@pytest.fixture
def victims_process() -> Iterator[subprocess.Popen[bytes]]:
    """An unrelated process of the victim's, whose pid the attacker names."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    yield proc
    proc.kill()
    proc.wait()


def endpoint(pid: int, workspace: Path, sock: Path) -> str:
    return json.dumps(
        {"pid": pid, "workspace": str(workspace), "socket": f"ipc://{sock}", "version": "0.1.0",
         "protocol": 1}
    )  # fmt: skip


def victim(shared: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = cli_env(EDITJOURNAL_AGENT="victim", XDG_RUNTIME_DIR=str(shared / "run"))
    return cli(shared / "ws", *args, env=env)


def listening(path: Path) -> None:
    """The attacker's own socket, listening (he would log what arrives)."""
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen()
    os.chmod(path, 0o777)
    server.detach()  # left bound after the child exits: the file stays


def test_a_planted_endpoint_is_refused_and_its_pid_not_signalled(
    shared: Path, victims_process: subprocess.Popen[bytes]
) -> None:
    state = shared / "ws" / ".editjournal"

    def plant() -> None:
        state.mkdir(mode=0o777)
        listening(state / "evil.sock")
        plant_file = state / "daemon.json"
        plant_file.write_text(endpoint(victims_process.pid, shared / "ws", state / "evil.sock"))

    as_attacker(plant)
    read = victim(shared, "read", "a.txt")
    assert read.returncode != 0
    assert "untrusted_run_file" in read.stderr and str(state / "daemon.json") in read.stderr
    stop = victim(shared, "stop")
    assert "untrusted_run_file" in stop.stderr, stop.stderr
    assert victims_process.poll() is None  # still alive: nothing was signalled
    assert (shared / "ws" / "a.txt").read_text() == "x = 1\n"


def test_a_forged_registry_entry_is_skipped_by_list_and_stop_all(
    shared: Path, victims_process: subprocess.Popen[bytes]
) -> None:
    registry = shared / "run" / "editjournal" / "daemons"

    def plant() -> None:
        registry.mkdir(mode=0o777, parents=True)
        (registry.parent).chmod(0o777)
        listening(registry / "evil.sock")
        entry = registry / "x.json"
        entry.write_text(endpoint(victims_process.pid, shared / "ws", registry / "evil.sock"))
        entry.chmod(0o777)

    as_attacker(plant)
    listed = victim(shared, "list")
    assert "skipped" in listed.stderr and str(registry / "x.json") in listed.stderr
    assert str(victims_process.pid) not in listed.stdout
    stopped = victim(shared, "stop", "--all")
    assert str(registry / "x.json") in stopped.stderr
    assert victims_process.poll() is None


def test_a_planted_log_symlink_is_not_followed_by_auto_start(shared: Path, tmp_path: Path) -> None:
    precious = tmp_path / "precious.txt"  # the victim's own file, outside the workspace
    precious.write_text("mine\n")
    state = shared / "ws" / ".editjournal"

    def plant() -> None:
        state.mkdir(mode=0o777)
        (state / "daemon.log").symlink_to(precious)

    as_attacker(plant)
    read = victim(shared, "read", "a.txt")
    assert read.returncode != 0 and "untrusted_run_file" in read.stderr, read.stderr
    assert str(state) in read.stderr
    assert precious.read_text() == "mine\n"
