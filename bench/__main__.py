"""`python -m bench [--update-readme]`: request latency of a real daemon.

Each figure is paired with a baseline measured in the same run:
- round trip: `ping` through the daemon vs. a bare ZeroMQ echo process;
- reads: `read_file` through the daemon (journaled, group-committed with
  synchronous=FULL) vs. reading + hashing the same file in-process;
- edits: an anchored `edit` (planned, safety-checked, journaled with both
  contents, written atomically) vs. a plain in-process read, replace, fsync and
  rename; and the same edit when another agent changed the file since the
  editing agent's snapshot, so it is carried over that change first.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import platform
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import zmq

from bench.detect import editjournal_latency, watchman_latency
from bench.stats import percentiles
from editjournal.client import Client

README = Path(__file__).resolve().parent.parent / "README.md"


def timed(fn: Callable[[], object], n: int, warmup: int = 50) -> tuple[float, float]:
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(n):
        start = time.perf_counter_ns()
        fn()
        samples.append((time.perf_counter_ns() - start) / 1000)
    return percentiles(samples)


def echo_baseline(tmp: Path, n: int) -> tuple[float, float]:
    address = f"ipc://{tmp}/echo.sock"
    proc = subprocess.Popen(
        [sys.executable, "-m", "bench.echo", address], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    sock = zmq.Context.instance().socket(zmq.DEALER)
    sock.connect(address)
    payload = b"\x84" + b"\xa2id\x01" * 4  # a request-sized msgpack frame

    def round_trip() -> None:
        sock.send(payload)
        sock.recv()

    try:
        return timed(round_trip, n)
    finally:
        sock.send(b"stop")
        sock.close()
        proc.wait(10)


def timed_after(
    prepare: Callable[[], object], fn: Callable[[], object], n: int
) -> tuple[float, float]:
    """Like `timed`, but `prepare` runs untimed before every call."""
    samples = []
    for _ in range(n):
        prepare()
        start = time.perf_counter_ns()
        fn()
        samples.append((time.perf_counter_ns() - start) / 1000)
    return percentiles(samples)


def local_read(path: Path) -> None:
    hashlib.sha256(path.read_bytes()).hexdigest()


def local_edit(path: Path, line: int) -> Callable[[], None]:
    """The baseline edit: read, replace one line, write a temp file, fsync, rename."""
    count = [0]

    def edit() -> None:
        count[0] += 1
        lines = path.read_text().splitlines(keepends=True)
        lines[line - 1] = f"    return x * {count[0]}  # local\n"
        temp = path.with_name(path.name + ".tmp")
        with open(temp, "w") as out:
            out.write("".join(lines))
            out.flush()
            os.fsync(out.fileno())
        os.replace(temp, path)

    return edit


def anchored_edit(client: Client, path: str, line: int) -> Callable[[], None]:
    """Replace one line again and again, each time by the anchor the last edit returned."""
    anchor = [(client.read_file(path, hashes=True).lines or [])[line - 1].hash]
    count = [0]

    def edit() -> None:
        count[0] += 1
        content = f"    return x * {count[0]}  # {client.agent}"
        done = client.edit(path, [{"op": "replace_line", "hash": anchor[0], "content": content}])
        anchor[0] = done.changed_lines[0].hash

    return edit


def run(n: int) -> list[tuple[str, tuple[float, float], str, tuple[float, float]]]:
    with tempfile.TemporaryDirectory(prefix="ejb") as tmp:
        root = Path(tmp)
        source = root / "module.py"
        source.write_text("".join(f"def f{i}(x):\n    return x * {i}\n\n" for i in range(70)))
        (root / "local.py").write_text(source.read_text())
        client = Client(root, "bench")
        other = Client(root, "bench-other")
        mine = anchored_edit(client, "module.py", 5)
        try:
            rows = [
                ("ping via daemon", timed(client.ping, n), "bare zmq echo", echo_baseline(root, n)),
                (
                    "read_file 210 lines",
                    timed(lambda: client.read_file("module.py"), n),
                    "open+sha256 in-process",
                    timed(lambda: local_read(source), n),
                ),
                (
                    "read_file 210 lines, hashes",
                    timed(lambda: client.read_file("module.py", hashes=True), n),
                    "open+sha256 in-process",
                    timed(lambda: local_read(source), n),
                ),
                (
                    "edit (replace_line) 210 lines",
                    timed(anchored_edit(client, "module.py", 2), n),
                    "read+replace+fsync+rename in-process",
                    timed(local_edit(root / "local.py", 2), n, warmup=0),
                ),
                (
                    "edit rebased over another agent's edit",
                    timed_after(anchored_edit(other, "module.py", 200), mine, n),
                    "read+replace+fsync+rename in-process",
                    timed(local_edit(root / "local.py", 2), n, warmup=0),
                ),
            ]
        finally:
            other.close()
            client.close()
            os.kill(client.daemon_pid, signal.SIGTERM)
    return rows


def report(rows: list[tuple[str, tuple[float, float], str, tuple[float, float]]], n: int) -> str:
    machine = f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}"
    lines = [
        f"Measured {time.strftime('%Y-%m-%d')} on {machine}; {n} requests each, µs.",
        "",
        "| measure | p50 | p99 | baseline (same run) | p50 | p99 | p50 ratio |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, (p50, p99), base, (b50, b99) in rows:
        ours, theirs = f"{p50:.0f} | {p99:.0f}", f"{b50:.0f} | {b99:.0f}"
        lines.append(f"| {name} | {ours} | {base} | {theirs} | {p50 / b50:.1f}× |")
    return "\n".join(lines)


def detection(n: int) -> str:
    with (
        tempfile.TemporaryDirectory(prefix="ejd") as ours,
        tempfile.TemporaryDirectory(prefix="ejw") as theirs,
    ):
        mine = editjournal_latency(Path(ours), n)
        watchman = watchman_latency(Path(theirs), n)
    rows = [
        f"Detection latency, write on disk -> event delivered, {n} writes, µs "
        f"(same run, same machine).",
        "",
        "| watcher | p50 | p99 |",
        "|---|---|---|",
        f"| editjournal (watchdog, 20 ms settle, re-read + hash + journal commit) "
        f"| {mine[0]:.0f} | {mine[1]:.0f} |",
    ]
    if watchman is None:
        rows.append("| Watchman | not installed | |")
    else:
        rows.append(
            f"| Watchman 4.9 subscription (20 ms settle) | {watchman[0]:.0f} | {watchman[1]:.0f} |"
        )
    return "\n".join(rows)


def update_readme(marker: str, table: str) -> None:
    text = README.read_text()
    block = f"<!-- {marker}:start -->\n{table}\n<!-- {marker}:end -->"
    pattern = rf"<!-- {marker}:start -->.*?<!-- {marker}:end -->"
    README.write_text(re.sub(pattern, block, text, flags=re.S))


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench")
    parser.add_argument("-n", type=int, default=2000, help="requests per latency measure")
    parser.add_argument("--writes", type=int, default=1000, help="writes for detection latency")
    parser.add_argument("--only", choices=["latency", "detect"])
    parser.add_argument("--update-readme", action="store_true")
    args = parser.parse_args()
    if args.only != "detect":
        table = report(run(args.n), args.n)
        print(table)
        if args.update_readme:
            update_readme("bench", table)
    if args.only != "latency":
        table = detection(args.writes)
        print(table)
        if args.update_readme:
            update_readme("detect", table)


if __name__ == "__main__":
    main()
