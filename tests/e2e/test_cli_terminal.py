"""At a terminal: Ctrl-C ends quietly with 130, a waiting `edit` says what it waits
for, and colour appears only on a terminal and never under NO_COLOR.

SIGINT is sent to real processes at the moment they wait (for events, for
operations on stdin), as a terminal's Ctrl-C would.
"""

from __future__ import annotations

import os
import pty
import signal
import subprocess
import time
from pathlib import Path

from tests.conftest import RunningDaemon, wait_until
from tests.e2e.cli_support import (
    CLI,
    TIMEOUT,
    as_at_a_terminal,
    cli_env,
    read_until,
    run_on_terminal,
)

WAITING = "reading operations as JSON from stdin; end with Ctrl-D"
REPRESS_S = 3.0


def interrupt(proc: subprocess.Popen[str]) -> tuple[str, str]:
    """Ctrl-C, pressed again (as a person would) while the process still waits.

    A SIGINT that lands after Python's last check for signals but before its next
    blocking read has started is only noticed when that read returns, which for a
    pipe or terminal nobody writes to is never: Python's own limit, a window of
    microseconds that a busy machine makes real. A second press ends it; one that
    was noticed ends the process before the next."""
    deadline = time.monotonic() + TIMEOUT
    while True:
        proc.send_signal(signal.SIGINT)
        try:
            return proc.communicate(timeout=REPRESS_S)
        except subprocess.TimeoutExpired:
            if time.monotonic() > deadline:
                raise


def test_ctrl_c_ends_watch_with_130_and_no_traceback(daemon: RunningDaemon):
    (daemon.root / "w.txt").write_text("watched\n")
    reader = daemon.client("reader")
    proc = subprocess.Popen(
        [*CLI, "--workspace", str(daemon.root), "watch", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=cli_env(),
        preexec_fn=as_at_a_terminal,
    )
    try:
        assert proc.stdout is not None
        # it is in its loop once it prints: read until an event of ours shows
        subscribed = False
        while not subscribed:
            reader.read_file("w.txt")
            try:
                read_until(proc.stdout, '"kind":"file_read"', timeout=0.5)
                subscribed = True
            except AssertionError:
                assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        _, err = interrupt(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130
    assert "Traceback" not in err and "KeyboardInterrupt" not in err


def test_edit_on_a_terminal_says_what_it_waits_for_and_ctrl_c_ends_it(workspace: Path):
    (workspace / "t.py").write_text("x = 1\n")
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [*CLI, "--workspace", str(workspace), "edit", "t.py"],
        stdin=slave,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=cli_env(),
        preexec_fn=as_at_a_terminal,
    )
    os.close(slave)
    try:
        assert proc.stderr is not None
        read_until(proc.stderr, WAITING)
        out, err = interrupt(proc)
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130
    assert out == "" and "Traceback" not in err
    assert (workspace / "t.py").read_text() == "x = 1\n"
    assert not (workspace / ".editjournal").exists()  # interrupted before any daemon


def test_edit_waiting_on_a_pipe_is_silent_and_ctrl_c_ends_it(workspace: Path, tmp_path: Path):
    """A named pipe as --ops-file: once our non-blocking open for writing succeeds, the
    edit has opened it for reading, and it waits for operations that never come."""
    fifo = tmp_path / "ops.fifo"
    os.mkfifo(fifo)
    proc = subprocess.Popen(
        [*CLI, "--workspace", str(workspace), "edit", "t.py", "--ops-file", str(fifo)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=cli_env(),
        preexec_fn=as_at_a_terminal,
    )
    writer = wait_until(lambda: _open_for_writing(fifo), 20, "edit to open the pipe")
    try:
        out, err = interrupt(proc)
    finally:
        os.close(writer)
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130
    assert out == "" and WAITING not in err and "Traceback" not in err


def _open_for_writing(fifo: Path) -> int | None:
    try:
        return os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
    except OSError:  # ENXIO: nobody has it open for reading yet
        return None


def test_status_is_coloured_on_a_terminal_only_and_never_under_no_color(
    daemon: RunningDaemon,
):
    argv = [*CLI, "--workspace", str(daemon.root), "status"]
    code, shown = run_on_terminal(argv, cli_env())
    assert code == 0, shown
    assert "\x1b[" in shown and "running" in shown
    code, plain = run_on_terminal(argv, cli_env(NO_COLOR="1"))
    assert code == 0 and "\x1b[" not in plain and "running" in plain
    piped = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT, env=cli_env())
    assert "\x1b[" not in piped.stdout
