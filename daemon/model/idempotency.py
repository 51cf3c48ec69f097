"""Idempotent retries: a request with an `idempotency_key` is applied at most once.

A client that timed out cannot know whether its edit was applied; retrying blindly
could apply it twice. So when a keyed request changes something, its reply is
journaled (`request_answered`, staged in the same transaction as the request's own
events), and the fold keeps the latest `MAX_ANSWERS` of them by (agent, identity, key).
A retry with the same key gets that reply back — same outcome, same seq — without
running again; the same key with other params is refused (`idempotency_key_reused`).
"The same params" means the same decoded params, not the same bytes: another client
library may encode the map in another key order or spell out a default, and its retry
is the same request (`request_digest` hashes the Params struct re-encoded in its fixed
field order). A fingerprint journaled before that (a hash of the frame's params bytes)
still matches a retry of those very bytes (`bytes_digest`).
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

import functools
import hashlib
from collections import OrderedDict
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

import msgspec

from editjournal.schemas.errors import ErrorCode, ToolError
from editjournal.schemas.events import FileRead, Record, RequestAnswered
from editjournal.schemas.tools import TOOL_PARAMS
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
# A Struct's fields go in their declared order; "deterministic" sorts the keys of any map
# inside too (a dict[str, Any] field), so equal params always encode to equal bytes.
_PARAMS_ENCODER = msgspec.msgpack.Encoder(order="deterministic")


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

    def replay(self, request: Request, params: Any = None) -> Response | None:
        """The first reply to this keyed request, re-addressed to this retry; None when
        the key is new. A key used before for other params is `idempotency_key_reused`.
        `params`: the request's, decoded (decoded here when not given)."""
        if request.idempotency_key is None:
            return None
        found = self.by_key.get((request.agent, request.identity or "", request.idempotency_key))
        if found is None:
            return None
        if not _same_request(found.request_sha256, request, params):
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


def request_digest(request: Request, params: Any = None) -> str:
    """What makes two requests the same request: the method and the decoded params,
    re-encoded with a fixed order, so key order and defaults spelt out or left out do
    not count. `params` is the request's decoded Params (handlers never change them:
    they return events); when not given they are decoded here."""
    if params is None:
        params = _decoded(request)
        if params is None:  # no method of that name: nothing to decode the bytes into
            return bytes_digest(request)
    return _digest(request.method, _PARAMS_ENCODER.encode(params))


def bytes_digest(request: Request) -> str:
    """The fingerprint daemons journaled before `request_digest`: the params' bytes as
    sent. Only a retry of the same bytes matches a key remembered that way."""
    return _digest(request.method, bytes(request.params))


def _same_request(fingerprint: str, request: Request, params: Any) -> bool:
    """Whether a remembered fingerprint is this request's: by its decoded params, or,
    for one journaled by an older daemon, by its bytes."""
    return fingerprint == request_digest(request, params) or fingerprint == bytes_digest(request)


def _digest(method: str, params: bytes) -> str:
    digest = hashlib.sha256(method.encode())
    digest.update(b"\x00")
    digest.update(params)
    return digest.hexdigest()


def _decoded(request: Request) -> Any:
    """The request's params as its method's Params struct; None for an unknown method."""
    decoder = _params_decoder(request.method)
    return decoder.decode(request.params) if decoder is not None else None


@functools.cache
def _params_decoder(method: str) -> msgspec.msgpack.Decoder[Any] | None:
    params = TOOL_PARAMS.get(method)
    return msgspec.msgpack.Decoder(params) if params is not None else None


def answered(
    request: Request, response: Response, records: list[Record], params: Any = None
) -> RequestAnswered | None:
    """The event that remembers this reply, when the request is keyed and changed
    something (recorded an event other than a read); else None. `params`: the
    request's, decoded (decoded again here when not given)."""
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
        request_sha256=request_digest(request, params),
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
