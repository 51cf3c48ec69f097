"""A many-hunk patch of a big file, and what the other agents wait meanwhile (issue 40).

`safe_patch` of 1,000 one-line hunks (the cap) to a 200,000-line file (the line
limit), each time on a file of its own that the agent has read without anchors:
the daemon anchors the file (a job, a slice at a time), plans the hunks and
derives the new version's anchors from the old ones in O(change). Against a
plain whole-file `read_file` of the same file, in the same run; and a second
client's `ping` round trips meanwhile, against the same pings on the idle daemon
(the goal: no one waits more than ~100 ms at a time). Then `edit` of as many
`replace_line` operations (the cap) on such a file the agent read with anchors,
with the pings meanwhile. Both writes are planned ahead in a job, a phase a slice
at a time (daemon/handlers/aheadjob.py). `--quick` runs it on 2,000 lines and 50
hunks: its figures mean nothing.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

from bench.checkpoints import _pings, timed_with_pings
from bench.daemons import log_size, longest_logged, serving
from bench.rows import Figure, Row
from bench.sizes import Sizes
from bench.stats import Summary
from editjournal.client import Client

FULL_LINES, FULL_HUNKS, FULL_N = 200_000, 1_000, 3
QUICK_LINES, QUICK_HUNKS, QUICK_N = 2_000, 50, 1
STALL_GOAL_US = 100_000


def rows(tmp: Path, sizes: Sizes) -> Iterator[Row]:
    quick = sizes.latency_n < 100
    lines = QUICK_LINES if quick else FULL_LINES
    hunks = QUICK_HUNKS if quick else FULL_HUNKS
    n = QUICK_N if quick else FULL_N
    ws = tmp / "ws"
    ws.mkdir()
    with serving(ws, "--no-watch"), Client(ws, "bench-big", autostart=False, timeout=900) as c:
        idle = Summary.of(_pings(ws, 0.5))
        patched, reads, waits, edited, edit_waits = [], [], [], [], []
        turns = [0.0, 0.0]  # the longest turn logged over 100 ms: the patches', the edits'
        for k in range(n):
            name = f"big_{k}.txt"
            data = _big_file(ws / name, lines, k)
            started = time.perf_counter()
            c.read_file(name, max_lines=lines)  # the baseline: the whole file, no anchors
            reads.append((time.perf_counter() - started) * 1e6)
            diff, sha = _hunks(lines, hunks, k), hashlib.sha256(data).hexdigest()
            patch = partial(c.safe_patch, name, diff, sha, include_content=False)
            took, busy, turn = _with_pings(ws, patch)
            patched.append(took)
            waits.extend(busy)
            turns[0] = max(turns[0], turn)
            name = f"edited_{k}.txt"
            _big_file(ws / name, lines, k + n)
            ops = _operations(c.read_file(name, hashes=True, max_lines=lines), lines, hunks, k)
            took, busy, turn = _with_pings(ws, partial(c.edit, name, ops))
            edited.append(took)
            edit_waits.extend(busy)
            turns[1] = max(turns[1], turn)
    base = Summary.of(reads)
    yield _cost_row(f"`safe_patch` of {hunks:,} one-line hunks", lines, Summary.of(patched), base)
    yield _pings_row("patch", waits, turns[0], idle)
    ops = f"`edit` of {hunks:,} `replace_line` operations"
    yield _cost_row(ops, lines, Summary.of(edited), base)
    yield _pings_row("edit", edit_waits, turns[1], idle)


def _cost_row(what: str, lines: int, ours: Summary, base: Summary) -> Row:
    """A big write's round trip against a whole-file read of the same file: O(change)."""
    return Row(
        f"{what}, {lines:,}-line file",
        Figure("editjournal", ours.p50, "us", p99=ours.p99),
        [Figure("whole-file `read_file` of it", base.p50, "us", p99=base.p99)],
        goal="O(change): ≤ 30× the read",
        met=ours.p50 <= 30 * base.p50,
    )


def _pings_row(what: str, waits: list[float], turn_ms: float, idle: Summary) -> Row:
    """Another client's pings while `what` was made, and the daemon's longest turn (the
    goal is the daemon's: a ping's round trip adds the pinging process's own waits, the
    GIL of a client that encodes and decodes the big request beside it)."""
    busy = Summary.of(waits)
    turn = f"longest turn {turn_ms:.0f} ms" if turn_ms else "no turn over 100 ms"
    return Row(
        f"`ping` while that {what} is made ({len(waits)} pings)",
        Figure(
            "editjournal", busy.p50, "us", p99=busy.p99,
            extra=f"max {max(waits) / 1e3:.0f} ms; {turn}",
        ),
        [Figure("idle daemon", idle.p50, "us", p99=idle.p99)],
        goal="≤ ~100 ms at a time",
        met=turn_ms <= STALL_GOAL_US / 1e3,
    )  # fmt: skip


def _big_file(path: Path, lines: int, k: int) -> bytes:
    """`lines` lines of a file of its own (its last line names it: no content is shared,
    so no index is reused from the file before)."""
    path.write_text("".join(f"line {i}\n" for i in range(lines - 1)) + f"end of file {k}\n")
    return path.read_bytes()


def _hunks(lines: int, hunks: int, k: int) -> str:
    step = (lines - 1) // hunks
    body = "".join(
        f"@@ -{step * i + 1},1 +{step * i + 1},1 @@\n-line {step * i}\n+LINE {step * i} {k}\n"
        for i in range(hunks)
    )
    return "--- a\n+++ b\n" + body


def _operations(read: Any, lines: int, ops: int, k: int) -> list[dict[str, Any]]:
    """`ops` one-line replacements spread over the file, by the anchors the read gave."""
    anchors, step = read.anchors, (lines - 1) // ops
    return [
        {"op": "replace_line", "hash": anchors[step * i], "line": step * i + 1,
         "content": f"LINE {step * i} {k}"}
        for i in range(ops)
    ]  # fmt: skip


def _with_pings(root: Path, write: Callable[[], object]) -> tuple[float, list[float], float]:
    """The write's round trip (µs), the pings another client made meanwhile, and the
    longest turn the daemon logged meanwhile (ms; 0: none over 100 ms)."""
    logged = log_size(root)
    elapsed, busy = timed_with_pings(root, write)
    return elapsed, busy, longest_logged(root, logged)
