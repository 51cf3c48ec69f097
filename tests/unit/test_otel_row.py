"""The text `status`'s otel row says what is failing: the spans' collector, the counters'
receiver (a receiver of traces only answers `/v1/metrics` 405), or both."""

from __future__ import annotations

import click

from editjournal.client.views.render import otel_row

ON = {"state": "on", "endpoint": "http://c/v1/traces", "exported": 3, "queued": 0, "dropped": 0}


def _row(**extra: object) -> str:
    [(name, text)] = otel_row({**ON, **extra})
    assert name == "otel"
    return click.unstyle(text)


def test_a_healthy_export_is_one_plain_line() -> None:
    assert _row() == "to http://c/v1/traces: 3 exported, 0 queued, 0 dropped"


def test_the_refused_counters_are_named_beside_a_failing_collector() -> None:
    assert _row(metrics_failing=True).endswith("(the receiver refuses the counters)")
    both = _row(collector_failing=True, metrics_failing=True)
    assert both.endswith("(the collector is failing; the receiver refuses the counters)")


def test_off_shows_no_row() -> None:
    assert otel_row({"state": "off"}) == []
