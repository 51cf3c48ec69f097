"""When a big file's anchor work is handed to a job instead of done at once. Pure.

Anchoring a file is a pass over every line (hashing, counting, choosing): about
a second for 200,000 lines, and every other agent would wait that long. A
handler that may hand such work to a job (daemon/handlers/indexjob.py) runs
inside `deferring(lines)`: then the anchor engine, asked for an index structure
of a file of that many lines or more that is not built yet, raises `Deferred`
naming it *before it changes anything*, the handler's request is parked, the job
builds the structure a slice at a time (daemon.text.indexbuild), and the handler
runs again from the start and finds it built. Outside `deferring` (tests, the
CLI's offline commands, a small file) everything is built at once, as before.

What it must never do: defer from the middle of a change to an index (a derive
already under way): `inline()` turns deferring off for such a stretch.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from editjournal.daemon.text.anchors import AnchorIndex

_FROM: ContextVar[int] = ContextVar("editjournal_defer_from", default=0)  # 0: never


class Deferred(Exception):  # a signal to the handler's wrapper, not an error
    """An index structure of a big file is needed and not built: build it in a job.

    `lines` and `done`: a whole index of these lines, handed to `done` when built:
    from scratch, or with `derive` (the line changes that made `lines` from `index`'s
    lines; `verified`: exactly those) derived from `index`, which stays whole. Else
    `index` is completed in place (its counts when it lost them, and with `positions`
    where each hash is). `owner` is what holds the new index (a parsed content of the
    text cache), kept alive until the request runs again. `work`: any other work a
    step at a time (a patch locator's line positions), which keeps what it builds."""

    def __init__(
        self,
        *,
        index: AnchorIndex | None = None,
        lines: tuple[str, ...] | None = None,
        done: Callable[[AnchorIndex], None] | None = None,
        positions: bool = False,
        owner: Any = None,
        derive: tuple[tuple[int, int, int], ...] | None = None,
        verified: bool = False,
        work: Iterator[None] | None = None,
    ) -> None:
        super().__init__("an index is built in a job")
        self.index, self.lines, self.done = index, lines, done
        self.positions, self.owner = positions, owner
        self.derive, self.verified = derive, verified
        self.work = work  # other stepped work (it keeps what it builds itself)


def too_big(lines: int) -> bool:
    """Whether a pass over `lines` lines is to be deferred here."""
    limit = _FROM.get()
    return bool(limit) and lines >= limit


@contextmanager
def deferring(lines: int) -> Iterator[None]:
    """Defer index work on files of `lines` lines or more (0: never)."""
    token = _FROM.set(lines)
    try:
        yield
    finally:
        _FROM.reset(token)


@contextmanager
def inline() -> Iterator[None]:
    """Build whatever is needed at once: the index is being changed, and a request
    that stopped here could not run again on what it left."""
    token = _FROM.set(0)
    try:
        yield
    finally:
        _FROM.reset(token)
