"""The hook protocol over loopback HTTP: a harness's `"type": "http"` hooks (Claude Code's).

A harness that can POST its hook payload to a URL (Claude Code) pays a round trip per
tool call instead of an interpreter's start (52-209 ms). This module serves that:
`POST /hook/<harness>` on 127.0.0.1 (never another interface), on a port chosen once
and kept across starts when it is still free (the harness's settings hold the literal
URL: Claude Code does not expand variables in a hook's `url`), answered with exactly
what `editjournal hook <harness>` prints: the same JSON, or an empty body for "allow,
say nothing".

Only this user may use it: every request must carry `Authorization: Bearer <token>`,
the token being 32 random bytes kept in the daemon's private state directory (0700)
in a 0600 file. Anything else is refused `401` before its body is read, and journaled
nowhere (a stranger's knock is not a fact about the workspace).

What it must never do: decide anything itself, or touch the state. The daemon's
process may not import the client (docs/architecture.md), and the decision is the
client's `client/harness/hook.py` `decide`, so the answer is made by a worker
process that runs that very function (`client/harness/hookworker.py`, started on the
first authorised request, kept while the daemon runs) and which, like any client,
sends its requests over the daemon's socket to the one thread that owns the state
and the journal. The threads here only move bytes: one accepts, one per connection
reads requests, and a lock lets one payload at a time through the worker's pipe.

A worker that cannot be started or dies mid-answer fails open as the command hook
does: `200` with an empty body (the call is allowed), said once in the daemon's log.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import logging
import os
import secrets
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO

log = logging.getLogger("editjournal.daemon.hookhttp")

TOKEN_FILE = "hook-http.token"  # the secret, 0600 in the state directory
URL_FILE = "hook-http.json"  # {"url", "port"}: where hooks POST (`hooks install` reads it)
WORKER_MODULE = "editjournal.client.harness.hookworker"
HOST = "127.0.0.1"
MAX_HEAD = 16 * 1024  # bytes of a request line and headers
MAX_BODY = 8 * 1024 * 1024  # bytes of a payload (a Write's whole content rides in it)
IDLE_S = 60.0  # a keep-alive connection left idle this long is closed
# connections open at once (a thread each): beyond, a new one is closed unread, so a
# flood of idle connections costs the daemon a bounded number of threads
MAX_CONNECTIONS = 64


class HookHttp:
    """The endpoint of one daemon: `start()` binds and serves, `stop()` ends it all."""

    def __init__(self, root: Path, state_dir: Path) -> None:
        self.root = root
        self.state_dir = state_dir
        self.token = _token(state_dir)
        self._listener = _bind(_last_port(state_dir))
        self.port: int = self._listener.getsockname()[1]
        self.url = f"http://{HOST}:{self.port}/hook/"
        self._worker: subprocess.Popen[bytes] | None = None
        self._worker_lock = threading.Lock()
        self._said_failed = False
        self._stopped = threading.Event()
        self._connections: set[socket.socket] = set()

    @classmethod
    def serve(cls, root: Path, state_dir: Path) -> HookHttp | None:
        """Started, or None when it cannot be (no loopback, a state file unwritable): the
        daemon serves on without it, and the command hook still works."""
        try:
            served = cls(root, state_dir)
            served.start()
        except OSError as e:
            log.warning("hooks over http are not served: %s", e)
            return None
        return served

    def start(self) -> None:
        _write_private(
            self.state_dir / URL_FILE,
            json.dumps({"url": self.url, "port": self.port}).encode(),
        )
        threading.Thread(target=self._accept, name="hook-http", daemon=True).start()

    def stop(self) -> None:
        """Stop accepting, close every connection, end the worker. The URL file and the
        token stay: the next start binds the same port when it is free, so the settings
        that carry both stay right (`hooks install` reads them with no daemon running)."""
        self._stopped.set()
        with contextlib.suppress(OSError):
            self._listener.shutdown(socket.SHUT_RDWR)
        self._listener.close()
        for conn in list(self._connections):
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        # not under the lock: a payload in the worker may be waiting on the owner thread,
        # which is the one stopping; killed, its readline ends and it is allowed
        worker = self._worker
        if worker is not None:
            worker.kill()
            worker.wait()

    # --- the connections ----------------------------------------------------------------

    def _accept(self) -> None:
        while not self._stopped.is_set():
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return  # closed by stop()
            if len(self._connections) >= MAX_CONNECTIONS:
                conn.close()
                continue
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self._connections.add(conn)
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        """Requests on one connection, one after the other, until it closes or idles."""
        conn.settimeout(IDLE_S)
        reader = conn.makefile("rb")
        try:
            while not self._stopped.is_set():
                request = _read_request(reader)
                if request is None:
                    return
                status, body, keep = self._answer(*request, reader)
                conn.sendall(_response(status, body, keep))
                if not keep:
                    _drained(conn)
                    return
        except (OSError, ValueError):
            return  # a connection dropped or spoke garbage: nothing to answer
        finally:
            self._connections.discard(conn)
            reader.close()
            with contextlib.suppress(OSError):
                conn.close()

    def _answer(
        self, method: str, target: str, headers: dict[str, str], reader: IO[bytes]
    ) -> tuple[int, bytes, bool]:
        """The status, the body, and whether the connection may stay open. A request
        refused before its body is read closes the connection (its body is left unread)."""
        if not self._authorised(headers.get("authorization", "")):
            return 401, b"", False
        harness = target.removeprefix("/hook/")
        if method != "POST" or not target.startswith("/hook/") or not harness.isprintable():
            return 404, b"", False
        length = headers.get("content-length", "")
        if not length.isdigit() or int(length) > MAX_BODY:
            return 413 if length.isdigit() else 411, b"", False
        body = reader.read(int(length))
        keep = headers.get("connection", "").lower() != "close"
        return 200, self._decided(harness, body), keep

    def _authorised(self, header: str) -> bool:
        scheme, _, given = header.partition(" ")
        # constant time: how much of a guess matched must not show in how long it took
        return scheme.lower() == "bearer" and hmac.compare_digest(
            given.strip().encode(), self.token.encode()
        )

    # --- the worker ----------------------------------------------------------------------

    def _decided(self, harness: str, body: bytes) -> bytes:
        """The worker's answer to one payload: the hook's JSON line, or b"" (allow)."""
        line = json.dumps({"harness": harness, "payload": body.decode("utf-8", "replace")})
        with self._worker_lock:
            for attempt in (1, 2):  # a worker found dead is started again, once
                worker = self._worker or self._started()
                if worker is None:
                    return b""
                try:
                    assert worker.stdin is not None and worker.stdout is not None
                    worker.stdin.write(line.encode() + b"\n")
                    worker.stdin.flush()
                    answer = worker.stdout.readline()
                except OSError:
                    answer = b""
                if answer:
                    return _output_of(answer)
                _end(worker)
                self._worker = None
                if attempt == 2:
                    self._failed("the hook worker ended without answering")
        return b""

    def _started(self) -> subprocess.Popen[bytes] | None:
        if self._stopped.is_set():
            return None
        command = [sys.executable, "-E", "-P", "-m", WORKER_MODULE, str(self.root)]
        try:
            self._worker = subprocess.Popen(
                command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=_worker_env()
            )
        except OSError as e:
            self._failed(f"the hook worker could not be started: {e}")
            return None
        return self._worker

    def _failed(self, why: str) -> None:
        """Said once per daemon: every hook after it is allowed the same way."""
        if not self._said_failed:
            self._said_failed = True
            log.warning("hooks over http: %s; calls are allowed unjudged", why)


def _drained(conn: socket.socket) -> None:
    """The answer sent, our side closed for writing, what the client still sends read
    and dropped (a little, briefly): closing with unread bytes would reset the
    connection, and the client could see the reset instead of the 401."""
    with contextlib.suppress(OSError):
        conn.shutdown(socket.SHUT_WR)
        conn.settimeout(1.0)
        left = 64 * 1024
        while left > 0 and (chunk := conn.recv(min(left, 16 * 1024))):
            left -= len(chunk)


def _output_of(answer: bytes) -> bytes:
    """The worker's line `{"output": ..., "notes": [...]}` as the body the harness reads;
    each note (what the command hook says on stderr) goes to the daemon's log."""
    try:
        said = json.loads(answer)
    except ValueError:
        return b""
    for note in said.get("notes") or ():
        log.info("hook: %s", note)
    output = said.get("output")
    return b"" if output is None else json.dumps(output).encode() + b"\n"


def _read_request(reader: IO[bytes]) -> tuple[str, str, dict[str, str]] | None:
    """The request line and headers (names lower-cased), None at a clean end of input."""
    first = reader.readline(MAX_HEAD)
    if not first:
        return None
    parts = first.decode("latin-1").split()
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        raise ValueError("not an HTTP/1.x request")
    headers: dict[str, str] = {}
    size = len(first)
    while True:
        line = reader.readline(MAX_HEAD)
        size += len(line)
        if not line or size > MAX_HEAD:
            raise ValueError("headers too long or cut short")
        if line in (b"\r\n", b"\n"):
            return parts[0], parts[1], headers
        name, _, value = line.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()


_REASONS = {200: "OK", 401: "Unauthorized", 404: "Not Found", 411: "Length Required"}
_REASONS[413] = "Content Too Large"


def _response(status: int, body: bytes, keep: bool) -> bytes:
    head = [
        f"HTTP/1.1 {status} {_REASONS[status]}",
        "Content-Type: application/json",
        f"Content-Length: {len(body)}",
        f"Connection: {'keep-alive' if keep else 'close'}",
    ]
    if status == 401:
        head.append("WWW-Authenticate: Bearer")
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


# --- the state directory's files -----------------------------------------------------------


def _token(state_dir: Path) -> str:
    """The token, made once: a settings file that carries it stays valid across starts."""
    path = state_dir / TOKEN_FILE
    try:
        found = path.read_text().strip()
    except FileNotFoundError:
        found = ""
    if len(found) >= 32:
        return found
    token = secrets.token_urlsafe(32)
    _write_private(path, token.encode() + b"\n")
    return token


def _last_port(state_dir: Path) -> int:
    with contextlib.suppress(OSError, ValueError, TypeError, AttributeError):
        port = json.loads((state_dir / URL_FILE).read_text()).get("port")
        if isinstance(port, int) and 1024 <= port <= 65535:
            return port
    return 0


def _bind(port: int) -> socket.socket:
    """127.0.0.1 only; the port the last start used when it is free (the URL the
    harness holds stays right), else one the kernel picks."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    # the last start's connections may linger in TIME_WAIT on that port; on Linux this
    # never lets a second listener share a port (that is SO_REUSEPORT, not set)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind((HOST, port))
    except OSError:
        listener.bind((HOST, 0))
    listener.listen(64)
    return listener


def _write_private(path: Path, data: bytes) -> None:
    """A 0600 file, whole or not at all (a temporary file renamed over it)."""
    temp = path.with_name(f".{path.name}.{os.getpid()}.new")
    temp.unlink(missing_ok=True)
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.replace(temp, path)


def _worker_env() -> dict[str, str]:
    """The daemon's environment without the harness's project variables: the worker is
    told its workspace, it never guesses one."""
    env = dict(os.environ)
    for name in ("CLAUDE_PROJECT_DIR", "GEMINI_PROJECT_DIR", "EDITJOURNAL_WORKSPACE"):
        env.pop(name, None)
    return env


def _end(worker: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(OSError):
        if worker.stdin is not None:
            worker.stdin.close()
    try:
        worker.wait(timeout=2)
    except subprocess.TimeoutExpired:
        worker.kill()
        worker.wait()
