"""Nothing in a workspace runs: a booby-trapped workspace cannot get its code
imported in the daemon's place, however the daemon is started.

Each trap writes a marker naming the process that imported it (its argv), so
a failure says which trap fired in which process. The daemon is started the
three ways a user starts it — `editjournal start`, `editjournal serve` and a
Python client's auto-start — from inside the workspace, with the caller's
environment doing its worst: PYTHONSTARTUP set, PYTHONSAFEPATH unset, and
(where our own process is not the one being tested) PYTHONPATH naming the
workspace.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from editjournal.client.library.connection import live_endpoint
from tests.conftest import pid_alive, wait_until

EDITJOURNAL = Path(sys.executable).with_name("editjournal")
TRAPS = [
    "daemon.py",
    "daemon/__init__.py",
    "client.py",
    "schemas.py",
    "msgspec.py",
    "zmq.py",
    "xxhash.py",
    "watchdog/__init__.py",
    "sitecustomize.py",
    "usercustomize.py",
    "editjournal.py",
    "editjournal/__init__.py",
    "editjournal/daemon/__init__.py",
    "editjournal/daemon/__main__.py",
    ".editjournal/daemon.py",
    "startup.py",
]


def booby_trap(workspace: Path, markers: Path) -> None:
    """Every trap, when imported (or run), leaves `markers/<trap>-<pid>` with its argv."""
    markers.mkdir()
    for trap in TRAPS:
        path = workspace / trap
        path.parent.mkdir(parents=True, exist_ok=True)
        name = trap.replace("/", "_")
        path.write_text(
            textwrap.dedent(f"""\
                import os, sys
                with open(os.path.join({str(markers)!r}, "{name}-%d" % os.getpid()), "w") as f:
                    f.write(" ".join(getattr(sys, "orig_argv", sys.argv)))
                """)
        )


def hostile_env(workspace: Path, *, pythonpath: bool) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["PYTHONSTARTUP"] = str(workspace / "startup.py")
    if pythonpath:
        env["PYTHONPATH"] = str(workspace)
    return env


def fired(markers: Path, only_daemons: bool = False) -> dict[str, str]:
    """The traps that fired, with the command line of the process that fired them."""
    found = {m.name: m.read_text() for m in markers.iterdir()}
    if only_daemons:
        found = {name: argv for name, argv in found.items() if "editjournal.daemon" in argv}
    return found


def stop_daemon(workspace: Path) -> None:
    endpoint = live_endpoint(workspace)
    assert endpoint is not None, "no daemon serves the workspace"
    os.kill(endpoint.pid, signal.SIGTERM)
    wait_until(lambda: not pid_alive(endpoint.pid), 15, "the daemon to stop")


def assert_serving_untouched(workspace: Path, markers: Path, only_daemons: bool = False) -> None:
    endpoint = wait_until(lambda: live_endpoint(workspace), 15, "the daemon to serve")
    daemon_argv = Path(f"/proc/{endpoint.pid}/cmdline").read_bytes().split(b"\0")
    assert b"editjournal.daemon" in daemon_argv  # the real daemon, not a trap's stand-in
    assert Path(f"/proc/{endpoint.pid}/cwd").resolve() == Path("/")  # never the workspace
    assert fired(markers, only_daemons) == {}


@pytest.fixture
def trapped(tmp_path: Path) -> tuple[Path, Path]:
    workspace, markers = tmp_path / "ws", tmp_path / "markers"
    workspace.mkdir()
    booby_trap(workspace, markers)
    (workspace / "notes.txt").write_text("hello\n")
    return workspace, markers


def test_editjournal_start_in_a_trapped_workspace_runs_none_of_its_code(trapped):
    workspace, markers = trapped
    done = subprocess.run(
        [str(EDITJOURNAL), "start"],
        cwd=workspace,
        env=hostile_env(workspace, pythonpath=False),
        capture_output=True,
        text=True,
        timeout=60,
    )
    try:
        assert done.returncode == 0, done.stderr
        assert_serving_untouched(workspace, markers)
    finally:
        stop_daemon(workspace)


def test_editjournal_serve_in_a_trapped_workspace_runs_none_of_its_code(trapped):
    workspace, markers = trapped
    serving = subprocess.Popen(
        [str(EDITJOURNAL), "serve"],
        cwd=workspace,
        env=hostile_env(workspace, pythonpath=False),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert_serving_untouched(workspace, markers)
    finally:
        serving.send_signal(signal.SIGTERM)
        assert serving.wait(15) == 0


CLIENT_SCRIPT = """\
import os, sys
from editjournal import Client
os.environ["PYTHONPATH"] = sys.argv[1]  # the caller's environment, at its worst
os.environ["PYTHONSTARTUP"] = os.path.join(sys.argv[1], "startup.py")
os.environ.pop("PYTHONSAFEPATH", None)
os.chdir(sys.argv[1])
with Client(sys.argv[1], "agent-a") as c:
    assert c.started_daemon is not None
    print(c.read_file("notes.txt").content, end="")
"""


def test_a_python_client_auto_starts_a_daemon_untouched_by_workspace_and_pythonpath(trapped):
    workspace, markers = trapped
    done = subprocess.run(
        [sys.executable, "-I", "-c", CLIENT_SCRIPT, str(workspace)],
        cwd="/",
        capture_output=True,
        text=True,
        timeout=60,
    )
    try:
        assert done.returncode == 0, done.stderr
        assert done.stdout == "hello\n"
        assert_serving_untouched(workspace, markers)
    finally:
        stop_daemon(workspace)


def test_the_daemon_ignores_a_pythonpath_naming_the_workspace_even_when_the_cli_does_not(
    trapped,
):
    """With PYTHONPATH=workspace the caller's own Python is the user's choice (its
    sitecustomize runs there, as in any Python program); the daemon it starts is not."""
    workspace, markers = trapped
    for trap in ("msgspec.py", "zmq.py", "xxhash.py", "editjournal.py"):
        (workspace / trap).unlink()  # these would break the CLI process itself
    for trap in ("editjournal", "watchdog"):
        for path in sorted((workspace / trap).rglob("*.py"), reverse=True):
            path.unlink()
    done = subprocess.run(
        [str(EDITJOURNAL), "start"],
        cwd=workspace,
        env=hostile_env(workspace, pythonpath=True),
        capture_output=True,
        text=True,
        timeout=60,
    )
    try:
        assert done.returncode == 0, done.stderr
        assert_serving_untouched(workspace, markers, only_daemons=True)
        assert "sitecustomize.py" in "".join(fired(markers))  # the trap was live for the CLI
    finally:
        stop_daemon(workspace)
