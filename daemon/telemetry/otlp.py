"""The OpenTelemetry SDK's side: spans and counters built from `SpanFacts` and sent over
OTLP/HTTP. Imported only by the export thread (daemon/telemetry/tap.py), and only once
`[otel]` turns export on, so a daemon that exports nothing never loads the SDK.

Spans are handed to the OTLP exporter here, in batches this module is given, not
through the SDK's BatchSpanProcessor: the tap's queue is the one bounded buffer, and
each batch's fate (sent, or dropped because the collector refused or never answered)
is known and counted. The counters go through the SDK's own periodic reader, on its
own thread; each of its exports' fate is counted too (`on_metrics`): a receiver that
takes traces only (Arize Phoenix answers `/v1/metrics` 405) used to fail silently.
Neither provider registers an atexit hook: a dead collector must never hold up the
daemon's exit.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Sequence
from typing import Any

from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import (
    MetricExportResult,
    MetricsData,
    PeriodicExportingMetricReader,
)
from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SpanExportResult
from opentelemetry.trace import SpanKind, Status, StatusCode

from editjournal import __version__
from editjournal.daemon.settings.otel import OtelSettings
from editjournal.daemon.telemetry.spans import SpanFacts

SCOPE = "editjournal.daemon"
_MS = 1_000_000  # ns


class _Collect(SpanProcessor):
    """Keeps each ended span for the batch being built (the export thread's only)."""

    def __init__(self) -> None:
        self.ended: list[ReadableSpan] = []

    def on_end(self, span: ReadableSpan) -> None:
        self.ended.append(span)


class _CountedMetricExporter(OTLPMetricExporter):
    """The OTLP metric exporter, telling `on_metrics` whether each export was taken."""

    def __init__(self, on_metrics: Callable[[bool], None], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._on_metrics = on_metrics

    def export(
        self, metrics_data: MetricsData, timeout_millis: float | None = 10_000, **kwargs: Any
    ) -> MetricExportResult:
        result = super().export(metrics_data, timeout_millis=timeout_millis, **kwargs)
        self._on_metrics(result is MetricExportResult.SUCCESS)
        return result


class OtlpSink:
    """One exporter configuration: rebuilt when the `[otel]` section changes."""

    def __init__(
        self,
        settings: OtelSettings,
        workspace_id: str,
        on_metrics: Callable[[bool], None] = lambda ok: None,
    ) -> None:
        """`on_metrics`: told, on the SDK's reader thread, whether each export of the
        counters was taken by the receiver."""
        # the exporters log every retry and every failed batch: while a collector is down
        # that would fill the daemon's log, so the tap says once that it fails (and once
        # that it answers again); the rest of the SDK still logs its errors
        logging.getLogger("opentelemetry").setLevel(logging.ERROR)
        logging.getLogger("opentelemetry.exporter").setLevel(logging.CRITICAL)
        resource = Resource.create(_resource_attributes(settings, workspace_id))
        self._collect = _Collect()
        self._traces = TracerProvider(resource=resource, shutdown_on_exit=False)
        self._traces.add_span_processor(self._collect)
        self._tracer = self._traces.get_tracer(SCOPE, __version__)
        self.exporter = OTLPSpanExporter(
            endpoint=_signal_url(settings, "traces"), timeout=settings.timeout_s
        )
        self.endpoint: str = getattr(self.exporter, "_endpoint", "")
        self._reader = PeriodicExportingMetricReader(
            _CountedMetricExporter(
                on_metrics, endpoint=_signal_url(settings, "metrics"), timeout=settings.timeout_s
            ),
            export_interval_millis=_interval_ms(settings),
        )
        self._meters = MeterProvider(
            resource=resource, metric_readers=[self._reader], shutdown_on_exit=False
        )
        meter = self._meters.get_meter(SCOPE, __version__)
        self._edits = meter.create_counter(
            "editjournal.edits", "{edit}", "Writes applied and refused, by outcome"
        )
        self._stale = meter.create_counter(
            "editjournal.stale_refusals", "{edit}", "Writes refused as anchor_stale"
        )
        self._carried = meter.create_counter(
            "editjournal.carried_edits",
            "{edit}",
            "Writes carried over unseen changes",
        )
        self._recovery = meter.create_histogram(
            "editjournal.recovery.duration",
            "s",
            "How long the daemon's start-up recovery took (unfinished writes, the checked fold)",
        )

    def recovered(self, seconds: float) -> None:
        """The daemon's start-up recovery: one measurement per daemon run."""
        self._recovery.record(seconds)

    def export(self, batch: Sequence[SpanFacts]) -> bool:
        """Send one batch; False if the collector refused it or could not be reached
        within the exporter's timeout (its retries included)."""
        for facts in batch:
            self._span(facts)
            self._count(facts)
            # let the owner thread have the GIL if it waits for it: without this it can
            # wait a whole switch interval (5 ms) for a reply while spans are built
            time.sleep(0)
        spans, self._collect.ended = self._collect.ended, []
        return self.exporter.export(spans) is SpanExportResult.SUCCESS

    def _span(self, facts: SpanFacts) -> None:
        at = facts.ts_ms * _MS
        span = self._tracer.start_span(
            facts.name, kind=SpanKind.INTERNAL, attributes=facts.attributes, start_time=at
        )
        if facts.error is not None:
            span.set_status(Status(StatusCode.ERROR, facts.error))
        span.end(end_time=at)

    def _count(self, facts: SpanFacts) -> None:
        tool = facts.attributes.get("gen_ai.tool.name", "")
        if facts.edit_outcome is not None:
            self._edits.add(1, {"outcome": facts.edit_outcome, "gen_ai.tool.name": tool})
        if facts.stale:
            self._stale.add(1, {"gen_ai.tool.name": tool})
        if facts.carried:
            self._carried.add(1, {"gen_ai.tool.name": tool})

    def shutdown(self, timeout_s: float) -> None:
        """Send the counters one last time, then close both exporters."""
        self._meters.shutdown(timeout_millis=timeout_s * 1000)
        self._traces.shutdown()
        self.exporter.shutdown()


def _resource_attributes(settings: OtelSettings, workspace_id: str) -> dict[str, str]:
    """service.name from the settings unless OTEL_SERVICE_NAME says otherwise (the SDK
    reads it, and OTEL_RESOURCE_ATTRIBUTES, in `Resource.create`)."""
    attributes = {"service.version": __version__, "editjournal.workspace.id": workspace_id}
    if not os.environ.get("OTEL_SERVICE_NAME"):
        attributes[SERVICE_NAME] = settings.service_name
    return attributes


def _signal_url(settings: OtelSettings, signal: str) -> str | None:
    """`[otel] endpoint` is a base URL, as OTEL_EXPORTER_OTLP_ENDPOINT is; None lets the
    exporter resolve the OTEL_EXPORTER_OTLP_* variables itself."""
    return None if settings.endpoint is None else f"{settings.endpoint}/v1/{signal}"


def _interval_ms(settings: OtelSettings) -> float | None:
    return None if settings.metrics_interval_s is None else settings.metrics_interval_s * 1000
