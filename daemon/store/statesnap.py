"""Snapshots of the folded state, so start-up folds only the journal's tail.

Why: folding every event since the beginning made start-up linear in the
journal's length (8 s for a million events). The daemon stores the state it has
folded, with the seq and chain hash it was folded up to and the state's digest,
in the journal's `state_snapshot` table — at a clean stop and every
`SNAPSHOT_EVERY` events — and at start folds only the events after that seq.

A snapshot is a cache, never the truth: it is used only when its `shape` (the
code's state classes and their fields) is this code's, its body decodes, the
state it gives has the digest stored beside it, and the journal's hash at its
seq is the one it was taken at. Anything else and it is ignored (logged) and
the state is folded from the beginning. What it must never do: change state
(restoring builds a new `State`) or write anything but its own table.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
from collections import OrderedDict

import msgspec

from editjournal.daemon.model.checkpointbook import Checkpoint, CheckpointBook
from editjournal.daemon.model.hunkbook import Hunk, HunkBook
from editjournal.daemon.model.idempotency import Answers
from editjournal.daemon.model.state import FileInfo, Snapshot, State
from editjournal.daemon.store.journal import Journal
from editjournal.schemas.events import RequestAnswered

SNAPSHOT_EVERY = 20_000  # events between snapshots: bounds the tail folded at start
# bump when the body's layout or the fold's meaning changes (2: an agent's own deletion
# drops its snapshot, so an older snapshot would differ from a fold by this code)
FORMAT = 2

log = logging.getLogger("editjournal")


class _Body(msgspec.Struct, array_like=True):
    last_seq: int
    event_count: int
    files: list[FileInfo]
    snapshots: list[Snapshot]
    hunks: list[Hunk]
    checkpoints: list[Checkpoint]
    answers: list[tuple[tuple[str, str, str], RequestAnswered]]  # oldest first


_ENCODER = msgspec.msgpack.Encoder()
_DECODER = msgspec.msgpack.Decoder(_Body)
STATE_FIELDS = ("files", "snapshots", "hunks", "checkpoints", "answers", "last_seq", "event_count")


def shape() -> str:
    """Names and types of every field a snapshot holds: another code's snapshot is void."""
    classes = (State, FileInfo, Snapshot, Hunk, HunkBook, Checkpoint, CheckpointBook, Answers)
    described: list[tuple[str, list[str]]] = [
        (cls.__name__, [f"{f.name}: {f.type}" for f in dataclasses.fields(cls) if f.name[0] != "_"])
        for cls in classes
    ]
    described.append(("RequestAnswered", list(RequestAnswered.__struct_fields__)))
    payload = msgspec.msgpack.encode((FORMAT, described))
    return hashlib.blake2b(payload, digest_size=16).hexdigest()


def encode(state: State) -> bytes:
    body = _Body(
        state.last_seq,
        state.event_count,
        list(state.files.values()),  # insertion order kept: a fold would give the same
        list(state.snapshots.values()),
        list(state.hunks.hunks.values()),
        list(state.checkpoints.by_id.values()),
        list(state.answers.by_key.items()),
    )
    return _ENCODER.encode(body)


def decode(data: bytes) -> State:
    """The state a snapshot body holds; msgspec errors for a body that does not decode."""
    body = _DECODER.decode(data)
    return State(
        files={f.path: f for f in body.files},
        snapshots={(s.agent, s.path): s for s in body.snapshots},
        hunks=HunkBook({h.hunk_id: h for h in body.hunks}),
        checkpoints=CheckpointBook.of(body.checkpoints),
        answers=Answers(OrderedDict(((k[0], k[1], k[2]), answer) for k, answer in body.answers)),
        last_seq=body.last_seq,
        event_count=body.event_count,
    )


def save(journal: Journal, state: State) -> bool:
    """Store `state` as the snapshot, if it is the fold of exactly what is committed."""
    if state.last_seq != journal.last_seq or not journal.committed_to_tip():
        return False
    journal.save_snapshot(state.last_seq, journal.tip_hash, state.digest(), shape(), encode(state))
    return True


def load(journal: Journal) -> tuple[State, str] | None:
    """(state, chain hash at its seq) from a snapshot that matches its journal, else None."""
    stored = journal.load_snapshot()
    if stored is None:
        return None
    seq, chain_hash, digest, stored_shape, body = stored
    why = _unusable(journal, seq, chain_hash, stored_shape)
    state = None
    if why is None:
        try:
            state = decode(body)
        except (msgspec.DecodeError, msgspec.ValidationError, TypeError, ValueError) as e:
            why = f"its body does not decode ({e})"
    if state is not None and why is None and (state.last_seq != seq or state.digest() != digest):
        why = "the state it holds does not have its digest"
    if why is not None or state is None:
        log.warning("state snapshot at seq %s ignored: %s; folding the whole journal", seq, why)
        return None
    return state, str(chain_hash)


def _unusable(
    journal: Journal, seq: object, chain_hash: object, stored_shape: object
) -> str | None:
    if stored_shape != shape():
        return "it was taken by another version of editjournal"
    if not isinstance(seq, int) or not isinstance(chain_hash, str):
        return "its seq or hash column is damaged"
    if journal.hash_at(seq) != chain_hash:
        return f"the journal's hash at seq {seq} is not the one it was taken at"
    return None


class Snapshotter:
    """Saves a snapshot every SNAPSHOT_EVERY events (called after each commit)."""

    def __init__(self, every: int = SNAPSHOT_EVERY) -> None:
        self.every = every
        self.saved_seq = 0

    def loaded_at(self, seq: int) -> None:
        self.saved_seq = seq

    def after_commit(self, journal: Journal, state: State) -> None:
        if state.last_seq - self.saved_seq >= self.every:
            self.save(journal, state)

    def save(self, journal: Journal, state: State) -> None:
        try:
            if save(journal, state):
                self.saved_seq = state.last_seq
        except Exception as e:  # a snapshot is an optimisation: never fail a request on it
            log.warning("state snapshot at seq %d not saved: %s", state.last_seq, e)
