"""Journal events exported as OpenTelemetry (issue 38): one span per write, refusal,
outside change, checkpoint and restore, and counters, sent over OTLP/HTTP.

`tap` is what the daemon's owner thread touches: an append to a bounded queue per
committed event, never a wait. `spans` turns a record into a span's name and
attributes (pure). `otlp` is the only module that imports the OpenTelemetry SDK, and
only on the export thread, when the workspace's `[otel]` section turns export on.
"""
