"""An outside writer adding one numbered line to a file every few milliseconds.

`python -m tests.e2e.outside_writer_worker FILE MODE STOP`: until the file STOP
exists, add `outside-N` as a new last line of FILE, N = 0, 1, ..., then pause ~5 ms
(pacing, not waiting). MODE `append`: `open(FILE, "a")` each time, as a logger or
`echo >>` does; `save`: read the whole file and write it back with the new line
through a temp file renamed over it, as an editor saves. Writes the number of lines
it added to STOP.count. The outside-writer race tests run it beside agents writing
the same file through the daemon: none of its lines may be lost.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path


def add_line(target: Path, mode: str, n: int) -> None:
    line = f"outside-{n}\n"
    if mode == "append":
        with open(target, "a", encoding="utf-8") as handle:
            handle.write(line)
        return
    data = target.read_text(encoding="utf-8")
    temp = target.with_name(f".save-{n}.swp")
    temp.write_text(data + line, encoding="utf-8")
    os.replace(temp, target)


def run(target: Path, mode: str, stop: Path) -> int:
    added = 0
    while not stop.exists():
        add_line(target, mode, added)
        added += 1
        time.sleep(0.005)
    return added


if __name__ == "__main__":
    stop_file = Path(sys.argv[3])
    count = run(Path(sys.argv[1]), sys.argv[2], stop_file)
    stop_file.with_name(stop_file.name + ".count").write_text(str(count))
