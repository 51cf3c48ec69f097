"""Concurrency rows: N client processes making durable edits at once (each on its
own file, then all on one shared file), against N processes doing in-process
durable writes of the same files. Rounds alternate the contenders, so both see
the same machine; edits/s is all edits over the wall time from the first
process's start to the last one's end. The daemon's CPU time per edit (all its
threads, from /proc) is noted: the issue's measure of the daemon's own cost when
the 2 cores are shared with the clients."""

from __future__ import annotations

import dataclasses
import json
import os
import statistics
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from bench.daemons import serving
from bench.files import python_source, value_line
from bench.rows import Figure, Row
from bench.sizes import Sizes
from bench.stats import percentiles

GOAL_EDITS_PER_S = 2000
REPO = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Round:
    edits_per_s: float
    latencies: list[float]
    errors: int
    cpu_s: float | None = None  # the daemon's CPU time over the round (daemon rounds)


def rows(tmp: Path, sizes: Sizes) -> list[Row]:
    ws, local = tmp / "ws", tmp / "local"
    source = python_source(sizes.file_lines)
    for directory in (ws, local):
        directory.mkdir()
        for i in range(sizes.workers):
            (directory / f"own_{i}.py").write_text(source)
        (directory / "shared.py").write_text(source)
    results: dict[tuple[str, str], list[Round]] = {}
    with serving(ws) as daemon:
        for round_ in range(sizes.rounds):
            for variant in ("own", "shared"):
                modes = ("daemon", "local") if round_ % 2 == 0 else ("local", "daemon")
                for mode in modes:
                    root = ws if mode == "daemon" else local
                    before = cpu_seconds(daemon.proc.pid)
                    outcome = run_round(mode, root, variant, sizes)
                    after = cpu_seconds(daemon.proc.pid)
                    if mode == "daemon" and before is not None and after is not None:
                        outcome = dataclasses.replace(outcome, cpu_s=after - before)
                    results.setdefault((variant, mode), []).append(outcome)
    return [_row(variant, results, sizes) for variant in ("own", "shared")]


def run_round(mode: str, root: Path, variant: str, sizes: Sizes) -> Round:
    """Start the workers, let them all get ready, say go, gather what they report."""
    workers = [_worker(mode, root, variant, i, sizes) for i in range(sizes.workers)]
    try:
        for proc in workers:
            assert proc.stdout is not None
            if proc.stdout.readline().strip() != "ready":
                raise RuntimeError(f"a {mode} worker failed to start (exit {proc.wait()})")
        for proc in workers:
            assert proc.stdin is not None
            proc.stdin.write("go\n")
            proc.stdin.flush()
        reports = [json.loads(proc.communicate(timeout=600)[0]) for proc in workers]
    finally:
        for proc in workers:  # none is left waiting for a "go" that never comes
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    latencies = [x for report in reports for x in report["latencies"]]
    wall = max(r["end"] for r in reports) - min(r["start"] for r in reports)
    return Round(len(latencies) / wall, latencies, sum(r["errors"] for r in reports))


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU time of process `pid` so far (Linux's /proc), None elsewhere."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _worker(mode: str, root: Path, variant: str, i: int, sizes: Sizes) -> subprocess.Popen[str]:
    """Worker `i`: its own file, or its own line of the shared file."""
    name = f"own_{i}.py" if variant == "own" else "shared.py"
    near = 10 + i * (sizes.file_lines - 20) // max(1, sizes.workers)
    argv = [mode, str(root), name, str(value_line(near)), str(sizes.edits_per_worker)]
    return subprocess.Popen(
        [sys.executable, "-m", "bench.worker", *argv, f"bench-{i}"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=REPO,
    )


def _row(variant: str, results: dict[tuple[str, str], list[Round]], sizes: Sizes) -> Row:
    ours = _figure("editjournal", results[(variant, "daemon")])
    floor = _figure(
        f"{sizes.workers} processes, in-process durable writes", results[(variant, "local")]
    )
    errors = sum(r.errors for r in results[(variant, "daemon")])
    where = "each on its own file" if variant == "own" else "all on one shared file"
    notes = [f"{errors} edits refused"] if errors else []
    daemon_rounds = results[(variant, "daemon")]
    if all(r.cpu_s is not None for r in daemon_rounds):
        cpu = sum(r.cpu_s or 0.0 for r in daemon_rounds)
        edits = sum(len(r.latencies) for r in daemon_rounds)
        notes.append(f"daemon CPU per edit {cpu / edits * 1000:.2f} ms (all its threads)")
    return Row(
        f"{sizes.workers} client processes, durable edits, {where}",
        ours,
        [floor],
        goal=f"≥ {GOAL_EDITS_PER_S:,} edits/s",
        met=ours.value >= GOAL_EDITS_PER_S,
        notes=notes,
    )


def _figure(name: str, rounds: list[Round]) -> Figure:
    rate = statistics.median(r.edits_per_s for r in rounds)
    latencies = [x for r in rounds for x in r.latencies]
    p50, _ = percentiles(latencies)
    return Figure(name, rate, "edits/s", extra=f"p50 latency {p50 / 1000:.1f} ms")
