"""A command that a library starts with `exec` (the MCP SDK's `stdio_client`), forked
from this worker's zygote all the same.

The zygote (tests/zygote.py) forks children for the test process that asks it; a
library that spawns a command itself asks nothing. So the command it is given is
`launcher_command(...)`: a bare interpreter (`-S -E -I`, ~15 ms of CPU, nothing
imported but `socket`) running `_LAUNCHER`, which hands its own stdin, stdout and
stderr over a unix socket to a relay thread of the test process. The relay forks the
real program from the zygote on those descriptors, so the program's stdio are the
very pipes the library made. The launcher stays as its stand-in: a SIGTERM or SIGINT
the library sends it is passed on, the program's exit status becomes its own, and
should the launcher die (SIGKILL) the relay kills the program. Where nothing can be
forked, the launcher execs the real command.

The MCP server imports the MCP SDK (~1.2 s of CPU per process): forked, it is paid
once per worker.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import socket
import sys
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path

from tests import zygote

MESSAGE_MAX = 1 << 20

_LAUNCHER = r"""
import json, os, signal, socket, sys
relay, command = sys.argv[1], sys.argv[2:]
request = json.loads(os.environ.pop("EJ_RELAY_REQUEST"))
request |= {"cwd": os.getcwd(), "env": dict(os.environ)}
conn = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
conn.connect(relay)
socket.send_fds(conn, [json.dumps(request).encode()], [0, 1, 2])
if "pid" not in json.loads(conn.recv(1 << 16) or b"{}"):
    os.execv(command[0], command)
null = os.open(os.devnull, os.O_RDWR)
os.dup2(null, 0), os.dup2(null, 1)
for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
    signal.signal(sig, lambda number, _: conn.send(json.dumps({"signal": number}).encode()))
while True:
    try:
        reply = conn.recv(1 << 16)
    except InterruptedError:
        continue
    os._exit(json.loads(reply).get("code", 1) & 0xFF if reply else 1)
"""


class Relay:
    """The test process's end: one thread accepting launchers, one per program."""

    def __init__(self, flags: Sequence[str], preload: Sequence[str]) -> None:
        self.flags, self.preload = list(flags), list(preload)
        self.dir = tempfile.mkdtemp(prefix="ejrelay-")
        self.path = str(Path(self.dir) / "s")
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.listener.bind(self.path)
        self.listener.listen(16)
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            data, fds, _, _ = socket.recv_fds(conn, MESSAGE_MAX, 3)
            request = json.loads(data)
            try:
                proc = zygote.forked(
                    self.flags, self.preload, request["module"], request["args"],
                    request["cwd"], *fds, env=request["env"],
                )  # fmt: skip
            finally:
                for fd in fds:
                    os.close(fd)
            if proc is None:
                conn.send(b"{}")
                return
            conn.send(json.dumps({"pid": proc.pid}).encode())
            while proc.poll() is None:
                ready = select.select([conn, proc.pidfd], [], [])[0]
                if conn in ready:
                    message = conn.recv(MESSAGE_MAX)
                    if not message:  # the launcher is gone: so is its program
                        proc.kill()
                        proc.wait()
                        return
                    proc.send_signal(json.loads(message)["signal"])
            with contextlib.suppress(OSError):
                conn.send(json.dumps({"code": proc.returncode}).encode())


_relays: dict[tuple[str, ...], Relay] = {}


def launcher_command(
    preload: Sequence[str], module: str, args: Sequence[str], real: Sequence[str]
) -> tuple[str, list[str], dict[str, str]]:
    """(command, args, extra environment) that run `python -m MODULE ARGS` forked from a
    zygote that has `preload` imported, in the launcher's working directory and
    environment (what the library gave it), standing in for the real command `real`
    (exec'd when no zygote can fork)."""
    key = tuple(preload)
    if key not in _relays:
        _relays[key] = Relay([], preload)
    env = {"EJ_RELAY_REQUEST": json.dumps({"module": module, "args": list(args)})}
    launcher = ["-S", "-E", "-c", _LAUNCHER, _relays[key].path, *real]
    return sys.executable, launcher, env
