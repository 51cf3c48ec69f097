"""The PUB socket: every committed event, broadcast so agents learn of changes without polling.

Frames: `[topic, msgpack(PublishedEvent)]`. The topic is the event's path
followed by a NUL byte (just the NUL for events about no file), so a
subscriber to `b"src/app.py\\0"` gets exactly that file's events and a
subscriber to `b""` gets everything. Publishing never blocks the daemon: PUB
drops messages for subscribers that do not keep up (their high-water mark),
and the journal stays the place to catch up from (`log --after-seq`).

The group commit hands it every event at its commit but a write's `edit_applied`,
which it hands over once the file has landed (daemon/runtime/groupcommit.py): a
subscriber that reads the file on that event must find the new content.

The same records go to the OpenTelemetry tap (daemon/telemetry/tap.py) when the
daemon has one: an append to its bounded queue, never a wait on its exporter.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec
import zmq

from editjournal.daemon.telemetry.tap import Tap
from editjournal.schemas.events import Record
from editjournal.schemas.wire import PublishedEvent, event_topic

_ENCODER = msgspec.msgpack.Encoder()


class Publisher:
    """Owned by the daemon's one thread, like everything else that writes."""

    def __init__(
        self, context: zmq.Context[zmq.Socket[bytes]], address: str, tap: Tap | None = None
    ) -> None:
        self.address = address
        self.tap = tap
        self.socket = context.socket(zmq.PUB)
        self.socket.setsockopt(zmq.LINGER, 0)
        self.socket.bind(address)

    def publish(self, records: Sequence[Record]) -> None:
        for record in records:
            event = PublishedEvent(
                seq=record.seq,
                ts=record.ts,
                kind=record.kind,
                agent=record.agent,
                path=record.path,
                summary=record.event.summary(),
            )
            self.socket.send_multipart([event_topic(record.path), _ENCODER.encode(event)])
        if self.tap is not None:
            self.tap.offer(records)

    def telemetry(self) -> dict[str, Any]:
        """The OpenTelemetry export's state and counts, for `status`."""
        return {"state": "off"} if self.tap is None else self.tap.stats()

    def close(self) -> None:
        self.socket.close()
        if self.tap is not None:
            self.tap.close()
