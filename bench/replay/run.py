"""Run the replay: for every case and tool, A and B read the parent, B lands its hunk,
A writes its own from the stale view; judge the file and the reply.

Judged per write: `landed` (the file is the parent with both hunks), `refused` (an
error reply and the file as B left it; its cost is the reply's size against a full
anchored read of the file), `wrong` (anything else: B clobbered, A half applied, or
applied somewhere else). A real daemon in a temporary workspace serves the agents.
"""

from __future__ import annotations

import os
import statistics
import tempfile
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import msgspec

from bench.daemons import serving
from bench.replay import tools
from bench.replay.cases import Case
from editjournal.client import Client, RequestError

NEAR = 4  # the "≥ 4 lines apart"
FULL = 100_000  # read_file max_lines: the whole file (the cases are under 4,000 lines)


@dataclass(frozen=True)
class Verdict:
    case: int
    tool: str
    gap: int
    outcome: str  # landed | refused | wrong | skipped
    code: str | None = None
    cost: float | None = None  # a refusal's reply bytes / a full read's bytes
    message: str = ""


def isolated_environment(tmp: Path) -> None:
    """Daemons of this run register and keep anchors under `tmp`, never the user's own."""
    os.environ["XDG_RUNTIME_DIR"] = str(tmp / "run")
    os.environ["XDG_STATE_HOME"] = str(tmp / "state")
    (tmp / "run").mkdir(mode=0o700, exist_ok=True)


def run(cases: Sequence[Case], tool_names: Iterable[str] = tools.TOOLS) -> list[Verdict]:
    names = list(tool_names)
    with tempfile.TemporaryDirectory(prefix="ej-replay-") as tmp:
        isolated_environment(Path(tmp))
        root = Path(tmp) / "ws"
        root.mkdir()
        for i, case in enumerate(cases):
            for tool in names:
                (root / _name(i, tool)).write_text(case.parent)
        with serving(root):
            a, b, reader = (Client(root, agent, autostart=False) for agent in "abr")
            try:
                return [
                    _one(a, b, reader, i, case, tool)
                    for i, case in enumerate(cases)
                    for tool in names
                ]
            finally:
                for c in (a, b, reader):
                    c.close()


def _name(i: int, tool: str) -> str:
    return f"c{i:03d}_{tool}.py"


def _one(a: Client, b: Client, reader: Client, i: int, case: Case, tool: str) -> Verdict:
    path = _name(i, tool)
    seen_a = {row.line: row for row in a.read_file(path, hashes=True, max_lines=FULL).lines}
    seen_b = {row.line: row for row in b.read_file(path, hashes=True, max_lines=FULL).lines}
    prepared = tools.prepare(a, case, path, seen_a) if tool == "prepare_apply" else None
    try:
        b.edit(path, tools.anchored_ops(case.b, seen_b), skip_safety_check=True)
    except RequestError as e:
        return Verdict(i, tool, case.gap, "skipped", e.code, message=f"B: {e.message}")
    after_b = (a.root / path).read_text()
    reader.read_file(path, hashes=True, max_lines=FULL)
    full = len(msgspec.json.encode(reader.last_response))
    error: RequestError | None = None
    try:
        tools.write(tool, a, case, path, seen_a, prepared or tools.Prepared())
    except RequestError as e:
        error = e
    now = (a.root / path).read_text()
    expected = case.applied(case.a, case.b)
    if error is None:
        outcome = "landed" if now == expected else "wrong"
        return Verdict(i, tool, case.gap, outcome)
    cost = len(msgspec.json.encode(a.last_response)) / full
    outcome = "refused" if now == after_b else "wrong"
    return Verdict(i, tool, case.gap, outcome, error.code, cost, error.message[:300])


@dataclass
class Summary:
    tool: str
    cases: int
    landed: int
    near_cases: int  # cases with the hunks ≥ NEAR lines apart
    near_landed: int
    wrong: int
    refused: int
    skipped: int
    cost_median: float | None
    cost_max: float | None
    codes: dict[str, int] = field(default_factory=dict)

    def row(self) -> str:
        pct = 100 * self.landed / max(1, self.cases)
        near = 100 * self.near_landed / max(1, self.near_cases)
        cost = (
            "-"
            if self.cost_median is None
            else f"{100 * self.cost_median:.1f}% (max {100 * (self.cost_max or 0):.1f}%)"
        )
        return (
            f"| {self.tool} | {pct:.1f}% ({self.landed}/{self.cases}) | {near:.1f}%"
            f" ({self.near_landed}/{self.near_cases}) | {self.wrong} | {cost} |"
        )


def summarise(verdicts: Sequence[Verdict]) -> list[Summary]:
    summaries = []
    for tool in dict.fromkeys(v.tool for v in verdicts):
        mine = [v for v in verdicts if v.tool == tool and v.outcome != "skipped"]
        near = [v for v in mine if v.gap >= NEAR]
        costs = [v.cost for v in mine if v.cost is not None]
        summaries.append(
            Summary(
                tool=tool,
                cases=len(mine),
                landed=sum(v.outcome == "landed" for v in mine),
                near_cases=len(near),
                near_landed=sum(v.outcome == "landed" for v in near),
                wrong=sum(v.outcome == "wrong" for v in mine),
                refused=sum(v.outcome == "refused" for v in mine),
                skipped=sum(v.tool == tool and v.outcome == "skipped" for v in verdicts),
                cost_median=statistics.median(costs) if costs else None,
                cost_max=max(costs) if costs else None,
                codes=dict(Counter(v.code for v in mine if v.code)),
            )
        )
    return summaries


HEADER = (
    "| A writes with | disjoint stale edits landed | ... when ≥ 4 lines apart | wrong |"
    " a refusal costs (median, of a full read) |\n|---|---|---|---|---|"
)
