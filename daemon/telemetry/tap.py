"""Where committed records leave for OpenTelemetry: a bounded queue, and one thread that
empties it into the exporter.

The owner thread (the daemon's one writer) calls `offer` from the publisher after each
commit, before the replies go out, so `offer` does the least it can: when export is on,
it appends each record to a deque (thread-safe) and counts the ones a full queue
refuses; when it is off, it returns at once. It never waits for the export thread, the
network or a lock the export thread holds. Everything else — reading the `[otel]`
settings again every few seconds (so export can be turned on for a running daemon),
importing the SDK, building spans, sending them — happens on the export thread. A
collector that refuses or never answers blocks only that thread, for at most the
exporter's timeout per batch; meanwhile the queue fills and further events are dropped
with a count that `status` shows (group_commit.otel).

`ship --follow --otel` runs a Tap of its own over the events it ships (daemon/fleet,
client/cli/fleet.py): `forced` turns export on whatever `enabled` says (the rest of the
section still configures it), and `offer_paced` lets that reader, which may wait, wait
for room in the queue rather than drop a catch-up's events, but never for a collector
that is failing.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from editjournal.daemon.settings import otel
from editjournal.daemon.settings.otel import OtelSettings
from editjournal.daemon.telemetry.spans import EXPORTED_KINDS, SpanFacts, describe
from editjournal.schemas.errors import ToolError
from editjournal.schemas.events import Record

if TYPE_CHECKING:
    from editjournal.daemon.telemetry.otlp import OtlpSink

log = logging.getLogger("editjournal.otel")
SETTINGS_EVERY_S = 2.0  # how soon a changed [otel] section counts
DRAIN_EVERY_S = 0.2  # how long an event may wait for its batch
BATCH = 128  # spans per export request (encoding one holds the GIL: keep it short)
CLOSE_WAIT_S = 1.0  # what a shutdown gives the last batch before leaving it behind
PACED_WAIT_S = 0.05  # offer_paced: how often a full queue is looked at again


class Tap:
    """Owned by the publisher; `offer` and `stats` run on the owner thread, the rest on
    the export thread it starts."""

    def __init__(
        self,
        state_dir: Path,
        workspace_id: str,
        recovery_s: float | None = None,
        forced: bool = False,
    ) -> None:
        """`recovery_s`: how long the daemon's start-up recovery took, recorded once, when
        export first runs; `forced`: export whatever `[otel] enabled` says."""
        self._state_dir, self._workspace_id = state_dir, workspace_id
        self._forced, self._recovery_s = forced, recovery_s
        self._queue: deque[Record] = deque()
        # read here, once, so the first events are exported when the section says so;
        # from then on the export thread reads it
        self._settings, self._problem = self._read_settings()
        self._on = self._settings.enabled
        self._limit = self._settings.queue_size
        self._sink: OtlpSink | None = None
        self._counts = {"exported": 0, "dropped_queue_full": 0, "dropped_export_failed": 0}
        self._failing = False
        # the counters' exports (the SDK's reader thread): taken, refused, failing now
        self._metrics = {"metrics_exported": 0, "metrics_failed": 0}
        self._metrics_failing = False
        self._sdk_missing: str | None = None  # once the import failed, it is not retried
        self._endpoint = _traces_url(self._settings)  # the exporter's own, once it is built
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="editjournal-otel", daemon=True)
        self._thread.start()

    # --- the owner thread -----------------------------------------------------------------

    def offer(self, records: Iterable[Record]) -> None:
        """Queue the records export wants; never blocks."""
        if not self._on:
            return
        queue, limit = self._queue, self._limit
        for record in records:
            if record.event.kind not in EXPORTED_KINDS:
                continue
            if len(queue) >= limit:
                self._counts["dropped_queue_full"] += 1
            else:
                queue.append(record)

    def offer_paced(self, records: Sequence[Record], stop: threading.Event) -> None:
        """Queue the records, waiting for room while the collector answers (a reader
        that may wait: `ship --follow`). While it fails, or once `stop` is set, a full
        queue drops and counts as `offer` does; so a dead collector costs the reader at
        most one exporter timeout."""
        wanted = [r for r in records if r.event.kind in EXPORTED_KINDS]
        step = max(1, self._limit // 2)
        for start in range(0, len(wanted), step):
            while (
                len(self._queue) > self._limit - step
                and self._on
                and not self._failing
                and not stop.wait(PACED_WAIT_S)
            ):
                pass
            self.offer(wanted[start : start + step])

    def stats(self) -> dict[str, Any]:
        """What `status` shows: whether export is on, where to, and what became of events."""
        counts = dict(self._counts)
        dropped = counts["dropped_queue_full"] + counts["dropped_export_failed"]
        return {
            "state": self._state(),
            "endpoint": self._endpoint,
            "queued": len(self._queue),
            "dropped": dropped,
            **counts,
            "collector_failing": self._failing,
            **self._metrics,
            "metrics_failing": self._metrics_failing,
            "problem": self._problem,
        }

    def close(self) -> None:
        """Stop the export thread, giving the last batch `CLOSE_WAIT_S`; a collector that
        does not answer by then is left behind (the thread is a daemon thread)."""
        self._stop.set()
        self._thread.join(CLOSE_WAIT_S)

    def _state(self) -> str:
        if self._problem is not None and not self._on:
            return "unavailable"
        return "on" if self._on else "off"

    # --- the export thread ----------------------------------------------------------------

    def _run(self) -> None:
        settings_due = time.monotonic() + SETTINGS_EVERY_S
        while True:
            stopping = self._stop.wait(DRAIN_EVERY_S if self._on else SETTINGS_EVERY_S)
            if not stopping and time.monotonic() >= settings_due:
                settings_due = time.monotonic() + SETTINGS_EVERY_S
                self._apply(*self._read_settings())
            try:
                self._drain()
            except Exception:  # an SDK failure must never end the thread silently
                log.exception("OpenTelemetry export failed; events dropped")
                self._drop_queued()
            if stopping:
                self._shutdown_sink()
                return

    def _read_settings(self) -> tuple[OtelSettings, str | None]:
        """The section now; on a broken file, the settings in force stay, with the problem."""
        try:
            settings = otel.load(self._state_dir)
            return (replace(settings, enabled=True) if self._forced else settings), None
        except ToolError as e:
            return getattr(self, "_settings", otel.OFF), e.message

    def _apply(self, settings: OtelSettings, problem: str | None) -> None:
        self._problem = problem or self._sdk_missing
        if problem is not None or self._sdk_missing is not None or settings == self._settings:
            return  # a broken file changes nothing: the settings in force stay
        self._drain()  # what was queued goes out under the settings it was queued with
        self._shutdown_sink()
        self._settings, self._limit = settings, settings.queue_size
        self._endpoint = _traces_url(settings)
        self._on = settings.enabled
        if not settings.enabled:
            self._drop_queued()

    def _drain(self) -> None:
        if not self._queue:
            if self._on and self._recovery_s is not None and self._sink is None:
                self._open_sink()  # the recovery time goes out even before any event
            return
        sink = self._sink or self._open_sink()
        if sink is None:
            self._drop_queued()
            return
        while self._queue:
            batch = [self._queue.popleft() for _ in range(min(BATCH, len(self._queue)))]
            facts = [f for f in (describe(r, self._workspace_id) for r in batch) if f is not None]
            self._sent(facts, sink.export(facts) if facts else True)

    def _sent(self, facts: list[SpanFacts], ok: bool) -> None:
        key = "exported" if ok else "dropped_export_failed"
        self._counts[key] += len(facts)
        if ok == self._failing:  # a change of state: said once, not per batch
            self._failing = not ok
            if ok:
                log.info("OpenTelemetry collector %s answers again", self._endpoint)
            else:
                log.warning("OpenTelemetry collector %s failed; events dropped", self._endpoint)

    def _metrics_sent(self, ok: bool) -> None:
        """One export of the counters (the SDK's reader thread), said once per change."""
        self._metrics["metrics_exported" if ok else "metrics_failed"] += 1
        if ok == self._metrics_failing:
            self._metrics_failing = not ok
            if ok:
                log.info("OpenTelemetry receiver %s takes the counters again", self._endpoint)
            else:
                log.warning(
                    "OpenTelemetry receiver %s refused the counters (its /v1/metrics);"
                    " spans are not affected",
                    self._endpoint,
                )

    def _open_sink(self) -> OtlpSink | None:
        """The SDK, imported the first time export is on; without the `otel` extra,
        export stays off and `status` says why."""
        try:
            from editjournal.daemon.telemetry.otlp import OtlpSink
        except ImportError as e:
            self._sdk_missing = f"the otel extra is not installed (no module {e.name})"
            self._on, self._problem = False, self._sdk_missing
            log.warning("[otel] is enabled but %s", self._problem)
            return None
        self._sink = OtlpSink(self._settings, self._workspace_id, self._metrics_sent)
        self._endpoint = self._sink.endpoint
        if self._recovery_s is not None:  # once per daemon: the first sink sends it
            self._sink.recovered(self._recovery_s)
            self._recovery_s = None
        return self._sink

    def _drop_queued(self) -> None:
        while self._queue:
            self._queue.popleft()
            self._counts["dropped_export_failed"] += 1

    def _shutdown_sink(self) -> None:
        sink, self._sink = self._sink, None
        if sink is not None:
            sink.shutdown(CLOSE_WAIT_S)


def _traces_url(settings: OtelSettings) -> str | None:
    """Where spans go as far as the settings say (None: the OTEL_EXPORTER_OTLP_* variables,
    which the exporter resolves when it is built)."""
    return None if settings.endpoint is None else f"{settings.endpoint}/v1/traces"
