"""Request and response envelopes as they travel over ZeroMQ (msgpack).

A request names a method and carries its params undecoded (`msgspec.Raw`), so
the daemon can decode the envelope once and the params with the method's own
typed decoder, and report a bad field by its path under `$.params`.
"""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from msgspec import Meta

# The wire protocol's version: the envelopes here, and the methods with their params and
# results in `schemas.tools`. It goes up when a change could break a client written for
# the version before (a field removed, renamed or retyped, a method's meaning changed);
# adding an optional field, a method or an error code keeps it. `ping` and `status`
# report it (`protocol`); docs/protocol.md lists the versions.
PROTOCOL_VERSION = 1


class Error(msgspec.Struct, kw_only=True, omit_defaults=True):
    """An error reply's payload: a catalogue code plus what to do about it.

    `suggested_action` is for programs: the seeds' machine token where a seed names one
    for the code (`anchor_stale`: `"re-read_file"`), else the hint's words. `hint` is
    for whoever reads: what to do in a sentence, a call to make spelt `method({...})`
    with its real params. `hint` came later (additive: an older daemon leaves it out, an
    older client ignores it)."""

    code: str
    message: str
    details: dict[str, Any] = {}
    suggested_action: str | None = None
    hint: str | None = None


class Request(msgspec.Struct, kw_only=True, omit_defaults=True):
    """What an agent sends: `{id, agent, method, params}`, and optionally an
    `idempotency_key`: a retry with the same key (same agent, method and params) gets
    the first reply again instead of applying twice."""

    id: int | str
    method: str
    agent: str = "anonymous"
    params: msgspec.Raw = msgspec.Raw(b"\x80")  # an empty msgpack map
    idempotency_key: Annotated[str, Meta(min_length=1, max_length=200)] | None = None


class Response(msgspec.Struct, kw_only=True):
    """What the daemon answers. `seq` is the journal seq the request recorded, if any."""

    id: int | str | None
    ok: bool
    result: Any = None
    error: Error | None = None
    warnings: list[str] = []
    seq: int | None = None


class PublishedEvent(msgspec.Struct, kw_only=True):
    """One committed journal event as broadcast on the PUB socket."""

    seq: int
    ts: int
    kind: str
    agent: str | None
    path: str | None
    summary: str


def event_topic(path: str | None) -> bytes:
    """The PUB topic of an event: its path then NUL (just NUL for no path), so a
    subscription to one path's topic is an exact match, and `b""` is everything."""
    return (path or "").encode() + b"\x00"


REQUEST_ENCODER = msgspec.msgpack.Encoder()
RESPONSE_DECODER = msgspec.msgpack.Decoder(Response)
