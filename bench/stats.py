"""Percentiles, and contenders timed in turns: every benchmark here compares two
or more ways of doing one thing, measured in the same run and interleaved, so a
noisy neighbour or a CPU frequency change hits every contender alike."""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass


def percentiles(samples_us: list[float]) -> tuple[float, float]:
    """(p50, p99) of samples in microseconds; p99 by nearest rank (of 3 samples: the
    largest)."""
    ordered = sorted(samples_us)
    return statistics.median(ordered), ordered[max(0, math.ceil(len(ordered) * 0.99) - 1)]


@dataclass(frozen=True)
class Summary:
    """p50 and p99 of `n` samples, in microseconds."""

    p50: float
    p99: float
    n: int

    @classmethod
    def of(cls, samples_us: list[float]) -> Summary:
        p50, p99 = percentiles(samples_us)
        return cls(p50, p99, len(samples_us))


def interleaved(
    contenders: Mapping[str, Callable[[], object]],
    n: int,
    warmup: int = 5,
    prepare: Mapping[str, Callable[[], object]] | None = None,
) -> dict[str, Summary]:
    """Time each contender `n` times, taking turns (a, b, c, a, b, c, ...), the order
    rotating every round so no contender always runs right after another.
    `prepare[name]`, if given, runs untimed right before each call of `name`."""
    names = list(contenders)
    samples: dict[str, list[float]] = {name: [] for name in names}
    for round_ in range(warmup + n):
        shift = round_ % len(names)
        for name in names[shift:] + names[:shift]:
            if prepare and name in prepare:
                prepare[name]()
            start = time.perf_counter_ns()
            contenders[name]()
            elapsed = (time.perf_counter_ns() - start) / 1000
            if round_ >= warmup:
                samples[name].append(elapsed)
    return {name: Summary.of(values) for name, values in samples.items()}
