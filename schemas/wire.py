"""Request and response envelopes as they travel over ZeroMQ (msgpack).

A request names a method and carries its params undecoded (`msgspec.Raw`), so
the daemon can decode the envelope once and the params with the method's own
typed decoder, and report a bad field by its path under `$.params`.
"""

from __future__ import annotations

import hashlib
import re
import secrets
import unicodedata
from typing import Annotated, Any

import msgspec
from msgspec import Meta

# The wire protocol's version: the envelopes here, and the methods with their params and
# results in `schemas.tools`. It goes up when a change could break a client written for
# the version before (a field removed, renamed or retyped, a method's meaning changed);
# adding an optional field, a method or an error code keeps it; a new envelope key
# does not (a daemon refuses keys its `Request` lacks, and a client refuses a daemon of
# another protocol). `ping` and `status` report it (`protocol`); docs/protocol.md lists
# the versions.
PROTOCOL_VERSION = 2  # 2: the `credential` envelope key


# A request's `agent` is self-declared: it proves nothing about who sent it (see
# docs/guarantees.md). These rules only stop a name from passing for what it is not;
# what binds a name's prepared hunks, plain undo and idempotency keys to one client is
# the request's `credential` (below).
MAX_AGENT_LEN = 200
# The authors the journal's folds name when no agent wrote (audit/timeline.py's
# "outside", audit/report.py's "daemon"): an agent claiming one would have its lines
# blamed on the outside world, or the outside world's on it.
RESERVED_AGENTS = frozenset({"outside", "daemon"})
# Bidirectional controls are format characters, not Cc, but reorder what a terminal
# shows after them: a name holding one can make the rest of its row read backwards.
_BIDI_CONTROLS = frozenset(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)


def is_control(char: str) -> bool:
    """Whether a terminal would act on `char` rather than show it: C0, DEL, C1 (tab and
    newline among them), the line and paragraph separators, and bidi controls."""
    return unicodedata.category(char) in ("Cc", "Zl", "Zp") or char in _BIDI_CONTROLS


def agent_problem(agent: str) -> str | None:
    """Why `agent` cannot name a caller, or None. The daemon refuses such a request
    (`bad_request`) and the CLI such an `--agent` (exit 2), both with these words."""
    if not agent or len(agent) > MAX_AGENT_LEN:
        return f"agent must be a non-empty string of at most {MAX_AGENT_LEN} characters"
    if agent.strip().casefold() in RESERVED_AGENTS:
        return (
            f"agent {agent!r} is reserved: the journal uses it for changes no agent made"
            f" ({', '.join(sorted(RESERVED_AGENTS))} are not agent names)"
        )
    bad = next((c for c in agent if is_control(c)), None)
    if bad is not None:
        return (
            f"agent must not hold control characters (found U+{ord(bad):04X}): a name is"
            " printed in tables, where one would forge or hide output"
        )
    return None


# A credential: a secret a client makes once (per `Client` object; per workspace and agent
# for the CLI and the hooks, kept in the user's runtime directory) and sends with every
# request. The daemon keeps no list of them: a request's identity is the credential's
# fingerprint, journaled with what the request made that only its maker may act on (a
# prepared hunk, a write a plain `undo` takes back, a keyed reply). Knowing the
# fingerprint (it is in the journal) does not give the credential.
CREDENTIAL_BYTES = 32
MIN_CREDENTIAL_LEN = 16  # characters: shorter would be guessable


def new_credential() -> str:
    """A fresh, unguessable credential (256 random bits, URL-safe text)."""
    return secrets.token_urlsafe(CREDENTIAL_BYTES)


def identity_of(credential: str | None) -> str | None:
    """The identity a credential proves: its SHA-256, 32 hex digits; None for none."""
    if credential is None:
        return None
    return hashlib.sha256(credential.encode()).hexdigest()[:32]


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


class Request(msgspec.Struct, kw_only=True, omit_defaults=True, forbid_unknown_fields=True):
    """What an agent sends: `{id, agent, method, params}`, and optionally an
    `idempotency_key`: a retry with the same key (same agent, credential, method and
    params) gets the first reply again instead of applying twice; and a `credential`,
    which binds what the request makes to whoever holds it (`identity_of`). Any other
    key is refused by name (`bad_request`, with `details.unknown_envelope_key`): a
    misspelt `idempotency_key` silently ignored would make a retry apply twice."""

    id: int | str
    method: str
    agent: str = "anonymous"
    params: msgspec.Raw = msgspec.Raw(b"\x80")  # an empty msgpack map
    idempotency_key: Annotated[str, Meta(min_length=1, max_length=200)] | None = None
    credential: Annotated[str, Meta(min_length=MIN_CREDENTIAL_LEN, max_length=200)] | None = None

    @property
    def identity(self) -> str | None:
        return identity_of(self.credential)


_UNKNOWN_FIELD = re.compile(r"Object contains unknown field `(.*)`")


def unknown_envelope_key(error: Exception) -> str | None:
    """The key a request envelope was refused for, when that is why (msgspec's words)."""
    if not isinstance(error, msgspec.ValidationError):
        return None
    found = _UNKNOWN_FIELD.fullmatch(str(error))
    return found.group(1) if found else None


def envelope_keys() -> tuple[str, ...]:
    return Request.__struct_fields__


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
