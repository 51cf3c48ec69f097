"""Parsed contents and their anchor indexes, kept for the few versions in use.

Anchoring a file is the daemon's most expensive step, and consecutive
requests mostly look at the same few versions: the content an edit leaves is
the content the next read or edit starts from, and an agent's snapshot is
usually a version another request just parsed. Keyed by the content's
SHA-256, so an entry can never be stale. Owned by the daemon's one thread.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from functools import cached_property

from editjournal.daemon.text.anchors import AnchorIndex, LineAnchor
from editjournal.daemon.text.lines import Document, parse

DEFAULT_ENTRIES = 16


class Parsed:
    """One content: its lines, and (computed on first use) its anchors."""

    def __init__(self, doc: Document) -> None:
        self.doc = doc

    @cached_property
    def index(self) -> AnchorIndex:
        return AnchorIndex(self.doc.lines)

    @cached_property
    def anchors(self) -> list[LineAnchor]:
        return self.index.anchors()


class TextCache:
    """A small LRU of `Parsed` by content hash."""

    def __init__(self, entries: int = DEFAULT_ENTRIES) -> None:
        self._entries = entries
        self._items: OrderedDict[str, Parsed] = OrderedDict()

    def parsed(self, sha256: str, text: str | Callable[[], str]) -> Parsed:
        """The parse of the content with this hash; `text` is used only on a miss."""
        found = self._items.get(sha256)
        if found is None:
            found = Parsed(parse(text if isinstance(text, str) else text()))
            self._remember(sha256, found)
        else:
            self._items.move_to_end(sha256)
        return found

    def put(self, sha256: str, doc: Document) -> Parsed:
        """Remember a content computed elsewhere (the result of an edit)."""
        parsed = self._items.get(sha256) or Parsed(doc)
        self._remember(sha256, parsed)
        return parsed

    def _remember(self, sha256: str, parsed: Parsed) -> None:
        self._items[sha256] = parsed
        self._items.move_to_end(sha256)
        while len(self._items) > self._entries:
            self._items.popitem(last=False)
