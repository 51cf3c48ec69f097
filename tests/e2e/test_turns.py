"""`status` tells how long the daemon's thread was held, and by what (runtime/turns.py).

The promise of issue 40 is that no request holds the thread for more than ~100 ms at a
time; its figures live in `make bench` (bench/bigfile.py, bench/checkpoints.py), which
read these counters. Here: the counters are the loop's own and name the methods served.
"""

from __future__ import annotations

from pathlib import Path

from editjournal.client import Client
from tests.conftest import wait_until
from tests.e2e.watch_support import outside


def test_status_counts_the_turns_and_names_what_the_longest_did(
    client: Client, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("".join(f"line {i}\n" for i in range(100_000)))
    wait_until(lambda: outside(client, "a.txt"), 20, "a.txt journaled")  # that turn first
    before = client.status().group_commit["turns"]
    client.read_file("a.txt", max_lines=100_000)  # the heaviest turn so far, by far
    after = client.status().group_commit["turns"]
    assert after["turns"] > before["turns"]
    assert after["longest_ms"] >= before["longest_ms"] > 0
    assert "read_file" in after["longest_did"], after
