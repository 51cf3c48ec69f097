"""One row of the table: a measure, editjournal's figure, the same-run baselines,
the ratio, the goal and whether it is met — rendered as markdown and as JSON."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class Figure:
    """A contender's result: `value` is the p50 (or the one number), in `unit`."""

    name: str
    value: float
    unit: str  # "us", "edits/s", "B/edit", "bytes"
    p99: float | None = None
    extra: str = ""  # shown after the number, e.g. "p50 latency 70 ms"

    def text(self) -> str:
        main = _number(self.value, self.unit)
        if self.p99 is not None:
            main = f"{main} / {_number(self.p99, self.unit)}"
        return f"{main} ({self.extra})" if self.extra else main


@dataclass
class Row:
    measure: str
    ours: Figure
    baselines: list[Figure]
    goal: str
    met: bool | None  # None: no goal, or nothing to compare
    notes: list[str] = field(default_factory=list)

    @property
    def ratio(self) -> float | None:
        """editjournal's p50 over the first baseline's (same unit)."""
        if not self.baselines or not self.baselines[0].value:
            return None
        return self.ours.value / self.baselines[0].value

    def as_json(self) -> dict[str, Any]:
        return {**asdict(self), "ratio": self.ratio}


HEADER = [
    "| measure | editjournal p50 / p99 | same-run baseline | ratio | goal | met? |",
    "|---|---|---|---|---|---|",
]


def markdown(rows: list[Row]) -> str:
    lines = list(HEADER)
    for row in rows:
        base = "; ".join(f"{b.name}: {b.text()}" for b in row.baselines) or "—"
        ratio = f"{row.ratio:.2f}×" if row.ratio is not None else "—"
        met = {True: "yes", False: "**no**", None: "—"}[row.met]
        lines.append(
            f"| {row.measure} | {row.ours.text()} | {base} | {ratio} | {row.goal} | {met} |"
        )
    notes = [f"- {row.measure}: {note}" for row in rows for note in row.notes]
    return "\n".join(lines + (["", *notes] if notes else []))


def _number(value: float, unit: str) -> str:
    """Microseconds as µs, ms or s; other units with a sensible precision."""
    if unit == "us":
        if value >= 1_000_000:
            return f"{value / 1e6:.2f} s"
        if value >= 1000:
            return f"{value / 1000:.{1 if value >= 10_000 else 2}f} ms"
        return f"{value:.0f} µs"
    if unit == "bytes" or unit == "B/edit":
        text = f"{value / 1000:.1f} KB" if value >= 1000 else f"{value:.0f} B"
        return text + ("/edit" if unit == "B/edit" else "")
    return f"{value:,.0f} {unit}"
