"""The daemon's own transient files, dropped from the kernel's events before watchdog's.

Why: every write the daemon lands makes seven inotify events — its temp file
created and closed, the exchange (a move each way: temp file to target, target to
temp file) and the displaced file's unlink — and watchdog's threads turned each
into objects, paired the moves (linear scans of a delayed queue) and handed them
to the debouncer, which judged them: about a third of the daemon's CPU per edit
with eight clients, on the interpreter lock the request loop needs. None of them
tells the daemon anything it does not know: the write is journaled, and what it
displaced was judged as it landed (daemon/landing/exchange.py).

What is dropped, in each read of the inotify buffer: events whose name is one of
the daemon's transient names (`.editjournal-tmp-*`, `.editjournal-displaced-*`,
which the watcher ignores anyway), and the other half of any move whose one half
is such a name (same cookie; the kernel queues both halves together). A move whose
halves come in two reads keeps the half about the target, which the watcher judges
as before (by the own-writes mark, daemon/files/ownwrites.py). Nothing else is
touched: an editor's save, an in-place write or a rename by anyone else has names
of its own. Kept files (`NAME.editjournal-displaced-SEQ`) are not transient and are
seen.
"""

from __future__ import annotations

from watchdog.observers.inotify_c import DEFAULT_EVENT_BUFFER_SIZE, InotifyEvent, InotifyFD

from editjournal.daemon.files.tempfiles import DISPLACED_PREFIX, TEMP_PREFIX

_TRANSIENT = (TEMP_PREFIX.encode(), DISPLACED_PREFIX.encode())


class OwnTempsDropped(InotifyFD):
    """watchdog's inotify reader, minus the events of the daemon's transient files."""

    def read_events(
        self, *, event_buffer_size: int = DEFAULT_EVENT_BUFFER_SIZE
    ) -> list[InotifyEvent]:
        return without_own_temps(super().read_events(event_buffer_size=event_buffer_size))


def without_own_temps(events: list[InotifyEvent]) -> list[InotifyEvent]:
    """`events` without those of transient names, nor the halves of their moves."""
    moves = {e.cookie for e in events if e.cookie and _transient(e)}
    if not moves and not any(_transient(e) for e in events):
        return events
    return [e for e in events if not _transient(e) and not (e.cookie and e.cookie in moves)]


def _transient(event: InotifyEvent) -> bool:
    return not event.is_directory and event.name.startswith(_TRANSIENT)
