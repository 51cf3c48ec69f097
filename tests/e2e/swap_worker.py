"""Flips a workspace file between a symlink to an outside file and a regular file.

`python -m tests.e2e.swap_worker TARGET OUTSIDE STOP`: until the file STOP exists,
atomically rename a fresh symlink to OUTSIDE over TARGET, then a fresh regular
file; pace ~1 ms per flip (pacing, not waiting). Writes the flip count to STOP.count.
The symlink-swap race tests run it against a daemon that must never follow the link.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path


def flip(target: Path, outside: Path, stop: Path) -> int:
    link, plain = target.with_name(".swap-link"), target.with_name(".swap-file")
    flips = 0
    while not stop.exists():
        os.symlink(outside, link)
        os.replace(link, target)
        time.sleep(0.001)
        plain.write_bytes(b"inside\n")
        os.replace(plain, target)
        time.sleep(0.001)
        flips += 1
    return flips


if __name__ == "__main__":
    target_arg, outside_arg, stop_arg = sys.argv[1:4]
    count = flip(Path(target_arg), Path(outside_arg), Path(stop_arg))
    Path(f"{stop_arg}.count").write_text(str(count))
