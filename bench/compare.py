"""`--compare OLD.json`: each row's editjournal figure now beside the same row in an
earlier report (such as bench/results/before-issue-11.json). Each run's own
baselines stay the honest yardstick; this only says what changed between runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bench.rows import Figure, Row


def comparison(rows: list[Row], old_report: Path) -> str:
    old = {row["measure"]: row for row in json.loads(old_report.read_text())["rows"]}
    lines = [
        f"Compared with {old_report.name}:",
        "",
        "| measure | then | now | now ÷ then |",
        "|---|---|---|---|",
    ]
    for row in rows:
        before = old.get(row.measure)
        if before is None:
            continue
        then = _figure(before["ours"])
        change = row.ours.value / then.value if then.value else float("nan")
        lines.append(f"| {row.measure} | {then.text()} | {row.ours.text()} | {change:.2f}× |")
    return "\n".join(lines)


def _figure(stored: dict[str, Any]) -> Figure:
    return Figure(**stored)
