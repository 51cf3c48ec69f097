"""Idempotent retries: a request with an `idempotency_key` is applied at most once.

A client that timed out cannot know whether its edit was applied; retrying blindly
could apply it twice. So when a keyed request changes something, its reply is
journaled (`request_answered`, staged in the same transaction as the request's own
events), and the fold keeps the latest `MAX_ANSWERS` of them by (agent, identity, key).
A retry with the same key gets that reply back — same outcome, same seq — without
running again; the same key with other params is refused (`idempotency_key_reused`).
The identity is the fingerprint of the request's credential (`schemas.wire`): a request
that names the agent without holding its credential has a key space of its own, so it
can neither pre-empt the agent's key (be answered first, and have the agent's write
replayed as done) nor poison it (make the agent's own request `idempotency_key_reused`).

The reply remembered is the one the request really got. A write is committed before
it lands, so the reply staged with its commit is the planned one; when the landing
turns it into something else (refused `write_displaced` over an outside writer, a
rename that failed, a change carried over an outside one), the daemon journals the
landing's reply as a second `request_answered` for the key (`amends` naming the
first), and the fold keeps the newest: a retry is never told `ok` for a write that is
not in the file. (A crash between the commit and the landing leaves the planned reply;
start-up recovery rolls that write forward, which makes it true, or journals the
reply of a write it could not finish.)

A remembered reply keeps the outcome, not the bulk: past `REMEMBER_WHOLE` bytes its
diffs, anchored lines and contents are left out (and say so, with where to see them:
`show SEQ`), so a keyed 200,000-line write journals kilobytes, not its 15 MB reply.
Old journals' whole replies are cut the same way as they are folded.

Only requests that changed something are remembered: a read, or a rejection, changes
nothing, so running it again is as safe as replaying it and costs no journal space.
What it must never do: change state except through the events it stages.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

import msgspec

from editjournal.schemas.errors import ErrorCode, ToolError
from editjournal.schemas.events import FileRead, Record, RequestAnswered
from editjournal.schemas.wire import Request, Response

MAX_ANSWERS = 10_000  # keys remembered; a retry comes within seconds, not 10,000 edits later
REMEMBER_WHOLE = 4096  # bytes: a reply this small is remembered whole, diff and all
BULKY = ("diff", "applied_diff", "changed_lines", "content")  # left out of a larger one
LONG_TEXT = 1024  # characters: any other text this long is left out of a larger one too
RETRY_NOTE = "a retry: this is the reply to the first request with this idempotency_key"
Remembered = tuple[str, RequestAnswered, Response]  # agent, answer, the reply it keeps
AnswerKey = tuple[str, str, str]  # agent, identity ("" for none), idempotency key
_REPLY_ENCODER = msgspec.msgpack.Encoder()
_REPLY_DECODER = msgspec.msgpack.Decoder(Response)


@dataclass
class Answers:
    """The remembered replies, newest last: part of the daemon's fold (state.py)."""

    by_key: OrderedDict[AnswerKey, RequestAnswered] = field(default_factory=OrderedDict)

    def apply(self, record: Record, event: RequestAnswered) -> None:
        self.remember(record.agent or "", event)

    def remember(self, agent: str, event: RequestAnswered) -> None:
        """The newest answer of (agent, identity, key) wins: a landing's amends its
        commit's. An old journal's whole reply is cut here, so the fold never holds its
        bulk."""
        if len(event.reply) > REMEMBER_WHOLE:
            event = msgspec.structs.replace(event, reply=_encode(compact(_decode(event.reply))))
        key = (agent, event.identity or "", event.key)
        self.by_key[key] = event
        self.by_key.move_to_end(key)
        while len(self.by_key) > MAX_ANSWERS:
            self.by_key.popitem(last=False)

    def replay(self, request: Request) -> Response | None:
        """The first reply to this keyed request, re-addressed to this retry; None when
        the key is new. A key used before for other params is `idempotency_key_reused`."""
        if request.idempotency_key is None:
            return None
        found = self.by_key.get((request.agent, request.identity or "", request.idempotency_key))
        if found is None:
            return None
        if found.request_sha256 != request_digest(request):
            raise ToolError(
                ErrorCode.IDEMPOTENCY_KEY_REUSED,
                f"idempotency_key {request.idempotency_key!r} was used for another request"
                f" ({found.method}); nothing was done",
                {"idempotency_key": request.idempotency_key, "method": found.method},
            )
        first = _decode(found.reply)
        note = RETRY_NOTE + (f" (seq {first.seq}); nothing was done again" if first.seq else "")
        return msgspec.structs.replace(first, id=request.id, warnings=[*first.warnings, note])

    def answering(self, seqs: Collection[int]) -> dict[int, list[Remembered]]:
        """(agent, answer, its reply) of every remembered reply that reports one of
        `seqs`, by that seq: the replies the writes journaled there were answered with."""
        wanted = set(seqs)
        found: dict[int, list[Remembered]] = {}
        if not wanted:
            return {}
        for (agent, _, _), answer in self.by_key.items():
            reply = _decode(answer.reply)
            if reply.seq in wanted:
                found.setdefault(reply.seq, []).append((agent, answer, reply))
        return found


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
        reply = _encode(compact(response))
    except Exception:  # unencodable: the boundary answers it with an error anyway
        return None
    return RequestAnswered(
        key=request.idempotency_key,
        method=request.method,
        request_sha256=request_digest(request),
        reply=reply,
        identity=request.identity,
    )


def amended(first: RequestAnswered, first_seq: int, response: Response) -> RequestAnswered:
    """The answer that replaces `first` (journaled at `first_seq`) once the write has
    landed and its reply is known: what a retry must be told from now on."""
    return RequestAnswered(
        key=first.key,
        method=first.method,
        request_sha256=first.request_sha256,
        reply=_encode(compact(response)),
        amends=first_seq,
        identity=first.identity,
    )


def refused(first: Response, error: ToolError) -> Response:
    """The reply `first` should have been: `error`, for the write it reported."""
    return Response(id=first.id, ok=False, error=error.to_wire(), seq=first.seq)


def reply_of(answer: RequestAnswered) -> Response:
    return _decode(answer.reply)


def compact(response: Response) -> Response:
    """The reply as remembered: whole when it encodes in `REMEMBER_WHOLE` bytes; else
    its bulky fields emptied (the types kept, so a client still decodes the result)
    and a warning naming them and where the change can be seen in full."""
    if response.result is None or len(_encode(response)) <= REMEMBER_WHOLE:
        return response
    result = _decode(_encode(response)).result  # plain maps and lists, a copy
    left_out: set[str] = set()
    result = _cut(result, left_out)
    if not left_out:
        return response
    names = ", ".join(sorted(left_out))
    note = (
        f"a remembered reply keeps the outcome, not the bulk: {names} left out"
        f" (the reply was over {REMEMBER_WHOLE} bytes)"
    )
    if response.seq is not None:
        seq = response.seq
        note += f"; `editjournal show {seq}` (the `show` method, seq {seq}) shows the change"
    return msgspec.structs.replace(response, result=result, warnings=[*response.warnings, note])


def _cut(value: Any, left_out: set[str], name: str = "") -> Any:
    """`value` with its bulky parts emptied, their names added to `left_out`."""
    if name in BULKY and value:
        left_out.add(name)
        return _empty(name, value)
    if isinstance(value, dict):
        return {k: _cut(v, left_out, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_cut(v, left_out, name) for v in value]
    if isinstance(value, str) and len(value) > LONG_TEXT:
        left_out.add(name or "text")
        return ""
    return value


def _empty(name: str, value: Any) -> Any:
    """The empty value of a bulky field's type, so the result still decodes: [] for a
    list, "" for a text; a whole `content` (optional wherever a result has one) None."""
    if isinstance(value, list):
        return []
    return None if name == "content" else ""


def _encode(response: Response) -> bytes:
    return _REPLY_ENCODER.encode(response)


def _decode(reply: bytes) -> Response:
    return _REPLY_DECODER.decode(reply)
