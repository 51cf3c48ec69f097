"""What a handler is given: the `Context` it may look at, and the `Job` protocol of
work too long for one turn of the loop.

The floor that `handlers/` (which fill it in), `writing/` (the one writing path the
handlers plug into) and `runtime/` (which builds the context and runs the jobs) all
stand on; it imports none of them. A `Context` is read-only by contract: a handler
reads the state, the journal and the workspace through it and returns an `Outcome`
(contract.outcome); it never changes anything itself.

A handler whose work is too long for one turn of the loop (a checkpoint of a
100,000-file tree) returns an `Outcome` with a `Job`: the server parks the request,
runs `job.step` in slices between other requests (committing the blobs each slice
hands back), and when the job is done handles the request again with the job as
`ctx.finished` — so the final decision, its events and its writes take the one
ordinary path, at one moment.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from editjournal.daemon.files.textcache import TextCache
from editjournal.daemon.files.workspace import Workspace
from editjournal.daemon.model.state import State
from editjournal.daemon.store.journal import Journal

if TYPE_CHECKING:  # outcome imports this module
    from editjournal.daemon.contract.outcome import Write


@dataclass(frozen=True)
class DaemonInfo:
    """Facts about the running daemon process that `status` reports."""

    pid: int
    version: str
    socket: str
    events_socket: str
    log_path: str
    started_monotonic: float
    watch_health: Callable[[], dict[str, Any]] = lambda: {"state": "disabled"}
    commit_stats: Callable[[], dict[str, Any]] = dict
    parked: Callable[[], int] = lambda: 0  # requests waiting for their jobs
    workspace_id: str = ""


@dataclass
class Progress:
    """What one slice of a job hands back: contents for the journal to keep (blob
    sha256 -> bytes, and which file each is a version of, for line deltas), and the
    writes its plans make, whose temp files the server may write now, invisible until
    the final run's commit (daemon/landing/earlywrites.py)."""

    blobs: dict[str, bytes] = field(default_factory=dict)
    paths: dict[str, str] = field(default_factory=dict)
    writes: list[Write] = field(default_factory=list)


class Job(Protocol):
    """Long work a handler hands to the server, done a slice at a time."""

    @property
    def done(self) -> bool: ...

    def step(self, ctx: Context, deadline: float) -> Progress:
        """Work until `deadline` (time.monotonic) or the end; read-only, like a handler."""
        ...


@dataclass(frozen=True)
class Context:
    """Everything a handler may look at, read-only by contract."""

    agent: str
    state: State
    workspace: Workspace
    journal: Journal
    info: DaemonInfo
    cache: TextCache  # parsed contents by hash: derived data, never a source of truth
    ignore_patterns: tuple[str, ...] = ()  # the watcher's extra patterns (--ignore)
    finished: Job | None = None  # the request's job, done: handle it for good
    # the fingerprint of the request's credential (`schemas.wire.identity_of`), None when it
    # sent none: what a prepared hunk, a plain undo and a keyed reply are bound to
    identity: str | None = None

    @property
    def next_seq(self) -> int:
        """The seq this request's first event will get (one thread stages in order)."""
        return self.journal.last_seq + 1
