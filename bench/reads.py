"""Big reads, and how long they hold the daemon's thread (issue 40).

Loads, each on a daemon of its own (the turn figures in `status` are the run's): a
whole-file `read_file` of a 200,000-line file, (a) the same with anchors; (b) one anchored
`read_many_files` of 100 files, 16 MiB in all (`MAX_READ_BYTES`; it was 32 MiB); (c) three of those
at once, from three clients. For each: the request's round trip, the longest turn
of the daemon's loop (`status.group_commit.turns.longest_ms`, what the read held
the thread for at one time) and a second client's `ping` round trips meanwhile,
against the same pings on the idle daemon. The goal: no one waits more than ~100 ms
at a time. `--quick` runs it at tiny sizes: its figures mean nothing.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from bench.checkpoints import _pings
from bench.daemons import serving
from bench.rows import Figure, Row
from bench.sizes import Sizes
from bench.stats import Summary
from editjournal.client import Client
from editjournal.schemas.tools import MAX_READ_BYTES

FULL_LINES, QUICK_LINES = 200_000, 2_000
FULL_FILES, QUICK_FILES = 100, 4
QUICK_BYTES = 300 * 1024  # just over readjob.SLICED_BYTES: the job's path, in a few slices
LINE = "    v_{n:07d} = f(v_{m:07d}) + 'text'\n"  # 38 bytes: 200,000 lines fit 8 MiB
STALL_GOAL_MS = 100.0


def rows(tmp: Path, sizes: Sizes) -> Iterator[Row]:
    """The four loads; `--quick` (for `make test`) runs two, each code path once."""
    quick = sizes.latency_n < 100
    lines = QUICK_LINES if quick else FULL_LINES
    files = QUICK_FILES if quick else FULL_FILES
    total = QUICK_BYTES if quick else MAX_READ_BYTES
    if not quick:
        yield _row(tmp / "plain", f"whole-file `read_file` of {lines:,} lines", 1,
                   lambda ws: _one_file(ws, lines), _read_whole(lines, hashes=False))  # fmt: skip
    yield _row(tmp / "a", f"whole-file anchored `read_file` of {lines:,} lines", 1,
               lambda ws: _one_file(ws, lines), _read_whole(lines))  # fmt: skip
    many = f"anchored `read_many_files` of {files} files, {total / 2**20:.1f} MiB"
    if not quick:
        yield _row(tmp / "b", many, 1, lambda ws: _many_files(ws, files, total), _read_many)
    yield _row(tmp / "c", f"three {many} at once", 3,
               lambda ws: _many_files(ws, files, total), _read_many)  # fmt: skip


def _row(
    ws: Path,
    what: str,
    clients: int,
    make: Callable[[Path], list[str]],
    read: Callable[[Client, list[str]], Any],
) -> Row:
    """One load on a fresh daemon: the reads' round trips, pings meanwhile, longest turn."""
    ws.mkdir()
    names = make(ws)
    with serving(ws, "--no-watch"), Client(ws, "bench-reads", autostart=False) as c:
        idle = Summary.of(_pings(ws, 0.3))
        took, busy = _with_pings(ws, clients, names, read)
        turns = c.status().group_commit.get("turns", {})
    longest = float(turns.get("longest_ms", 0.0))
    ours = Summary.of(busy)
    extra = (
        f"max {max(busy) / 1e3:.0f} ms; longest turn {longest:.0f} ms,"
        f" {turns.get('over_100ms', '?')} over 100 ms"
    )
    return Row(
        f"`ping` while {what} ({len(busy)} pings; the reads {max(took) / 1e6:.2f} s)",
        Figure("editjournal", ours.p50, "us", p99=ours.p99, extra=extra),
        [Figure("idle daemon", idle.p50, "us", p99=idle.p99)],
        goal="≤ ~100 ms at a time",
        met=longest <= STALL_GOAL_MS,
    )


def _with_pings(
    ws: Path, clients: int, names: list[str], read: Callable[[Client, list[str]], Any]
) -> tuple[list[float], list[float]]:
    """Each client's read round trip (µs), and the pings another client made meanwhile."""
    done = threading.Event()
    busy: list[float] = []
    took: list[float] = []
    pinger = threading.Thread(target=lambda: busy.extend(_pings(ws, 900, done)))

    def reader(k: int) -> None:
        with Client(ws, f"bench-reader-{k}", autostart=False, timeout=900) as c:
            started = time.perf_counter()
            read(c, names)
            took.append((time.perf_counter() - started) * 1e6)

    readers = [threading.Thread(target=reader, args=(k,)) for k in range(clients)]
    pinger.start()
    for thread in readers:
        thread.start()
    for thread in readers:
        thread.join()
    done.set()
    pinger.join()
    return took, busy


def _read_whole(lines: int, hashes: bool = True) -> Callable[[Client, list[str]], Any]:
    return lambda c, names: c.read_file(names[0], hashes=hashes, max_lines=lines)


def _read_many(c: Client, names: list[str]) -> Any:
    return c.read_many_files(names, hashes=True, max_lines=FULL_LINES)


def _one_file(ws: Path, lines: int) -> list[str]:
    (ws / "big.py").write_text("".join(LINE.format(n=i, m=i * 7) for i in range(lines)))
    return ["big.py"]


def _many_files(ws: Path, files: int, total: int) -> list[str]:
    """`files` files of `total` bytes in all, each of lines of its own."""
    per = total // files // len(LINE.format(n=0, m=0))
    names = [f"f{k:03d}.py" for k in range(files)]
    for k, name in enumerate(names):
        start = k * per
        (ws / name).write_text("".join(LINE.format(n=i, m=k) for i in range(start, start + per)))
    return names
