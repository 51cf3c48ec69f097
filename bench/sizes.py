"""How big and how many: the full run (`make bench`) and `--quick` (tiny sizes,
a few iterations: `make test` runs it so no benchmark can rot)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Sizes:
    file_lines: int  # the everyday file: read_file, durable edit, reply size, growth
    latency_n: int  # samples per contender of the single-request rows
    big_files: tuple[tuple[int, int], ...]  # (lines, samples) of the big-file edit rows
    workers: int  # client processes of the concurrency rows
    edits_per_worker: int
    rounds: int  # concurrency rounds (contenders interleaved round by round)
    growth_edits: int  # small edits whose journal growth is measured
    startup_events: int  # events in the big journal of the start-up row
    startup_n: int  # start-ups timed per contender
    detect_writes: int  # writes of the detection-latency table
    checkpoint_files: int  # the tree of the checkpoint rows
    checkpoint_bytes: int
    fleet_events: int = 2_000  # the journal shipped to PostgreSQL
    fleet_workspaces: int = 2  # `fleet log` over this many shipped workspaces ...
    fleet_events_each: int = 500  # ... of this many events each
    fleet_storm_s: float = 1.0  # follow lag: how long 8 agents edit while a shipper follows


FULL = Sizes(
    file_lines=1000,
    latency_n=1000,
    big_files=((10_000, 30), (100_000, 10)),
    workers=8,
    edits_per_worker=100,
    rounds=3,
    growth_edits=200,
    startup_events=1_000_000,
    startup_n=5,
    detect_writes=300,
    checkpoint_files=100_000,
    checkpoint_bytes=60_000_000,
    fleet_events=1_000_000,
    fleet_workspaces=10,
    fleet_events_each=100_000,
    fleet_storm_s=10.0,
)

QUICK = Sizes(
    file_lines=200,
    latency_n=15,
    big_files=((1_000, 3), (2_000, 3)),
    workers=2,
    edits_per_worker=5,
    rounds=1,
    growth_edits=10,
    startup_events=2_000,
    startup_n=1,
    detect_writes=5,
    checkpoint_files=400,
    checkpoint_bytes=240_000,
)
