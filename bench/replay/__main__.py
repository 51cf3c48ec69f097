"""`python -m bench.replay [--mode single|multi|codex] [--cases FILE ...] [--limit N] ...`.

Three replays of real history, each printing its table and writing every verdict
as JSON (`--out`):

* `--mode single` (the default): one hunk per agent; A writes one hunk from the
  parent after B landed another (`bench.replay.run`); cases
  `data/click-300.json.xz`; `bench/results/replay.json`.
* `--mode multi`: the "memory" replay (`bench.replay.multi_run`): A reads with the
  default window, B lands one hunk, A writes all the others top to bottom, one call
  each, from its read plus its own edits. Cases `data/click-multi-300.json.xz` and
  `data/requests-multi-300.json.xz` (one table each); `bench/results/replay-multi.json`.
* `--mode codex`: each commit as one Codex `apply_patch` envelope, applied by us after
  default reads and by Codex's implementation (`bench.replay.codex_replay`); cases
  `data/click-codex-300.json.xz`; `bench/results/replay-codex.json`.

`--daemon-commit REV` serves the replay with that commit's daemon (see
`bench.replay.pinned`) instead of the working tree's: "before" figures that a
half-written fix in the tree cannot touch. `--repo PATH --extract N` cuts fresh
cases from a git repository (`--save FILE` keeps them). `--show wrong` prints each
wrong verdict's case.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

from bench.replay import cases as case_files
from bench.replay import (
    codex_replay,
    multi_cases,
    multi_run,
    multi_summary,
    multi_tools,
    pinned,
    tools,
)
from bench.replay.run import HEADER, run, summarise

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"
RESULTS = HERE.parent / "results"
DEFAULT_CASES = DATA / "click-300.json.xz"
DEFAULT_OUT = RESULTS / "replay.json"
MULTI_CASES = (DATA / "click-multi-300.json.xz", DATA / "requests-multi-300.json.xz")
CODEX_CASES = DATA / "click-codex-300.json.xz"
OUTS = {"single": DEFAULT_OUT, "multi": RESULTS / "replay-multi.json",
        "codex": RESULTS / "replay-codex.json"}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    commit, tree = pinned.export(args.daemon_commit) if args.daemon_commit else (None, None)
    serve = pinned.server(tree)
    mode = {"single": _single, "multi": _multi, "codex": _codex}[args.mode]
    report = {"daemon_commit": commit or "working tree", **mode(args, serve)}
    out: Path = args.out or OUTS[args.mode]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1))
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench.replay")
    parser.add_argument("--mode", choices=("single", "multi", "codex"), default="single")
    parser.add_argument("--cases", type=Path, action="append", help="case files (repeatable)")
    parser.add_argument("--repo", type=Path, help="cut cases from this git repository")
    parser.add_argument("--extract", type=int, default=300, help="cases to cut with --repo")
    parser.add_argument("--save", type=Path, help="keep the cut cases in this file")
    parser.add_argument("--limit", type=int)
    parser.add_argument("--tool", action="append", help="writers (single/multi modes)")
    parser.add_argument("--variant", action="append", choices=codex_replay.VARIANTS)
    parser.add_argument("--daemon-commit", help="serve with this commit's daemon")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--show", choices=("refused", "wrong"), action="append", default=[])
    return parser


def _single(args: argparse.Namespace, serve: pinned.Serve) -> dict[str, Any]:
    if args.repo:
        chosen = case_files.extract(args.repo, args.extract)
        if args.save:
            case_files.save(chosen, args.save)
    else:
        chosen = case_files.load((args.cases or [DEFAULT_CASES])[0])
    chosen = chosen[: args.limit]
    verdicts = run(chosen, args.tool or tools.TOOLS, serve)
    for v in verdicts:
        if v.outcome in args.show:
            c = chosen[v.case]
            print(f"{v.outcome} {v.tool} case {v.case} gap {v.gap} {c.commit[:8]} {c.path}:"
                  f" {v.code} {v.message}", file=sys.stderr)  # fmt: skip
    summaries = summarise(verdicts)
    print(HEADER)
    for s in summaries:
        print(s.row())
    for s in summaries:
        print(f"{s.tool}: refusals {s.codes}; skipped {s.skipped}")
    return {"cases": str(args.repo or (args.cases or [DEFAULT_CASES])[0]),
            "summaries": [asdict(s) for s in summaries],
            "verdicts": [asdict(v) for v in verdicts]}  # fmt: skip


def _multi(args: argparse.Namespace, serve: pinned.Serve) -> dict[str, Any]:
    sets: list[tuple[str, list[multi_cases.MultiCase]]] = []
    if args.repo:
        sets.append((str(args.repo), multi_cases.extract(args.repo, args.extract)))
        if args.save:
            multi_cases.save(sets[0][1], args.save)
    else:
        sets += [(str(p), multi_cases.load(p)) for p in args.cases or MULTI_CASES]
    names = args.tool or list(multi_tools.TOOLS)
    projects = []
    for source, chosen in sets:
        chosen = chosen[: args.limit]
        plays = multi_run.run(chosen, names, serve)
        summaries = multi_summary.summarise(plays)
        print(f"\n{source}\n{multi_summary.HEADER}")
        for s in summaries:
            print(s.row())
        for s in summaries:
            print(f"{s.tool}: refusals {s.codes}; skipped {s.skipped}; windows {s.window_reads}")
        _show_multi(args.show, chosen, plays)
        projects.append({"cases": source, "summaries": [asdict(s) for s in summaries],
                         "plays": [asdict(p) for p in plays]})  # fmt: skip
    return {"projects": projects}


def _show_multi(show: list[str], chosen: list[multi_cases.MultiCase],
                plays: list[multi_run.Play]) -> None:  # fmt: skip
    """Each shown play's case: commit, path, B's hunk and the calls that were not landed."""
    for p in plays:
        if p.outcome not in show:
            continue
        c = chosen[p.case]
        spans = " ".join(f"{h.start + 1}-{h.end}" for h in c.hunks)
        print(f"{p.outcome} {p.tool} case {p.case} {c.commit[:10]} {c.path} hunks [{spans}]"
              f" B={c.b}", file=sys.stderr)  # fmt: skip
        for call in p.calls:
            if call.outcome != "landed":
                print(f"    hunk {call.hunk} gap {call.gap}: {call.outcome} {call.code}"
                      f" {call.message}", file=sys.stderr)  # fmt: skip


def _codex(args: argparse.Namespace, serve: pinned.Serve) -> dict[str, Any]:
    if args.repo:
        chosen = codex_replay.extract(args.repo, args.extract)
        if args.save:
            codex_replay.save(chosen, args.save)
    else:
        chosen = codex_replay.load((args.cases or [CODEX_CASES])[0])
    chosen = chosen[: args.limit]
    verdicts = codex_replay.run(chosen, args.variant or codex_replay.VARIANTS, serve)
    summaries = codex_replay.summarise(verdicts)
    print(codex_replay.CODEX_HEADER)
    for s in summaries:
        print(s.row())
    for v in verdicts:
        if v.ours in args.show:
            files = " ".join(f.path for f in chosen[v.case].files)
            print(f"{v.ours} {v.variant} case {v.case} {v.commit[:10]} {files}: {v.code}"
                  f" {v.message}", file=sys.stderr)  # fmt: skip
    return {"cases": str(args.repo or (args.cases or [CODEX_CASES])[0]),
            "summaries": [asdict(s) for s in summaries],
            "verdicts": [asdict(v) for v in verdicts]}  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
