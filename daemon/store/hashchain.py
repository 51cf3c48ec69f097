"""The hash chain over the journal's events: what each event's hash covers, and how a
stored row is checked against the one before it.

Why a chain: triggers refuse UPDATE and DELETE, but anyone can drop a trigger. Each
event's hash covers every stored column and the previous event's hash, so an edit
to any row of history breaks every hash after it (and a recomputed chain or a cut
tail is caught by the chain anchor, daemon.store.chainanchor). The journal checks
rows with `row_problem` as it reads them: all of them (`Journal.verify`) or the
tail after a snapshot at start-up (`Journal.verified_records`). This module reads
no database and raises nothing on corrupt data: it says what is wrong.

How a row stores its hashes: since schema 3, `hash` as its 32 bytes and `prev_hash`
as `DERIVED` (empty), since it is the hash of the row before (~100 bytes less per
event); older rows keep both as hex text, and are read as they are. The chain
itself is computed over hex strings either way, so no hash changes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from typing import Any, NamedTuple

import msgspec

from editjournal.schemas.events import EVENT_DECODER

GENESIS_HASH = "0" * 64
DERIVED = b""  # a stored prev_hash that is the previous row's hash (schema 3)
# The columns of a stored row, in `StoredRow`'s order.
ROW_COLUMNS = "seq, ts, agent, kind, path, body, prev_hash, hash"
_CHAIN_ENCODER = msgspec.msgpack.Encoder()


def chain_hash(
    prev_hash: str, seq: int, ts: int, agent: str | None, kind: str, path: str | None, body: bytes
) -> str:
    """BLAKE2b-256 over every stored column, so no column can change unnoticed."""
    payload = _CHAIN_ENCODER.encode((prev_hash, seq, ts, agent, kind, path, body))
    return hashlib.blake2b(payload, digest_size=32).hexdigest()


class StoredRow(NamedTuple):
    """One row of the `events` table, as stored."""

    seq: int
    ts: int
    agent: str | None
    kind: str
    path: str | None
    body: bytes
    prev_hash: str
    hash: str


def stored_hash(digest: str) -> bytes:
    """A chain hash as a row stores it."""
    return bytes.fromhex(digest)


def hash_text(stored: object) -> str:
    """A stored digest (an event's hash, a blob's address) as the hex the daemon speaks:
    bytes since schema 3, text before; anything else a tamperer left reads as its text,
    for the check to refuse."""
    return stored.hex() if isinstance(stored, bytes) else str(stored)


def stored_rows(rows: Iterable[tuple[Any, ...]], prev: str) -> Iterator[StoredRow]:
    """Rows of `ROW_COLUMNS`, in seq order from the one after the row whose hash is
    `prev`, with their hashes as hex: a derived prev_hash is the hash before it."""
    for seq, ts, agent, kind, path, body, prev_hash, digest in rows:
        link = prev if prev_hash == DERIVED else hash_text(prev_hash)
        row = StoredRow(seq, ts, agent, kind, path, body, link, hash_text(digest))
        yield row
        prev = row.hash


def row_problem(expected_seq: int, prev: str, row: StoredRow) -> str | None:
    """Why this row breaks the chain (gap, bad body, edited column), or None."""
    if row.seq != expected_seq:
        return f"seq {row.seq} follows {expected_seq - 1}: the log has a gap"
    try:
        event = EVENT_DECODER.decode(row.body)
    # TypeError: a body that is not a BLOB; ValueError (UnicodeDecodeError): random bytes
    # in a string of the body; RecursionError: bytes that read as deep nesting
    except (msgspec.DecodeError, TypeError, ValueError, RecursionError) as e:
        return f"body does not decode: {e}"
    if event.kind != row.kind or event.path != row.path:
        return "kind/path columns disagree with the body"
    if row.prev_hash != prev:
        return "prev_hash does not match the previous event's hash"
    recomputed = chain_hash(prev, row.seq, row.ts, row.agent, row.kind, row.path, row.body)
    if recomputed != row.hash:
        return "hash does not match the event's contents"
    return None
