"""The `[otel]` section of `.editjournal/config.toml`: whether and where journal events are
exported as OpenTelemetry (daemon/telemetry).

    [otel]
    enabled = true                        # off unless said (default false)
    endpoint = "http://127.0.0.1:4318"    # OTLP/HTTP base URL; /v1/traces and /v1/metrics
                                          # are added (default: the OTEL_EXPORTER_OTLP_*
                                          # variables, then http://localhost:4318)
    timeout_seconds = 10                  # one export request (default: OTEL_EXPORTER_OTLP_TIMEOUT)
    queue_size = 2048                     # events waiting to be exported; past it they are dropped
    service_name = "editjournal"          # the resource's service.name (OTEL_SERVICE_NAME wins)
    metrics_interval_seconds = 60         # how often the counters are sent

Headers (an API key, say) are never read from here: the config file is workspace
content that agents can read, so secrets go in `OTEL_EXPORTER_OTLP_HEADERS` in the
daemon's environment. The section is validated with the rest of the file
(daemon/settings/config.py): anything wrong in it is a `config_invalid` naming the
problem, raised to whoever loads it; it never stops the daemon.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from editjournal.daemon.settings import config

KEYS = config._SECTIONS["otel"]  # one list: config.parse checks them with the rest
DEFAULT_QUEUE_SIZE = 2048
MAX_QUEUE_SIZE = 1_000_000


@dataclass(frozen=True)
class OtelSettings:
    enabled: bool = False
    endpoint: str | None = None  # None: the exporter reads the OTEL_EXPORTER_OTLP_* variables
    timeout_s: float | None = None
    queue_size: int = DEFAULT_QUEUE_SIZE
    service_name: str = "editjournal"
    metrics_interval_s: float | None = None  # None: OTEL_METRIC_EXPORT_INTERVAL, else 60 s


OFF = OtelSettings()


def load(state_dir: Path) -> OtelSettings:
    """The `[otel]` section as the file says now (`OFF` without a file); `config_invalid`
    (a `ToolError`) if the file or the section is wrong. Cheap enough to call every few
    seconds: the export thread does, so a running daemon can be turned on and off."""
    path = state_dir / config.CONFIG_FILE
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return OFF
    except OSError as e:
        raise config._invalid(path, f"cannot be examined: {e.strerror}") from e
    if not stat.S_ISREG(info.st_mode):
        raise config._invalid(path, "is not a regular file (symlinks are not followed)")
    text = config._read(path)
    config.parse(text, path)  # the whole file must be valid, as for every other section
    section = config.tomllib.loads(text).get("otel", {})
    return parse(section, path)


def parse(section: dict[str, Any], path: Path | str = config.CONFIG_FILE) -> OtelSettings:
    """Settings from the parsed `[otel]` table (its keys were checked by config.parse)."""
    enabled = section.get("enabled", False)
    if not isinstance(enabled, bool):
        raise config._invalid(path, "otel.enabled must be true or false")
    endpoint = section.get("endpoint")
    if endpoint is not None and not (
        isinstance(endpoint, str) and endpoint.startswith(("http://", "https://"))
    ):
        raise config._invalid(path, 'otel.endpoint must be an http(s) URL, e.g. "http://host:4318"')
    return OtelSettings(
        enabled=enabled,
        endpoint=None if endpoint is None else endpoint.rstrip("/"),
        timeout_s=_seconds(section, "timeout_seconds", path),
        queue_size=_queue_size(section.get("queue_size", DEFAULT_QUEUE_SIZE), path),
        service_name=_name(section.get("service_name", "editjournal"), path),
        metrics_interval_s=_seconds(section, "metrics_interval_seconds", path),
    )


def _seconds(section: dict[str, Any], key: str, path: Path | str) -> float | None:
    value = section.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise config._invalid(path, f"otel.{key} must be a positive number of seconds")
    return float(value)


def _queue_size(value: Any, path: Path | str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_QUEUE_SIZE:
        raise config._invalid(path, f"otel.queue_size must be from 1 to {MAX_QUEUE_SIZE}")
    return value


def _name(value: Any, path: Path | str) -> str:
    if not isinstance(value, str) or not value:
        raise config._invalid(path, "otel.service_name must be a non-empty string")
    return value
