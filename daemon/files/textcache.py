"""Parsed contents and their anchor indexes, kept for the few versions in use.

Anchoring a file is the daemon's most expensive step, and consecutive
requests mostly look at the same few versions: the content an edit leaves is
the content the next read or edit starts from, and an agent's snapshot is
usually a version another request just parsed. Keyed by the content's
SHA-256, so an entry can never be stale. Owned by the daemon's one thread.

Bounded twice: by entries and by estimated bytes (text plus a per-line cost for
the parse and its anchors), so a few huge files cannot hold gigabytes; and a
content of more lines than the daemon's line limit is refused before it is
parsed (`file_too_many_lines`), since parsing it would stall every agent.
The snapshot cache in front of it (`files`) has a budget of its own, a quarter of
this one (64 MiB by default): one limit, `Limits.cache_bytes`, scales both.

A content an edit produced is anchored from the content it was edited from
(``AnchorIndex.derive``): the cost follows the change, not the file.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from functools import cached_property

from editjournal.daemon.files.readcache import SnapshotCache
from editjournal.daemon.settings.limits import (
    DEFAULT_CACHE_BYTES,
    DEFAULT_FILE_LINES,
    check_line_count,
    count_lines,
)
from editjournal.daemon.text.anchors import MANY_REGIONS, AnchorIndex, Anchors
from editjournal.daemon.text.deferral import Deferred, too_big
from editjournal.daemon.text.linehashes import Change
from editjournal.daemon.text.lines import Document, parse

DERIVE_COST_RATIO = 16  # past 1/16 of the lines moved, an index is built afresh (see below)

SNAPSHOT_SHARE = 4  # the snapshot cache's part of the byte budget: 1/4
# A stale edit is carried through every version since its agent's read (each parsed):
# with 64 entries, 8 agents racing on one 2,000-line file evicted the versions one
# another needed and the daemon spent 2.5x the CPU re-reading them. The byte budget
# (PER_LINE_BYTES a line) bounds the memory either way.
DEFAULT_ENTRIES = 512
PER_LINE_BYTES = 400  # a line's str, ending, hashes and anchor entries, measured roughly


class Parsed:
    """One content: its lines, and (computed on first use) its anchors."""

    def __init__(
        self,
        doc: Document,
        base: tuple[Parsed, list[Change]] | None = None,
        size: int | None = None,
        verified: bool = False,
    ) -> None:
        self.doc = doc
        # `size`, the text's length when the caller has it, spares a pass over every line
        text = sum(map(len, doc.lines)) if size is None else size
        self.cost = text + PER_LINE_BYTES * len(doc.lines)
        self._base = base  # the content this one was edited from, and the line changes
        self.sha256 = ""  # its key in the cache, once remembered
        self._verified = verified  # `doc` was made from the base by exactly those changes

    @cached_property
    def index(self) -> AnchorIndex:
        base = self._base
        if base is not None and _mostly_changed(base[1], len(self.doc.lines)):
            base = self._base = None  # built afresh: carrying so many lines costs more
        if base is None:
            if too_big(len(self.doc.lines)):  # built a slice at a time, by a job
                # with where each hash is: a big file's next derive or lookups want it
                lines = tuple(self.doc.lines)
                raise Deferred(lines=lines, done=self._indexed, positions=True, owner=self)
            return AnchorIndex(self.doc.lines)
        old, changes = base[0].index, base[1]
        if len(changes) >= MANY_REGIONS and too_big(len(self.doc.lines)):
            # many spans of a big file: derived a step at a time by a job, the base whole
            lines = tuple(self.doc.lines)
            raise Deferred(
                index=old, lines=lines, done=self._derived, positions=True, owner=self,
                derive=tuple(changes), verified=self._verified,
            )  # fmt: skip
        index = old.derive(self.doc.lines, changes, self._verified)
        self._base = None  # after the derive: a deferred one runs again from the base
        return index

    def _derived(self, index: AnchorIndex) -> None:
        """Take the index a job derived from the base's."""
        self.__dict__["index"] = index
        self._base = None

    def _indexed(self, index: AnchorIndex) -> None:
        """Take the index a job built (the `cached_property`'s own slot)."""
        self.__dict__["index"] = index

    @cached_property
    def anchors(self) -> Anchors:
        return self.index.anchors()

    @cached_property
    def marks(self) -> str:
        """Every line's mark (schemas.anchorrows): what a read sends with the anchors."""
        return self.index.marks()


def _mostly_changed(changes: Sequence[Change], lines: int) -> bool:
    """Whether an index derived through `changes` costs more than one built afresh: a
    derive moves each replaced and each new line through the counts (~80 us a line, a
    fresh build ~5: a 200,000-line file rewritten outside or by `write_file` took 19 s
    to derive, in one turn), so past a sixteenth of the lines it is built anew (a big
    file's a slice at a time, by a job)."""
    moved = sum(end - start + count for start, end, count in changes)
    return moved * DERIVE_COST_RATIO > lines


class TextCache:
    """A small LRU of `Parsed` by content hash, bounded by entries and bytes."""

    def __init__(
        self,
        entries: int = DEFAULT_ENTRIES,
        max_bytes: int = DEFAULT_CACHE_BYTES,
        max_lines: int = DEFAULT_FILE_LINES,
    ) -> None:
        self._entries = entries
        self._max_bytes = max_bytes
        self._max_lines = max_lines
        self._items: OrderedDict[str, Parsed] = OrderedDict()
        self.bytes = 0
        # the step before: unchanged files are not re-read (a share of the byte budget)
        self.files = SnapshotCache(max_bytes=max_bytes // SNAPSHOT_SHARE)

    @property
    def max_lines(self) -> int:
        """The most lines a content may have (`file_too_many_lines` past it)."""
        return self._max_lines

    def parsed(self, sha256: str, text: str | Callable[[], str], path: str | None = None) -> Parsed:
        """The parse of the content with this hash; `text` is used only on a miss
        (`path` only names the file in a `file_too_many_lines` refusal)."""
        found = self._items.get(sha256)
        if found is None:
            content = text if isinstance(text, str) else text()
            check_line_count(count_lines(content), self._max_lines, path)  # before parsing
            found = Parsed(parse(content), size=len(content))
            self._remember(sha256, found)
        else:
            self._items.move_to_end(sha256)
        return found

    def get(self, sha256: str) -> Parsed | None:
        """The parse of that content if it is kept, else None (nothing is read)."""
        found = self._items.get(sha256)
        if found is not None:
            self._items.move_to_end(sha256)
        return found

    def put(
        self,
        sha256: str,
        doc: Document,
        base: Parsed | None = None,
        changes: list[Change] | None = None,
        path: str | None = None,
        size: int | None = None,
        verified: bool = False,
    ) -> Parsed:
        """Remember a content computed elsewhere (the result of an edit of ``base``,
        ``changes`` its line changes: old [start, end) replaced by ``count`` lines;
        ``size`` its length, when known; ``verified``: ``doc`` was made from ``base`` by
        exactly those changes, so deriving its anchors need not compare the rest)."""
        check_line_count(doc.line_count, self._max_lines, path)
        derive = (base, changes) if base is not None and changes is not None else None
        parsed = self._items.get(sha256) or Parsed(doc, derive, size, verified)
        self._remember(sha256, parsed)
        return parsed

    def keep(self, parsed: Parsed) -> None:
        """Remember `parsed` again (a job built its index: the request that asked for it
        runs again and must find it, even if newer contents pushed it out meanwhile)."""
        if parsed.sha256 and self._items.get(parsed.sha256) is not parsed:
            self._remember(parsed.sha256, parsed)

    def _remember(self, sha256: str, parsed: Parsed) -> None:
        parsed.sha256 = sha256
        if sha256 not in self._items:
            self.bytes += parsed.cost
        self._items[sha256] = parsed
        self._items.move_to_end(sha256)
        # the newest entry stays even when it alone is over the byte bound: it is in use
        while len(self._items) > 1 and (
            len(self._items) > self._entries or self.bytes > self._max_bytes
        ):
            self.bytes -= self._items.popitem(last=False)[1].cost
