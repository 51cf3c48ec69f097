"""A real browser for the tests: Debian's `chromium`, headless, driven over the Chrome
DevTools Protocol on `--remote-debugging-pipe` (NUL-separated JSON on fds 3 and 4).

Stdlib only: no Playwright (40 MB in the dev venv, whose build time CI pays) and no
WebSocket client. `ensure_chromium` installs the browser with apt when it is missing
(CI runs as root and reaches Debian's packages) and fails the test loudly when it
cannot: a browser test that skips silently checks nothing.

On this closed network Chromium must be told not to phone home (background
networking, component updates, sync, QUIC): without those flags its connections are
refused, many at a time, and every start waits on lookups of Google's hosts.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.polling import wait_until

CHROMIUM = Path("/usr/bin/chromium")
INSTALL_LOCK = Path(tempfile.gettempdir()) / "editjournal-chromium-install.lock"
FLAGS = (
    "--headless",
    "--no-sandbox",  # CI runs as root, where the sandbox refuses to start
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-dev-shm-usage",
    "--remote-debugging-pipe",
)
TIMEOUT = 60.0


def ensure_chromium() -> Path:
    """/usr/bin/chromium, installed with apt-get when missing (`apt-get update` first
    if the package lists do not know it); the test fails, saying why, when it cannot."""
    if CHROMIUM.exists():
        return CHROMIUM
    with INSTALL_LOCK.open("w") as lock:  # two workers never run apt at once
        fcntl.flock(lock, fcntl.LOCK_EX)
        tried: list[str] = []
        install = ["apt-get", "install", "-y", "chromium"]
        for steps in ([install], [["apt-get", "update"], install]):
            if not CHROMIUM.exists():  # (another worker may have installed it meanwhile)
                tried += [_apt(command) for command in steps]
    if not CHROMIUM.exists():
        pytest.fail(
            "the browser tests need Debian's chromium and could not install it"
            " (`apt-get install -y chromium`, as root):\n" + "\n".join(tried),
            pytrace=False,
        )
    return CHROMIUM


def _apt(command: list[str]) -> str:
    if shutil.which(command[0]) is None:
        return f"$ {' '.join(command)}: {command[0]} not found"
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    try:
        done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=900)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"$ {' '.join(command)}: {e}"
    return f"$ {' '.join(command)}: exit {done.returncode}\n{done.stderr[-2000:]}"


class Browser:
    """One headless Chromium and one page in it, attached over the pipe (a flat session:
    the page's commands carry its `sessionId`). Every event the browser sends is kept
    in `events`, in order, for the test to read (requests, console messages)."""

    def __init__(self, proc: Spawned, to_browser: int, from_browser: int):
        self.proc = proc
        self._out, self._in = to_browser, from_browser
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []
        self.session: str | None = None

    def call(self, method: str, params: dict[str, Any] | None = None, *, page: bool = True) -> Any:
        """Send one command (to the page unless `page` is False) and wait for its result;
        a protocol error fails the test with the browser's message."""
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if page and self.session is not None:
            message["sessionId"] = self.session
        data = json.dumps(message).encode() + b"\0"
        while data:
            data = data[os.write(self._out, data) :]
        while True:
            reply = self._receive(TIMEOUT)
            if reply.get("id") != self._next_id:
                self.events.append(reply)
                continue
            if "error" in reply:
                raise AssertionError(f"{method}: {reply['error']}")
            return reply.get("result", {})

    def wait_for(self, method: str, timeout: float = TIMEOUT) -> dict[str, Any]:
        """The first event named `method` the browser has sent or sends within `timeout`."""
        deadline = time.monotonic() + timeout
        seen = 0
        while True:
            for event in self.events[seen:]:
                if event.get("method") == method:
                    return event
            seen = len(self.events)
            self.events.append(self._receive(deadline - time.monotonic()))

    def _receive(self, timeout: float) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self._in], [], [], max(left, 0))
            if not ready:
                raise AssertionError(f"the browser said nothing for {timeout:.0f} s")
            chunk = os.read(self._in, 1 << 20)
            if not chunk:
                raise AssertionError(
                    f"the browser closed its pipe (exit {self.proc.poll()}): {self.proc.said()}"
                )
            self._buffer += chunk
        message, _, self._buffer = self._buffer.partition(b"\0")
        decoded: dict[str, Any] = json.loads(message)
        return decoded

    def open(self, url: str, width: int, height: int) -> None:
        """A new page of `width` x `height` CSS pixels, watched (network, console, log)
        from before it loads `url`; returns once its load event fired."""
        target = self.call("Target.createTarget", {"url": "about:blank"}, page=False)
        attached = self.call(
            "Target.attachToTarget", {"targetId": target["targetId"], "flatten": True}, page=False
        )
        self.session = attached["sessionId"]
        for domain in ("Page", "Network", "Runtime", "Log"):
            self.call(f"{domain}.enable")
        self.resize(width, height)
        self.events.clear()  # what about:blank did is not the page's
        self.call("Page.navigate", {"url": url})
        self.wait_for("Page.loadEventFired")

    def resize(self, width: int, height: int) -> None:
        """The page's viewport, in CSS pixels (it lays itself out again)."""
        self.call(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
        )

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (awaited, returned by value);
        an exception in it fails the test with its description."""
        result = self.call(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": True},
        )
        if "exceptionDetails" in result:
            raise AssertionError(f"the page's script failed: {result['exceptionDetails']}")
        return result["result"].get("value")

    def screenshot(self, clip: dict[str, float] | None = None) -> bytes:
        """A PNG of the page, or of `clip` ({x, y, width, height} in page coordinates)."""
        params: dict[str, Any] = {"format": "png", "captureBeyondViewport": clip is not None}
        if clip is not None:
            params["clip"] = {**clip, "scale": 1}
        return base64.b64decode(self.call("Page.captureScreenshot", params)["data"])

    def close(self) -> None:
        try:
            self.call("Browser.close", page=False)
        except AssertionError:
            pass  # already gone: the wait below says how it ended
        finally:
            os.close(self._out)
            os.close(self._in)
            self.proc.wait(10)


@contextmanager
def chromium(binary: Path) -> Iterator[Browser]:
    """A headless Chromium with a new empty profile, closed (and its profile removed)
    on exit. Started with posix_spawn, whose file actions place the pipe's ends on fds
    3 and 4 without running Python in the child (a `preexec_fn` is unsafe in the
    pytest-xdist worker, which has threads)."""
    home = Path(tempfile.mkdtemp(prefix="ejchrome"))
    browser_in, to_browser = _pipe_pair()  # the browser reads its commands on fd 3
    from_browser, browser_out = _pipe_pair()  # ... and writes its replies on fd 4
    argv = [str(binary), *FLAGS, f"--user-data-dir={home / 'profile'}", "about:blank"]
    log = home / "stderr.log"
    pid = os.posix_spawn(
        str(binary),
        argv,
        os.environ,
        file_actions=[
            (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
            (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
            (os.POSIX_SPAWN_OPEN, 2, str(log), os.O_WRONLY | os.O_CREAT, 0o600),
            (os.POSIX_SPAWN_DUP2, browser_in, 3),
            (os.POSIX_SPAWN_DUP2, browser_out, 4),
        ],
    )
    os.close(browser_in)
    os.close(browser_out)
    browser = Browser(Spawned(pid, log), to_browser, from_browser)
    try:
        yield browser
    finally:
        browser.close()
        shutil.rmtree(home, ignore_errors=True)


@dataclass
class Spawned:
    """The browser's process: its pid, where its stderr goes, and how it ended."""

    pid: int
    log: Path
    status: int | None = None

    def poll(self) -> int | None:
        if self.status is None:
            done, status = os.waitpid(self.pid, os.WNOHANG)
            if done:
                self.status = os.waitstatus_to_exitcode(status)
        return self.status

    def wait(self, timeout: float) -> int:
        """Its exit code, killing it when it has not ended within `timeout`."""
        try:
            wait_until(lambda: self.poll() is not None, timeout, "the browser to exit")
        except AssertionError:
            os.kill(self.pid, signal.SIGKILL)
            self.status = os.waitstatus_to_exitcode(os.waitpid(self.pid, 0)[1])
        assert self.status is not None
        return self.status

    def said(self) -> str:
        """The end of what it wrote to stderr (why it died, when it did)."""
        try:
            return self.log.read_text(errors="replace")[-2000:]
        except OSError:
            return ""


def _pipe_pair() -> tuple[int, int]:
    """A pipe (read end, write end), both moved above fd 9 and closed on exec: placing
    the browser's ends on 3 and 4 in the child then never overwrites one before it
    is placed, and the child keeps no other end."""
    read, write = os.pipe()
    high = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in (read, write)]
    os.close(read)
    os.close(write)
    return high[0], high[1]
