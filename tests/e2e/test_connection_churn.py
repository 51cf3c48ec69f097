"""Connection churn: the daemon's memory comes back after clients come and go.

Clients connect, ping and close in bursts, all connected at once as a fleet of agents
starting together would be. libzmq's per-connection memory (about 27 KB each) is freed
when a client leaves but stayed in glibc's arenas: 2,000 at a time, five times over,
took the daemon from 43 to 155 MB (an attack saw 47 -> 654 MB over 7 x 10,000). The
daemon now trims its heap once the disconnections stop (daemon/runtime/connections.py).
The clients are raw DEALER sockets of the wire protocol, each with its own connection,
so a thousand cost the test no processes.
"""

from __future__ import annotations

import resource
from collections.abc import Iterator
from functools import partial
from pathlib import Path

import msgspec
import pytest
import zmq

from editjournal.client import Client
from editjournal.schemas.wire import Request
from tests.conftest import RunningDaemon
from tests.polling import wait_until

_PING = msgspec.msgpack.encode(  # params: an empty map
    Request(id=1, method="ping", agent="churn", params=msgspec.Raw(b"\x80"))
)
SLACK_MB = 10  # what RSS may keep after churn: a few MB of arenas and caches, not per client


def rss_mb(pid: int) -> float:
    """The process's resident set, in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError(f"no VmRSS for pid {pid}")


def open_fds(pid: int) -> int:
    return len(list(Path(f"/proc/{pid}/fd").iterdir()))


@pytest.fixture
def sockets() -> Iterator[zmq.Context[zmq.Socket[bytes]]]:
    """A context of our own for many sockets at once (the default allows 1,023), with
    the open-file limit raised within the hard limit for the burst (two fds a socket)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    context.set(zmq.MAX_SOCKETS, 65_536)
    try:
        yield context
    finally:
        context.term()
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def burst(context: zmq.Context[zmq.Socket[bytes]], address: str, clients: int) -> int:
    """`clients` connections at once, each sending one ping; all closed once answered.
    Returns how many were answered."""
    opened = []
    try:
        for _ in range(clients):
            sock = context.socket(zmq.DEALER)
            sock.setsockopt(zmq.LINGER, 0)
            sock.connect(address)
            sock.send(_PING)
            opened.append(sock)
        return sum(1 for sock in opened if sock.poll(30_000) and sock.recv())
    finally:
        for sock in opened:
            sock.close(linger=0)


def churn_until_settled(
    daemon: RunningDaemon, context: zmq.Context[zmq.Socket[bytes]], rounds: int, clients: int
) -> list[float]:
    """`rounds` bursts; after each, the daemon's RSS once it counted every client gone
    and trimmed after them (its `status`, over a connection kept for the purpose)."""
    watcher = daemon.client("churn-watch")
    address = watcher.address
    after: list[float] = []
    for n in range(1, rounds + 1):
        assert burst(context, address, clients) == clients
        wait_until(
            partial(_settled, watcher, n * clients),
            60,
            f"the daemon to see {n * clients} clients leave and trim after them",
        )
        after.append(rss_mb(daemon.proc.pid))
    return after


def _burst_limit() -> int:
    """The most clients one burst may hold open: two fds each, within the hard limit."""
    return (resource.getrlimit(resource.RLIMIT_NOFILE)[1] - 256) // 2


def _settled(watcher: Client, gone: int) -> bool:
    connections = watcher.status().group_commit["connections"]
    return bool(connections["disconnected"] >= gone and connections["untrimmed"] == 0)


def test_memory_returns_after_connection_churn(
    daemon: RunningDaemon, sockets: zmq.Context[zmq.Socket[bytes]]
) -> None:
    daemon.client("churn-watch").ping()
    before, fds_before = rss_mb(daemon.proc.pid), open_fds(daemon.proc.pid)
    clients = min(1_000, _burst_limit())
    after = churn_until_settled(daemon, sockets, rounds=2, clients=clients)
    # before the trim: 42 -> 70 -> 82 MB; with it 45 MB
    assert max(after) <= before + SLACK_MB, f"RSS {before:.0f} MB, after each burst {after}"
    assert open_fds(daemon.proc.pid) <= fds_before + 2  # the watcher's status connection


@pytest.mark.stress
def test_memory_returns_after_heavy_connection_churn(
    daemon: RunningDaemon, sockets: zmq.Context[zmq.Socket[bytes]]
) -> None:
    """The attack's size, 70,000 clients, in bursts as big as this process's open-file
    limit allows (two fds a client: 5,000 under the usual hard limit of 20,000)."""
    clients = min(5_000, _burst_limit())
    daemon.client("churn-watch").ping()
    before = rss_mb(daemon.proc.pid)
    after = churn_until_settled(daemon, sockets, rounds=70_000 // clients, clients=clients)
    assert max(after) <= before + SLACK_MB, f"RSS {before:.0f} MB, after each burst {after}"
