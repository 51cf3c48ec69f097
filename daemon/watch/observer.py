"""watchdog -> messages for the daemon's thread: which paths to look at, and when.

Runs beside the state-owning thread and shares nothing mutable with it: the
observer's callback puts raw events on a queue; a debouncer thread settles
each path (20 ms of quiet, at most 500 ms of waiting, like Watchman; a new
file is held 500 ms, so an atomic save's temp file is gone before it is looked at) and
sends batches over an inproc ZeroMQ socket that the daemon's loop polls.
The daemon re-reads and compares content hashes; this module never decides
whether anything changed.

watchdog 7.1 reports a full inotify queue only as a log line, so a logging
handler on its logger turns that line into a `rescan` message. The kernel
mask is narrowed to created / closed-after-write / moved / deleted (no
opened or modified), so the journal's own open SQLite files generate
nothing, and an editor's atomic save ends in one move onto the original.
Ignored directories get no inotify watch at all (pruned_observer.py), so their
events never reach this module; the debouncer still drops ignored paths, which
the watched directories above them do report (`.venv` itself being created).
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

from editjournal.daemon.files.encoding import is_utf8_name
from editjournal.daemon.files.shellwindows import cookie_token, is_cookie
from editjournal.daemon.watch.ignore import Ignorer, is_ignore_file
from editjournal.daemon.watch.pruned import PrunedObserver

log = logging.getLogger("editjournal")
SETTLE_S = 0.02
MAX_WAIT_S = 0.5
# A file just created is settled only once it is closed after writing (a big temp
# file an editor or `sed -i` is still writing is not looked at half-written), or
# after this long if it never is (a hard link, a writer that keeps it open).
MAX_OPEN_WAIT_S = 5.0
# A file just created is held at least this long: an editor's or a library's atomic
# save writes a temp file, often fsyncs it, then renames it over the original, and the
# rename may come well after the close. Held, the temp file's settle is superseded by
# the move (one `modified` of the original); looked at early, it would be journaled
# as `created`, then `moved`, around the real change.
FRESH_HOLD_S = 0.5
BATCH = 500  # raw events taken in at once before looking for what is due (a few ms)
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
    # a sync cookie arrived (daemon/files/shellwindows.py): every event before it is in
    # `changes` or an earlier message, nothing held back
    synced: int | None = None


ENCODER = msgspec.msgpack.Encoder()
DECODER = msgspec.msgpack.Decoder(WatcherMessage)


@dataclass
class _Pending:
    first: float
    last: float
    change: Change
    writing: bool = False  # created and not yet closed after writing
    fresh: bool = False  # created while watched: held for FRESH_HOLD_S

    def due(self) -> float:
        if self.writing:
            return self.first + MAX_OPEN_WAIT_S
        settled = min(self.last + SETTLE_S, self.first + MAX_WAIT_S)
        return max(settled, self.first + FRESH_HOLD_S) if self.fresh else settled


class _Forwarder(FileSystemEventHandler):
    """Runs in watchdog's thread: only puts raw events on the queue."""

    def __init__(self, inbox: queue.Queue[tuple[str, ...]]) -> None:
        self.inbox = inbox

    def on_any_event(self, event: FileSystemEvent) -> None:
        src = os.fsdecode(event.src_path)
        what = "dir" if event.is_directory else "file"
        if isinstance(event, (FileMovedEvent, DirMovedEvent)):
            self.inbox.put(("move", src, os.fsdecode(event.dest_path), what))
        elif isinstance(event, FileCreatedEvent):
            self.inbox.put(("created", src, what))
        elif isinstance(event, FileClosedEvent):
            self.inbox.put(("closed", src, what))
        else:
            self.inbox.put(("path", src, what))


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
        self.observer: PrunedObserver | None = None
        self._overflow = _OverflowHandler(self.inbox)
        self._stop = threading.Event()
        self._debouncer = threading.Thread(target=self._debounce, name="debouncer", daemon=True)

    def start_debouncer(self) -> None:
        """Start (or, should it ever have died, replace) the debouncer thread."""
        watchdog_log = logging.getLogger(_WATCHDOG_LOGGER)
        if self._overflow not in watchdog_log.handlers:
            watchdog_log.addHandler(self._overflow)
        if self._debouncer.is_alive():
            return
        if self._debouncer.ident is not None:  # a thread runs once: make a new one
            self._debouncer = threading.Thread(target=self._debounce, name="debouncer", daemon=True)
        self._debouncer.start()

    def restart_observer(self) -> None:
        """A new observer in place of the old one (whose watches are released first, so
        they do not count against the kernel's limit twice). Raises OSError when the
        kernel refuses to watch the root; refused subdirectories pass silently."""
        self._stop_observer()
        observer = PrunedObserver(self.ignore_patterns)  # no watch on an ignored directory
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
        """Both threads run: the observer that sees events and the debouncer that sends them."""
        observing = self.observer is not None and self.observer.is_alive()
        return observing and self._debouncer.is_alive()

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
            for item in self._arrived(_next_due(pending)):
                try:
                    self._take(item, pending, ignorer, out)
                except Exception:  # one bad path must not end watching for all the others
                    log.exception("the watcher could not handle %r; rescanning", item)
                    pending.clear()
                    out.send(ENCODER.encode(WatcherMessage(rescan=f"watcher error on {item!r}")))
            due = _take_due(pending)
            if due:
                out.send(ENCODER.encode(WatcherMessage(changes=due)))
        out.close()

    def _arrived(self, timeout: float | None) -> list[tuple[str, ...]]:
        """The next raw event (waiting up to `timeout`) and all that came with it, up to
        `BATCH`: what is due is looked for once per batch, not once per event (it is a
        pass over everything held: a flood of events made it quadratic)."""
        try:
            items = [self.inbox.get(timeout=timeout)]
        except queue.Empty:
            return []
        while len(items) < BATCH:
            try:
                items.append(self.inbox.get_nowait())
            except queue.Empty:
                break
        return items

    def _take(
        self,
        item: tuple[str, ...],
        pending: dict[str, _Pending],
        ignorer: Ignorer,
        out: zmq.Socket[bytes],
    ) -> None:
        if item[0] == "rescan":
            out.send(ENCODER.encode(WatcherMessage(rescan=item[1])))
        elif item[0] != "stop" and self._cookie(item) is not None:
            self._flush(item, pending, out)
        elif item[0] != "stop":
            self._note(item, pending, ignorer)

    def _cookie(self, item: tuple[str, ...]) -> int | None:
        """A sync cookie's token (0: a cookie, not this daemon's), or None: not a cookie."""
        if item[0] == "rescan" or len(item) < 2:
            return None
        rel = self._relative(item[1])
        if rel is None or not is_cookie(rel):
            return None
        return cookie_token(rel) or 0

    def _flush(
        self, item: tuple[str, ...], pending: dict[str, _Pending], out: zmq.Socket[bytes]
    ) -> None:
        """A cookie's event came: the kernel reported every event before it, so all held
        here goes now, held for quiet or not (the command that made them has ended), and
        the message says the token is reached. The cookie itself is never a change."""
        token = self._cookie(item)
        if not token:
            return
        flushed = [p.change for p in pending.values()]
        pending.clear()
        out.send(ENCODER.encode(WatcherMessage(changes=flushed, synced=token)))

    def _note(self, item: tuple[str, ...], pending: dict[str, _Pending], ignorer: Ignorer) -> None:
        now = time.monotonic()
        kind = item[0]
        src = self._relative(item[1])
        dest = self._relative(item[2]) if kind == "move" else None
        if src is None and dest is not None:  # moved in from outside or from a bad name
            kind, src, dest = "path", dest, None
        if src is None:
            return
        if is_ignore_file(src):
            ignorer.forget(src)
        is_dir = item[-1] == "dir"
        change = Change(src, moved_to=dest, scan=is_dir)
        if ignorer.ignored(src, is_dir) and (dest is None or ignorer.ignored(dest, is_dir)):
            return
        key = f"{src}\0{dest or ''}"
        if dest is not None:
            pending.pop(f"{src}\0", None)  # the move accounts for the source path
        entry = pending.get(key)
        if entry is None:
            entry = pending[key] = _Pending(now, now, change)
        entry.last = now
        if kind == "created":
            entry.writing = entry.fresh = True
        elif kind == "closed":
            entry.writing = False

    def _relative(self, path: str) -> str | None:
        """Workspace-relative, or None: outside the workspace, or a name that is not
        UTF-8 (the journal and the protocol speak UTF-8; such files are skipped)."""
        try:
            rel = os.path.relpath(path, self.root)
        except ValueError:
            return None
        if rel == "." or rel.startswith(".."):
            return None
        if not is_utf8_name(rel):
            _warn_undecodable(rel)
            return None
        return rel.replace(os.sep, "/")


def _next_due(pending: dict[str, _Pending]) -> float | None:
    if not pending:
        return None
    return max(0.0, min(p.due() for p in pending.values()) - time.monotonic())


def _take_due(pending: dict[str, _Pending]) -> list[Change]:
    now = time.monotonic()
    ready = [key for key, p in pending.items() if now >= p.due()]
    return [pending.pop(key).change for key in ready]


_warned: set[str] = set()


def _warn_undecodable(rel: str) -> None:
    if rel not in _warned and len(_warned) < 1000:
        _warned.add(rel)
        shown = rel.encode("utf-8", "backslashreplace").decode()
        log.warning("skipping %s: its name is not UTF-8", shown)
