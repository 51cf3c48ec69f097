"""A file's versions over the journal: which event gave it which content, and when.

A version starts at every event that established a different content for the
path (a write, an outside change, or a read that saw the file first) and at
every write or removal. `content_sha256` is the content an event established;
a content-changing event without one removed the file. A write over a content
the journal had not recorded (a file that existed before the daemon first saw
it, or a change nobody noticed) starts two: the content it found (`FOUND`, by
`outside`; the write journals it as its `before_sha256` and stores its blob),
then its own. So every fold (blame, history, the fleet's) credits a write with
the lines it changed, never with the lines it found. Pure reads of the journal;
nothing is written.

A version a shell window's edit made carries its command (`commands_of`): the one
place `log`, `show`, `history`, `blame`, `stats`, `agent_status` and the HTML report
read it from an event, whole (a table cuts it: the renderer's business).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Protocol

from editjournal.daemon.files.filesnapshot import EMPTY_SHA256
from editjournal.daemon.store.journal import Journal
from editjournal.schemas.events import AnyEvent, EditApplied, OutsideChangeRecorded, Record

OUTSIDE = "outside"
# The kind of a version no event established alone: the content a write found at its
# path when the journal's record of that path was another (or none)
FOUND = "found_by_write"


class JournalReader(Protocol):
    """What the audit reads of a journal: a file's records, and contents by hash (the
    local `Journal`, or a copy shipped to PostgreSQL: daemon/fleet/queries.py)."""

    def records(
        self, *, path: str | None = ..., until_seq: int | None = ...
    ) -> Iterable[Record]: ...

    def blob(self, sha256: str) -> bytes | None: ...


@dataclass(frozen=True)
class Version:
    """One content of one file and the event that established it (sha256 None: absent)."""

    seq: int
    ts: int
    agent: str | None
    kind: str
    path: str
    sha256: str | None
    writer: str | None  # the writing tool, "outside", or None (a read saw it first)
    before_sha256: str | None = None  # edit_applied: the content it was computed from
    line_changes: tuple[tuple[int, int, int], ...] = ()  # edit_applied: exact, when known
    moved_from: str | None = None  # edit_applied of a move: the file's earlier path
    moved_to: str | None = None  # edit_applied of a move: the file's later path
    commands: tuple[str, ...] = ()  # a shell window's edit: the command(s) that made it

    @property
    def author(self) -> str:
        """Who wrote this content: the writing agent, else "outside" (an outside change,
        or content that was already there when the journal first saw it)."""
        if self.kind == "edit_applied" and self.agent is not None:
            return self.agent
        return OUTSIDE


def commands_of(event: AnyEvent) -> list[str]:
    """The shell command(s) that made `event`'s change, whole, in the order journaled
    (empty: not a shell window's edit). A shell window's close journals the agent's
    change as its `edit_applied`, one operation per command it had running then
    (`{"op": "Bash", "command": ..., "window": ...}`): which of several made the
    change the journal cannot tell, so each is named."""
    if not isinstance(event, EditApplied) or not event.operations:
        return []
    found: list[str] = []
    for op in event.operations:
        command = op.get("command") if isinstance(op, dict) else None
        if isinstance(command, str) and command and command not in found:
            found.append(command)
    return found


def version_of(record: Record, previous: Version | None) -> Version | None:
    """The version `record` starts, or None when it leaves the content as it was."""
    event = record.event
    if event.path is None:
        return None
    sha = event.content_sha256
    if sha is None and not event.changes_content:
        return None
    if not event.changes_content and previous is not None and previous.sha256 == sha:
        return None
    writer = event.writer if isinstance(event, EditApplied) else None
    if isinstance(event, OutsideChangeRecorded):
        writer = OUTSIDE
    before: str | None = None
    changes: tuple[tuple[int, int, int], ...] = ()
    moved_from: str | None = None
    moved_to: str | None = None
    if isinstance(event, EditApplied):
        before = event.before_sha256
        changes = tuple((s, e, n) for s, e, n in event.line_changes)
        moved_from, moved_to = event.moved_from, event.moved_to
    return Version(
        record.seq, record.ts, record.agent, record.kind, event.path, sha, writer, before,
        changes, moved_from, moved_to, tuple(commands_of(event)),
    )  # fmt: skip


MAX_MOVES = 100  # earlier names followed back from one path


def versions(
    journal: JournalReader, path: str, until_seq: int | None = None, hops: int = 0
) -> list[Version]:
    """Every version of the file at `path`, oldest first, up to and including
    `until_seq`. Across a move (apply_patch's `*** Move to:`) the file's versions under
    its earlier path come first, instead of what that path held before the move."""
    found = versions_in(journal.records(path=path, until_seq=until_seq))
    moves = [i for i, v in enumerate(found) if v.moved_from is not None]
    if not moves or hops >= MAX_MOVES:
        return found
    at = moves[-1]
    move = found[at]
    assert move.moved_from is not None
    earlier = versions(journal, move.moved_from, move.seq - 1, hops + 1)
    if earlier and earlier[-1].sha256 is None:
        earlier.pop()  # the old path's removal by this very move
    return [*earlier, *found[at:]]


def versions_in(records: Iterable[Record]) -> list[Version]:
    """The versions one path's records (oldest first) give it, the contents its writes
    found included (`found_by`); moves are not followed (`versions` follows them)."""
    return list(_fold(records))


def _fold(records: Iterable[Record]) -> Iterator[Version]:
    last: Version | None = None
    for record in records:
        found = found_by(record, last)
        if found is not None:
            yield found
        version = version_of(record, last)
        if version is not None:
            last = version
            yield version


def found_by(record: Record, previous: Version | None) -> Version | None:
    """The content a write found at its path, when it is not the one the journal last
    recorded there (`previous`): a version of its own, by `outside`, at the write's seq.
    None when the write found what the journal knew, or created the file."""
    event = record.event
    if not isinstance(event, EditApplied):
        return None
    known = previous.sha256 if previous is not None else None
    before = event.before_sha256
    if before == known or (known is None and before == EMPTY_SHA256):
        return None
    return Version(record.seq, record.ts, None, FOUND, event.path, before, None)


def files_at(journal: Journal, until_seq: int | None = None) -> dict[str, Version]:
    """Every file the journal knows, as of `until_seq`: its latest version (one pass)."""
    latest: dict[str, Version] = {}
    for record in journal.records(until_seq=until_seq):
        path = record.event.path
        if path is None:
            continue
        version = version_of(record, latest.get(path))
        if version is not None:
            latest[path] = version
    return dict(sorted(latest.items()))


def content(journal: JournalReader, version: Version) -> bytes | None:
    """The bytes of that version (None: absent, or content never stored)."""
    if version.sha256 is None:
        return None
    return journal.blob(version.sha256)
