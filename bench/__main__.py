"""`python -m bench [--quick] [--out PATH] [--only GROUP ...] [--update-docs]`.

Measures every row of the performance table, each against a baseline measured in
the same run with the contenders interleaved, prints the table (measure |
editjournal p50/p99 | baseline | ratio | goal | met?) and writes it with the
machine's description to `bench/results/latest.json`. `--quick` runs every row
at tiny sizes (for `make test`: nothing may rot); its figures mean nothing.
The detection-latency table (outside change → event) is printed after it.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, replace
from functools import partial
from pathlib import Path
from typing import Any

from bench import (
    bigfile,
    checkpoints,
    concurrent,
    fleet,
    growth,
    hookhttp,
    hooks,
    latency,
    outside,
    patch,
    reads,
    startup,
    tools,
)
from bench.compare import comparison
from bench.detect import editjournal_latency, watchman_latency
from bench.journal_fill import CACHE
from bench.machine import describe, one_line
from bench.rows import Row, markdown
from bench.sizes import FULL, QUICK, Sizes

HERE = Path(__file__).resolve().parent
PERFORMANCE_DOC = HERE.parent / "docs" / "performance.md"
DEFAULT_OUT = HERE / "results" / "latest.json"
Group = Callable[[Path, Sizes], Iterable[Row]]
GROUPS: dict[str, Group] = {
    "latency": latency.rows,
    "concurrency": concurrent.rows,
    "growth": growth.rows,
    "startup": startup.rows,
    "checkpoints": checkpoints.rows,
    "patch": patch.rows,
    "bigfile": bigfile.rows,
    "reads": reads.rows,
    "hooks": hooks.rows,
    "hookhttp": hookhttp.rows,
    "fleet": fleet.rows,
    "outside": outside.rows,
    "tools": tools.rows,
}


def measure(groups: dict[str, Group], sizes: Sizes) -> list[Row]:
    rows: list[Row] = []
    for name, group in groups.items():
        with tempfile.TemporaryDirectory(prefix=f"ejb-{name}-") as tmp:
            for row in group(Path(tmp), sizes):
                print(f"  {row.measure}: {row.ours.text()}", file=sys.stderr, flush=True)
                rows.append(row)
    return rows


def detection(n: int) -> dict[str, Any]:
    with (
        tempfile.TemporaryDirectory(prefix="ejd") as ours,
        tempfile.TemporaryDirectory(prefix="ejw") as theirs,
    ):
        mine = editjournal_latency(Path(ours), n)
        watchman = watchman_latency(Path(theirs), n)
    return {"writes": n, "editjournal": mine, "watchman": watchman}


def detection_table(found: dict[str, Any]) -> str:
    mine, watchman = found["editjournal"], found["watchman"]
    rows = [
        f"Detection latency, write on disk -> event delivered, {found['writes']} writes, µs "
        "(same run, same machine).",
        "",
        "| watcher | p50 | p99 |",
        "|---|---|---|",
        "| editjournal (watchdog, 20 ms settle, re-read + hash + journal commit) "
        f"| {mine[0]:.0f} | {mine[1]:.0f} |",
    ]
    if watchman is None:
        rows.append("| Watchman | not installed | |")
    else:
        rows.append(
            f"| Watchman 4.9 subscription (20 ms settle) | {watchman[0]:.0f} | {watchman[1]:.0f} |"
        )
    return "\n".join(rows)


def update_docs(marker: str, table: str) -> None:
    """Put a table between its markers in docs/performance.md."""
    text = PERFORMANCE_DOC.read_text()
    block = f"<!-- {marker}:start -->\n{table}\n<!-- {marker}:end -->"
    pattern = rf"<!-- {marker}:start -->.*?<!-- {marker}:end -->"
    PERFORMANCE_DOC.write_text(re.sub(pattern, lambda _: block, text, flags=re.S))


def _commit(machine: dict[str, Any]) -> str:
    if not machine["commit"]:
        return ""
    return f"; commit {machine['commit']}" + (
        " + uncommitted changes" if machine["tree_dirty"] else ""
    )


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="tiny sizes, a few iterations")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where the JSON goes")
    parser.add_argument(
        "--only", action="append", choices=[*GROUPS, "detect"], help="run only these groups"
    )
    parser.add_argument("--cache", type=Path, default=CACHE, help="where the big journal is kept")
    parser.add_argument(
        "--compare", type=Path, metavar="OLD.json", help="also show each row beside an older run"
    )
    parser.add_argument("-n", type=int, help="samples per contender of the latency rows")
    parser.add_argument("--writes", type=int, help="writes of the detection-latency table")
    parser.add_argument(
        "--update-docs", action="store_true", help="put the tables into docs/performance.md"
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    sizes = QUICK if args.quick else FULL
    if args.n:
        sizes = replace(sizes, latency_n=args.n)
    if args.writes:
        sizes = replace(sizes, detect_writes=args.writes)
    groups = args.only or [*GROUPS, "detect"]
    began, machine = time.monotonic(), describe()
    chosen = {g: GROUPS[g] for g in GROUPS if g in groups}
    if "startup" in chosen:
        chosen["startup"] = partial(startup.rows, cache=args.cache)
    rows = measure(chosen, sizes)
    found = detection(sizes.detect_writes) if "detect" in groups else None
    header = f"Measured {machine['date']} on {one_line(machine)}{_commit(machine)}."
    table = f"{header}\n\n{markdown(rows)}"
    print(table)
    if found is not None:
        print("\n" + detection_table(found))
    if args.compare:
        print("\n" + comparison(rows, args.compare))
    report = {
        "mode": "quick" if args.quick else "full",
        "machine": machine,
        "sizes": asdict(sizes),
        "elapsed_s": round(time.monotonic() - began, 1),
        "rows": [row.as_json() for row in rows],
        "detection": found,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    print(f"\nwritten to {args.out} ({report['elapsed_s']} s)", file=sys.stderr)
    if args.update_docs:
        if rows:
            update_docs("bench", table)
        if found is not None:
            update_docs("detect", detection_table(found))
    return 0


if __name__ == "__main__":
    sys.exit(main())
