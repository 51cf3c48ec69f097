"""`python -m tests.e2e.bench_forked ARGS`: `python -m bench ARGS`, every daemon it starts
forked from a zygote of this process (tests/zygote.py) instead of exec'd.

`make test` runs the quick bench so that no row can rot (tests/e2e/test_bench.py); its
figures mean nothing there. Its ~14 daemons each spent ~0.45 s of CPU importing the
daemon before serving, a third of the test's CPU; forked, they import nothing. `make
bench` and `python -m bench` exec every daemon, as clients start them.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import bench.daemons
from bench.__main__ import main
from editjournal.client.library.connection import DAEMON_CWD, daemon_command
from tests.conftest import DAEMON_PRELOAD
from tests.zygote import close_all, forked

exec_spawn = bench.daemons.spawn


def forked_spawn(root: Path, *options: str) -> bench.daemons.Daemon:
    """`bench.daemons.spawn`, forked: the same `main()` with the same arguments."""
    command = daemon_command(root, *options)
    at = command.index("-m")
    errors = tempfile.TemporaryFile()  # noqa: SIM115 - closed by Daemon.stop
    null = os.open(os.devnull, os.O_RDWR)
    try:
        proc = forked(
            command[1:at], DAEMON_PRELOAD, command[at + 1], command[at + 2 :],
            DAEMON_CWD, null, null, errors.fileno(),
        )  # fmt: skip
    finally:
        os.close(null)
    if proc is None:
        errors.close()
        return exec_spawn(root, *options)
    return bench.daemons.Daemon(root, proc, errors)  # type: ignore[arg-type]


if __name__ == "__main__":
    bench.daemons.spawn = forked_spawn
    try:
        code = main(sys.argv[1:])
    finally:
        close_all()
    sys.exit(code)
