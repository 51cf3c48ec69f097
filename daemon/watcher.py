"""watchdog -> messages for the daemon's thread: which paths to look at, and when.

Runs beside the state-owning thread and shares nothing mutable with it: the
observer's callback puts raw events on a queue; a debouncer thread settles
each path (20 ms of quiet, at most 500 ms of waiting, like Watchman) and
sends batches over an inproc ZeroMQ socket that the daemon's loop polls.
The daemon re-reads and compares content hashes; this module never decides
whether anything changed.

watchdog 7.1 reports a full inotify queue only as a log line, so a logging
handler on its logger turns that line into a `rescan` message. The kernel
mask is narrowed to created / closed-after-write / moved / deleted (no
opened or modified), so the journal's own open SQLite files generate
nothing, and an editor's atomic save ends in one move onto the original.
"""

from __future__ import annotations

import logging
import os
import queue
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import msgspec
import zmq
from watchdog.events import (
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers import Observer

from daemon.ignore import GITIGNORE, Ignorer

SETTLE_S = 0.02
MAX_WAIT_S = 0.5
ADDRESS = "inproc://editjournal-watcher"
_WATCHDOG_LOGGER = "watchdog.observers"
_FILTER = [
    FileCreatedEvent,
    FileClosedEvent,
    FileMovedEvent,
    FileDeletedEvent,
    DirCreatedEvent,
    DirMovedEvent,
    DirDeletedEvent,
]


class Change(msgspec.Struct, array_like=True):
    """One settled path for the daemon: look at `path` (a directory: `scan` it)."""

    path: str
    moved_to: str | None = None
    scan: bool = False


class WatcherMessage(msgspec.Struct):
    changes: list[Change] = []
    rescan: str | None = None  # why everything must be looked at again


ENCODER = msgspec.msgpack.Encoder()
DECODER = msgspec.msgpack.Decoder(WatcherMessage)


@dataclass
class _Pending:
    first: float
    last: float
    change: Change


class _Forwarder(FileSystemEventHandler):
    """Runs in watchdog's thread: only puts raw events on the queue."""

    def __init__(self, inbox: queue.Queue[tuple[str, ...]]) -> None:
        self.inbox = inbox

    def on_any_event(self, event: FileSystemEvent) -> None:
        src = os.fsdecode(event.src_path)
        if isinstance(event, (FileMovedEvent, DirMovedEvent)):
            dest = os.fsdecode(event.dest_path)
            self.inbox.put(("move", src, dest, "dir" if event.is_directory else "file"))
        else:
            self.inbox.put(("path", src, "dir" if event.is_directory else "file"))


class _OverflowHandler(logging.Handler):
    """watchdog says "queue overflowed" only in its log: make that a rescan."""

    def __init__(self, inbox: queue.Queue[tuple[str, ...]]) -> None:
        super().__init__(logging.WARNING)
        self.inbox = inbox

    def emit(self, record: logging.LogRecord) -> None:
        if "overflow" in record.getMessage().lower():
            self.inbox.put(("rescan", "inotify queue overflowed"))


class Watcher:
    """Owns the observer and the debouncer thread; the daemon owns the PULL end."""

    def __init__(
        self, root: Path, context: zmq.Context[zmq.Socket[bytes]], ignore: list[str]
    ) -> None:
        self.root = root
        self.context = context
        self.ignore_patterns = ignore
        self.inbox: queue.Queue[tuple[str, ...]] = queue.Queue()
        self.observer: Observer | None = None  # type: ignore[valid-type]
        self._overflow = _OverflowHandler(self.inbox)
        self._stop = threading.Event()
        self._debouncer = threading.Thread(target=self._debounce, name="debouncer", daemon=True)

    def start_debouncer(self) -> None:
        logging.getLogger(_WATCHDOG_LOGGER).addHandler(self._overflow)
        if not self._debouncer.is_alive():
            self._debouncer.start()

    def restart_observer(self) -> None:
        """A new observer in place of the old one (whose watches are released first, so
        they do not count against the kernel's limit twice). Raises OSError when the
        kernel refuses to watch the root; refused subdirectories pass silently."""
        self._stop_observer()
        observer = Observer()
        observer.schedule(
            _Forwarder(self.inbox), str(self.root), recursive=True, event_filter=_FILTER
        )
        observer.daemon = True
        observer.start()
        self.observer = observer

    def _stop_observer(self) -> None:
        if self.observer is not None:
            self.observer.stop()
            self.observer.join(timeout=5)
            self.observer = None

    def alive(self) -> bool:
        return self.observer is not None and self.observer.is_alive()

    def stop(self) -> None:
        logging.getLogger(_WATCHDOG_LOGGER).removeHandler(self._overflow)
        self._stop_observer()
        self._stop.set()
        self.inbox.put(("stop",))
        self._debouncer.join(timeout=5)

    # --- the debouncer thread -----------------------------------------------------------

    def _debounce(self) -> None:
        out = self.context.socket(zmq.PUSH)
        out.setsockopt(zmq.LINGER, 0)
        out.connect(ADDRESS)
        ignorer = Ignorer(self.root, self.ignore_patterns)  # this thread's own
        pending: dict[str, _Pending] = {}
        while not self._stop.is_set():
            timeout = _next_due(pending)
            try:
                item = self.inbox.get(timeout=timeout)
            except queue.Empty:
                item = None
            if item is not None and item[0] == "rescan":
                out.send(ENCODER.encode(WatcherMessage(rescan=item[1])))
            elif item is not None and item[0] != "stop":
                self._note(item, pending, ignorer)
            due = _take_due(pending)
            if due:
                out.send(ENCODER.encode(WatcherMessage(changes=due)))
        out.close()

    def _note(self, item: tuple[str, ...], pending: dict[str, _Pending], ignorer: Ignorer) -> None:
        now = time.monotonic()
        kind = item[0]
        src = self._relative(item[1])
        if src is None:
            return
        if src.rpartition("/")[2] == GITIGNORE:
            ignorer.forget(src)
        is_dir = item[-1] == "dir"
        if kind == "move":
            dest = self._relative(item[2])
            change = Change(src, moved_to=dest, scan=is_dir)
        else:
            change = Change(src, scan=is_dir)
        if ignorer.ignored(src, is_dir) and (
            change.moved_to is None or ignorer.ignored(change.moved_to, is_dir)
        ):
            return
        key = f"{src}\0{change.moved_to or ''}"
        if change.moved_to is not None:
            pending.pop(f"{src}\0", None)  # the move accounts for the source path
        entry = pending.get(key)
        if entry is None:
            pending[key] = _Pending(now, now, change)
        else:
            entry.last = now

    def _relative(self, path: str) -> str | None:
        try:
            rel = os.path.relpath(path, self.root)
        except ValueError:
            return None
        if rel == "." or rel.startswith(".."):
            return None
        return rel.replace(os.sep, "/")


def _next_due(pending: dict[str, _Pending]) -> float | None:
    if not pending:
        return None
    now = time.monotonic()
    due = min(min(p.last + SETTLE_S, p.first + MAX_WAIT_S) for p in pending.values())
    return max(0.0, due - now)


def _take_due(pending: dict[str, _Pending]) -> list[Change]:
    now = time.monotonic()
    ready = [
        key for key, p in pending.items() if now >= p.last + SETTLE_S or now >= p.first + MAX_WAIT_S
    ]
    return [pending.pop(key).change for key in ready]
