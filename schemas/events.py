"""The journal's event types: facts in the past tense, one tagged union.

Each event is stored as the msgpack of its Struct, tagged by `kind` with an
explicit snake_case name — never a class path — so renaming a class never
breaks an old journal. The log is forever: new fields get defaults, fields are
never reordered or retyped in place.
"""

from __future__ import annotations

import time
from typing import Any, ClassVar, Union

import msgspec


class Event(msgspec.Struct, tag_field="kind", kw_only=True, omit_defaults=True):
    """Base of every journal event. `path` is set for events about one file."""

    path: str | None = None
    # False for facts no agent caused (an outside change noticed during its request)
    caused_by_agent: ClassVar[bool] = True

    @property
    def kind(self) -> str:
        return str(self.__struct_config__.tag)

    def summary(self) -> str:
        """One human line for `log`, `watch` and the daemon's terminal."""
        return self.kind

    @property
    def content_sha256(self) -> str | None:
        """The file content this event establishes or observed, if any."""
        return None

    @property
    def changes_content(self) -> bool:
        """Whether the file's content after this event may differ from before it."""
        return False


class DaemonStarted(Event, tag="daemon_started"):
    """A daemon began serving. The `previous_*` fields say whether the run before it
    ended without `daemon_stopped` (killed, crashed, power lost) or with one whose reason
    is `crash: ...`: derived from the journal itself, so they are honest whatever
    happened to the machine."""

    pid: int
    workspace: str
    version: str
    socket: str
    previous_unclean: bool = False
    previous_pid: int | None = None  # the unclean run's pid, from its daemon_started
    previous_last_seen_ms: int | None = None  # ts of the last event that run journaled

    def summary(self) -> str:
        started = f"daemon {self.version} started, pid {self.pid}"
        if not self.previous_unclean:
            return started
        who = f" (pid {self.previous_pid})" if self.previous_pid is not None else ""
        seen = self.previous_last_seen_ms
        when = f"; last seen {_local_time(seen)}" if seen is not None else ""
        return f"{started}; previous run{who} did not stop cleanly{when}"


class DaemonStopped(Event, tag="daemon_stopped"):
    pid: int
    reason: str

    def summary(self) -> str:
        return f"daemon pid {self.pid} stopped ({self.reason})"


class FileRead(Event, tag="file_read"):
    """An agent saw `lines` (inclusive, 1-based; None = all) of the content `sha256`."""

    path: str
    sha256: str
    size: int
    line_count: int
    lines: tuple[int, int] | None = None
    hashes: bool = False
    since_version: int | None = None  # a delta read: only what changed since this version
    # Lines of this content (1-based, inclusive ranges) the agent has still not been
    # shown: outside a ranged read, or changed since its last view and not in the delta.
    unseen: list[tuple[int, int]] = []

    @property
    def content_sha256(self) -> str | None:
        return self.sha256

    def summary(self) -> str:
        seen = "all" if self.lines is None else f"lines {self.lines[0]}-{self.lines[1]}"
        return f"read {self.path} ({seen} of {self.line_count}) sha256 {self.sha256[:12]}"


class EditApplied(Event, tag="edit_applied"):
    """A tool wrote new content. `writer` names the tool (writer tracking)."""

    path: str
    writer: str
    before_sha256: str
    after_sha256: str
    size: int
    lines_before: int
    line_count: int
    operations: list[dict[str, Any]] = []
    auto_corrections: list[str] = []
    # "clean" | "overridden" (skip_safety_check, and the check found something) |
    # "skipped" (skip_safety_check, and the check found nothing)
    safety_check: str = "clean"
    safety_warnings: list[str] = []
    # [start, end, inserted]: lines [start, end) (0-based) of the content before became
    # `inserted` lines, in order. Exact, so stale-anchor checks need not guess from a diff
    # (a writer that does not know them leaves this empty and a diff is used).
    line_changes: list[tuple[int, int, int]] = []
    # Lines of the new content the writing agent has not been shown: other agents'
    # changes its edit was carried over (1-based, inclusive ranges).
    unseen: list[tuple[int, int]] = []
    # The tool removed the file (a patch to /dev/null): `after_sha256` is the empty
    # content's, and the file no longer exists.
    deleted: bool = False
    # A move (apply_patch's `*** Move to:`): the write that removed the old path names
    # the new one (`moved_to`, with `deleted`), the write that made the new path names
    # the old one (`moved_from`): history and blame follow the file across the rename.
    moved_from: str | None = None
    moved_to: str | None = None
    # The fingerprint of the credential the writing request held (`schemas.wire.identity_of`):
    # a plain `undo` takes back only a write of the caller's own identity. None: no credential.
    identity: str | None = None

    @property
    def content_sha256(self) -> str | None:
        return None if self.deleted else self.after_sha256

    @property
    def changes_content(self) -> bool:
        return True

    def summary(self) -> str:
        n = len(self.operations)
        delta = self.line_count - self.lines_before
        if self.moved_to:
            return f"{self.writer} {self.path}: moved to {self.moved_to}"
        if self.deleted:
            return f"{self.writer} {self.path}: deleted ({self.lines_before} lines)"
        if self.moved_from:
            return (
                f"{self.writer} {self.path}: moved from {self.moved_from} ({self.line_count} lines)"
            )
        return (
            f"{self.writer} {self.path}: {n} operation{'s' * (n != 1)}, "
            f"{self.lines_before} -> {self.line_count} lines ({delta:+d})"
            + (" [safety check overridden]" if self.safety_check == "overridden" else "")
        )


class EditRejected(Event, tag="edit_rejected"):
    """A write tool refused a request; the file was not changed."""

    path: str
    writer: str
    sha256: str | None  # the content the request was checked against, if it was read
    code: str
    message: str
    details: dict[str, Any] = {}
    operations: list[dict[str, Any]] = []
    # set when the error showed the agent the current content (a delta): its snapshot advances
    shown_sha256: str | None = None
    unseen: list[tuple[int, int]] = []  # with shown_sha256: what the delta did not show

    @property
    def content_sha256(self) -> str | None:
        return self.sha256

    def summary(self) -> str:
        return f"{self.writer} {self.path} rejected: {self.code}"


class OutsideChangeRecorded(Event, tag="outside_change"):
    """Someone other than the daemon changed a known file (seen on the next access)."""

    caused_by_agent: ClassVar[bool] = False

    path: str
    change: str  # "created" | "modified" | "deleted" | "moved"
    old_sha256: str | None
    new_sha256: str | None
    size: int | None = None
    line_count: int | None = None
    moved_to: str | None = None
    # False for files no agent has read: path, size and hash only, no blob, so a
    # big workspace's churn does not fill the journal
    content_stored: bool = True
    # Set when this content was found displaced by the daemon's own write of that seq:
    # the outside writer changed the file after the write was planned, before it landed
    displaced_by: int | None = None

    @property
    def content_sha256(self) -> str | None:
        return self.new_sha256

    @property
    def changes_content(self) -> bool:
        return True

    def summary(self) -> str:
        old = (self.old_sha256 or "-")[:12]
        new = (self.new_sha256 or "-")[:12]
        to = f" to {self.moved_to}" if self.moved_to else ""
        by = f", displaced by seq {self.displaced_by}" if self.displaced_by else ""
        return f"outside change: {self.path} {self.change}{to} ({old} -> {new}){by}"


class HunkPrepared(Event, tag="hunk_prepared"):
    """A `prepare_*` tool planned a hunk (nothing written): one splice of the content
    `base_sha256` (seen at `base_version`), pending until applied, discarded or expired.
    Re-planned with `existing_hunk_id`, the same `hunk_id` is prepared again."""

    path: str
    hunk_id: str
    hunk_kind: str  # "range_edit" | "append" | "insert_after" | "insert_before" | "block_replace"
    created_at_ms: int
    expires_at_ms: int
    base_version: int
    base_sha256: str
    # the splice: lines [start, end) (0-based) of the base become new_lines; `targets` are
    # the 1-based base lines it relies on (an insert's anchor line)
    start: int
    end: int
    new_lines: list[str] = []
    targets: list[int] = []
    diff: str = ""  # the reviewable unified diff of the plan
    replanned: bool = False
    content_eof_newline_added: bool = False  # the content's last line gets a newline
    # the preparing request's identity (`schemas.wire.identity_of`): only a request holding
    # the same credential may apply, re-plan or discard the hunk. None: no credential.
    identity: str | None = None

    def summary(self) -> str:
        again = " (re-planned)" if self.replanned else ""
        return f"hunk {self.hunk_id} prepared{again}: {self.hunk_kind} {self.path}"


class HunkApplied(Event, tag="hunk_applied"):
    """A prepared hunk was written, by the `edit_applied` event at `edit_seq`."""

    path: str
    hunk_id: str
    edit_seq: int
    rebased_from_version: int | None = None

    def summary(self) -> str:
        return f"hunk {self.hunk_id} applied to {self.path} (seq {self.edit_seq})"


class HunkDiscarded(Event, tag="hunk_discarded"):
    """A pending hunk is gone: discarded by its owner, or noticed expired."""

    path: str
    hunk_id: str
    reason: str  # "discarded" | "expired"

    def summary(self) -> str:
        return f"hunk {self.hunk_id} {self.reason} ({self.path})"


class HunkRejected(Event, tag="hunk_rejected"):
    """An `apply_file_modification` or re-plan refused before the file was looked at:
    unknown, expired, another agent's or already applied hunk."""

    hunk_id: str
    tool: str
    code: str
    message: str

    def summary(self) -> str:
        return f"{self.tool} of hunk {self.hunk_id} rejected: {self.code}"


HUNK_EVENTS = (HunkPrepared, HunkApplied, HunkDiscarded, HunkRejected)


class CheckpointCreated(Event, tag="checkpoint_created"):
    """The workspace (or the part `scope` names) as it was, to come back to.

    `manifest`: the blobs (sha256) of its manifest's chunks (daemon/store/manifest.py):
    every file it covers, with its size and its content's blob. `scope`: the paths
    (files or directories) it covers; empty: the whole workspace but what is ignored.
    Within its scope, a file not in the manifest did not exist then. `absent`: named
    paths that did not exist then.

    Journals written before 0.1.0 hold `checkpoint` events (`CheckpointTaken` below):
    the contents inline in `files`, `all_files` for "every file the journal knew"."""

    name: str
    manifest: list[str] = []
    scope: list[str] = []
    file_count: int = 0  # files in the manifest (those not text included)
    total_bytes: int = 0
    not_text: int = 0  # files it lists but does not hold: binary, not UTF-8, too large
    files: dict[str, str] = {}  # (old journals) path -> sha256
    absent: list[str] = []
    all_files: bool = False  # (old journals)
    # a harness prompt's checkpoint (`<agent>/turn-<n>`): the prompt's text, kept only
    # when the workspace's config.toml allows it ([prompts] store_text)
    prompt: str | None = None

    def summary(self) -> str:
        n = self.file_count or len(self.files)
        return f"checkpoint {self.name!r}: {n} file{'s' * (n != 1)}"


class CheckpointTaken(CheckpointCreated, tag="checkpoint"):
    """A checkpoint as journals before 0.1.0 recorded it (kind `checkpoint`); read, never
    written."""


class CheckpointRestored(Event, tag="checkpoint_restored"):
    """A restore of checkpoint `checkpoint` finished: it groups the `edit_applied`
    events (writer `restore`) it made, one per file, by seq (`files`: path -> seq)."""

    checkpoint: int
    name: str
    files: dict[str, int] = {}  # path -> seq of its edit_applied (writer "restore")
    removed: list[str] = []  # of `files`: files removed (new since the checkpoint)
    kept_new: list[str] = []  # new since the checkpoint, kept (remove_new not asked)
    unchanged: list[str] = []  # already as the checkpoint has them (the first 100)
    kept_new_count: int = 0  # how many in all (the lists stop at 100)
    unchanged_count: int = 0
    left_alone: list[str] = []  # changed since, not text: not restored (the first 100)

    def summary(self) -> str:
        n = len(self.files)
        return f"restored checkpoint {self.name!r} (seq {self.checkpoint}): {n} file(s) written"


class CheckpointsPruned(Event, tag="checkpoints_pruned"):
    """Checkpoints dropped from the list by a retention rule (a session's prompt
    checkpoints beyond the newest `keep`): they can no longer be listed or restored.
    Their `checkpoint_created` events stay, and so does every blob those name (the
    journal deletes no blob): a content another checkpoint or event shares is never lost."""

    ids: list[int]  # seqs of their `checkpoint_created` events
    names: list[str]
    keep: int = 0  # the retention that pruned them: the newest this many kept

    def summary(self) -> str:
        n = len(self.ids)
        return f"pruned {n} checkpoint{'s' * (n != 1)} (kept the newest {self.keep})"


CHECKPOINT_EVENTS = (CheckpointCreated, CheckpointRestored, CheckpointsPruned)


class RequestAnswered(Event, tag="request_answered"):
    """A request that carried an `idempotency_key` changed something and was answered:
    its reply is kept, so a retry with the same key gets this reply again instead of
    doing the work twice — after a restart too, since the journal keeps it. The newest
    answer of a key is the one a retry gets (`amends`: daemon/model/idempotency.py)."""

    key: str
    method: str
    request_sha256: str  # of method and params: a key reused for another request is refused
    reply: bytes  # the Response as the daemon encoded it (its bulk left out past 4 KiB)
    # set when this answer corrects the one staged with the write's commit (at this seq):
    # the write's reply as it landed (refused, say), or as start-up recovery left it
    amends: int | None = None
    # the keyed request's identity (`schemas.wire.identity_of`): keys are per (agent,
    # identity), so a request naming the agent without its credential has keys of its own
    identity: str | None = None

    def summary(self) -> str:
        if self.amends is not None:
            return (
                f"{self.method} answer amended (idempotency key {self.key[:24]}):"
                f" the write's real outcome corrects seq {self.amends}"
            )
        return f"{self.method} answered (idempotency key {self.key[:24]})"


def _local_time(ms: int) -> str:
    """As `editjournal log` shows times: local, to the second."""
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ms / 1000))


AnyEvent = Union[  # noqa: UP007 - a runtime value
    DaemonStarted,
    DaemonStopped,
    FileRead,
    EditApplied,
    EditRejected,
    OutsideChangeRecorded,
    HunkPrepared,
    HunkApplied,
    HunkDiscarded,
    HunkRejected,
    CheckpointCreated,
    CheckpointTaken,
    CheckpointRestored,
    RequestAnswered,
    CheckpointsPruned,
]


class Record(msgspec.Struct, kw_only=True, frozen=True):
    """An event as committed: its place in the one order, who caused it, its chain link."""

    seq: int
    ts: int  # milliseconds since the epoch
    agent: str | None
    event: AnyEvent
    prev_hash: str
    hash: str

    @property
    def kind(self) -> str:
        return self.event.kind

    @property
    def path(self) -> str | None:
        return self.event.path


EVENT_ENCODER = msgspec.msgpack.Encoder()
EVENT_DECODER: msgspec.msgpack.Decoder[Any] = msgspec.msgpack.Decoder(AnyEvent)
