"""What the OpenTelemetry tests share (tests/e2e/test_otel.py): a real OTLP/HTTP receiver
on 127.0.0.1 that decodes the protobuf requests with opentelemetry-proto, as a collector
does; a collector that accepts connections and never answers; the `[otel]` section
written; a long-running command (`ship --follow`) in the background."""

from __future__ import annotations

import os
import socket
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import IO, Any

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue

from tests import zygote
from tests.e2e.cli_support import CLI, CLI_MODULE, CLI_PRELOAD, cli_env


class Receiver:
    """An OTLP/HTTP receiver: every span and metric data point it was sent, decoded."""

    def __init__(self) -> None:
        self.spans: list[dict[str, Any]] = []
        self.resources: list[dict[str, Any]] = []
        self.metrics: dict[str, float] = {}  # counter name -> the latest cumulative sum
        self.histograms: dict[str, tuple[int, float]] = {}  # name -> (count, sum)
        self.metrics_status = 200  # 405: a receiver of traces only (Arize Phoenix)
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                status = 200
                if self.path == "/v1/traces":
                    receiver.traces(body)
                elif self.path == "/v1/metrics":
                    status = receiver.metrics_status
                    if status == 200:
                        receiver.counters(body)
                self.send_response(status)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:  # no noise on stderr
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def traces(self, body: bytes) -> None:
        request = ExportTraceServiceRequest.FromString(body)
        for resource_spans in request.resource_spans:
            self.resources.append(_attributes(resource_spans.resource.attributes))
            for scope in resource_spans.scope_spans:
                for span in scope.spans:
                    self.spans.append(
                        {
                            "name": span.name,
                            "status": span.status.code,
                            "start": span.start_time_unix_nano,
                            **_attributes(span.attributes),
                        }
                    )

    def counters(self, body: bytes) -> None:
        request = ExportMetricsServiceRequest.FromString(body)
        for resource_metrics in request.resource_metrics:
            for scope in resource_metrics.scope_metrics:
                for metric in scope.metrics:
                    if metric.WhichOneof("data") == "histogram":
                        points = metric.histogram.data_points
                        count = sum(p.count for p in points)
                        self.histograms[metric.name] = (count, sum(p.sum for p in points))
                        continue
                    points = metric.sum.data_points
                    self.metrics[metric.name] = sum(p.as_int or p.as_double for p in points)

    def kinds(self) -> set[str]:
        return {span["editjournal.event.kind"] for span in self.spans}

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class SilentCollector:
    """A collector that accepts every connection and never answers: the kernel completes
    the handshake (a listening socket's backlog) and nobody reads."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"

    def close(self) -> None:
        self.sock.close()


def _attributes(pairs: Any) -> dict[str, Any]:
    return {pair.key: _value(pair.value) for pair in pairs}


def _value(value: AnyValue) -> Any:
    return getattr(value, value.WhichOneof("value") or "string_value")


def configure(root: Path, **keys: Any) -> None:
    """`.editjournal/config.toml` with an `[otel]` section (enabled unless said)."""
    keys = {"enabled": True, **keys}
    lines = ["[otel]"]
    for key, value in keys.items():
        text = ("true" if value else "false") if isinstance(value, bool) else repr(value)
        lines.append(f"{key} = {text}".replace("'", '"'))
    state = root / ".editjournal"
    state.mkdir(exist_ok=True)
    (state / "config.toml").write_text("\n".join(lines) + "\n")


def receiving() -> Iterator[Receiver]:
    """A receiver for a test, closed after it (a fixture's body: `yield from`)."""
    running = Receiver()
    yield running
    running.close()


def listening_silently() -> Iterator[SilentCollector]:
    running = SilentCollector()
    yield running
    running.close()


def in_background(root: Path, *args: str) -> tuple[Any, IO[bytes]]:
    """`editjournal --workspace ROOT ARGS...` left running (forked from the worker's
    zygote when it can be), with its stderr readable as a pipe; stdout is discarded."""
    argv = ["--workspace", str(root), *args]
    read, write = os.pipe()
    with open(os.devnull, "rb") as null_in, open(os.devnull, "wb") as null_out:
        proc: Any = zygote.forked(
            [], CLI_PRELOAD, CLI_MODULE, argv, str(root),
            null_in.fileno(), null_out.fileno(), write, cli_env(),
        )  # fmt: skip
        if proc is None:
            proc = subprocess.Popen(
                [*CLI, *argv], cwd=root, stdin=null_in, stdout=null_out, stderr=write,
                env=cli_env(),
            )  # fmt: skip
    os.close(write)
    return proc, os.fdopen(read, "rb")
