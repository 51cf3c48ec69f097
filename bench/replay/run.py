"""Run the replay: for every case and tool, A and B read the parent, B lands its hunk,
A writes its own from the stale view; judge the file and the reply.

Judged per write: `landed` (the file is the parent with both hunks), `refused` (an
error reply and the file as B left it; its cost is the reply's size against a full
anchored read of the file), `wrong` (anything else: B clobbered, A half applied, or
applied somewhere else). Each case is also played as a conflict: A rewrites the
lines B changed (B's hunk with a line of its own added), which must be refused —
landing it would overwrite B's change — and that refusal's size is measured too.
A real daemon in a temporary workspace serves the agents.
"""

from __future__ import annotations

import os
import statistics
import tempfile
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import msgspec

from bench.replay import tools
from bench.replay.cases import Case, Hunk
from bench.replay.pinned import Serve, server
from editjournal.client import Client, RequestError

NEAR = 4  # the "≥ 4 lines apart"
ISOLATED = ("XDG_RUNTIME_DIR", "XDG_STATE_HOME")
FULL = 100_000  # read_file max_lines: the whole file (the cases are under 4,000 lines)


@dataclass(frozen=True)
class Verdict:
    case: int
    tool: str
    gap: int
    conflict: bool  # A rewrote B's lines: must be refused
    lines: int  # the parent's line count
    outcome: str  # landed | refused | wrong | skipped
    code: str | None = None
    cost: float | None = None  # a refusal's reply bytes / a full read's bytes
    message: str = ""


@contextmanager
def isolated_environment(tmp: Path) -> Iterator[None]:
    """Daemons of this run register and keep anchors under `tmp`, never the user's own
    (the variables are put back afterwards)."""
    saved = {name: os.environ.get(name) for name in ISOLATED}
    (tmp / "run").mkdir(mode=0o700, exist_ok=True)
    os.environ.update({"XDG_RUNTIME_DIR": str(tmp / "run"), "XDG_STATE_HOME": str(tmp / "state")})
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def run(
    cases: Sequence[Case], tool_names: Iterable[str] = tools.TOOLS, serve: Serve | None = None
) -> list[Verdict]:
    """Every case played with every tool (and as a conflict); `serve` starts the daemon
    (default: the working tree's)."""
    names = list(tool_names)
    with tempfile.TemporaryDirectory(prefix="ej-replay-") as tmp, isolated_environment(Path(tmp)):
        root = Path(tmp) / "ws"
        root.mkdir()
        plays = [(i, tool, conflict) for i in range(len(cases)) for tool in names
                 for conflict in (False, True) if not conflict or replaces(cases[i].b)]  # fmt: skip
        for i, tool, conflict in plays:
            (root / _name(i, tool, conflict)).write_text(cases[i].parent)
        with (serve or server(None))(root):
            a, b, reader = (Client(root, agent, autostart=False) for agent in "abr")
            try:
                return [
                    _one(a, b, reader, i, cases[i], tool, conflict) for i, tool, conflict in plays
                ]
            finally:
                for c in (a, b, reader):
                    c.close()


def _name(i: int, tool: str, conflict: bool) -> str:
    return f"c{i:03d}_{tool}{'_conflict' * conflict}.py"


def replaces(hunk: Hunk) -> bool:
    """B's hunk changes lines that A could overwrite (two insertions at one place both
    stand, in an order the anchors say: nothing to refuse)."""
    return hunk.end > hunk.start


def conflicting(case: Case) -> Case:
    """A's hunk rewrites exactly the lines B's hunk changed, its own way."""
    mine = Hunk(case.b.start, case.b.end, (*case.b.new, "# A's own version"))
    return msgspec.structs.replace(case, a=mine)


def _one(
    a: Client, b: Client, reader: Client, i: int, case: Case, tool: str, conflict: bool
) -> Verdict:
    path = _name(i, tool, conflict)
    verdict = partial(Verdict, i, tool, case.gap, conflict, len(case.lines))
    if conflict:
        case = conflicting(case)
    seen_a = {row.line: row for row in a.read_file(path, hashes=True, max_lines=FULL).lines or []}
    seen_b = {row.line: row for row in b.read_file(path, hashes=True, max_lines=FULL).lines or []}
    prepared = tools.prepare(a, case, path, seen_a) if tool == "prepare_apply" else None
    try:
        b.edit(path, tools.anchored_ops(case.b, seen_b), skip_safety_check=True)
    except RequestError as e:
        return verdict("skipped", e.code, message=f"B: {e.message}")
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
        return verdict("landed" if now == expected and not conflict else "wrong")
    cost = len(msgspec.json.encode(a.last_response)) / full
    outcome = "refused" if now == after_b else "wrong"
    return verdict(outcome, error.code, cost, error.message[:300])


LARGE = 1000  # "large files": a refusal's cost is judged on files of this many lines or more


@dataclass
class Summary:
    tool: str
    cases: int  # disjoint plays judged
    landed: int
    near_cases: int  # disjoint plays with the hunks ≥ NEAR lines apart
    near_landed: int
    wrong: int  # of every play, disjoint and conflicting
    conflicts: int  # conflicting plays judged
    conflicts_refused: int
    skipped: int
    cost_median: float | None  # every refusal's reply / a full read
    cost_max: float | None
    large_cost_max: float | None  # the same, on files of LARGE lines or more
    codes: dict[str, int] = field(default_factory=dict)

    def row(self) -> str:
        pct = 100 * self.landed / max(1, self.cases)
        near = 100 * self.near_landed / max(1, self.near_cases)
        return (
            f"| {self.tool} | {pct:.1f}% ({self.landed}/{self.cases}) | {near:.1f}%"
            f" ({self.near_landed}/{self.near_cases}) | {self.wrong} |"
            f" {self.conflicts_refused}/{self.conflicts} | {_pct(self.cost_median)}"
            f" (max {_pct(self.cost_max)}; ≥ {LARGE} lines: max {_pct(self.large_cost_max)}) |"
        )


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def summarise(verdicts: Sequence[Verdict]) -> list[Summary]:
    summaries = []
    for tool in dict.fromkeys(v.tool for v in verdicts):
        judged = [v for v in verdicts if v.tool == tool and v.outcome != "skipped"]
        mine = [v for v in judged if not v.conflict]
        clashes = [v for v in judged if v.conflict]
        near = [v for v in mine if v.gap >= NEAR]
        costs = [v.cost for v in judged if v.cost is not None]
        large = [v.cost for v in judged if v.cost is not None and v.lines >= LARGE]
        summaries.append(
            Summary(
                tool=tool,
                cases=len(mine),
                landed=sum(v.outcome == "landed" for v in mine),
                near_cases=len(near),
                near_landed=sum(v.outcome == "landed" for v in near),
                wrong=sum(v.outcome == "wrong" for v in judged),
                conflicts=len(clashes),
                conflicts_refused=sum(v.outcome == "refused" for v in clashes),
                skipped=sum(v.tool == tool and v.outcome == "skipped" for v in verdicts),
                cost_median=statistics.median(costs) if costs else None,
                cost_max=max(costs) if costs else None,
                large_cost_max=max(large) if large else None,
                codes=dict(Counter(v.code for v in judged if v.code)),
            )
        )
    return summaries


HEADER = (
    "| A writes with | disjoint stale edits landed | ... when ≥ 4 lines apart | wrong |"
    " conflicts refused | a refusal costs, of a full read (median) |\n|---|---|---|---|---|---|"
)
