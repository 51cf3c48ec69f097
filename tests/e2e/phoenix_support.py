"""Arize Phoenix, a real OTLP receiver: what tests/e2e/test_otel_phoenix.py shares.

`phoenix_python` installs `arize-phoenix` (a pinned version) into a venv of its own
under a cache directory (pytest's: `.pytest_cache/d/phoenix-VERSION/`), once, with `uv`
when the project's venv has it (about ten times faster than pip), and reuses it on later
runs; a lock keeps two workers from installing at once, and a marker file written last
means a run killed mid-install is redone. It fails loudly when it cannot install, never
skips. Phoenix never goes into the project's own venv: it pins a whole web stack
(FastAPI, SQLAlchemy, its own OpenTelemetry SDK) that must not decide ours.

`Phoenix` is one `phoenix serve` on free loopback ports, with its working directory
(its SQLite database) and HOME in the test's tmp dir and every call it would make to
the internet of its own accord turned off. Its REST API (`/v1/projects/NAME/spans`)
answers what it stored, as the test reads it back.

Nothing here knows about editjournal: the test decides what to send and what to expect.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import IO, Any

from tests.polling import wait_until

VERSION = "20.26.1"
PACKAGE = f"arize-phoenix=={VERSION}"
INSTALL_TIMEOUT_S = 900
START_TIMEOUT_S = 240.0  # ~35 s on an idle-ish 2-core machine: migrations, then the app
STOP_TIMEOUT_S = 30.0
UV = Path(sys.executable).with_name("uv")
PROJECT = "default"  # spans without `openinference.project.name` land here


class PhoenixUnavailable(AssertionError):
    """Phoenix could not be installed or started: the test fails with this, never skips."""


def phoenix_python(cache: Path) -> Path:
    """The interpreter of a venv holding `arize-phoenix` VERSION, installed once into
    `cache` (the lock is released when its file closes). EDITJOURNAL_TEST_PHOENIX_PYTHON
    names an interpreter to use instead (one where Phoenix is already installed)."""
    given = os.environ.get("EDITJOURNAL_TEST_PHOENIX_PYTHON")
    if given:
        return Path(given)
    cache.mkdir(parents=True, exist_ok=True)
    venv, done = cache / "venv", cache / "installed"
    with open(cache / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            began = time.monotonic()
            shutil.rmtree(venv, ignore_errors=True)
            _install(venv)
            done.write_text(f"{PACKAGE} installed in {time.monotonic() - began:.1f} s\n")
    return venv / "bin" / "python"


def _install(venv: Path) -> None:
    python = venv / "bin" / "python"
    if UV.exists():
        steps = [
            [str(UV), "venv", "--quiet", "--python", sys.executable, str(venv)],
            [str(UV), "pip", "install", "--quiet", "--python", str(python), PACKAGE],
        ]
    else:
        steps = [
            [sys.executable, "-m", "venv", str(venv)],
            [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
             PACKAGE],
        ]  # fmt: skip
    for step in steps:
        try:
            ran = subprocess.run(step, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S)
        except (OSError, subprocess.TimeoutExpired) as e:
            raise PhoenixUnavailable(f"installing {PACKAGE}: `{' '.join(step)}`: {e}") from None
        if ran.returncode != 0:
            raise PhoenixUnavailable(
                f"installing {PACKAGE}: `{' '.join(step)}` exited {ran.returncode}:"
                f" {(ran.stdout + ran.stderr).strip()[-3000:]}"
            )


def free_port() -> int:
    """A loopback port nobody listens on (closed again: Phoenix binds it a moment later)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class Phoenix:
    """`phoenix serve` on 127.0.0.1, its database in `home`; `url` is its HTTP port,
    which takes OTLP/HTTP at `/v1/traces` and answers its REST API under `/v1`."""

    def __init__(self, python: Path, home: Path) -> None:
        home.mkdir(parents=True, exist_ok=True)
        self.port, grpc_port = free_port(), free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = home / "phoenix.log"
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(home),
            "TMPDIR": str(home),
            "PHOENIX_HOST": "127.0.0.1",
            "PHOENIX_PORT": str(self.port),
            "PHOENIX_GRPC_PORT": str(grpc_port),
            "PHOENIX_WORKING_DIR": str(home / "working"),
            "PHOENIX_TELEMETRY_ENABLED": "false",  # no FullStory / Scarf pixels
            "PHOENIX_ALLOW_EXTERNAL_RESOURCES": "false",  # no fonts, no downloads
        }
        self.log: IO[bytes] = open(self.log_path, "wb")  # noqa: SIM115 (closed by stop)
        try:
            self.proc = subprocess.Popen(
                [str(python), "-m", "phoenix.server.main", "serve"],
                cwd=home, env=env, stdin=subprocess.DEVNULL, stdout=self.log,
                stderr=subprocess.STDOUT,
            )  # fmt: skip
        except OSError as e:
            self.log.close()
            raise PhoenixUnavailable(f"{python} does not run: {e}") from None

    def wait_serving(self) -> None:
        """A bounded poll of `/healthz`; Phoenix exiting first fails with its log."""
        try:
            wait_until(
                lambda: self.proc.poll() is not None or self._healthy(),
                START_TIMEOUT_S,
                "Phoenix to answer /healthz",
            )
        except AssertionError as e:
            raise PhoenixUnavailable(f"{e}; its log ends: {self.log_tail()}") from None
        if self.proc.poll() is not None:
            raise PhoenixUnavailable(
                f"phoenix serve exited {self.proc.returncode}: {self.log_tail()}"
            )

    def _healthy(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.url}/healthz", timeout=5) as answer:
                return bool(answer.status == 200)
        except (OSError, urllib.error.URLError):
            return False

    def spans(self, project: str = PROJECT) -> list[dict[str, Any]]:
        """Every span Phoenix stored in `project`, as its REST API gives them (oldest
        first), following its pagination cursor."""
        found: list[dict[str, Any]] = []
        cursor = ""
        while True:
            query = "limit=1000&sort=id&order=asc" + (f"&cursor={cursor}" if cursor else "")
            page = self.get(f"/v1/projects/{project}/spans?{query}")
            found += page["data"]
            cursor = page.get("next_cursor") or ""
            if not cursor:
                return found

    def get(self, path: str) -> dict[str, Any]:
        with urllib.request.urlopen(f"{self.url}{path}", timeout=30) as answer:
            body: dict[str, Any] = json.load(answer)
            return body

    def log_tail(self, size: int = 3000) -> str:
        return self.log_path.read_bytes()[-size:].decode(errors="replace")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
