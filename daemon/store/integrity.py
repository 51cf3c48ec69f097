"""A whole journal checked from genesis: its chain, every blob, and every blob an event needs.

Why here and not at start-up: reading every row and rebuilding every blob is linear in
the journal's length; start-up checks only the tail after its snapshot (daemon.store.startup).
This full check is what `editjournal verify` runs (`Journal.verify`), on a live journal
or on a copy opened read-only. It never raises on corrupt data: the first problem
becomes the report's `reason`, because a damaged journal is exactly what it must
describe.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import sqlite_utils

from editjournal.daemon.store.blobrefs import stored_blobs
from editjournal.daemon.store.blobs import BlobStore
from editjournal.daemon.store.hashchain import GENESIS_HASH, ROW_COLUMNS, row_problem, stored_rows
from editjournal.daemon.store.manifest import entries
from editjournal.schemas.events import EVENT_DECODER, CheckpointCreated


@dataclass(frozen=True)
class VerifyReport:
    """The outcome of `Journal.verify()`: ok, or the first seq where the chain breaks,
    or (chain intact) the first blob that is damaged or missing."""

    ok: bool
    checked: int
    first_bad_seq: int | None = None
    reason: str | None = None
    bad_blob: str | None = None


def verify_journal(db: sqlite_utils.Database, blobs: BlobStore) -> VerifyReport:
    """Recompute the chain from genesis (seqs gap-free, every hash intact), then
    check every blob and that every blob an event needs is there."""
    prev, checked = GENESIS_HASH, 0
    needed: dict[str, int] = {}  # blob sha256 -> first seq that needs it
    manifests: list[tuple[int, list[str]]] = []  # checkpoints' chunks, by seq
    rows = db.execute(f"SELECT {ROW_COLUMNS} FROM events ORDER BY seq")
    for row in stored_rows(rows, GENESIS_HASH):
        problem = row_problem(checked + 1, prev, row)
        if problem:
            return VerifyReport(False, checked, row.seq, problem)
        event = EVENT_DECODER.decode(row.body)
        for digest in stored_blobs(event):
            needed.setdefault(digest, row.seq)
        if isinstance(event, CheckpointCreated) and event.manifest:
            manifests.append((row.seq, event.manifest))
        prev, checked = row.hash, checked + 1
    for seq, chunks in manifests:
        for digest in _held(blobs, chunks):
            needed.setdefault(digest, seq)
    bad = _blob_problem(blobs, needed)
    if bad:
        return VerifyReport(False, checked, None, bad[1], bad_blob=bad[0])
    return VerifyReport(True, checked)


def _held(blobs: BlobStore, chunks: list[str]) -> list[str]:
    """The contents a checkpoint's manifest says the journal holds (a chunk missing or
    damaged is reported as such by `_blob_problem`)."""
    held: list[str] = []
    for digest in chunks:
        try:
            chunk = blobs.read(digest)
            if chunk is not None:
                held += [e.sha256 for e in entries(chunk) if e.held]
        except Exception:  # damaged: reported with the blobs
            continue
    return held


def _blob_problem(blobs: BlobStore, needed: Mapping[str, int]) -> tuple[str, str] | None:
    """(sha256, reason) of the first damaged blob, else of the first needed one missing."""
    present: set[str] = set()
    for row in blobs.stored():  # oldest first: bases before their deltas
        problem = blobs.problem(row)
        if problem:
            return str(row.sha256), f"blob {row.sha256} is damaged: {problem}"
        present.add(row.sha256)
    for digest, seq in needed.items():  # in seq order: first needed, first reported
        if digest not in present:
            return digest, f"event {seq} needs blob {digest}, which is missing"
    return None
