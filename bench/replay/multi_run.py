"""Run the multi-hunk ("memory") replay: per case and writer, A reads the file with the
tool's default window, B lands one hunk of the commit, then A writes all the others
top to bottom, one call each, from its memory (`memory.Memory`).

Judged per call: `landed` (the file became what it was plus exactly that hunk),
`refused` (an error reply and the file untouched; its cost is the reply's size
against a full anchored read of the file at that moment), `wrong` (anything
else; the play stops there). A refused hunk stays out of A's memory and A goes
on with the next; a refusal that showed it the file's changes (a stale anchor's
delta) makes the anchored writer read the window around the hunk again before
its next call, as an agent takes in what it was shown instead of writing over it.
Judged per play: `landed` (the file is the parent with every hunk of the commit),
`wrong` (a call was wrong), else `refused`. A real daemon in
a temporary workspace serves the agents.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import msgspec

from bench.replay import multi_tools, tools
from bench.replay.memory import Memory
from bench.replay.multi_cases import MultiCase, applied
from bench.replay.pinned import Serve, server
from bench.replay.run import FULL, isolated_environment
from editjournal.client import Client, RequestError


@dataclass(frozen=True)
class Call:
    """One of A's calls: which hunk (index in the case), how far from B's, the outcome."""

    hunk: int
    gap: int
    outcome: str  # landed | refused | wrong
    code: str | None = None
    cost: float | None = None  # a refusal's reply bytes / a full anchored read's bytes
    message: str = ""


@dataclass(frozen=True)
class Play:
    case: int
    tool: str
    min_gap: int  # the nearest A hunk's distance to B's
    lines: int  # the parent's line count
    outcome: str  # landed | refused | wrong | skipped
    calls: list[Call] = field(default_factory=list)
    window_reads: int = 0  # reads of a window beyond A's first (the anchored writer)
    message: str = ""


@dataclass
class Agents:
    """A writes from memory, B lands its hunk first, `reader` measures a full read."""

    a: Client
    b: Client
    reader: Client


def run(
    cases: Sequence[MultiCase],
    tool_names: Iterable[str] = multi_tools.TOOLS,
    serve: Serve | None = None,
) -> list[Play]:
    """Every case played with every writer; `serve` starts the daemon (default: the
    working tree's)."""
    names = list(tool_names)
    with tempfile.TemporaryDirectory(prefix="ej-replay-") as tmp, isolated_environment(Path(tmp)):
        root = Path(tmp) / "ws"
        root.mkdir()
        plays = [(i, tool) for i in range(len(cases)) for tool in names]
        for i, tool in plays:
            (root / _name(i, tool)).write_text(cases[i].parent)
        with (serve or server(None))(root):
            agents = Agents(*(Client(root, agent, autostart=False) for agent in "abr"))
            try:
                return [_play(agents, i, cases[i], tool) for i, tool in plays]
            finally:
                for c in (agents.a, agents.b, agents.reader):
                    c.close()


def _name(i: int, tool: str) -> str:
    return f"m{i:03d}_{tool}.py"


def _play(agents: Agents, i: int, case: MultiCase, tool: str) -> Play:
    path = _name(i, tool)
    read = agents.a.read_file(path, hashes=tool == "edit")  # the default window
    memory = Memory.after_read(case.lines, read.lines or [], read.sha256)
    try:
        _land_b(agents.b, path, case)
    except RequestError as e:
        return Play(i, tool, case.min_gap, len(case.lines), "skipped", message=f"B: {e.message}")
    calls: list[Call] = []
    for k in range(len(case.hunks)):
        if k != case.b:
            calls.append(_call(agents, tool, path, case, memory, k))
            if calls[-1].outcome == "wrong":
                break
    return Play(i, tool, case.min_gap, len(case.lines), _outcome(case, calls, agents, path),
                calls, memory.window_reads)  # fmt: skip


def _land_b(b: Client, path: str, case: MultiCase) -> None:
    """B lands its hunk from a fresh full read: a `git diff -U3` hunk locked by the read's
    sha (anchors could name a repeated line; B's own write is not what is measured)."""
    sha = b.read_file(path, max_lines=FULL).sha256
    diff = tools.unified(case.lines, case.b_hunk, path)
    b.safe_patch(path, diff, sha, include_content=False, skip_safety_check=True)


def _call(agents: Agents, tool: str, path: str, case: MultiCase, memory: Memory, k: int) -> Call:
    """A's call for hunk k, judged against the file just before it."""
    h, file = case.hunks[k], agents.a.root / path
    before = file.read_text()
    expected = applied(case.lines, [case.b_hunk, *memory.landed, h])
    try:
        reply = multi_tools.write(tool, agents.a, path, memory, h)
    except RequestError as e:
        cost = len(msgspec.json.encode(agents.a.last_response)) / _full_read(agents, path)
        outcome = "refused" if file.read_text() == before else "wrong"
        if tool == "edit" and "delta" in e.details:
            memory.read_window(agents.a, path, memory.placed(h))
        return Call(k, case.gap(h), outcome, e.code, cost, e.message[:300])
    if file.read_text() != expected:
        return Call(k, case.gap(h), "wrong", message="landed elsewhere or changed other lines")
    memory.wrote(h, reply.shown, reply.sha)
    return Call(k, case.gap(h), "landed")


def _full_read(agents: Agents, path: str) -> int:
    """The size of a full anchored read of the file now: what recovery costs without help."""
    agents.reader.read_file(path, hashes=True, max_lines=FULL)
    return len(msgspec.json.encode(agents.reader.last_response))


def _outcome(case: MultiCase, calls: list[Call], agents: Agents, path: str) -> str:
    if any(c.outcome == "wrong" for c in calls):
        return "wrong"
    if (agents.a.root / path).read_text() == case.expected:
        return "landed"
    return "refused"
