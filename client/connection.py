"""Finding, probing and starting a workspace's daemon.

libzmq's `connect` to a missing ipc path does not fail — messages just queue —
so the client probes the socket with a raw AF_UNIX connect first: ENOENT (no
file) or ECONNREFUSED (a stale file) both mean "nobody serves; start one".
Two clients may start daemons at once: the daemon's lock lets one win and the
other exits, and both clients then find the winner's endpoint.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import msgspec

from client.errors import DaemonUnavailable
from schemas.endpoint import (
    ENDPOINT_DECODER,
    ENDPOINT_FILE,
    LOG_FILE,
    STATE_DIR_NAME,
    Endpoint,
)
from schemas.errors import ErrorCode

EXIT_ALREADY_SERVED = 3  # python -m daemon: another daemon won the lock


def workspace_root(workspace: str | os.PathLike[str] | None) -> Path:
    return Path(os.path.realpath(workspace or os.environ.get("EDITJOURNAL_WORKSPACE", ".")))


def state_dir(root: Path) -> Path:
    return root / STATE_DIR_NAME


def read_endpoint(root: Path) -> Endpoint | None:
    try:
        return ENDPOINT_DECODER.decode((state_dir(root) / ENDPOINT_FILE).read_bytes())
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        return None


def is_listening(address: str) -> bool:
    """True when a process accepts connections on this ipc address."""
    if not address.startswith("ipc://"):
        return True  # tcp: nothing cheap to probe; let the request time out
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.connect(address.removeprefix("ipc://"))
    except OSError:
        return False
    finally:
        probe.close()
    return True


def live_endpoint(root: Path) -> Endpoint | None:
    """The endpoint of a daemon that is actually serving, or None."""
    endpoint = read_endpoint(root)
    return endpoint if endpoint and is_listening(endpoint.socket) else None


def spawn_daemon(root: Path) -> subprocess.Popen[bytes]:
    """Run `python -m daemon --detach`; it exits once the forked daemon serves."""
    directory = state_dir(root)
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    with open(directory / LOG_FILE, "ab") as log:
        return subprocess.Popen(
            [sys.executable, "-m", "daemon", "--workspace", str(root), "--detach"],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            cwd=str(root),
        )


def start_daemon(root: Path, timeout: float = 15.0) -> Endpoint:
    """Start a daemon (or find the one that won the race) and wait until it serves."""
    endpoint = live_endpoint(root)
    if endpoint:
        return endpoint
    proc = spawn_daemon(root)
    try:
        code = proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise _start_failed(root, f"the daemon was not serving after {timeout:g} s") from None
    if code not in (0, EXIT_ALREADY_SERVED):
        raise _start_failed(root, f"the daemon exited with code {code}")
    return _await_endpoint(root, time.monotonic() + timeout)


def _await_endpoint(root: Path, deadline: float) -> Endpoint:
    """A racing daemon that won the lock may still be binding: poll, bounded."""
    delay = 0.005
    while (endpoint := live_endpoint(root)) is None:
        if time.monotonic() > deadline:
            raise _start_failed(root, "the daemon holding the lock is not serving")
        time.sleep(delay)
        delay = min(delay * 2, 0.1)
    return endpoint


def _start_failed(root: Path, why: str) -> DaemonUnavailable:
    log_path = state_dir(root) / LOG_FILE
    tail = ""
    if log_path.exists():
        tail = "".join(log_path.read_text(errors="replace").splitlines(keepends=True)[-5:])
    return DaemonUnavailable.local(
        ErrorCode.DAEMON_UNAVAILABLE,
        f"could not start a daemon for {root}: {why}; see {log_path}",
        workspace=str(root),
        log_tail=tail,
    )
