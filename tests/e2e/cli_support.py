"""Running the real `editjournal` command: as a process, on pipes or on a pseudo-terminal."""

from __future__ import annotations

import os
import pty
import select
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO

from tests import zygote

CLI_MODULE = "editjournal.client.cli"
CLI = [sys.executable, "-m", CLI_MODULE]
# what a CLI or hook child finds imported (tests/zygote.py): the command line and what
# its commands import (the library, views, tools, the hook and its installers, the
# offline audit); not the SDK adapters (the Agents and Claude SDKs take seconds to
# import, and no command loads them)
CLI_PRELOAD = (
    "editjournal.client.cli.*",
    "editjournal.client.library.*",
    "editjournal.client.views.*",
    "editjournal.client.tools.*",
    "editjournal.client.entry",
    "editjournal.client.harness.hook",
    "editjournal.client.harness.hook_settings",
    "editjournal.client.harness.git_hooks",
    "editjournal.daemon.audit.*",
    "editjournal.schemas.*",
)
BIN = Path(sys.executable).parent
SCRIPT = BIN / "editjournal"
TIMEOUT = 60


def cli_env(**extra: str) -> dict[str, str]:
    """The test's environment without EDITJOURNAL_* settings, plus `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("EDITJOURNAL_")}
    env.pop("NO_COLOR", None)
    return {**env, **extra}


def cli(
    root: Path | None,
    *args: str,
    stdin: str | None = None,
    agent: str = "cli-test",
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
) -> subprocess.CompletedProcess[str]:
    """`editjournal --workspace ROOT ARGS...` (no --workspace when root is None), run in
    `cwd` when given (else this process's working directory)."""
    workspace = ["--workspace", str(root)] if root is not None else []
    env = env or cli_env(EDITJOURNAL_AGENT=agent)
    return run_program(CLI_MODULE, [*workspace, *args], CLI, stdin=stdin, env=env, cwd=cwd)


def run_program(
    module: str,
    args: Sequence[str],
    command: Sequence[str],
    *,
    stdin: str | None,
    env: dict[str, str],
    cwd: Path | None,
) -> subprocess.CompletedProcess[str]:
    """`python -m MODULE ARGS` forked from the worker's zygote (tests/zygote.py), or,
    when it cannot be, `COMMAND ARGS` exec'd: its output captured as text."""
    done = zygote.run(
        [],
        CLI_PRELOAD,
        module,
        args,
        stdin=stdin,
        env=env,
        cwd=str(cwd or Path.cwd()),
        timeout=TIMEOUT,
    )
    if done is not None:
        return done
    return subprocess.run(
        [*command, *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        env=env,
        cwd=cwd,
    )


def read_until(stream: IO[str], needle: str, timeout: float = 20.0) -> str:
    """Read `stream` (a pipe) until `needle` appears; fail after `timeout` seconds."""
    seen = ""
    deadline = time.monotonic() + timeout
    while needle not in seen:
        left = deadline - time.monotonic()
        if left <= 0:
            raise AssertionError(f"{needle!r} did not appear within {timeout:g} s: {seen!r}")
        ready, _, _ = select.select([stream], [], [], min(left, 0.2))
        if ready:
            chunk = os.read(stream.fileno(), 4096).decode()
            if not chunk:
                raise AssertionError(f"stream closed before {needle!r} appeared: {seen!r}")
            seen += chunk
    return seen


def run_on_terminal(argv: Sequence[str], env: dict[str, str]) -> tuple[int, str]:
    """Run with stdout and stderr on a pseudo-terminal: its exit code and what it showed."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=slave, stderr=slave, env=env)
    os.close(slave)
    out = b""
    deadline = time.monotonic() + TIMEOUT
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.2)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # EIO: every writer of the terminal has closed it
                    break
                if not chunk:
                    break
                out += chunk
        else:
            proc.kill()
            raise AssertionError(f"{argv} did not finish within {TIMEOUT} s")
        return proc.wait(TIMEOUT), out.decode()
    finally:
        os.close(master)


def as_at_a_terminal() -> None:
    """`preexec_fn` for a process a test will Ctrl-C: SIGINT at its default, as a
    terminal's foreground process has it. A shell runs background jobs (`make test &`)
    with SIGINT ignored, the ignoring is inherited, and Python then never raises
    KeyboardInterrupt: the test would measure how it was launched, not the CLI."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
