"""`editjournal export --jsonl`: every event, one JSON object a line, for other tools.

Each line: seq, ts, agent, kind, path, prev_hash, hash and `event` (every field
the journal stored, tagged by `kind`: `msgspec.convert(line["event"], AnyEvent)`
gives the event back, and re-encoding it gives the stored body, so the chain can
be recomputed from an export). Contents are referenced by sha256; with
`blobs`, those an event needs ride along in `blobs` (UTF-8 text, else base64).
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any

import msgspec

from editjournal.daemon.store.blobrefs import stored_blobs
from editjournal.daemon.store.journal import Journal
from editjournal.schemas.events import Record

_ENCODER = msgspec.json.Encoder()


def export_lines(journal: Journal, *, blobs: bool = False) -> Iterator[bytes]:
    """One JSON line (with its newline) per event, in seq order."""
    sent: set[str] = set()
    for record in journal.records():
        line = as_dict(record)
        if blobs:
            line["blobs"] = _inline(journal, record, sent)
        yield _ENCODER.encode(line) + b"\n"


def as_dict(record: Record) -> dict[str, Any]:
    return {
        "seq": record.seq,
        "ts": record.ts,
        "agent": record.agent,
        "kind": record.kind,
        "path": record.path,
        "prev_hash": record.prev_hash,
        "hash": record.hash,
        "event": msgspec.to_builtins(record.event),
    }


def _inline(journal: Journal, record: Record, sent: set[str]) -> dict[str, dict[str, str]]:
    """The blobs `record` needs that no earlier line carried (each blob once)."""
    out: dict[str, dict[str, str]] = {}
    for digest in stored_blobs(record.event):
        data = None if digest in sent else journal.blob(digest)
        if data is None:
            continue
        sent.add(digest)
        try:
            out[digest] = {"encoding": "utf-8", "data": data.decode("utf-8")}
        except UnicodeDecodeError:
            out[digest] = {"encoding": "base64", "data": base64.b64encode(data).decode()}
    return out
