"""Fixtures for real daemons on real temp workspaces.

Nothing of ours is mocked: `spawn` starts `python -m editjournal.daemon` as its own
process (forked from a worker's zygote that has its modules imported, tests/zygote.py,
unless a prefix or `fork=False` asks for the exec'd command), tests talk to it over its
real socket, and the journal they inspect is the real SQLite file. Waiting is done
with bounded polls, never bare sleeps.
"""

from __future__ import annotations

import itertools
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from editjournal.client import Client
from editjournal.client.library.connection import DAEMON_CWD, daemon_command, live_endpoint
from editjournal.daemon.store.journal import Journal
from editjournal.schemas.endpoint import (
    ENDPOINT_DECODER,
    JOURNAL_FILE,
    REGISTRY_DIR,
    STATE_DIR_NAME,
)
from tests.polling import wait_until
from tests.zygote import ForkedProcess, close_all, forked

pytest_plugins = [
    "tests.pg_support",
    "tests.e2e.hook_support",
]  # a real PostgreSQL server: postgres, pg_url, own_postgres

START_TIMEOUT = 15.0


# what a daemon child finds imported (tests/zygote.py): what a daemon loads, not the
# offline readers (docs/architecture.md) nor the OpenTelemetry SDK (loaded when on)
OFFLINE_AUDIT = ("replay", "verify", "export", "report", "authorship", "authorlog")
OFFLINE = ("fleet", *(f"audit.{module}" for module in OFFLINE_AUDIT))
DAEMON_PRELOAD = (
    "editjournal.daemon.__main__",
    "editjournal.daemon.*",
    "editjournal.schemas.*",
    *(f"!editjournal.daemon.{room}" for room in OFFLINE),
    "!editjournal.daemon.telemetry.otlp",
)


def spawn(
    root: Path, *extra: str, prefix: Sequence[str] = (), fork: bool = True
) -> subprocess.Popen[bytes] | ForkedProcess:
    """The daemon exactly as clients start it (isolation flags, "/" as working directory),
    run by `prefix` if given: a wrapper that ends by exec'ing its arguments (such as
    `unshare`), so the process started is the daemon itself and its pid is the daemon's.
    Without a prefix it is forked from this worker's zygote (tests/zygote.py) unless
    `fork` is False: the same `main()` in its own process, without the ~0.4 s of CPU
    an interpreter spends importing the daemon."""
    if fork and not prefix:
        forked_daemon = _forked_daemon(root, *extra)
        if forked_daemon is not None:
            return forked_daemon
    return subprocess.Popen(
        [*prefix, *daemon_command(root, *extra)],
        cwd=DAEMON_CWD,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def _forked_daemon(root: Path, *extra: str) -> ForkedProcess | None:
    command = daemon_command(root, *extra)
    at = command.index("-m")
    flags, module, args = command[1:at], command[at + 1], command[at + 2 :]
    null = os.open(os.devnull, os.O_RDWR)
    err_r, err_w = os.pipe()
    try:
        proc = forked(flags, DAEMON_PRELOAD, module, args, str(DAEMON_CWD), null, null, err_w)
    finally:
        os.close(null)
        os.close(err_w)
    if proc is None:
        os.close(err_r)
        return None
    proc.stderr = os.fdopen(err_r, "rb")
    return proc


@dataclass
class RunningDaemon:
    """A real daemon process serving `root`."""

    root: Path
    proc: subprocess.Popen[bytes] | ForkedProcess
    clients: list[Client] = field(default_factory=list)

    def client(self, agent: str = "agent-a", **kwargs: Any) -> Client:
        client = Client(self.root, agent, autostart=False, **kwargs)
        self.clients.append(client)
        return client

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 10.0) -> int:
        for client in self.clients:
            client.close()
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        return self.proc.wait(timeout)

    def journal(self) -> Journal:
        """The journal file, opened by this test process (WAL allows a second reader)."""
        return Journal(self.root / STATE_DIR_NAME / JOURNAL_FILE)


def start(root: Path, *extra: str, prefix: Sequence[str] = ()) -> RunningDaemon:
    proc = spawn(root, *extra, prefix=prefix)
    wait_until(
        lambda: live_endpoint(root) or proc.poll() is not None,
        START_TIMEOUT,
        "the daemon to serve",
    )
    if proc.poll() is not None:
        raise AssertionError(f"daemon exited {proc.returncode}: {proc.stderr.read().decode()}")
    return RunningDaemon(root, proc)


def pytest_sessionfinish() -> None:
    close_all()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tests marked `slow` first, each file of them at the head of one worker's
    share. pytest-xdist's worksteal hands each worker a contiguous share of this order
    (sized as `xdist_shares` computes) and idle workers steal from the tails: a long
    test left at the end of a share would run alone while the other workers idle. A
    file's slow tests stay together (its module fixtures are set up once)."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    slow: dict[str, list[pytest.Item]] = {}
    for item in items:
        if item.get_closest_marker("slow"):
            slow.setdefault(item.nodeid.split("::")[0], []).append(item)
    if workers < 2 or not slow:
        return
    heads: list[list[pytest.Item]] = [[] for _ in range(workers)]
    for group in sorted(slow.values(), key=lambda g: -len(g)):
        min(heads, key=len).extend(group)
    chosen = {id(item) for group in heads for item in group}
    rest = iter([item for item in items if id(item) not in chosen])
    ordered: list[pytest.Item] = []
    for head, size in zip(heads, xdist_shares(len(items), workers), strict=True):
        ordered += head + list(itertools.islice(rest, max(0, size - len(head))))
    items[:] = ordered + list(rest)


def xdist_shares(count: int, workers: int) -> list[int]:
    """The sizes of the shares worksteal's first schedule hands the workers."""
    sizes = []
    for left in range(workers, 0, -1):
        sizes.append((count - sum(sizes)) // left)
    return sizes


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.fixture
def daemon(workspace: Path) -> Iterator[RunningDaemon]:
    running = start(workspace)
    yield running
    if running.proc.poll() is None:
        running.stop()


@pytest.fixture
def client(daemon: RunningDaemon) -> Client:
    return daemon.client("agent-a")


@pytest.fixture(autouse=True)
def _isolated_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """Nothing a test starts touches the user's own environment: its daemons register
    in a runtime directory of the test's (never the user's registry, which `list` and
    `stop --all` read), read no real anchor key and keep no state in the real home.
    Tests name their workspace and agent explicitly. Afterwards no daemon the test
    started may still be registered: one left running is stopped, and the test fails."""
    monkeypatch.delenv("EDITJOURNAL_WORKSPACE", raising=False)
    monkeypatch.delenv("EDITJOURNAL_AGENT", raising=False)
    own = Path(tempfile.mkdtemp(prefix="ejt"))  # short: sockets may be placed in it
    (own / "home").mkdir()
    runtime = own / "run"
    monkeypatch.setenv("HOME", str(own / "home"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(own / "home" / ".config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(own / "home" / ".local" / "state"))
    try:
        yield
        left = _still_registered(runtime)
        assert not left, f"daemons left running by the test (now stopped): {left}"
    finally:
        shutil.rmtree(own, ignore_errors=True)


def _still_registered(runtime: Path) -> list[str]:
    """The workspaces of registered daemons still alive a moment after the test (one
    already told to stop gets that moment to exit), each then stopped."""
    left = []
    for entry in (runtime / "editjournal" / REGISTRY_DIR).glob("*.json"):
        try:
            endpoint = ENDPOINT_DECODER.decode(entry.read_bytes())
        except (OSError, ValueError):
            continue
        if _running_daemon(endpoint.pid):
            left.append(endpoint.workspace)
            os.kill(endpoint.pid, signal.SIGTERM)
            wait_until(lambda pid=endpoint.pid: not pid_alive(pid), what="a left daemon to stop")
    return left


def _running_daemon(pid: int, grace: float = 3.0) -> bool:
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        try:
            if b"editjournal.daemon" not in Path(f"/proc/{pid}/cmdline").read_bytes():
                return False
        except OSError:
            return False  # gone
        time.sleep(0.05)
    return True


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
