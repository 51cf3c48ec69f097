"""`python -m bench.replay [--cases FILE] [--limit N] [--tool T ...] [--repo PATH --extract N]`.

Prints the per-tool table of the stale-edit replay (see `bench.replay.run`) and
writes every verdict to `bench/results/replay.json`. `--repo` cuts fresh cases
from a git repository's history instead (and `--save FILE` keeps them).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path

from bench.replay import cases as case_files
from bench.replay import tools
from bench.replay.run import HEADER, run, summarise

HERE = Path(__file__).resolve().parent
DEFAULT_CASES = HERE / "data" / "click-300.json.xz"
DEFAULT_OUT = HERE.parent / "results" / "replay.json"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.replay")
    parser.add_argument("--cases", type=Path, default=DEFAULT_CASES)
    parser.add_argument("--repo", type=Path, help="cut cases from this git repository")
    parser.add_argument("--extract", type=int, default=300, help="cases to cut with --repo")
    parser.add_argument("--save", type=Path, help="keep the cut cases in this file")
    parser.add_argument("--limit", type=int)
    parser.add_argument("--tool", action="append", choices=tools.TOOLS)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--show", choices=("refused", "wrong"), action="append", default=[])
    args = parser.parse_args(argv)
    if args.repo:
        chosen = case_files.extract(args.repo, args.extract)
        if args.save:
            case_files.save(chosen, args.save)
    else:
        chosen = case_files.load(args.cases)
    chosen = chosen[: args.limit]
    verdicts = run(chosen, args.tool or tools.TOOLS)
    for v in verdicts:
        if v.outcome in args.show:
            c = chosen[v.case]
            print(
                f"{v.outcome} {v.tool} case {v.case} gap {v.gap} {c.commit[:8]} {c.path}:"
                f" {v.code} {v.message}",
                file=sys.stderr,
            )
    summaries = summarise(verdicts)
    print(HEADER)
    for s in summaries:
        print(s.row())
    for s in summaries:
        print(f"{s.tool}: refusals {s.codes}; skipped {s.skipped}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(
        json.dumps(
            {
                "cases": str(args.repo or args.cases),
                "summaries": [asdict(s) for s in summaries],
                "verdicts": [asdict(v) for v in verdicts],
            },
            indent=1,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
