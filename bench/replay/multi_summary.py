"""The multi-hunk replay's table: per writer, plays and calls, landed, far apart, wrong,
and what a refusal costs against a full read. Pure: it only folds verdicts."""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from bench.replay.multi_run import Call, Play
from bench.replay.run import LARGE, NEAR


@dataclass
class MultiSummary:
    tool: str
    plays: int  # plays judged (B's hunk landed)
    landed: int  # plays whose file ended as the commit's
    near_plays: int  # plays whose every A hunk is ≥ NEAR lines from B's
    near_landed: int
    wrong: int  # plays with a wrong call
    calls: int  # A's calls judged
    calls_landed: int
    near_calls: int  # calls whose hunk is ≥ NEAR lines from B's
    near_calls_landed: int
    wrong_calls: int
    skipped: int
    window_reads: int  # the anchored writer's reads beyond its first window
    cost_median: float | None  # every refusal's reply / a full read
    cost_max: float | None
    large_cost_max: float | None  # the same, on files of LARGE lines or more
    codes: dict[str, int] = field(default_factory=dict)

    def row(self) -> str:
        return (
            f"| {self.tool} | {_share(self.landed, self.plays)} |"
            f" {_share(self.near_landed, self.near_plays)} | {self.wrong} |"
            f" {_share(self.calls_landed, self.calls)} |"
            f" {_share(self.near_calls_landed, self.near_calls)} | {self.wrong_calls} |"
            f" {_pct(self.cost_median)} / {_pct(self.cost_max)} / {_pct(self.large_cost_max)} |"
        )


HEADER = (
    "| A writes with | plays landed | ... all ≥ 4 apart | wrong plays | calls landed |"
    " ... ≥ 4 apart | wrong calls | refusal / full read: median / max / max ≥ 1000 lines |\n"
    "|---|---|---|---|---|---|---|---|"
)


def _share(part: int, whole: int) -> str:
    return f"{100 * part / max(1, whole):.1f}% ({part}/{whole})"


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def summarise(plays: Sequence[Play]) -> list[MultiSummary]:
    return [_summary(tool, plays) for tool in dict.fromkeys(p.tool for p in plays)]


def _summary(tool: str, every: Sequence[Play]) -> MultiSummary:
    mine = [p for p in every if p.tool == tool]
    judged = [p for p in mine if p.outcome != "skipped"]
    near = [p for p in judged if p.min_gap >= NEAR]
    calls = [c for p in judged for c in p.calls]
    near_calls = [c for c in calls if c.gap >= NEAR]
    costs = [c.cost for c in calls if c.cost is not None]
    large = [c.cost for p in judged if p.lines >= LARGE for c in p.calls if c.cost is not None]
    return MultiSummary(
        tool=tool,
        plays=len(judged),
        landed=_count(judged, "landed"),
        near_plays=len(near),
        near_landed=_count(near, "landed"),
        wrong=_count(judged, "wrong"),
        calls=len(calls),
        calls_landed=_count(calls, "landed"),
        near_calls=len(near_calls),
        near_calls_landed=_count(near_calls, "landed"),
        wrong_calls=_count(calls, "wrong"),
        skipped=len(mine) - len(judged),
        window_reads=sum(p.window_reads for p in judged),
        cost_median=statistics.median(costs) if costs else None,
        cost_max=max(costs) if costs else None,
        large_cost_max=max(large) if large else None,
        codes=dict(Counter(c.code for c in calls if c.code)),
    )


def _count(items: Sequence[Play] | Sequence[Call], outcome: str) -> int:
    return sum(x.outcome == outcome for x in items)
