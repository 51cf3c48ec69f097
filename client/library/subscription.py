"""Following the journal live: a SUB socket on the daemon's PUB address.

ZeroMQ's PUB/SUB drops nothing once connected but can miss what is published
while the subscription is still being set up (the "slow joiner"): use
`wait_ready` (or read `log --after-seq`) when the first events matter.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence

import msgspec
import zmq

from editjournal.schemas.wire import PublishedEvent, event_topic

_DECODER = msgspec.msgpack.Decoder(PublishedEvent)


class Subscription:
    """An iterator of `PublishedEvent`s; `next_event(timeout)` for bounded waits."""

    def __init__(
        self, context: zmq.Context[zmq.Socket[bytes]], address: str, paths: Sequence[str] | None
    ) -> None:
        self.socket = context.socket(zmq.SUB)
        self.socket.setsockopt(zmq.LINGER, 0)
        for topic in [event_topic(p) for p in paths] if paths else [b""]:
            self.socket.setsockopt(zmq.SUBSCRIBE, topic)
        self.socket.connect(address)

    def next_event(self, timeout: float | None = None) -> PublishedEvent | None:
        """The next event, or None when `timeout` seconds pass without one."""
        if not self.socket.poll(None if timeout is None else int(timeout * 1000)):
            return None
        _topic, body = self.socket.recv_multipart()
        return _DECODER.decode(body)

    def events(self, timeout: float | None = None) -> Iterator[PublishedEvent]:
        """Events until `timeout` seconds pass without one (forever when None)."""
        while (event := self.next_event(timeout)) is not None:
            yield event

    def __iter__(self) -> Iterator[PublishedEvent]:
        return self.events()

    def wait_ready(self, trigger: Callable[[], object], timeout: float = 10.0) -> PublishedEvent:
        """Call `trigger()` until an event arrives: proof the subscription is live."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            trigger()
            event = self.next_event(0.05)
            if event is not None:
                return event
        raise TimeoutError(f"no event arrived within {timeout:g} s")

    def close(self) -> None:
        self.socket.close(linger=0)

    def __enter__(self) -> Subscription:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
