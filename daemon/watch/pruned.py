"""A watchdog inotify observer that never puts a watch on an ignored directory.

watchdog 7.1's recursive inotify emitter walks every directory below the root and
watches each one: a workspace with a virtualenv spent ~570 of the kernel's watches
(`fs.inotify.max_user_watches`, shared by every process of the user) on trees
nobody edits, and `node_modules/` can cost tens of thousands. Watchman prunes its
`ignore_dirs`; this does the same with the daemon's own rules (`Ignorer`: `.git/`,
`.editjournal/`, the workspace's `.gitignore` files, `--ignore` patterns):

- the start-up walk, the re-walk after a queue overflow and the walk of a directory
  that appears later all skip ignored directories (and names that are not UTF-8, which
  the daemon skips anyway, and symbolic links, which watchdog never followed);
- a watched directory moved to an ignored place, or out of the tree, loses its
  watches (watchdog keeps them, and its events then arrive under the old path);
- a changed `.gitignore` re-evaluates the directories below it: newly ignored ones
  lose their watches, no-longer-ignored ones get them.

It subclasses watchdog's InotifyWatchGroup / InotifyEmitter and overrides their
walk and bookkeeping methods, so it is tied to watchdog 7.x (pinned in
pyproject.toml). It decides only which directories are watched, never what an
event means: that is watcher.py's job, and the daemon's.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from watchdog.events import FileSystemEvent
from watchdog.observers.api import (
    DEFAULT_EMITTER_TIMEOUT,
    DEFAULT_OBSERVER_TIMEOUT,
    BaseObserver,
    EventQueue,
    ObservedWatch,
)
from watchdog.observers.inotify import InotifyEmitter, InotifyObserver, InotifyWatchGroup
from watchdog.observers.inotify_c import InotifyConstants, InotifyEvent, InotifyFD, Mask
from watchdog.observers.inotify_c import WatchDescriptor as Wd
from watchdog.observers.inotify_move_event_grouper import GroupedInotifyEvent, PathedInotifyEvent

from editjournal.daemon.watch.ignore import GITIGNORE, Ignorer, is_ignore_file
from editjournal.daemon.watch.owntemps import OwnTempsDropped

_DIR_CREATED = Mask(InotifyConstants.IN_CREATE | InotifyConstants.IN_ISDIR)


@dataclass
class PrunedWatchGroup(InotifyWatchGroup):
    """watchdog's watch group of one recursive watch, minus the ignored directories.

    Every method that touches the Ignorer runs under the group's lock (watchdog's
    emitter thread at start, its inotify thread afterwards): the Ignorer is not
    thread-safe, and this one is the group's own.
    """

    ignore: tuple[str, ...] = ()
    _ignorer: Ignorer = field(init=False, repr=False)
    _prefix: bytes = field(init=False, repr=False)
    # a watched directory moved away, by the move's cookie: (its path, the watches below
    # it), released if no IN_MOVED_TO in the tree pairs with it (moved out or ignored)
    _moving: dict[int, tuple[bytes, list[Wd]]] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        self._prefix = self.path.rstrip(b"/") + b"/"
        self._ignorer = Ignorer(Path(os.fsdecode(self.path)), self.ignore)
        super().__post_init__()  # adds the watches: needs the Ignorer

    # --- which directories -----------------------------------------------------------

    def _relative(self, path: bytes) -> str | None:
        """Root-relative ("" for the root), or None: outside it, or not UTF-8."""
        if path == self.path:
            return ""
        if not path.startswith(self._prefix):
            return None
        try:
            return path[len(self._prefix) :].decode("utf-8")
        except UnicodeDecodeError:
            return None

    def _wanted(self, path: bytes) -> bool:
        if path == self.path:
            return True
        rel = self._relative(path)
        if rel is None or os.path.islink(path):
            return False
        return not self._ignorer.ignored(rel, is_dir=True)

    def _wanted_dirs(self, top: bytes) -> Iterator[bytes]:
        """`top` and every directory below it that is to be watched; the walk never
        enters an ignored one."""
        if not self._wanted(top):
            return
        yield top
        if not self.is_recursive:
            return
        for base, dirnames, _files in os.walk(top):
            dirnames[:] = [d for d in dirnames if self._wanted(os.path.join(base, d))]
            for name in dirnames:
                yield os.path.join(base, name)

    def _watched_below(self, top: bytes) -> dict[Wd, bytes]:
        """The watches at and below `top`, by where watchdog last knew each to be."""
        below = top + b"/"
        return {
            wd: path
            for wd, path in self._active_callbacks_by_watch.items()
            if path == top or path.startswith(below)
        }

    # --- watchdog's hooks, pruned ------------------------------------------------------

    def _add_all_callbacks(self, path: bytes) -> None:
        for directory in self._wanted_dirs(path):
            self._add_callback(directory)  # a failure on the root still reaches the caller

    def _recursive_simulate(self, src_path: bytes) -> list[InotifyEvent]:
        """Created events for what a new directory already holds (`mkdir -p a/b`), as
        watchdog does, but walking only the directories that got a watch."""
        events: list[InotifyEvent] = []
        for base, dirnames, filenames in os.walk(src_path):
            wd = self._active_callbacks_by_path.get(base)
            if wd is None:  # ignored, or it reports its own content when its event comes
                dirnames.clear()
                continue
            events += [InotifyEvent(wd, _DIR_CREATED, 0, name) for name in dirnames]
            events += [InotifyEvent(wd, InotifyConstants.IN_CREATE, 0, n) for n in filenames]
        return events

    def _move_watches(self, move_src_path: bytes, move_dst_path: bytes) -> bool:
        """A watched tree moved within the root: its watches follow it, then the rules
        of its new place apply (moved under an ignored directory: no watches left)."""
        moved = super()._move_watches(move_src_path, move_dst_path)
        if moved:
            self._reconcile(move_dst_path)
        return moved

    def on_event(self, event: InotifyEvent) -> None:
        if event.is_moved_from and event.is_directory:
            self._note_moving(event)
        elif event.is_moved_to:
            with self._lock:
                self._moving.pop(event.cookie, None)  # paired: _move_watches handles it
        super().on_event(event)
        if is_ignore_file(os.fsdecode(event.name)) and not event.is_directory:
            self._gitignore_changed(event.wd)

    def on_queue_overflow(self) -> None:
        """watchdog re-adds every watch; a `.gitignore` change may be among the lost events."""
        with self._lock:
            self._ignorer = Ignorer(self._ignorer.root, self.ignore)
            self._moving.clear()
        super().on_queue_overflow()

    def _remove_watch_internally(self, wd: Wd) -> None:
        """watchdog's bookkeeping, without its KeyErrors: this group releases watches
        from more places than watchdog does (a moved-away tree, a `.gitignore`), so
        the kernel's IN_IGNORED for a watch may come after the watch was let go here,
        and a KeyError there would end watchdog's inotify thread."""
        path = self._active_callbacks_by_watch.pop(wd, None)
        if path is not None and self._active_callbacks_by_path.get(path) == wd:
            del self._active_callbacks_by_path[path]

    # --- ours ---------------------------------------------------------------------------

    def _note_moving(self, event: InotifyEvent) -> None:
        with self._lock:
            src = self._build_event_source_path(event)
            wds = list(self._watched_below(src)) if src is not None else []
            if src is not None and wds:
                self._moving[event.cookie] = (src, wds)

    def release_moved_away(self, cookie: int) -> None:
        """An IN_MOVED_FROM of a directory that nothing in the tree paired with: it went
        out of the root or under an unwatched (ignored) directory. Its watches go,
        except any that a directory arriving meanwhile has taken over."""
        with self._lock:
            entry = self._moving.pop(cookie, None)
            if entry is None or not self.is_active:
                return
            src, wds = entry
            still_there = self._watched_below(src)
            self._remove_callbacks([wd for wd in wds if wd in still_there])

    def _gitignore_changed(self, wd: Wd) -> None:
        with self._lock:
            directory = self._active_callbacks_by_watch.get(wd)
            rel = self._relative(directory) if directory is not None else None
            if directory is None or rel is None or not self.is_active:
                return
            self._ignorer.forget(f"{rel}/{GITIGNORE}" if rel else GITIGNORE)
            self._reconcile(directory)

    def _reconcile(self, top: bytes) -> None:
        """Watch exactly the wanted directories at and below `top`."""
        wanted = list(self._wanted_dirs(top))
        keep = set(wanted)
        watched = self._watched_below(top)
        self._remove_callbacks([wd for wd, path in watched.items() if path not in keep])
        for directory in wanted:
            if directory not in self._active_callbacks_by_path:  # re-adding one warns
                self._add_callback(directory)


class PrunedEmitter(InotifyEmitter):
    """watchdog's inotify emitter with a PrunedWatchGroup."""

    def __init__(
        self,
        event_queue: EventQueue,
        watch: ObservedWatch,
        *,
        timeout: float = DEFAULT_EMITTER_TIMEOUT,
        event_filter: list[type[FileSystemEvent]] | None = None,
        inotify_fd: InotifyFD | None = None,
        ignore: Sequence[str] = (),
    ) -> None:
        super().__init__(
            event_queue, watch, timeout=timeout, event_filter=event_filter, inotify_fd=inotify_fd
        )
        self.ignore = tuple(ignore)

    def on_thread_start(self) -> None:
        self._inotify = PrunedWatchGroup(
            self._inotify_fd,
            os.fsencode(self.watch.path),
            is_recursive=self.watch.is_recursive,
            event_mask=self.get_event_mask_from_filter(),
            follow_symlink=self.watch.follow_symlink,
            ignore=self.ignore,
        )

    def build_and_queue_event(
        self, event: GroupedInotifyEvent, *, full_events: bool = False
    ) -> None:
        """A lone IN_MOVED_FROM leaves watchdog's move grouper only after its 500 ms
        wait for a partner: then it is known that the directory left the tree."""
        group, moved_away = self._inotify, _lone_moved_from(event)
        if moved_away is not None and isinstance(group, PrunedWatchGroup):
            group.release_moved_away(moved_away.cookie)
        super().build_and_queue_event(event, full_events=full_events)


def _lone_moved_from(event: GroupedInotifyEvent) -> InotifyEvent | None:
    """The event, if it is an IN_MOVED_FROM that no IN_MOVED_TO was paired with."""
    if isinstance(event, PathedInotifyEvent) and event.ev.is_moved_from:
        return event.ev
    return None


class PrunedObserver(InotifyObserver):
    """An InotifyObserver whose emitters skip directories the Ignorer ignores, for
    `ignore` (gitignore-style patterns) on top of the workspace's own rules."""

    def __init__(self, ignore: Sequence[str] = (), *, timeout: float = DEFAULT_OBSERVER_TIMEOUT):
        # InotifyObserver.__init__ fixes the emitter class: do what it does with ours.
        self._inotify_fd = OwnTempsDropped()  # watchdog's InotifyFD, minus our temp files
        self._inotify_fd.start()
        BaseObserver.__init__(
            self, PrunedEmitter, timeout=timeout, inotify_fd=self._inotify_fd, ignore=tuple(ignore)
        )
