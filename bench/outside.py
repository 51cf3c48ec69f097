"""A big file changed outside, then edited and read with anchors taken before (issue 40).

An agent reads a window of a 200,000-line file with anchors; a writer outside the
daemon changes the file (1,000 lines scattered over it; every line rewritten; a
1,000-line block inserted at the top; the lines reversed); the agent then edits a
line of its window with its old anchor and reads the window again. Its anchors are
carried through that change by a line map of the two contents
(daemon/text/rebase.py `line_map`), computed in a job a slice at a time where the
request may wait for it. Per kind of change: the edit's round trip, the longest
turn of the daemon's loop meanwhile (its log's "a turn held the thread") and the
longest `ping` of a second client, against the same pings on the idle daemon (the
goal: no one waits more than ~100 ms at a time). `--quick` runs it on 2,000
lines: its figures mean nothing.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path

from bench.checkpoints import _pings
from bench.daemons import log_size, longest_logged, serving
from bench.rows import Figure, Row
from bench.sizes import Sizes
from bench.stats import Summary
from editjournal.client import Client, RequestError

FULL_LINES, QUICK_LINES = 200_000, 2_000
CHANGED = 1_000  # lines of a scattered change, and of the block inserted at the top
MIN_STEP = 100  # a scattered change changes one line in this many at most (--quick)
STALL_GOAL_MS = 100.0
KINDS = ("scattered", "rewritten", "inserted at the top", "reversed")
Serving = Callable[[Path], AbstractContextManager[object]]


@dataclass(frozen=True)
class Carried:
    """One kind of outside change met by an agent's edit and read, as measured."""

    kind: str
    edit_us: float  # the edit's round trip
    outcome: str  # "applied" or the refusal's code
    longest_turn_ms: float  # of the turns the daemon logged meanwhile (0: none over 100 ms)
    pings_us: list[float]


def rows(tmp: Path, sizes: Sizes) -> Iterator[Row]:
    lines = QUICK_LINES if sizes.latency_n < 100 else FULL_LINES
    ws = tmp / "ws"
    ws.mkdir()
    idle, found = measured(ws, lines, lambda root: serving(root))
    for one in found:
        name = f"edit with old anchors after an outside change ({one.kind}), {lines:,} lines"
        yield stall_row(name, one.edit_us, one.outcome, one.longest_turn_ms, one.pings_us, idle)


def stall_row(
    name: str, wall_us: float, outcome: str, turn_ms: float, pings_us: list[float], idle: Summary
) -> Row:
    """A request judged by the daemon's longest turn meanwhile and another client's
    pings, against the idle daemon's pings (the goal: no wait over ~100 ms)."""
    ping = Summary.of(pings_us)
    return Row(
        name,
        Figure(
            "editjournal",
            wall_us,
            "us",
            extra=f"{outcome}; longest turn {turn_ms:.0f} ms, "
            f"ping max {max(pings_us) / 1e3:.0f} ms ({len(pings_us)} pings)",
        ),
        [Figure("`ping` on the idle daemon", idle.p50, "us", p99=idle.p99)],
        goal="≤ ~100 ms at a time",
        met=turn_ms <= STALL_GOAL_MS and ping.p99 <= STALL_GOAL_MS * 1e3,
    )


def measured(ws: Path, lines: int, serve: Serving) -> tuple[Summary, list[Carried]]:
    """The idle daemon's pings, then each kind of change met (a daemon `serve` starts)."""
    with serve(ws), Client(ws, "bench-outside", autostart=False, timeout=900) as agent:
        idle = Summary.of(_pings(ws, 0.5))
        return idle, [_met(agent, ws, kind, lines) for kind in KINDS]


def content(lines: int) -> list[str]:
    """Code-like lines: most unique, a blank or a closing line now and then."""
    return [
        "" if i % 8 == 7 else "    }" if i % 13 == 12 else f"    v{i} = f({i % 997}, {i})"
        for i in range(lines)
    ]


def changed(before: list[str], kind: str) -> list[str]:
    """`before` as the outside writer leaves it."""
    if kind == "scattered":
        step = max(len(before) // CHANGED, MIN_STEP)
        return [f"{line} # outside" if i % step == 1 else line for i, line in enumerate(before)]
    if kind == "rewritten":
        return [f"{line};" for line in before]
    if kind == "inserted at the top":
        return [f"# header {i}" for i in range(CHANGED)] + before
    return before[::-1]


def _met(agent: Client, ws: Path, kind: str, lines: int) -> Carried:
    """Read a window, change the file outside, edit and read with the old anchors."""
    name = f"{kind.replace(' ', '_')}.py"
    path = ws / name
    before = content(lines - CHANGED if kind == "inserted at the top" else lines)  # the limit
    path.write_text("".join(f"{line}\n" for line in before))
    target = _target(before, kind)
    window = f"{target - 20}-{min(target + 20, lines)}"
    read = agent.read_file(name, hashes=True, range=window)
    anchor = next(row.hash for row in read.lines or [] if row.line == target)
    path.write_text("".join(f"{line}\n" for line in changed(before, kind)))
    logged = log_size(ws)
    done = threading.Event()
    pings: list[float] = []
    pinger = threading.Thread(target=lambda: pings.extend(_pings(ws, 900, done)))
    pinger.start()
    started = time.perf_counter()
    try:
        outcome = _edited(agent, name, anchor)
        edit_us = (time.perf_counter() - started) * 1e6
        agent.read_file(name, hashes=True, range=window)
    finally:
        done.set()
        pinger.join()
    return Carried(kind, edit_us, outcome, longest_logged(ws, logged), pings)


def _target(before: list[str], kind: str) -> int:
    """The line edited (1-based): one that anchors well (not blank, not `}`), three
    quarters down and left as it was by the scattered change; of a reversal, the one
    line it keeps in order (the last unique one), as any other is refused `anchor_stale`
    (whose delta, a difflib of the reversed lines, is another matter: see the docs)."""
    if kind == "reversed":
        return max(i for i, line in enumerate(before) if line.startswith("    v")) + 1
    step = max(len(before) // CHANGED, MIN_STEP)
    at = len(before) * 3 // 4
    while not before[at].startswith("    v") or at % step == 1:
        at += 1
    return at + 1


def _edited(agent: Client, name: str, anchor: str) -> str:
    try:
        agent.edit(name, [{"op": "replace_line", "hash": anchor, "content": "    edited = 1"}])
    except RequestError as refused:
        return refused.code
    return "applied"
