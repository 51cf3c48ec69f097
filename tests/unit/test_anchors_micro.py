"""bench.anchors_micro runs at a tiny size, so it cannot rot (no timing is asserted)."""

from __future__ import annotations

from bench.anchors_micro import edit_rows, read_rows, reply_size


def test_the_micro_benchmark_runs_at_a_tiny_size() -> None:
    [edit] = edit_rows((300,), rounds=2)
    assert {"floor_p50_us", "incremental_p50_us", "scratch_p50_us", "incremental_ratio"} <= set(
        edit
    )
    [read] = read_rows(lines=50, rounds=3)
    assert read["ours_ratio"] > 0
    size = reply_size(lines=100)
    assert size["reply_bytes"] <= 1.5 * size["file_bytes"] < size["former_reply_bytes"]
