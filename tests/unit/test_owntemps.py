"""The daemon's own transient files' inotify events are dropped before watchdog's
(daemon/watch/owntemps.py); everyone else's are kept, moves included."""

from __future__ import annotations

from watchdog.observers.inotify_c import InotifyConstants as C
from watchdog.observers.inotify_c import InotifyEvent, Mask

from editjournal.daemon.watch.owntemps import without_own_temps

TEMP = b".editjournal-tmp-0123456789abcdef"


def event(mask: int, name: bytes, cookie: int = 0) -> InotifyEvent:
    return InotifyEvent(1, Mask(mask), cookie, name)


def names(events: list[InotifyEvent]) -> list[tuple[bytes, int]]:
    return [(e.name, e.cookie) for e in events]


# what one landed write makes, as the kernel queued it (renameat2 RENAME_EXCHANGE)
OWN_WRITE = [
    event(C.IN_CREATE, TEMP),
    event(C.IN_CLOSE_WRITE, TEMP),
    event(C.IN_MOVED_FROM, TEMP, 7),
    event(C.IN_MOVED_TO, b"app.py", 7),
    event(C.IN_MOVED_FROM, b"app.py", 8),
    event(C.IN_MOVED_TO, TEMP, 8),
    event(C.IN_DELETE, TEMP),
]


def test_a_landed_write_makes_no_event() -> None:
    assert without_own_temps(OWN_WRITE) == []


def test_everyone_elses_events_around_it_are_kept_in_order() -> None:
    editor_save = [
        event(C.IN_CREATE, b"app.py.swp"),
        event(C.IN_CLOSE_WRITE, b"app.py.swp"),
        event(C.IN_MOVED_FROM, b"app.py.swp", 9),
        event(C.IN_MOVED_TO, b"app.py", 9),
    ]
    in_place = [event(C.IN_CLOSE_WRITE, b"notes.md")]
    kept = without_own_temps([*in_place, *OWN_WRITE, *editor_save])
    assert names(kept) == names([*in_place, *editor_save])


def test_a_move_split_across_reads_keeps_the_half_about_the_target() -> None:
    first, second = OWN_WRITE[:5], OWN_WRITE[5:]
    assert names(without_own_temps(first)) == [(b"app.py", 8)]  # judged as before
    assert without_own_temps(second) == []


def test_a_kept_displaced_file_and_a_directory_are_seen() -> None:
    kept = event(C.IN_MOVED_TO, b"app.py.editjournal-displaced-12", 3)
    directory = event(C.IN_CREATE | C.IN_ISDIR, b".editjournal-tmp-dir")
    assert without_own_temps([kept, directory]) == [kept, directory]
