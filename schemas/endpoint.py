"""Where a workspace's daemon lives: the files both sides agree on.

The daemon writes `<workspace>/.editjournal/daemon.json` (mode 0600) once its
socket is bound; clients read it to find the socket. It also leaves a copy in
a per-user registry directory (`$XDG_RUNTIME_DIR/editjournal/daemons/`, else
`/tmp/editjournal-UID/daemons/`), one file per workspace, so
`editjournal list` and `stop --all` find every daemon this user runs, as
Watchman's `watch-list` does. Names and paths only; nothing here reads or
writes a file.
"""

from __future__ import annotations

import os
from pathlib import Path

import msgspec

STATE_DIR_NAME = ".editjournal"
ENDPOINT_FILE = "daemon.json"
PID_FILE = "daemon.pid"
LOCK_FILE = "daemon.lock"
LOG_FILE = "daemon.log"
JOURNAL_FILE = "journal.db"
SOCKET_FILE = "daemon.sock"
REGISTRY_DIR = "daemons"


class Endpoint(msgspec.Struct, kw_only=True):
    """The content of daemon.json."""

    pid: int
    workspace: str
    socket: str  # a ZeroMQ address, e.g. ipc:///ws/.editjournal/daemon.sock
    version: str
    protocol: int
    events: str = ""  # the PUB socket's address: every committed event
    started_at_ms: int = 0  # wall clock, for uptime in `editjournal list`
    # the daemon's request frame limit (bytes; 0: not said, an older daemon): a client
    # refuses a bigger request itself, since past twice the limit libzmq drops it unread
    # and unanswered (docs/protocol.md, Bad input)
    max_frame: int = 0


ENDPOINT_ENCODER = msgspec.json.Encoder()
ENDPOINT_DECODER = msgspec.json.Decoder(Endpoint)


def user_runtime_dir() -> Path:
    """This user's private runtime directory for editjournal (sockets too long for their
    workspace, the daemon registry): under $XDG_RUNTIME_DIR when set, else the temp dir."""
    base = os.environ.get("XDG_RUNTIME_DIR")
    if base and os.path.isabs(base):
        return Path(base) / "editjournal"
    import tempfile  # here: a harness hook loads this module on every tool call

    return Path(tempfile.gettempdir()) / f"editjournal-{os.getuid()}"


def registry_entry(workspace: str) -> Path:
    """The registry file naming the daemon of `workspace` (an absolute, resolved path)."""
    import hashlib  # here: a harness hook loads this module on every tool call

    digest = hashlib.blake2b(workspace.encode(), digest_size=8).hexdigest()
    return user_runtime_dir() / REGISTRY_DIR / f"{digest}.json"
