"""Idempotent retries: a request with an `idempotency_key` is applied at most once.

A client that timed out cannot know whether its edit was applied; retrying blindly
could apply it twice. So when a keyed request changes something, its reply is
journaled (`request_answered`, staged in the same transaction as the request's own
events), and the fold keeps the latest `MAX_ANSWERS` of them by (agent, key). A retry
with the same key gets that reply back — same result, same seq — without running
again; the same key with other params is refused (`idempotency_key_reused`).

Only requests that changed something are remembered: a read, or a rejection, changes
nothing, so running it again is as safe as replaying it and costs no journal space.
What it must never do: change state except through the events it stages.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from dataclasses import dataclass, field

import msgspec

from editjournal.schemas.errors import ErrorCode, ToolError
from editjournal.schemas.events import FileRead, Record, RequestAnswered
from editjournal.schemas.wire import Request, Response

MAX_ANSWERS = 10_000  # keys remembered; a retry comes within seconds, not 10,000 edits later
_REPLY_ENCODER = msgspec.msgpack.Encoder()
_REPLY_DECODER = msgspec.msgpack.Decoder(Response)


@dataclass
class Answers:
    """The remembered replies, newest last: part of the daemon's fold (state.py)."""

    by_key: OrderedDict[tuple[str, str], RequestAnswered] = field(default_factory=OrderedDict)

    def apply(self, record: Record, event: RequestAnswered) -> None:
        key = (record.agent or "", event.key)
        self.by_key[key] = event
        self.by_key.move_to_end(key)
        while len(self.by_key) > MAX_ANSWERS:
            self.by_key.popitem(last=False)

    def replay(self, request: Request) -> Response | None:
        """The first reply to this keyed request, re-addressed to this retry; None when
        the key is new. A key used before for other params is `idempotency_key_reused`."""
        if request.idempotency_key is None:
            return None
        found = self.by_key.get((request.agent, request.idempotency_key))
        if found is None:
            return None
        if found.request_sha256 != request_digest(request):
            raise ToolError(
                ErrorCode.IDEMPOTENCY_KEY_REUSED,
                f"idempotency_key {request.idempotency_key!r} was used for another request"
                f" ({found.method}); nothing was done",
                {"idempotency_key": request.idempotency_key, "method": found.method},
            )
        first = _REPLY_DECODER.decode(found.reply)
        note = "a retry: this is the reply to the first request with this idempotency_key"
        return msgspec.structs.replace(first, id=request.id, warnings=[*first.warnings, note])


def request_digest(request: Request) -> str:
    """What makes two requests the same request: method and params, byte for byte."""
    digest = hashlib.sha256(request.method.encode())
    digest.update(b"\x00")
    digest.update(bytes(request.params))
    return digest.hexdigest()


def answered(request: Request, response: Response, records: list[Record]) -> RequestAnswered | None:
    """The event that remembers this reply, when the request is keyed and changed
    something (recorded an event other than a read); else None."""
    changed = any(not isinstance(r.event, FileRead) for r in records)
    if request.idempotency_key is None or not changed or not response.ok:
        return None
    try:
        reply = _REPLY_ENCODER.encode(response)
    except Exception:  # unencodable: the boundary answers it with an error anyway
        return None
    return RequestAnswered(
        key=request.idempotency_key,
        method=request.method,
        request_sha256=request_digest(request),
        reply=reply,
    )
