"""The watch tick: outside changes taken in between requests, each turn of the loop.

The watcher's thread only sends messages; this runs on the daemon's thread, first
in every turn, so requests handled in the same turn see what changed. Its events
are observations: committed with synchronous=NORMAL (a power loss may drop them;
the next start-up scan finds those changes again).
"""

from __future__ import annotations

from typing import Any

from editjournal.daemon.runtime.groupcommit import GroupCommit
from editjournal.daemon.store.journal import JournalError
from editjournal.daemon.watch.intake import Watching


def watch_tick(watching: Watching, ready: dict[Any, int], group: GroupCommit) -> None:
    """Drain what the watcher sent (and work it in slices while it is busy), check
    what is due, and commit the observations."""
    if watching.socket in ready or watching.busy:
        watching.drain(group.state, group.record_outside)
    watching.check(group.state, group.record_outside)
    try:
        group.commit(durable=False)
    except JournalError:
        watching.rescan_later("outside changes could not be journaled")
