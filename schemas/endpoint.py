"""Where a workspace's daemon lives: the files both sides agree on.

The daemon writes `<workspace>/.editjournal/daemon.json` (mode 0600) once its
socket is bound; clients read it to find the socket. Names only, no I/O.
"""

from __future__ import annotations

import msgspec

STATE_DIR_NAME = ".editjournal"
ENDPOINT_FILE = "daemon.json"
PID_FILE = "daemon.pid"
LOCK_FILE = "daemon.lock"
LOG_FILE = "daemon.log"
JOURNAL_FILE = "journal.db"
SOCKET_FILE = "daemon.sock"


class Endpoint(msgspec.Struct, kw_only=True):
    """The content of daemon.json."""

    pid: int
    workspace: str
    socket: str  # a ZeroMQ address, e.g. ipc:///ws/.editjournal/daemon.sock
    version: str
    protocol: int
    events: str = ""  # the PUB socket's address: every committed event


ENDPOINT_ENCODER = msgspec.json.Encoder()
ENDPOINT_DECODER = msgspec.json.Decoder(Endpoint)
