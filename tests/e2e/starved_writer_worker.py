"""An outside appender at ten times the race tests' rate, some of whose lines come late.

`python -m tests.e2e.starved_writer_worker FILE STOP`: until the file STOP exists, add
`outside-N` as a new last line of FILE with `open(FILE, "a")`, N = 0, 1, ..., pausing
0.5 ms between lines (the race tests' writer pauses 5 ms). Every 50th line is written
through an fd opened when its turn came but written 0.6-1.2 s later (a writer
descheduled between its `open` and its `write`, longer than the daemon's 0.5 s grace),
while the other lines go on. Writes the number of lines it added to STOP.count. Run
beside agents writing FILE through the daemon, pinned to one busy core: none of its
lines may be lost.
"""

from __future__ import annotations

import os
import random
import sys
import time
from pathlib import Path

PAUSE_S = 0.0005
LATE_EVERY = 50


def run(target: Path, stop: Path) -> int:
    late: list[tuple[float, int, int]] = []  # (when to write, fd, line number)
    chance = random.Random(40)
    added = 0
    while not stop.exists():
        if added % LATE_EVERY == LATE_EVERY - 1:
            fd = os.open(target, os.O_WRONLY | os.O_APPEND)
            late.append((time.monotonic() + chance.uniform(0.6, 1.2), fd, added))
        else:
            with open(target, "a", encoding="utf-8") as handle:
                handle.write(f"outside-{added}\n")
        added += 1
        late = _write_due(late, time.monotonic())
        time.sleep(PAUSE_S)
    _write_due(late, float("inf"))
    return added


def _write_due(late: list[tuple[float, int, int]], now: float) -> list[tuple[float, int, int]]:
    """Write and close the late fds whose time has come; the rest stay open."""
    waiting = []
    for due, fd, n in late:
        if due > now:
            waiting.append((due, fd, n))
            continue
        os.write(fd, f"outside-{n}\n".encode())
        os.close(fd)
    return waiting


if __name__ == "__main__":
    stop_file = Path(sys.argv[2])
    count = run(Path(sys.argv[1]), stop_file)
    stop_file.with_name(stop_file.name + ".count").write_text(str(count))
