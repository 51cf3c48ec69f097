"""Every tool on a big file, many-file requests at their caps, and the audit requests on
a big journal, measured from outside (issue 40, round 4): a request no round had
measured held every agent for seconds (`write_file` rewriting a 200,000-line file:
19.5 s in one turn).

Per request: its round trip, the daemon's longest turn meanwhile (its log's "a turn
held the thread", every turn over 100 ms: daemon/runtime/turns.py) and the longest
`ping` of a second client, against the same pings on the idle daemon. The goal: no
one waits more than ~100 ms at a time. `--quick` runs it on small sizes: its figures
mean nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.checkpoints import _pings, timed_with_pings
from bench.daemons import log_size, longest_logged, serving
from bench.outside import stall_row
from bench.rows import Row
from bench.sizes import Sizes
from bench.stats import Summary
from editjournal.client import Client

FULL_LINES, QUICK_LINES = 200_000, 2_000
FULL_FILES, QUICK_FILES = 1_000, 70  # a many-file patch: at its cap; quick: just sliced
FULL_EVENTS, QUICK_EVENTS = 60_000, 300  # the journal the audit requests read back


@dataclass(frozen=True)
class Measured:
    name: str
    wall_us: float
    outcome: str
    longest_turn_ms: float
    pings_us: list[float]


def rows(tmp: Path, sizes: Sizes) -> Iterator[Row]:
    full = sizes.latency_n >= 100
    lines = FULL_LINES if full else QUICK_LINES
    files = FULL_FILES if full else QUICK_FILES
    events = FULL_EVENTS if full else QUICK_EVENTS
    ws = tmp / "tools"
    ws.mkdir()
    with serving(ws), Client(ws, "bench-tools", autostart=False, timeout=900) as agent:
        idle = Summary.of(_pings(ws, 0.5))
        found = [*_big_file(ws, agent, lines), *_many_files(ws, agent, files)]
        found += _audit(ws, agent, events)
    for one in found:
        yield stall_row(one.name, one.wall_us, one.outcome, one.longest_turn_ms, one.pings_us, idle)


def measured(ws: Path, name: str, request: Callable[[], Any]) -> Measured:
    """`request` timed while another client pings; the longest turn the daemon logged."""
    logged = log_size(ws)
    out: dict[str, Any] = {}
    wall, pings = timed_with_pings(ws, lambda: out.setdefault("reply", request()))
    error = getattr(out["reply"], "error", None)
    outcome = "ok" if error is None else error.code
    return Measured(name, wall, outcome, longest_logged(ws, logged), pings)


def code(lines: int, prefix: str = "v") -> str:
    return "".join(f"    {prefix}{i} = f({i % 997}, {i})\n" for i in range(lines))


def _big_file(ws: Path, agent: Client, lines: int) -> list[Measured]:
    (ws / "big.py").write_text(code(lines))
    agent.read_file("big.py", hashes=True, range="1-10")
    sections = max(1, lines // 200)
    markdown = "".join(
        f"## Section {k}\n" + "".join(f"text {k} {i}\n" for i in range(199))
        for k in range(sections)
    )
    (ws / "big.md").write_text(markdown)
    agent.read_file("big.md", max_lines=lines + 10)
    big = f"{lines:,}-line"
    return [
        measured(
            ws,
            f"`write_file` rewriting every line of a {big} file",
            lambda: agent.call("write_file", {"path": "big.py", "content": code(lines, "w")}),
        ),
        measured(
            ws,
            f"`write_file` of a new {big} file",
            lambda: agent.call("write_file", {"path": "new.py", "content": code(lines)}),
        ),
        measured(
            ws,
            f"`update_section` of a {big} markdown file",
            lambda: agent.call(
                "update_section",
                {
                    "path": "big.md",
                    "section_header": f"## Section {sections - 1}",
                    "new_content": "new text\n",
                },
            ),
        ),
    ]


def _many_files(ws: Path, agent: Client, files: int) -> list[Measured]:
    names = [f"many/d{i // 100:02}/f{i:04}.py" for i in range(files)]
    for name in names:
        (ws / name).parent.mkdir(parents=True, exist_ok=True)
        (ws / name).write_text("".join(f"line {j} of {name}\n" for j in range(60)))
    updates = "".join(
        f"*** Update File: {n}\n@@\n line 10 of {n}\n-line 11 of {n}\n+LINE 11 of {n}\n"
        for n in names
    )
    deletes = "".join(f"*** Delete File: {n}\n" for n in names)
    return [
        measured(
            ws,
            f"`apply_patch` of {files:,} `Update File` operations",
            lambda: agent.call(
                "apply_patch", {"patch": f"*** Begin Patch\n{updates}*** End Patch\n"}
            ),
        ),
        measured(
            ws,
            f"`apply_patch` of {files:,} `Delete File` operations",
            lambda: agent.call(
                "apply_patch", {"patch": f"*** Begin Patch\n{deletes}*** End Patch\n"}
            ),
        ),
    ]


def _audit(ws: Path, agent: Client, events: int) -> list[Measured]:
    names = [f"r/f{i:03}.txt" for i in range(100)]
    (ws / "r").mkdir()
    for name in names:
        (ws / name).write_text(f"{name}\n")
    (ws / "hot.txt").write_text("start\n")
    for i in range(min(2_000, events // 10)):
        agent.append_to_file("hot.txt", f"line {i}\n")
    while _last_seq(agent) < events:
        agent.read_many_files(names)
    journal = f"a journal of {events:,} events"
    return [
        measured(
            ws,
            f"`history` of a file on {journal}",
            lambda: agent.call("history", {"path": "hot.txt"}),
        ),
        measured(
            ws, f"`blame` of it on {journal}", lambda: agent.call("blame", {"path": "hot.txt"})
        ),
        measured(ws, f"`stats` of {journal}", lambda: agent.call("stats", {})),
    ]


def _last_seq(agent: Client) -> int:
    result = agent.call("status", {}).result
    return int(result["last_seq"]) if isinstance(result, dict) else 0
