"""Percentiles, the one statistic every benchmark here reports."""

from __future__ import annotations

import statistics


def percentiles(samples_us: list[float]) -> tuple[float, float]:
    """(p50, p99) of samples in microseconds."""
    ordered = sorted(samples_us)
    return statistics.median(ordered), ordered[max(0, int(len(ordered) * 0.99) - 1)]
