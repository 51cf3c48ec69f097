"""The daemon thread's side of outside-change watching: the PULL socket the
watcher feeds, the observer that turns paths into events, and the health that
`status` reports. Never silently stops watching: a dead observer is restarted
and followed by a rescan; an overflow is followed by a rescan.

The daemon's one thread also serves every request, so watching works in slices:
messages are taken off the socket into a queue that coalesces them (a path named
twice is looked at once; a directory moved back and forth is one rescan of each
subtree; a path under a subtree to rescan waits for that rescan), and each turn of
the loop works the queue for at most `BUDGET_S` before requests are served again
(`busy` tells the loop not to sleep meanwhile). A flood of outside changes delays
their journaling, never a reply; nothing is dropped.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import zmq

from editjournal.daemon.files.workspace import Workspace
from editjournal.daemon.model.state import State
from editjournal.daemon.settings.limits import DEFAULT_FILE_LINES
from editjournal.daemon.watch.ignore import Ignorer, is_ignore_file
from editjournal.daemon.watch.kernelwatches import unwatched_dirs, watched_dirs
from editjournal.daemon.watch.observer import ADDRESS, DECODER, Watcher, WatcherMessage
from editjournal.daemon.watch.outside import Observation, OutsideObserver, Walk

log = logging.getLogger("editjournal")
Record = Callable[[Observation], None]  # stages and applies the events at once
POLL_COST_FACTOR = 10  # the poll interval stretches so rescans take at most a tenth of the time
UNWATCHED_EXAMPLES = 5
COVERAGE_EVERY_S = 1.0  # how often directories that appeared are checked for their watch
BUDGET_S = 0.01  # watching work per turn of the loop, between which requests are served
_NS_LIMITS = (("user.max_inotify_watches", Path("/proc/sys/user/max_inotify_watches")),)
_WATCH_LIMIT = Path("/proc/sys/fs/inotify/max_user_watches")


@dataclass(frozen=True)
class WatchSettings:
    """How the daemon watches; from `python -m daemon` / `editjournal serve` options."""

    ignore: list[str] = field(default_factory=list)  # gitignore-style extra patterns
    poll_s: float = 2.0  # rescan interval while the watcher is degraded or failed
    retry_s: float = 30.0  # how often to try watching again (the limit may be raised)


@dataclass
class WatchHealth:
    """What `status` says about watching; owned by the daemon's thread."""

    state: str = "disabled"  # "running" | "degraded" | "failed" | "disabled"
    paths_checked: int = 0
    outside_changes: int = 0
    rescans: int = 0
    overflows: int = 0
    observer_restarts: int = 0
    last_rescan_ms: float | None = None
    error: str | None = None  # why watching is degraded or failed (e.g. the inotify limit)
    unwatched_dirs: int = 0  # directories the kernel refused to watch
    unwatched_examples: list[str] = field(default_factory=list)
    poll_interval_s: float | None = None  # set while rescans stand in for the watcher
    ignore: list[str] = field(default_factory=list)


class Watching:
    def __init__(
        self,
        workspace: Workspace,
        context: zmq.Context[zmq.Socket[bytes]],
        settings: WatchSettings,
        max_lines: int = DEFAULT_FILE_LINES,
    ) -> None:
        self.workspace = workspace
        self.settings = settings
        self.ignorer = Ignorer(workspace.root, settings.ignore)
        self.observer = OutsideObserver(workspace, self.ignorer, max_lines)
        self.health = WatchHealth(ignore=list(settings.ignore))
        self.socket = context.socket(zmq.PULL)
        self.socket.setsockopt(zmq.LINGER, 0)
        self.socket.bind(ADDRESS)
        self.watcher = Watcher(Path(workspace.root), context, settings.ignore)
        self._next_poll = 0.0
        self._next_retry = 0.0
        self._new_dirs: set[str] = set()  # did they get their watches? checked now and then
        self._rescan_due: str | None = None
        self._next_coverage = 0.0
        self._work = WorkQueue()

    def start(self) -> None:
        """Start watching. If the kernel refuses (the watch limit), keep serving: rescans
        then stand in for the watcher, and watching is retried now and then."""
        self._start_observer()

    def _start_observer(self) -> None:
        self.watcher.start_debouncer()
        try:
            self.watcher.restart_observer()
        except OSError as e:
            self._degrade("failed", f"cannot watch the workspace: {e}{_limit_hint()}")
            return
        self._check_coverage()

    def _check_coverage(self, tops: Iterable[str] = ("",)) -> None:
        """Degrade when the kernel watches fewer directories than the workspace has
        (under `tops`; the whole workspace by default)."""
        tops = list(tops)
        missing = unwatched_dirs(Path(self.workspace.root), self.ignorer, tops)
        if not missing:
            if tops == [""]:
                self.health.state, self.health.error = "running", None
                self.health.unwatched_dirs, self.health.unwatched_examples = 0, []
                self.health.poll_interval_s = None
            return
        shown = [d or "." for d in missing[:UNWATCHED_EXAMPLES]]
        cause = _limit_hint() if _near_the_limit() else _NOT_THE_LIMIT
        self._degrade(
            "degraded",
            f"{len(missing)} directories are not watched (e.g. {', '.join(shown)}){cause}",
        )
        self.health.unwatched_dirs, self.health.unwatched_examples = len(missing), shown
        if cause == _NOT_THE_LIMIT:  # a race, not a limit: try again soon, not in 30 s
            self._next_retry = min(self._next_retry, time.monotonic() + RACE_RETRY_S)

    def _degrade(self, state: str, error: str) -> None:
        if self.health.error != error:
            log.error("%s; rescanning every few seconds instead", error)
        self.health.state, self.health.error = state, error
        self.health.poll_interval_s = self.settings.poll_s
        now = time.monotonic()
        self._next_poll = now + self.settings.poll_s
        self._next_retry = now + self.settings.retry_s

    def stop(self) -> None:
        self.watcher.stop()
        self.socket.close()

    def at_startup(self, state: State, record: Record) -> None:
        """What changed while the daemon was down (the files the journal knows), and a
        stat of the others, which rescans then compare with instead of calling them new."""
        for rel in sorted(state.files):
            self._record(record, self.observer.observe(state, rel))
        self.observer.note_unseen(state)

    def rescan_later(self, why: str) -> None:
        """Look at everything again on the next turn, hashing every file anew (what was
        observed may not have been journaled)."""
        log.warning("%s; rescanning on the next turn", why)
        self.observer.stat_cache.clear()
        self._rescan_due = why

    @property
    def busy(self) -> bool:
        """Work is queued: the loop must come back at once, not sleep on its poll."""
        return bool(self._work)

    def drain(self, state: State, record: Record, budget_s: float = BUDGET_S) -> None:
        """Take the waiting messages into the work queue, then work it for at most
        `budget_s` (what is left goes on at the next turn). Each path is recorded as soon
        as it is looked at, so a later one is compared with the state it left."""
        deadline = time.monotonic() + budget_s
        while time.monotonic() < deadline:
            try:
                message = DECODER.decode(self.socket.recv(zmq.NOBLOCK))
            except zmq.Again:
                break
            self._take(message)
        self._work_until(state, record, deadline)

    def check(self, state: State, record: Record) -> None:
        """Called on every turn of the loop: restart a dead observer; while degraded,
        rescan on a timer and retry watching (the limit may have been raised); look
        again at paths left alone for a hook's claim that never came."""
        writes = self.observer.workspace.harness_writes
        expired = writes.expired()
        if expired:
            self._work.look_all(expired)
        for path in writes.windows.expired_paths():  # a window whose Post never came
            self._work.outside(path)
        if self.health.state == "running" and not self.watcher.alive():
            log.error("the file watcher stopped; restarting it and rescanning")
            self.health.observer_restarts += 1
            self._start_observer()
            self._rescan(state, "observer restarted", record)
            return
        if self._rescan_due is not None:
            why, self._rescan_due = self._rescan_due, None
            self._rescan(state, why, record)
            if why and self.health.state == "running":  # watchdog re-adds its watches
                self._check_coverage()
        if self.health.state == "running":
            self._check_new_dirs()
            return
        if self.health.state not in ("degraded", "failed"):
            return
        now = time.monotonic()
        if now >= self._next_retry:  # a new observer: anything between the two is rescanned
            self._start_observer()
            self._next_retry, self._next_poll = now + self.settings.retry_s, now
        if now >= self._next_poll:
            resumed = self.health.state == "running"
            self._rescan(state, "watching resumed" if resumed else "", record)
            self._next_poll = time.monotonic() + self._poll_interval()

    def _check_new_dirs(self) -> None:
        """At most once per COVERAGE_EVERY_S: during a `git checkout` thousands of
        directories appear, and the kernel's list is read once for all of them."""
        now = time.monotonic()
        if not self._new_dirs or now < self._next_coverage:
            return
        self._next_coverage = now + COVERAGE_EVERY_S
        tops: list[str] = []
        for top in sorted(self._new_dirs):  # a parent's walk covers its children
            if not tops or not top.startswith(tops[-1] + "/"):
                tops.append(top)
        self._new_dirs = set()
        self._check_coverage(tops)

    def _poll_interval(self) -> float:
        """The configured interval, stretched on a big workspace where a rescan is slow."""
        cost_s = (self.health.last_rescan_ms or 0) / 1000
        interval = max(self.settings.poll_s, POLL_COST_FACTOR * cost_s)
        if self.health.poll_interval_s is not None:
            self.health.poll_interval_s = round(interval, 2)
        return interval

    def _take(self, message: WatcherMessage) -> None:
        """Queue a message's work (cheap: nothing is read or hashed here)."""
        if message.rescan is not None:
            self.health.overflows += 1
            self._rescan_due = message.rescan
            return
        self._take_changes(message)
        if message.synced is not None:  # after the changes it follows
            self._work.sync(message.synced)

    def _take_changes(self, message: WatcherMessage) -> None:
        for change in message.changes:
            self.health.paths_checked += 1
            for path in filter(None, (change.path, change.moved_to)):
                if is_ignore_file(path):  # as the watcher's own Ignorer does
                    self.ignorer.forget(path)
            if change.scan:
                for below in filter(None, (change.path, change.moved_to)):
                    self._work.scan(below)
                    self._new_dirs.add(below)
            elif change.moved_to:
                self._work.move(change.path, change.moved_to)
            else:
                self._work.look(change.path)

    def _work_until(self, state: State, record: Record, deadline: float) -> None:
        """Work the queue until `deadline`: subtrees are walked into paths, paths looked at."""
        observer = self.observer
        while self._work and time.monotonic() < deadline:
            item = self._work.pop()
            if isinstance(item, Walk):
                started = time.monotonic()
                self._work.look_all(item.step())
                item.spent += time.monotonic() - started
                self._work.resume(item)
                if (
                    item.done and not item.below
                ):  # a whole rescan's walk: what the poll interval follows
                    self.health.last_rescan_ms = round(item.spent * 1000, 1)
            elif isinstance(item, Subtree):
                self._work.resume(observer.walk(state, item.below))
            elif isinstance(item, Move):
                self._record(record, observer.observe_move(state, item.src, item.dest))
            elif isinstance(item, Synced):
                if self._work.only_syncs():
                    observer.workspace.harness_writes.windows.mark_synced(item.token)
                else:  # paths a walk queued after it come first
                    self._work.requeue(item)
            elif isinstance(item, Outside):
                self._record(record, observer.observe(state, item.path, defer=False))
            elif not observer.ignorer.ignored(item):
                self._record(record, observer.observe(state, item))

    def _rescan(self, state: State, why: str, record: Record) -> None:
        """Look at every file again (queued: worked in slices like any other change);
        `why` is empty for the timed rescans of polling."""
        if why:
            log.warning("rescanning the workspace: %s", why)
        self._work.scan("")
        self.health.rescans += 1

    def _record(self, record: Record, observation: Observation) -> None:
        if observation.events:
            self.health.outside_changes += len(observation.events)
            record(observation)


_NOT_THE_LIMIT = (
    ": they were created, moved, or swapped for symlinks faster than watches could be"
    " added (the inotify limit is far off); rescanning them and watching again shortly"
)
RACE_RETRY_S = 1.0  # a coverage gap from a race is retried this soon
_NEAR_LIMIT = 0.9  # over this share of the watch limit in use, the limit is the likely cause


def _near_the_limit() -> bool:
    """Whether this process's inotify watches are close to the smallest limit that applies
    (when neither is known, the limit is named, as before)."""
    watched = watched_dirs()
    limits = []
    for _, path in ((None, _WATCH_LIMIT), *_NS_LIMITS):
        try:
            limits.append(int(path.read_text().strip()))
        except (OSError, ValueError):
            continue
    if watched is None or not limits:
        return True
    return len(watched) >= _NEAR_LIMIT * min(limits)


def _limit_hint() -> str:
    """Name the limit that applies. Since Linux 5.11 it is counted per user namespace:
    inside a container (or any user namespace) the namespace's own
    `user.max_inotify_watches` can be the smaller one, and raising the machine-wide
    sysctl would not help."""
    limits = {}
    for name, path in (("fs.inotify.max_user_watches", _WATCH_LIMIT), *_NS_LIMITS):
        try:
            limits[name] = int(path.read_text().strip())
        except (OSError, ValueError):
            continue
    if not limits:
        return ""
    name, value = min(limits.items(), key=lambda item: item[1])
    return f" (inotify watch limit: {name} = {value}; raise it with sysctl)"


@dataclass(frozen=True)
class Subtree:
    """Everything under `below` ("" for the whole workspace) is to be looked at again."""

    below: str


@dataclass(frozen=True)
class Move:
    src: str
    dest: str


@dataclass(frozen=True)
class Synced:
    """A sync cookie's token: done once everything queued before it has been looked at."""

    token: int


@dataclass(frozen=True)
class Outside:
    """A path to journal as an outside change whatever shell windows are open (it waited
    in a window that expired)."""

    path: str


class WorkQueue:
    """Outside-change work in arrival order, coalesced: a path queued twice is looked at
    once, a subtree queued twice is walked once, and a path under a queued subtree is
    left to that walk."""

    def __init__(self) -> None:
        self._items: dict[str | Subtree | Move | Synced | Outside, None] = {}
        self._subtrees: set[str] = set()  # queued or being walked
        self._walking: Walk | None = None

    def __bool__(self) -> bool:
        return bool(self._items) or self._walking is not None

    def look(self, path: str) -> None:
        if not self._under_subtree(path):
            self._items.setdefault(path, None)

    def look_all(self, paths: list[str]) -> None:
        for path in paths:
            self._items.setdefault(path, None)  # from a walk: after what was queued

    def move(self, src: str, dest: str) -> None:
        self._items.setdefault(Move(src, dest), None)

    def scan(self, below: str) -> None:
        if below not in self._subtrees:
            self._subtrees.add(below)
            self._items.setdefault(Subtree(below), None)

    def sync(self, token: int) -> None:
        self._items.setdefault(Synced(token), None)

    def outside(self, path: str) -> None:
        self._items.pop(path, None)  # looked at once, as an outside change
        self._items.setdefault(Outside(path), None)

    def requeue(self, item: Synced) -> None:
        self._items[item] = None

    def only_syncs(self) -> bool:
        """Nothing but sync tokens is queued or being walked."""
        return self._walking is None and all(isinstance(i, Synced) for i in self._items)

    def pop(self) -> str | Subtree | Move | Synced | Outside | Walk:
        if self._walking is not None:
            walk, self._walking = self._walking, None
            return walk
        item = next(iter(self._items))
        del self._items[item]
        return item

    def resume(self, walk: Walk) -> None:
        """A subtree's walk goes on first at the next pop (paths under it wait for it);
        a finished one lets them be queued again."""
        if walk.done:
            self._walking = None
            self._subtrees.discard(walk.below)
        else:
            self._walking = walk

    def _under_subtree(self, path: str) -> bool:
        return any(not below or path.startswith(below + "/") for below in self._subtrees)
