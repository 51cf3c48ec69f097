"""client.audit_render: counts in words, durations in units, the stats line."""

from __future__ import annotations

import click
import pytest

from editjournal.client.views.audit_render import plural, stats_lines
from editjournal.schemas.tools import AgentStats


@pytest.mark.parametrize(
    ("n", "expected"),
    [(0, "0 files"), (1, "1 file"), (2, "2 files"), (1200, "1,200 files"), (1.0, "1 file"),
     (2.0, "2 files"), (1.25, "1.2 files")],
)  # fmt: skip
def test_plural(n: float, expected: str):
    assert plural(n, "file") == expected


def test_stats_means_read_as_words_and_units():
    bob = AgentStats(
        agent="bob", reads=1, applied_writes=1, rejected_writes=1, rejections={"anchor_stale": 1},
        rebased_edits=0, recoveries=1, unrecovered=0, mean_recovery_events=1.0,
        mean_recovery_ms=8366.0, mean_recovery_attempts=1.0,
    )  # fmt: skip
    text = click.unstyle("\n".join(stats_lines([bob])))
    assert "recoveries 1: mean 1 event, 8.4 s, 1 attempt" in text
