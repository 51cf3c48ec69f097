"""The prepared hunks, as the fold of `hunk_*` events: part of the daemon's state.

A hunk is prepared (`hunk_prepared`, again for a re-plan), then applied
(`hunk_applied`) or gone (`hunk_discarded`: discarded, or noticed expired).
Applied and expired hunks are remembered (so a second apply names the seq that
wrote it, and a late one hears "expired", not "unknown"); discarded ones are
forgotten. Expiry is a time, not an event: whoever asks passes
`now` — the fold itself never reads the clock, so replaying the journal gives
the same book whenever it runs.

What it must never do: change except through `apply(record)` (called by `State.apply`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from editjournal.schemas.events import HunkApplied, HunkDiscarded, HunkPrepared, Record

PENDING, APPLIED, EXPIRED = "pending", "applied", "expired"


@dataclass(frozen=True, slots=True)
class Hunk:
    """One prepared hunk and where it stands."""

    hunk_id: str
    agent: str | None
    path: str
    kind: str
    created_at_ms: int
    expires_at_ms: int
    base_version: int
    base_sha256: str
    start: int
    end: int
    new_lines: tuple[str, ...]
    targets: tuple[int, ...]
    diff: str
    content_eof_newline_added: bool = False
    status: str = PENDING
    applied_seq: int | None = None  # the edit_applied event that wrote it
    identity: str | None = None  # the preparing request's credential's; None: it sent none

    def held_by(self, identity: str | None) -> bool:
        """Whether a request of `identity` (and the hunk's agent name) may act on it: one
        holding the credential it was prepared with; anyone of that name for a hunk
        prepared without one (the name alone was all there was to go by)."""
        return self.identity is None or self.identity == identity

    def expired(self, now_ms: int) -> bool:
        return self.status == EXPIRED or (self.status == PENDING and now_ms >= self.expires_at_ms)

    @property
    def order(self) -> tuple[int, str]:
        """Applies to one file are serialised in this order."""
        return (self.created_at_ms, self.hunk_id)


@dataclass
class HunkBook:
    """Every pending or applied hunk, by id."""

    hunks: dict[str, Hunk] = field(default_factory=dict)

    def get(self, hunk_id: str) -> Hunk | None:
        return self.hunks.get(hunk_id)

    def apply(self, record: Record) -> None:
        event = record.event
        if isinstance(event, HunkPrepared):
            self.hunks[event.hunk_id] = _prepared(record, event)
        elif isinstance(event, HunkApplied):
            known = self.hunks.get(event.hunk_id)
            if known is not None:
                self.hunks[event.hunk_id] = replace(
                    known, status=APPLIED, applied_seq=event.edit_seq
                )
        elif isinstance(event, HunkDiscarded):
            known = self.hunks.pop(event.hunk_id, None)
            if known is not None and event.reason == EXPIRED:
                self.hunks[event.hunk_id] = replace(known, status=EXPIRED)

    def pending(self, agent: str | None = None, path: str | None = None) -> list[Hunk]:
        """Pending hunks (expired ones included: the caller knows the time), in apply order."""
        found = [
            h
            for h in self.hunks.values()
            if h.status == PENDING
            and (agent is None or h.agent == agent)
            and (path is None or h.path == path)
        ]
        return sorted(found, key=lambda h: h.order)

    def canonical(self) -> list[Hunk]:
        return sorted(self.hunks.values(), key=lambda h: h.hunk_id)


def _prepared(record: Record, event: HunkPrepared) -> Hunk:
    return Hunk(
        hunk_id=event.hunk_id,
        agent=record.agent,
        path=event.path,
        kind=event.hunk_kind,
        created_at_ms=event.created_at_ms,
        expires_at_ms=event.expires_at_ms,
        base_version=event.base_version,
        base_sha256=event.base_sha256,
        start=event.start,
        end=event.end,
        new_lines=tuple(event.new_lines),
        targets=tuple(event.targets),
        diff=event.diff,
        content_eof_newline_added=event.content_eof_newline_added,
        identity=event.identity,
    )
