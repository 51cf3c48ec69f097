"""The daemon thread's side of outside-change watching: the PULL socket the
watcher feeds, the observer that turns paths into events, and the health that
`status` reports. Never silently stops watching: a dead observer is restarted
and followed by a rescan; an overflow is followed by a rescan.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import zmq

from daemon.ignore import Ignorer
from daemon.outside import Observation, OutsideObserver
from daemon.state import State
from daemon.watcher import ADDRESS, DECODER, Watcher, WatcherMessage
from daemon.workspace import Workspace

log = logging.getLogger("editjournal")
Record = Callable[[Observation], None]  # stages and applies the events at once


@dataclass
class WatchHealth:
    """What `status` says about watching; owned by the daemon's thread."""

    state: str = "disabled"  # "running" | "disabled" | "failed"
    paths_checked: int = 0
    outside_changes: int = 0
    rescans: int = 0
    overflows: int = 0
    observer_restarts: int = 0
    last_rescan_ms: float | None = None
    error: str | None = None  # why watching failed (e.g. the inotify watch limit)
    ignore: list[str] = field(default_factory=list)


class Watching:
    def __init__(
        self, workspace: Workspace, context: zmq.Context[zmq.Socket[bytes]], ignore: list[str]
    ) -> None:
        self.workspace = workspace
        self.observer = OutsideObserver(workspace, Ignorer(workspace.root, ignore))
        self.health = WatchHealth(ignore=list(ignore))
        self.socket = context.socket(zmq.PULL)
        self.socket.setsockopt(zmq.LINGER, 0)
        self.socket.bind(ADDRESS)
        self.watcher = Watcher(Path(workspace.root), context, ignore)

    def start(self) -> None:
        """Start watching; if the kernel refuses (watch limit), keep serving without it:
        outside changes are then still noticed when a file is read or edited."""
        try:
            self.watcher.start()
        except OSError as e:
            log.error(
                "cannot watch the workspace (%s); outside changes will be noticed only on access", e
            )
            self.health.state, self.health.error = "failed", str(e)
            return
        self.health.state = "running"

    def stop(self) -> None:
        self.watcher.stop()
        self.socket.close()

    def at_startup(self, state: State, record: Record) -> None:
        """What changed while the daemon was down (the files the journal knows)."""
        for rel in sorted(state.files):
            self._record(record, self.observer.observe(state, rel))

    def drain(self, state: State, record: Record) -> None:
        """Every message waiting on the socket, each path recorded as soon as it is seen
        (so a path that comes up twice is compared with the state the first one left)."""
        while True:
            try:
                message = DECODER.decode(self.socket.recv(zmq.NOBLOCK))
            except zmq.Again:
                return
            self._handle(state, message, record)

    def check(self, state: State, record: Record) -> None:
        """A dead observer is restarted, and what it may have missed is rescanned."""
        if self.health.state != "running" or self.watcher.alive():
            return
        log.error("the file watcher stopped; restarting it and rescanning")
        self.health.observer_restarts += 1
        try:
            self.watcher.start_observer()
        except OSError as e:
            log.error("cannot restart the file watcher: %s", e)
            self.health.state, self.health.error = "failed", str(e)
        self._rescan(state, "observer restarted", record)

    def _handle(self, state: State, message: WatcherMessage, record: Record) -> None:
        if message.rescan is not None:
            self.health.overflows += 1
            self._rescan(state, message.rescan, record)
            return
        observer = self.observer
        for change in message.changes:
            self.health.paths_checked += 1
            if change.scan:
                for below in filter(None, (change.path, change.moved_to)):
                    self._each(state, observer.changed_below(state, below), record)
            elif change.moved_to:
                self._record(record, observer.observe_move(state, change.path, change.moved_to))
            elif not observer.ignorer.ignored(change.path):
                self._record(record, observer.observe(state, change.path))

    def _rescan(self, state: State, why: str, record: Record) -> None:
        log.warning("rescanning the workspace: %s", why)
        started = time.monotonic()
        self._each(state, self.observer.changed_below(state, ""), record)
        self.health.rescans += 1
        self.health.last_rescan_ms = round((time.monotonic() - started) * 1000, 1)

    def _each(self, state: State, paths: list[str], record: Record) -> None:
        for rel in paths:
            self._record(record, self.observer.observe(state, rel))

    def _record(self, record: Record, observation: Observation) -> None:
        if observation.events:
            self.health.outside_changes += len(observation.events)
            record(observation)
