"""The checkpoints part of the state: every `checkpoint_created` event, by id and by name.

A checkpoint's id is the seq of its event. What it covers is in its manifest's
chunks, blobs the journal holds (read when a restore or a diff needs them, never
kept here: a 100,000-file checkpoint would weigh on every fold); old journals'
checkpoints carry their few files inline. Changed only by `apply(record)` (called
from `State.apply`), so a fold of the journal rebuilds it exactly; restores
(`checkpoint_restored`) change no checkpoint and are not kept here; a prune
(`checkpoints_pruned`) takes checkpoints out.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from editjournal.schemas.events import (
    CheckpointCreated,
    CheckpointsPruned,
    CheckpointTaken,
    Record,
)


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """One checkpoint as the journal recorded it."""

    id: int  # seq of its `checkpoint_created` event
    name: str
    ts: int
    agent: str | None
    files: tuple[tuple[str, str], ...]  # (old journals) (path, sha256), sorted by path
    absent: tuple[str, ...] = ()
    all_files: bool = False  # (old journals)
    manifest: tuple[str, ...] = ()  # its manifest's chunks (blob sha256s)
    scope: tuple[str, ...] = ()  # () with a manifest: the whole workspace
    file_count: int = 0
    total_bytes: int = 0
    not_text: int = 0
    inline: bool = False  # an old journal's checkpoint: its files inline, no manifest


@dataclass
class CheckpointBook:
    """Checkpoints by id, and their names (unique) to ids."""

    by_id: dict[int, Checkpoint] = field(default_factory=dict)
    by_name: dict[str, int] = field(default_factory=dict)

    @classmethod
    def of(cls, checkpoints: list[Checkpoint]) -> CheckpointBook:
        """The book holding `checkpoints` (as `canonical()` lists them: a state snapshot)."""
        return cls({c.id: c for c in checkpoints}, {c.name: c.id for c in checkpoints})

    def apply(self, record: Record) -> None:
        event = record.event
        if isinstance(event, CheckpointsPruned):  # out of the list; its blobs stay stored
            for seq in event.ids:
                pruned = self.by_id.pop(seq, None)
                if pruned is not None and self.by_name.get(pruned.name) == seq:
                    del self.by_name[pruned.name]
            return
        if not isinstance(event, CheckpointCreated):
            return  # a restore changes no checkpoint
        files = tuple(sorted(event.files.items()))
        checkpoint = Checkpoint(
            record.seq, event.name, record.ts, record.agent, files,
            tuple(event.absent), event.all_files, tuple(event.manifest), tuple(event.scope),
            event.file_count or len(files), event.total_bytes, event.not_text,
            isinstance(event, CheckpointTaken),
        )  # fmt: skip
        self.by_id[record.seq] = checkpoint
        self.by_name[event.name] = record.seq

    def find(self, id_or_name: str) -> Checkpoint | None:
        """By name first (a name is never all digits), then by id ("12" or "#12")."""
        if id_or_name in self.by_name:
            return self.by_id[self.by_name[id_or_name]]
        digits = id_or_name.removeprefix("#")
        return self.by_id.get(int(digits)) if digits.isdigit() else None

    def canonical(self) -> list[Checkpoint]:
        return [self.by_id[k] for k in sorted(self.by_id)]
