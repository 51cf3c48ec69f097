"""The request boundary: whatever one request does, it gets a reply and the loop goes on.

The daemon's one thread serves every agent, so an exception that escapes while one
request is decoded, handled, encoded or replied to would stop the daemon for all of
them (a few bytes of invalid UTF-8 once did). This module is the one place that turns
any such exception into that request's error reply:

- `DECODE_ERRORS` are what msgspec raises for a frame it cannot read: besides its own
  errors, `UnicodeDecodeError` (invalid UTF-8 in any string, keys included) and
  `RecursionError` (nesting deeper than the interpreter's recursion limit, about 1,000
  levels: msgspec bounds its depth there, so the depth is bounded at decode time and
  no pre-scan is needed). `decode_failure` says which it was, as `bad_request`.
- `failure_reply` answers a request whose handling raised: `internal_error`, with the
  traceback in daemon.log; SQLite failing under the journal is `journal_corrupt` (a
  malformed file) or `journal_unavailable` (locked, gone, I/O) instead.
- `encode_reply` never raises: a reply that cannot be encoded (an integer beyond 64
  bits, nesting too deep) is replaced by an error reply with the same id and seq.
- `check_frame` refuses a frame over the size limit before anything decodes it.
- `split_route` takes a message apart into the route its reply goes back on and the
  request frame, and refuses a message no DEALER or REQ client sends (`bad_request`):
  a reply echoing whatever frames came before the request would hand a client back
  frames it never expected, and let any sender bounce bytes off the daemon.

It decides nothing about what a request means; server.py calls it at each step.
"""

from __future__ import annotations

import logging
import traceback

import msgspec

from editjournal.daemon.store.dbfaults import journal_failure, sqlite_cause
from editjournal.daemon.store.journal import JournalError
from editjournal.schemas.errors import ErrorCode, ToolError
from editjournal.schemas.units import format_binary_size, format_size
from editjournal.schemas.wire import Error, Response

log = logging.getLogger("editjournal")

DECODE_ERRORS = (
    msgspec.DecodeError,
    msgspec.ValidationError,
    UnicodeDecodeError,
    RecursionError,
)
_ENCODER = msgspec.msgpack.Encoder()
# The reply of last resort, for when not even an error reply can be encoded.
_UNENCODABLE = _ENCODER.encode(
    Response(
        id=None,
        ok=False,
        error=Error(code=ErrorCode.INTERNAL_ERROR.value, message="the reply could not be encoded"),
    )
)


class InjectedCrash(BaseException):
    """Raised by the daemon's test-only `--crash-on-method`: a BaseException, so it
    passes the boundary and ends the loop as a real crash would."""


class InjectedFailure(Exception):
    """Raised by the daemon's test-only `--fail-after-prepare`: an Exception, so the
    boundary answers it (after the request's writes were prepared)."""


CRASH_PREFIX = "crash: "


def crash_reason(error: BaseException) -> str:
    """`daemon_stopped`'s reason when the loop itself ended by an exception."""
    return f"{CRASH_PREFIX}{type(error).__name__}: {_short(error)}"


def was_crash(stop_reason: str) -> bool:
    """Whether a journaled `daemon_stopped` reason says the loop ended by a crash."""
    return stop_reason.startswith(CRASH_PREFIX)


def decode_failure(error: Exception) -> str:
    """Why a frame could not be decoded, for a person."""
    if isinstance(error, UnicodeDecodeError):
        return f"a string is not valid UTF-8 ({error.reason} at byte {error.start})"
    if isinstance(error, RecursionError):
        return "nested too deeply (the limit is about 1,000 levels)"
    return str(error)


class _IdOnly(msgspec.Struct):
    """A request's id alone: the other fields are skipped, so a reply to a frame whose
    params are broken still carries the id it answers."""

    id: int | str | None = None


_ID_DECODER = msgspec.msgpack.Decoder(_IdOnly)


def loose_id(payload: bytes) -> int | str | None:
    """The request id, if the frame is a map that has a usable one."""
    try:
        return _ID_DECODER.decode(payload).id
    except DECODE_ERRORS:
        return None


def check_frame(payload: bytes, limit: int) -> None:
    """`request_too_large` for a frame over `limit` bytes: nothing of it is decoded."""
    if len(payload) > limit:
        raise ToolError(
            ErrorCode.REQUEST_TOO_LARGE,
            f"the request is {format_size(len(payload))}, over the daemon's"
            f" {format_binary_size(limit)} frame limit",
            {"size": len(payload), "limit": limit},
        )


def split_route(frames: list[bytes]) -> tuple[list[bytes], bytes, ToolError | None]:
    """(route, request frame, refusal) of a message as the ROUTER received it: the
    sender's identity, then what the client sent. A DEALER sends the request alone, a
    REQ socket an empty delimiter frame before it; the route is what the reply needs
    to reach that socket (the identity, and the delimiter when there was one). Any
    other frames are refused, never echoed: the refusal goes back on that route, and
    the connection's later requests are served as usual."""
    identity, sent = frames[:1], frames[1:]
    if len(sent) == 1:
        return identity, sent[0], None
    if len(sent) == 2 and sent[0] == b"":
        return frames[:2], sent[1], None
    route = [*identity, b""] if sent and sent[0] == b"" else identity
    refusal = ToolError(
        ErrorCode.BAD_REQUEST,
        f"extra envelope frames: a request is one frame (a DEALER's), or an empty delimiter"
        f" frame and one frame (a REQ's); this message had {len(sent)}, and nothing of it"
        " was handled",
        {"frames": len(sent), "frame_sizes": [len(frame) for frame in sent[:8]]},
        hint="send the request envelope as the message's only frame (after an empty"
        " delimiter when the socket is a REQ)",
    )
    return route, sent[-1] if sent else b"", refusal


def failure_reply(payload: bytes, error: Exception, where: str) -> Response:
    """The reply to a request whose handling raised `error` (a bug of ours, or a
    failure nothing translated): logged with its traceback, answered, and survived.
    SQLite failing under the journal is no bug of ours: `journal_corrupt` or
    `journal_unavailable` (`journal_failure`), never `internal_error`."""
    log.error("error while %s: %s", where, traceback.format_exc())
    return Response(id=loose_id(payload), ok=False, error=failure_error(error, where).to_wire())


def failure_error(error: Exception, where: str) -> ToolError:
    """The catalogued error for an exception nothing translated earlier."""
    if is_journal_failure(error):
        return journal_failure(error, where)
    return ToolError(
        ErrorCode.INTERNAL_ERROR,
        f"{type(error).__name__} while {where}: {_short(error)}",
        {"stage": where},
    )


def is_journal_failure(error: BaseException) -> bool:
    """SQLite failed under the journal (directly, or behind a JournalError)."""
    return isinstance(error, JournalError) or sqlite_cause(error) is not None


def encode_reply(response: Response) -> bytes:
    """The reply's bytes; an error reply (same id and seq) when it cannot be encoded."""
    try:
        return _ENCODER.encode(response)
    except Exception as e:  # OverflowError, RecursionError, a type msgpack lacks
        log.error("reply %r could not be encoded: %s", response.id, traceback.format_exc())
        done = f" (it was handled: seq {response.seq})" if response.seq is not None else ""
        failure = ToolError(
            ErrorCode.INTERNAL_ERROR,
            f"the reply could not be encoded{done}: {type(e).__name__}: {_short(e)}",
            {"seq": response.seq} if response.seq is not None else {},
        )
        fallback = Response(id=response.id, ok=False, error=failure.to_wire(), seq=response.seq)
        try:
            return _ENCODER.encode(fallback)
        except Exception:
            return _UNENCODABLE


def _short(error: BaseException, limit: int = 300) -> str:
    text = str(error)
    return text if len(text) <= limit else text[:limit] + "..."
