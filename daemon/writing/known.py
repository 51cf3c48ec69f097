"""The versions of a file an agent knows, where a text writer looks for the text it quotes.

A text writer (`edit_file`, `apply_patch`, `safe_patch`, a harness's Edit) finds
its place by the lines it quotes. Those lines are looked for, in order: in the
file as it is; in what the agent believes the file to be — the version it read
with its own writes applied, without the others' changes it was never shown
(`AgentView`, built by `daemon.text.view`); in its snapshot (the journal's
record of the last version it was given whole). A change found in a version
the agent knows is carried to the current content by the writing path like any
other (landing where the lines it changes are untouched, refused `anchor_stale`
naming who changed them where they are not). Text found only in an older version
it was given (a read before its own later write, a refusal's delta) makes the
stale refusal (`stale_from_given`), so the retry needs no re-read. Reads the
journal; changes nothing.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from editjournal.daemon.contract.context import Context
from editjournal.daemon.files.filesnapshot import FileSnapshot
from editjournal.daemon.files.textcache import Parsed
from editjournal.daemon.text.edit import EditPlan
from editjournal.daemon.text.lines import Document, render
from editjournal.daemon.text.rebase import BrokenSpan, LineMap, map_plan
from editjournal.daemon.text.view import agent_view
from editjournal.daemon.writing.history import Base, ContentChange, base_at
from editjournal.daemon.writing.stale import given_bases, stale_error
from editjournal.schemas.errors import ErrorCode, ToolError
from editjournal.schemas.events import AnyEvent, FileRead, Record

OWN_WRITE = "edit_applied"


@dataclass(frozen=True)
class AgentView(Base):
    """The version the agent read with its own writes applied and nobody else's: not a
    version the file ever had, so its line map to the current content was made while
    building it, and the lines gone from it since know which change took them."""

    read_version: int = 0
    mapping: LineMap = field(default_factory=list)
    changed_by: dict[int, ContentChange | None] = field(default_factory=dict)

    @property
    def label(self) -> str:
        version = self.read_version
        return f"your view of the file (version {version} as you read it, with your edits since)"

    def line_map(self, current: Document) -> LineMap:
        return self.mapping

    def culprits(self, spans: Sequence[Sequence[int]]) -> list[list[ContentChange]]:
        found = []
        for span in spans:
            named = [self.changed_by.get(n - 1) for n in span if n - 1 in self.changed_by]
            known = [c for c in dict.fromkeys(named) if c is not None]
            found.append(known if known and None not in named else list(self.changes))
        return found


def _latest_read(ctx: Context, path: str) -> Record | None:
    reads = ctx.journal.records(
        path=path, agent=ctx.agent, kind="file_read", newest_first=True, limit=1
    )
    read = next(iter(reads), None)
    return read if read is not None and isinstance(read.event, FileRead) else None


def others_changed(ctx: Context, path: str, noticed: list[AnyEvent]) -> bool:
    """Whether anyone but the agent changed the file since its latest read (an outside
    change about to be recorded included): only then can its view and the file disagree
    on where a text is. An agent that never read the file has no view."""
    read = _latest_read(ctx, path)
    if read is None:
        return False
    if any(event.changes_content for event in noticed):
        return True
    since = ctx.journal.records(path=path, after_seq=read.seq)
    return any(r.event.changes_content and r.agent != ctx.agent for r in since)


def view_of(
    ctx: Context, snap: FileSnapshot, noticed: list[AnyEvent], current: Document
) -> Base | None:
    """What the agent believes the file to be: its latest read, with its own writes since
    applied (the read itself when it wrote nothing since); None when it never read the
    file, or the journal did not store what it read."""
    read = _latest_read(ctx, snap.path)
    if read is None or not isinstance(read.event, FileRead):
        return None
    base = base_at(ctx, snap, noticed, read.seq, read.event.content_sha256)
    if base is None:
        return None
    own = [c.agent == ctx.agent and c.kind == OWN_WRITE for c in base.changes]
    if not any(own):
        return base
    view = agent_view(base.doc.lines, base.sha256, base.steps, own, current.lines)
    doc = _document(view.lines, current.final_newline)
    others = [c for c, mine in zip(base.changes, own, strict=True) if not mine]
    changed_by = {n: None if k is None else base.changes[k] for n, k in view.changed_by.items()}
    sha = hashlib.sha256(render(doc).encode("utf-8", "surrogatepass")).hexdigest()
    return AgentView(
        version=read.seq,
        sha256=sha,
        parsed=Parsed(doc),
        changes=others,
        steps=[],
        current=base.current,
        read_version=read.seq,
        mapping=view.to_current,
        changed_by=changed_by,
    )


def _document(lines: tuple[str, ...], final_newline: bool) -> Document:
    endings = ["\n"] * len(lines)
    if endings and not final_newline:
        endings[-1] = ""
    return Document(lines, tuple(endings))


def known_versions(
    ctx: Context,
    snap: FileSnapshot,
    noticed: list[AnyEvent],
    current: Document,
    snapshot: Base | None,
) -> Iterator[Base]:
    """Where the agent's quoted text is looked for after the current content: its view,
    then its snapshot (`snapshot`, when it differs from the current content) if that is
    another content."""
    view = view_of(ctx, snap, noticed, current)
    if view is not None and view.sha256 != snap.sha256:
        yield view
    if snapshot is not None and (view is None or snapshot.sha256 != view.sha256):
        yield snapshot


def same_place(here: EditPlan, known: Base, plan: EditPlan, current: Document) -> bool:
    """Whether a plan made in a version the agent knows lands where the plan found in the
    current content does: then the text is where the agent believes it is."""
    carried, broken = map_plan(plan, known.line_map(current))
    if broken:
        return False
    return [(s.start, s.end) for s in carried.splices] == [(s.start, s.end) for s in here.splices]


def stale_from_given(
    ctx: Context,
    snap: FileSnapshot,
    noticed: list[AnyEvent],
    current: Parsed,
    version: int,
    skip: set[str],
    plan_in: Callable[[Base], tuple[EditPlan, Sequence[int]] | None],
    part: str = "operation",
    code: ErrorCode = ErrorCode.ANCHOR_STALE,
) -> ToolError | None:
    """The stale refusal for text found in no version the agent knows but in an older one
    it was given (`plan_in` plans there: the plan and its context lines, or None when the
    text is not in that version): which of its lines changed since, who changed them, and
    the delta around them. None: the text is in no version it was given."""
    for given in given_bases(ctx, snap, noticed, skip):
        found = plan_in(given)
        if found is None:
            continue
        plan, context = found
        mapping = given.line_map(current.doc)
        broken = map_plan(plan, mapping)[1]
        if not broken:  # its own lines survive; the context it quoted does not
            changed = tuple(n for n in context if mapping[n - 1] is None)
            broken = [BrokenSpan(1, "context", changed or tuple(context))]
        return stale_error(ctx, given, current.doc, current.anchors, broken, version, code, part)
    return None
