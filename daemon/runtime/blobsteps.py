"""A job's big new contents, compressed a piece per step before the journal keeps them.

A content the journal stores whole is compressed at its commit, in one `zlib`
call: ~140 ms for a 7.6 MB file, the longest turn left of a big first read or a
big new file's write once their other work was sliced (issue 40). The contents a
job's slice hands back are kept here instead when they are that big and would be
stored whole (no earlier version to be a delta on); each slice compresses them a
`PIECE` at a time (`blobs.full_in_steps`) until its deadline, and a finished one is
kept by the journal with its bytes ready, committed in that slice. The job's
request is not handled again until all of its contents are in: its final run then
finds them stored and compresses nothing.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Generator, Mapping
from dataclasses import dataclass, field

from editjournal.daemon.store.blobs import STEPPED_FROM, full_in_steps
from editjournal.daemon.store.journal import Journal

Packing = Generator[None, None, tuple[str, bytes]]


@dataclass
class _Content:
    digest: str
    data: bytes
    path: str | None
    packing: Packing


@dataclass
class SteppedBlobs:
    """The big contents of one parked job, oldest first, and their compression so far."""

    waiting: deque[_Content] = field(default_factory=deque)

    def __bool__(self) -> bool:
        return bool(self.waiting)

    def keep(self, journal: Journal, blobs: Mapping[str, bytes], paths: Mapping[str, str]) -> bool:
        """Stage the contents to keep now; queue the big ones the journal would store
        whole, to be compressed in steps. Whether any was staged."""
        now: dict[str, bytes] = {}
        for digest, data in blobs.items():
            path = paths.get(digest)
            if len(data) >= STEPPED_FROM and journal.stored_whole(digest, path):
                self.waiting.append(_Content(digest, data, path, full_in_steps(data)))
            else:
                now[digest] = data
        if now:
            journal.keep_blobs(now, {d: p for d, p in paths.items() if d in now})
        return bool(now)

    def work(self, journal: Journal, deadline: float) -> bool:
        """Compress until `deadline` (at least one piece, so each slice moves on); stage
        each content finished, with its bytes. Whether any was staged."""
        staged = False
        while self.waiting:
            content = self.waiting[0]
            try:
                next(content.packing)
            except StopIteration as done:
                self.waiting.popleft()
                paths = {content.digest: content.path} if content.path is not None else {}
                full = {content.digest: done.value}
                journal.keep_blobs({content.digest: content.data}, paths, full)
                staged = True
                continue
            if time.monotonic() >= deadline:
                break
        return staged
