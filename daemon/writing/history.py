"""What happened to a file since a version: the journal queries behind stale anchors.

Reads the journal (events and blobs) for one path; changes nothing. The pure
line mapping lives in `daemon.text.rebase`.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from editjournal.daemon.contract.context import Context
from editjournal.daemon.files.filesnapshot import FileSnapshot
from editjournal.daemon.files.textcache import Parsed
from editjournal.daemon.text.lines import Document
from editjournal.daemon.text.rebase import (
    Carried,
    LineChange,
    LineMap,
    Step,
    carry,
    first_breaks,
    mapped_to,
)
from editjournal.schemas.events import AnyEvent, EditApplied, Record


@dataclass(frozen=True)
class ContentChange:
    """One event that changed a file's content, and the content it left."""

    seq: int
    ts: int | None  # None: about to be recorded by this very request
    agent: str | None
    kind: str
    sha256: str | None
    before_sha256: str | None = None
    line_changes: tuple[LineChange, ...] | None = None  # exact, when the writer recorded them

    def describe(self) -> dict[str, object]:
        return {"seq": self.seq, "agent": self.agent, "kind": self.kind, "ts": self.ts}


def changes_since(
    ctx: Context, path: str, version: int, pending: list[AnyEvent] | None = None
) -> list[ContentChange]:
    """Content-changing events on `path` after `version`, plus ones this request is
    about to record (`pending`, e.g. an outside change just noticed)."""
    changes = [
        _change(r)
        for r in ctx.journal.records(path=path, after_seq=version)
        if r.event.changes_content
    ]
    for offset, event in enumerate(pending or []):
        if event.changes_content:
            seq = ctx.next_seq + offset
            changes.append(ContentChange(seq, None, None, event.kind, event.content_sha256))
    return changes


def _change(record: Record) -> ContentChange:
    event = record.event
    change = ContentChange(record.seq, record.ts, record.agent, record.kind, event.content_sha256)
    if isinstance(event, EditApplied) and event.line_changes:
        exact = tuple((start, end, n) for start, end, n in event.line_changes)
        return replace(change, before_sha256=event.before_sha256, line_changes=exact)
    return change


def content_at(ctx: Context, path: str, version: int) -> str | None:
    """The sha256 of `path` as of journal seq `version` (the last event that saw it)."""
    for record in ctx.journal.records(path=path, until_seq=version, newest_first=True):
        if record.event.content_sha256 is not None:
            return record.event.content_sha256
    return None


def document(
    ctx: Context, sha256: str | None, extra: dict[str, bytes] | None = None
) -> Parsed | None:
    """The stored content with that hash, parsed; None when it was never stored."""
    if sha256 is None:
        return None
    cached = ctx.cache.get(sha256)  # parsed already: the stored bytes need not be rebuilt
    if cached is not None and (sha256 in (extra or {}) or ctx.journal.has_blob(sha256)):
        return cached
    data = (extra or {}).get(sha256) or ctx.journal.blob(sha256)
    if data is None:
        return None
    return ctx.cache.parsed(sha256, lambda: data.decode("utf-8", "surrogatepass"))


@dataclass(frozen=True)
class Base:
    """The older content an agent's anchors refer to, and what changed it since."""

    version: int
    sha256: str
    parsed: Parsed
    changes: list[ContentChange]  # the ones whose content is stored, each with its step
    steps: list[Step]
    current: dict[str, bytes]  # the content on disk now, which may not be stored yet
    # the lines of this version the agent had not been shown, when it was given it (a
    # ranged read, a delta, its own write carried over others' lines); set by the search
    # of versions it was given, where a plan must not rely on them
    unseen: tuple[tuple[int, int], ...] = ()
    # line maps already computed, by target content: an edit needs the same one to
    # plan and to carry the agent's unseen lines
    _maps: dict[tuple[str, ...], LineMap] = field(default_factory=dict, compare=False, repr=False)

    @property
    def doc(self) -> Document:
        return self.parsed.doc

    @property
    def label(self) -> str:
        """What the agent is told its plan was made in, for a message."""
        return f"version {self.version}"

    def culprits(self, spans: Sequence[Sequence[int]]) -> list[list[ContentChange]]:
        """For each span of 1-based lines, the change that broke it (every change, when
        no single one did)."""
        breaks = first_breaks(self.doc.lines, self.sha256, self.steps, spans)
        return [[self.changes[k]] if k is not None else list(self.changes) for k in breaks]

    def line_map(self, current: Document) -> LineMap:
        """Where each line of this content is in `current` (None: changed or gone)."""
        found = self._maps.get(current.lines)
        if found is None:
            carried = CARRIED.through(self.doc.lines, self.sha256, self.steps)
            found = mapped_to(carried, current.lines)
            self._maps[current.lines] = found
        return found


class CarriedChains:
    """Bases already carried through changes, by what was carried: an agent that edits
    again and again after one read makes each edit carry its read through every change
    since, O(changes x lines) an edit, and the next edit repeats all of it plus one. Kept
    here, the next resumes where the last stopped. Keyed by content (the base's sha256,
    then each step's content, the content before it and its recorded lines, chained
    through BLAKE2b), never by seq, so a batch unstaged after a failed commit cannot
    leave a wrong entry. Bounded by the lines their maps hold; the owner thread's only."""

    def __init__(self, max_lines: int = 2_000_000) -> None:
        self.max_lines = max_lines
        self._held: OrderedDict[bytes, Carried] = OrderedDict()
        self._lines = 0

    def through(self, base: Sequence[str], base_sha: str | None, steps: Sequence[Step]) -> Carried:
        keys = _prefix_keys(base_sha, steps)
        start = None
        for taken in range(len(keys), 0, -1):
            start = self._held.get(keys[taken - 1])
            if start is not None:
                self._held.move_to_end(keys[taken - 1])
                break
        carried = carry(base, base_sha, steps[: len(keys)], start)
        if keys and (start is None or start.taken < len(keys)):
            self._keep(keys[-1], carried)
        if len(keys) < len(steps):  # past a step of unknown content: carried, not kept
            carried = carry(base, base_sha, steps, carried)
        return carried

    def _keep(self, key: bytes, carried: Carried) -> None:
        if len(carried.mapping) > self.max_lines // 4:
            return
        self._held[key] = carried
        self._lines += len(carried.mapping)
        while self._lines > self.max_lines:
            _, dropped = self._held.popitem(last=False)
            self._lines -= len(dropped.mapping)


def _prefix_keys(base_sha: str | None, steps: Sequence[Step]) -> list[bytes]:
    """The key of each prefix of `steps`, up to the first step whose content is not
    known by its hash (none, when the base's is not)."""
    if base_sha is None:
        return []
    keys: list[bytes] = []
    key = hashlib.blake2b(base_sha.encode(), digest_size=16).digest()
    for step in steps:
        if step.sha256 is None:
            break
        signature = repr((step.sha256, step.before_sha256, step.line_changes)).encode()
        key = hashlib.blake2b(key + signature, digest_size=16).digest()
        keys.append(key)
    return keys


CARRIED = CarriedChains()


def base_at(
    ctx: Context, snap: FileSnapshot, noticed: list[AnyEvent], version: int, sha256: str | None
) -> Base | None:
    """`path` as the journal stored it at `version`, and the changes since (None: that
    content was never stored)."""
    parsed = document(ctx, sha256)
    if parsed is None or sha256 is None:
        return None
    current = {snap.sha256: snap.data}
    changes: list[ContentChange] = []
    steps: list[Step] = []
    for change in changes_since(ctx, snap.path, version, noticed):
        content = document(ctx, change.sha256, current)
        if content is not None:  # a deletion, or content never stored: diffed across
            changes.append(change)
            steps.append(
                Step(content.doc.lines, change.before_sha256, change.sha256, change.line_changes)
            )
    return Base(version, sha256, parsed, changes, steps, current)
