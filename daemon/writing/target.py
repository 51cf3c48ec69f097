"""The file as a writing request found it: what every planner plans against.

`open_target` reads and fingerprints the file once per request (through the
file-access layer), notices an outside change since the journal's view, and
hands the content, its parsed lines and anchors, and the agent's snapshot to
the planner and to the writing path (`daemon.writing.path`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property

from editjournal.daemon.contract.context import Context
from editjournal.daemon.files.filesnapshot import EMPTY_SHA256, FileSnapshot
from editjournal.daemon.files.textcache import Parsed
from editjournal.daemon.text.anchors import Anchors
from editjournal.daemon.text.edit import EditPlan
from editjournal.daemon.text.lines import Document
from editjournal.daemon.text.ranges import LineRanges
from editjournal.daemon.watch.onaccess import outside_change
from editjournal.daemon.writing.history import Base
from editjournal.daemon.writing.known import known_versions, others_changed, stale_from_given
from editjournal.daemon.writing.seen import unseen_now
from editjournal.daemon.writing.stale import agent_base
from editjournal.schemas.errors import ErrorCode, ToolError
from editjournal.schemas.events import AnyEvent, OutsideChangeRecorded


@dataclass(frozen=True)
class Target:
    """The file as this request found it: what a planner plans against."""

    ctx: Context
    snap: FileSnapshot
    parsed: Parsed
    noticed: list[AnyEvent]  # an outside change noticed on the way (recorded first)
    exists: bool = True  # False: no such file; `snap` is then the empty content

    @property
    def doc(self) -> Document:
        return self.parsed.doc

    @property
    def anchors(self) -> Anchors:
        return self.parsed.anchors

    @property
    def path(self) -> str:
        return self.snap.path

    @property
    def version(self) -> int:
        """The version of the content on disk: a just-noticed change gets the next seq."""
        known = self.ctx.state.files.get(self.snap.path)
        if self.noticed or known is None:
            return self.ctx.next_seq
        return known.version

    @property
    def request_version(self) -> int:
        """The seq this request's own event (applied or rejected) will get."""
        return self.ctx.next_seq + len(self.noticed)

    @cached_property
    def agent_base(self) -> Base | None:
        """The agent's snapshot, when it differs from the current content (and is stored)."""
        return agent_base(self.ctx, self.snap, self.noticed)

    def replace_refused(self) -> ToolError | None:
        """`read_only_file` when the file had no write bit as it was read: checked before
        a writer parses and plans the request, so refusing a big write costs O(1), not
        O(size). The mode comes with the read; only a read-only file pays the confined
        check that words the refusal (~0.1 ms, which every write paid when each checked).
        None: the write's own checks decide, as they do for every other refusal."""
        if not self.exists or not self.snap.read_only:
            return None
        try:
            self.ctx.workspace.check_may_replace(self.path)
        except ToolError as e:
            return e
        return None

    @cached_property
    def known(self) -> tuple[Base, ...]:
        """Where a text writer looks for its text after the current content: the agent's
        view (its read with its own writes), then its snapshot (`daemon.writing.known`).
        Built on first use only: most writes find their text in the current content."""
        return tuple(known_versions(self.ctx, self.snap, self.noticed, self.doc, self.agent_base))

    @cached_property
    def others_changed(self) -> bool:
        """Someone but the agent changed the file since its latest read."""
        return others_changed(self.ctx, self.path, self.noticed)

    def stale_from_given(
        self,
        plan_in: Callable[[Base], tuple[EditPlan, Sequence[int]] | None],
        part: str = "operation",
        code: ErrorCode = ErrorCode.ANCHOR_STALE,
    ) -> ToolError | None:
        """The stale refusal for text found only in an older version the agent was given."""
        skip = {self.snap.sha256} | {known.sha256 for known in self.known}
        ctx, snap, noticed = self.ctx, self.snap, self.noticed
        return stale_from_given(
            ctx, snap, noticed, self.parsed, self.version, skip, plan_in, part, code
        )

    def unseen(self, base: Base | None = None) -> LineRanges | None:
        """Lines of the current content the agent has not been shown (None: never saw it)."""
        return unseen_now(self.ctx, self.snap, self.noticed, self.doc, base)


def open_target(ctx: Context, path: str, missing_ok: bool = False) -> Target:
    """Read and fingerprint the file, noticing an outside change since the journal's view.

    `missing_ok`: a file that does not exist is the empty content (a tool that can
    create files); otherwise `file_not_found` is raised, journaling nothing.
    """
    try:
        # through the read cache: a file unchanged by its stat, or holding exactly the bytes
        # the daemon last read or wrote there, is not decoded and hashed again (the landing
        # compares bytes with this content once more before the write goes in)
        snap = ctx.cache.files.read(ctx.workspace, path)
    except ToolError as e:
        if not missing_ok or e.code is not ErrorCode.FILE_NOT_FOUND:
            raise
        return _absent(ctx, ctx.workspace.relative(path))
    parsed = ctx.cache.parsed(snap.sha256, snap.text, snap.path)
    noticed: list[AnyEvent] = list(outside_change(ctx.state, snap, parsed.doc.line_count))
    return Target(ctx, snap, parsed, noticed)


def _absent(ctx: Context, rel: str) -> Target:
    """No file: the empty content, and its deletion noticed if the journal thinks it exists."""
    snap = FileSnapshot(rel, b"", "", EMPTY_SHA256, 0, 0)
    known = ctx.state.files.get(rel)
    noticed: list[AnyEvent] = []
    if known is not None and known.sha256 is not None:
        gone = OutsideChangeRecorded(
            path=rel, change="deleted", old_sha256=known.sha256, new_sha256=None
        )
        noticed.append(gone)
    return Target(ctx, snap, ctx.cache.parsed(EMPTY_SHA256, ""), noticed, exists=False)
