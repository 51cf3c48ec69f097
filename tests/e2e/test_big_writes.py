"""A big file's many-operation write is planned ahead, in slices (issue 40).

An `edit` of a file of `SLICED_FROM` lines or more is planned in a job a phase a
slice at a time (daemon/handlers/aheadjob.py): the request is parked, others are
answered meanwhile, and the final run takes the plan only if nothing it was made
from moved on. Here another agent writes the same file while the big edit is
parked: one of the two writes is planned again over the other (its reply says it
was carried over it), none is written blind, and the file ends with both. The
exact points (a change after the plan, a record of the path since) are played
in-process in tests/unit/test_planned_ahead.py.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from editjournal.daemon.handlers.indexjob import SLICED_FROM
from tests.conftest import RunningDaemon
from tests.polling import wait_until

LINES = SLICED_FROM + 10_000
OPS = 300
STEP = LINES // OPS


def test_a_big_edit_is_parked_and_another_agents_write_is_not_lost(
    daemon: RunningDaemon,
) -> None:
    (daemon.root / "big.txt").write_text("".join(f"line {i}\n" for i in range(LINES)))
    big, small, pinger = daemon.client("agent-a"), daemon.client("agent-b"), daemon.client("p")
    anchors = big.read_file("big.txt", hashes=True, max_lines=LINES).anchors
    mine = small.read_file("big.txt", hashes=True, range="4-4").anchors
    assert anchors is not None and mine is not None
    ops = [
        {"op": "replace_line", "hash": anchors[STEP * i + 10], "line": STEP * i + 11,
         "content": f"LINE {STEP * i + 10}"}
        for i in range(OPS)
    ]  # fmt: skip
    out: dict[str, Any] = {}
    thread = threading.Thread(target=lambda: out.update(big=big.edit("big.txt", ops)))
    thread.start()
    try:
        wait_until(lambda: pinger.status().parked > 0 or not thread.is_alive(), 60, "parked")
        began = time.monotonic()
        pinger.ping()  # answered while the big edit is parked
        assert time.monotonic() - began < 10
        other = small.edit(
            "big.txt", [{"op": "replace_line", "hash": mine[0], "line": 4, "content": "B"}]
        )
    finally:
        thread.join(120)
    done = out["big"]
    text = (daemon.root / "big.txt").read_text()
    assert text.count("\nLINE ") + text.startswith("LINE ") == OPS
    assert "\nB\n" in text  # the other agent's line is kept
    later, earlier = (done, other) if done.version > other.version else (other, done)
    assert later.rebased_from_version is not None  # planned again over the other's write
    assert earlier.rebased_from_version is None
