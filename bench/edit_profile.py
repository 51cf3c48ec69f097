"""Profile a real daemon's edits of a big file the agent has read only a range of.

    .venv/bin/python -m bench.edit_profile [--lines 100000] [--edits 20] [--top 30]
        [--save PROF] [--plain]

The case of issue 11's follow-up: after a one-line ranged read of a 100k-line
file almost every line is unseen by the agent, and each edit carries those
lines forward. The daemon runs under cProfile (started as clients start it,
isolation flags and "/" as working directory, plus `-m cProfile`), one client
times `edit`s interleaved with the in-process durable floor (read, replace,
fsync, rename), then the daemon is stopped and the profile's top entries by
cumulative time are printed, with the per-edit time of the functions this
benchmark watches (unseen-line bookkeeping, rebasing, sha256). `--plain` times
the daemon without the profiler (whose overhead inflates the latency), `--save`
keeps the profile for `pstats`.
"""

from __future__ import annotations

import argparse
import pstats
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.daemons import Daemon
from bench.files import durable_edits, python_source, value_line
from bench.latency import anchored_edits
from bench.stats import interleaved
from editjournal.client import Client
from editjournal.client.library.connection import DAEMON_CWD, daemon_command

WATCHED = ("seen.py", "rebase.py", "openssl_sha256", "_written", "unseen")


def profiled(root: Path, out: Path | None) -> Daemon:
    """The daemon of `root` under cProfile, its profile written to `out` when it stops
    (None: no profiler)."""
    argv = daemon_command(root, "--no-watch")
    if out is not None:
        module = argv.index("-m")
        argv[module:module] = ["-m", "cProfile", "-o", str(out)]
    errors = tempfile.TemporaryFile()  # noqa: SIM115 - closed by Daemon.stop
    proc = subprocess.Popen(
        argv, cwd=DAEMON_CWD, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=errors
    )
    return Daemon(root, proc, errors)


def run(lines: int, edits: int, top: int, save: Path | None, plain: bool) -> None:
    with tempfile.TemporaryDirectory(prefix="ejprof-") as tmp:
        ws, local = Path(tmp) / "ws", Path(tmp) / "local"
        source = python_source(lines)
        for directory in (ws, local):
            directory.mkdir()
            (directory / "big.py").write_text(source)
        out = Path(tmp) / "daemon.prof"
        daemon = profiled(ws, None if plain else out)
        try:
            daemon.wait_serving()
            line = value_line(lines // 2)
            with Client(ws, "bench", autostart=False) as client:
                got = interleaved(
                    {
                        "ours": anchored_edits(client, "big.py", line),
                        "floor": durable_edits(local / "big.py", line),
                    },
                    edits,
                    warmup=1,
                )
        finally:
            daemon.proc.send_signal(signal.SIGINT)  # cProfile writes its file on a clean exit
            daemon.stop()
        ours, floor = got["ours"], got["floor"]
        print(
            f"edit of a {lines:,}-line file after a one-line ranged read, {edits} edits:"
            f" p50 {ours.p50 / 1000:.1f} ms (p99 {ours.p99 / 1000:.1f} ms);"
            f" in-process durable floor p50 {floor.p50 / 1000:.1f} ms;"
            f" ratio {ours.p50 / floor.p50:.2f}"
        )
        if plain:
            return
        if save is not None:
            shutil.copy(out, save)
        stats = pstats.Stats(str(out))
        _watched(stats, edits + 1)
        stats.sort_stats("cumulative").print_stats(top)


def _watched(stats: pstats.Stats, edits: int) -> None:
    """Per-edit cumulative time of the watched functions (ms)."""
    table = stats.stats  # type: ignore[attr-defined]
    for (file, _line, name), (_cc, calls, _tt, cum, _callers) in sorted(
        table.items(), key=lambda item: -item[1][3]
    ):
        if any(w in file or w in name for w in WATCHED):
            where = f"{Path(file).name}:{name}"
            print(f"  {where:<48} {calls:>7} calls  {cum * 1000 / edits:8.2f} ms/edit")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=100_000)
    parser.add_argument("--edits", type=int, default=20)
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--save", type=Path, metavar="PROF", help="keep the profile here")
    parser.add_argument("--plain", action="store_true", help="time without the profiler")
    args = parser.parse_args()
    run(args.lines, args.edits, args.top, args.save, args.plain)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
