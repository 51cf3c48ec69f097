"""Noticing that a Client's daemon died, and deciding what may be sent again.

libzmq hides a dead peer: a request sent to a daemon that was killed just waits in
a queue, so a Client used to wait out its whole timeout, call after call. The Client
now checks between short polls whether its daemon still lives — its pid first (a
signal 0, about a microsecond), and, only when the pid looks gone, the socket itself
(a daemon in another pid namespace has a pid we cannot see) — and when it died,
starts or finds a new one and reconnects.

Sending the request again is only safe when doing it twice cannot change anything
twice: read-only methods, and requests that carry an `idempotency_key` (the daemon
journals their reply and answers a retry with it). Any other request gets
`daemon_unavailable` saying it may or may not have been applied.

A daemon that is stopping answers what it will not run with `daemon_stopping`: none
of it was applied, so any request is sent again, once, to the daemon serving after it
(started by the Client unless `autostart=False`), when the stopping one has gone.
"""

from __future__ import annotations

import os
import time

from editjournal.client.library.connection import is_listening
from editjournal.client.library.errors import DaemonUnavailable
from editjournal.schemas.errors import ErrorCode
from editjournal.schemas.wire import Response

POLL_SLICE_S = 0.25  # how often a waiting Client looks whether its daemon still lives
GONE_POLL_S = 0.02  # how often a Client looks whether a stopping daemon has exited
# Methods that change no file and no plan: sending one twice is as good as once.
READ_ONLY_METHODS = frozenset(
    {
        "ping",
        "status",
        "log",
        "read_file",
        "read_many_files",
        "agent_status",
        "show",
        "blame",
        "history",
        "list_hunks",
        "checkpoint_list",
        "checkpoint_diff",
        "stats",
    }
)


class DaemonDied(Exception):
    """The daemon a request was sent to is no longer running (internal to the Client)."""


def daemon_alive(pid: int | None, address: str, *, thorough: bool = False) -> bool:
    """False when the daemon's process is gone and nothing serves its socket. Quick:
    the pid only. `thorough` (while waiting for a reply) also asks the socket, which
    notices a daemon that exited but was not yet reaped by its parent."""
    if pid_gone(pid):
        return is_listening(address)  # its pid may be of another namespace
    return not thorough or is_listening(address)


def pid_gone(pid: int | None) -> bool:
    """The process `pid` is known to be gone (None: no pid known, so not known gone)."""
    return pid is not None and not _pid_alive(pid)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return not _zombie(pid)


def _zombie(pid: int) -> bool:
    """A daemon that exited but that its parent (a test, a harness) has not reaped yet
    still answers signal 0; Linux says so in /proc. Elsewhere: not known, so not."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()[0] == b"Z"
    except (OSError, IndexError):
        return False


def may_retry(method: str, idempotency_key: str | None) -> bool:
    """Whether a request can be sent again after its daemon died."""
    return idempotency_key is not None or method in READ_ONLY_METHODS


def died_during(method: str, pid: int | None, root: str) -> DaemonUnavailable:
    """The error for a request that may have been applied by a daemon that then died."""
    return DaemonUnavailable.local(
        ErrorCode.DAEMON_UNAVAILABLE,
        f"the daemon (pid {pid}) died while handling {method}; it may or may not have"
        " been applied: read the file (or `editjournal log`) before retrying, or send"
        " writes with an idempotency_key so they can be retried safely",
        method=method,
        workspace=root,
        pid=pid,
    )


def stopping(response: Response) -> bool:
    """The daemon answered that it is stopping and did not run the request."""
    return response.error is not None and response.error.code == ErrorCode.DAEMON_STOPPING


def wait_gone(pid: int | None, address: str, timeout: float) -> bool:
    """Wait (bounded) until a stopping daemon has exited and left its socket, so that a
    new one can take the workspace's lock; whether it did within `timeout`."""
    deadline = time.monotonic() + timeout
    while daemon_alive(pid, address, thorough=True):
        if time.monotonic() >= deadline:
            return False
        time.sleep(GONE_POLL_S)
    return True
