"""The one writing path: every writing tool is a planner plugged into it.

A writing tool (`edit`, `safe_patch`, and the ones to come) only decides what
the new content is: given the file as the request found it (`Target`), its
planner returns splices (`Planned`) in the coordinates of the content it planned
against — the current one, or an older version the journal stored — each with
the lines it relies on, or raises a `ToolError` refusal. Everything else happens
here, once, the same way for every tool: reading and fingerprinting the file,
noticing an outside change, carrying the splices to the current content or the
one stale refusal (`carried`), the agent's snapshot, applying the splices with
line endings, BOM and final newline kept, the safety check, the `Write` guarded
by `based_on`, the
`edit_applied` / `edit_rejected` events with the writer type, the agent's
snapshot and unseen-line bookkeeping, and `baseline_continuity`. Rejections
are journaled too, with the content they were checked against.

What it must never do: decide what an operation means (that is the planner's),
or touch the disk (the server performs the `Write` after the commit).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from editjournal.daemon.contract.outcome import ABSENT, Outcome, Write
from editjournal.daemon.files.textcache import Parsed
from editjournal.daemon.settings.config import write_access_denied
from editjournal.daemon.settings.limits import clip_text
from editjournal.daemon.text.anchors import Anchors, anchored
from editjournal.daemon.text.deferral import too_big
from editjournal.daemon.text.diff import MAX_CHANGED_LINES, anchored_diff
from editjournal.daemon.text.edit import EditPlan, apply_plan
from editjournal.daemon.text.linehashes import Change
from editjournal.daemon.text.lines import Document, render
from editjournal.daemon.text.patch import with_final_newline
from editjournal.daemon.text.ranges import LineRanges, carried_unseen, normalized
from editjournal.daemon.text.rebase import BrokenSpan, LineMap, ambiguous_seams, map_plan
from editjournal.daemon.text.region import changed_region
from editjournal.daemon.text.replace import common_ends
from editjournal.daemon.text.safety import SafetyWarning, brackets_matter, check_edit
from editjournal.daemon.writing.ahead import planned_ahead
from editjournal.daemon.writing.history import Base
from editjournal.daemon.writing.seen import after_own_write, after_showing
from editjournal.daemon.writing.stale import (
    conflicts_of,
    named,
    shown_lines,
    stale_error,
)
from editjournal.daemon.writing.target import EMPTY_SHA256, Target
from editjournal.schemas.errors import ErrorCode, ToolError
from editjournal.schemas.events import AnyEvent, EditApplied, EditRejected
from editjournal.schemas.tools import AnchoredLine, AutoCorrection, EditDetails

_NEWLINE_ADDED = (
    "final_newline_added",
    "The last line is now empty, which a file without a final newline cannot hold:"
    " the file now ends with a newline.",
)


@dataclass(frozen=True)
class Planned:
    """A planner's answer: splices in the coordinates of the content it planned against.

    That is the current content, or (`against`) an older version the journal stored:
    the agent's snapshot, the version a diff or a prepared hunk was made from. The
    path carries such a plan to the current content (`daemon.text.rebase`): each
    splice's `targets` are the lines it relies on (an insertion without targets
    relies on its position); `context` are lines the writer used only to find its
    place, which may have changed since without stopping it (the reply says so).
    """

    plan: EditPlan
    against: Base | None = None  # the older content the plan was made in, if any
    context: tuple[int, ...] = ()  # 1-based lines of `against` used only to find the change
    final_newline: bool | None = None  # stated by the tool; None keeps the file's own
    delete: bool = False  # the file is removed (the plan must leave it empty)
    # the planner's own check of the document the plan produced (a ToolError refuses it)
    check: Callable[[Document], None] | None = None
    # the whole result, endings and BOM included, when the tool states it byte for byte
    # (restore, undo); the plan's splices must turn the current lines into its lines
    document: Document | None = None
    unseen: LineRanges | None = None  # lines of the current content the agent was not shown
    # (the path sets it; None: the agent never saw the file)
    reply: Mapping[str, Any] = field(default_factory=dict)  # the planner's own reply fields
    # A move: the new content goes to `moved_to` (another job of the same `write_all`
    # writes it there, with `moved_from`) and this path is removed; both are journaled so
    # history and blame follow the file across the rename.
    moved_to: str | None = None
    moved_from: str | None = None
    # the splices were placed by text (old_string, a hunk), not named line by line: a
    # change beside an identical line could be aligned on either (`rebase.ambiguous_seams`)
    by_text: bool = False

    @property
    def removes(self) -> bool:
        """The file at this path is gone afterwards (deleted, or moved away)."""
        return self.delete or self.moved_to is not None


class Writer(Protocol):
    """One writing tool: its writer type, what it asks, its planner and its reply."""

    @property
    def name(self) -> str:
        """The writer type journaled and reported (`edit`, `safe_patch`, ...)."""
        ...

    @property
    def stale(self) -> Stale:
        """How its stale refusal is worded: the error code, and what a part is called."""
        ...

    @property
    def skip_safety_check(self) -> bool: ...

    @property
    def operations(self) -> list[dict[str, Any]]:
        """The request as the journal records it."""
        ...

    def plan(self, target: Target) -> Planned:
        """The new content as splices, or a `ToolError` refusal."""
        ...

    def explain(self, target: Target, error: ToolError) -> ToolError:
        """Make a refusal as useful as the journal allows (conflicts, delta, state)."""
        ...

    def result(self, written: Written) -> Any:
        """The tool's reply to an applied write."""
        ...


@dataclass(frozen=True)
class Written:
    """What the shared path wrote, for the tool's reply."""

    target: Target
    planned: Planned
    doc: Document
    data: bytes
    sha256: str
    anchors: Anchors
    diff: str  # the changed region, new lines as LINE#ANCHOR rows
    added: list[int]  # 1-based new lines the diff shows as added
    valid_through: int  # old anchors still name the same lines up to here
    safety: str  # "clean" | "skipped" | "overridden"
    continuity: str  # "clean" | "mixed"
    auto_corrections: tuple[tuple[str, str], ...] = ()
    findings: list[SafetyWarning] = field(default_factory=list)
    # the reply's `changed_lines`, made with the diff (a big file's in its job, not in the
    # final run: 200,000 of them were 1 s of it), at most MAX_CHANGED_LINES
    shown: list[AnchoredLine] = field(default_factory=list)

    @property
    def version(self) -> int:
        return self.target.request_version

    @property
    def lines_written(self) -> list[tuple[int, int]]:
        """The 1-based spans of the new content the write's splices put there."""
        spans, shift = [], 0
        for s in self.planned.plan.splices:
            if s.new_lines:
                first = s.start + shift + 1
                spans.append((first, first + len(s.new_lines) - 1))
            shift += len(s.new_lines) - (s.end - s.start)
        return spans

    @property
    def changed_lines(self) -> list[AnchoredLine]:
        """The lines the write added, with their new anchors (the first
        `MAX_CHANGED_LINES`: the diff says how many more there are)."""
        return self.shown

    @property
    def corrections(self) -> list[AutoCorrection]:
        return [AutoCorrection(type=t, detail=d) for t, d in self.auto_corrections]

    def details(self, writer: str) -> EditDetails:
        valid = self.valid_through
        return EditDetails(
            writer_type=writer,
            baseline_continuity=self.continuity,
            anchors_valid_through=valid,
            must_refresh_from_line=valid + 1,
        )

    def reply_fields(self, writer: str) -> dict[str, Any]:
        """The fields every writing tool's result shares, so each tool adds only its own."""
        before, after = self.target.doc.line_count, self.doc.line_count
        return {
            "lines_before": before,
            "lines_after": after,
            "net_change": after - before,
            "anchors_valid_through": self.valid_through,
            "must_refresh_from_line": self.valid_through + 1,
            "diff": self.diff,
            "changed_lines": self.changed_lines,
            "auto_corrections": self.corrections,
            "safety_check": self.safety,
            "details": self.details(writer),
        }


def write(target: Target, writer: Writer, warnings: list[str]) -> Outcome:
    """Plan, check and write: an applied or a rejected outcome, both journaled.

    A big file's write is planned ahead (daemon.writing.ahead): the request is parked
    while a job runs `Readying`'s phases a slice at a time, and this run takes the plan
    made there, unless the file or the journal's view of it moved on since."""
    denied = write_access_denied(target.ctx.workspace.state_dir, target.ctx.agent)
    if denied is not None:  # before planning: a read-only agent learns nothing from a write
        return rejected(target, writer, denied, warnings)
    unwritable = target.replace_refused()
    if unwritable is not None:  # before planning, as the landing would refuse it after
        return Outcome(error=writer.explain(target, unwritable), warnings=warnings)
    check_lines = getattr(writer, "check_lines", None)
    if check_lines is not None:  # a whole content past the line limit: refused unplanned
        check_lines(target.ctx.cache.max_lines, target.path)
    if too_big(max(target.doc.line_count, getattr(writer, "lines_written", 0))):
        target.parsed.index  # noqa: B018 - a big file's index, built in a job before planning
        kept = planned_ahead(target, writer, lambda: Readying(target, writer))
        if kept is not None:
            return applied(replace(kept, target=target), writer, warnings)
    readying = Readying(target, writer)
    try:
        readying.refusable()
    except ToolError as e:
        return rejected(target, writer, writer.explain(target, e), warnings)
    readying.rest()
    assert readying.written is not None
    return applied(readying.written, writer, warnings)


class Readying:
    """`write`'s work from the plan to the `Written`, as phases of bounded work.

    Run at once by `write`; or a phase at a time by a job (daemon.handlers.aheadjob),
    which retries a phase that stopped for an index structure (`Deferred`) once the
    structure is built: each phase sets its attributes only when it is through, so
    running it again is safe. A `ToolError` of the first phases is a refusal."""

    def __init__(self, target: Target, writer: Writer) -> None:
        self.target, self.writer = target, writer
        self.planned: Planned | None = None
        self.new_doc: Document | None = None
        self.corrections: tuple[tuple[str, str], ...] = ()
        self.findings: list[SafetyWarning] = []
        self.content: tuple[bytes, str, Parsed] | None = None
        self.written: Written | None = None

    @property
    def phases(self) -> tuple[Callable[[], None], ...]:
        return (self._prepare, self._plan, self._apply, self._check, self._content, self._diff)

    def refusable(self) -> None:
        """The phases that may refuse the write (a `ToolError`)."""
        for phase in self.phases[:4]:
            phase()

    def rest(self) -> None:
        for phase in self.phases[4:]:
            phase()

    def _prepare(self) -> None:
        """A writer's own first step, when it has one (`safe_patch` parses its diff, which
        it keeps): a phase of its own."""
        prepare = getattr(self.writer, "prepare", None)
        if prepare is not None:
            prepare()

    def _plan(self) -> None:
        target, writer = self.target, self.writer
        planned = carried(target, writer.stale, writer.plan(target))
        _refuse_nul(planned.plan, writer.stale.part)
        self.planned = planned

    def _apply(self) -> None:
        assert self.planned is not None
        new_doc, corrections = _applied_doc(self.target.doc, self.planned)
        if self.planned.check is not None:
            self.planned.check(new_doc)
        self.new_doc, self.corrections = new_doc, corrections

    def _check(self) -> None:
        """The safety check (refusing unless the writer skips it)."""
        assert self.planned is not None
        findings: list[SafetyWarning] = []
        splices, path = self.planned.plan.splices, self.target.path
        moved = sum(s.end - s.start + len(s.new_lines) for s in splices)
        # a check the writer skips is only reported; past UNCHECKED_FROM lines it is not
        # made (a 200,000-line rewrite's: 0.4 s of the thread, its findings moot)
        skipped = self.writer.skip_safety_check and moved > UNCHECKED_FROM
        if not self.planned.delete and not skipped:
            findings = check_edit(self.target.doc.lines, splices, brackets_matter(path))
        if findings and not self.writer.skip_safety_check:
            raise unsafe(findings)
        self.findings = findings

    def _content(self) -> None:
        """The new content's bytes, hash and parsed form, its anchors derived from the
        old ones in O(change)."""
        assert self.planned is not None and self.new_doc is not None
        target, planned, new_doc = self.target, self.planned, self.new_doc
        data = render(new_doc).encode("utf-8", "surrogatepass")
        sha = hashlib.sha256(data).hexdigest()
        changes = [(s.start, s.end, len(s.new_lines)) for s in planned.plan.splices]
        # anchors in O(change); `apply_plan` made the lines from exactly these splices (a
        # tool's own document is compared with the lines it came from instead)
        verified = planned.document is None
        cache = target.ctx.cache
        parsed = cache.put(sha, new_doc, target.parsed, changes, target.path, len(data), verified)
        parsed.anchors  # noqa: B018 - derived here: a big file's in a job's steps
        self.content = (data, sha, parsed)

    def _diff(self) -> None:
        assert self.planned is not None and self.new_doc is not None and self.content is not None
        target, writer, planned, new_doc = self.target, self.writer, self.planned, self.new_doc
        data, sha, parsed = self.content
        changes = [(s.start, s.end, len(s.new_lines)) for s in planned.plan.splices]
        known = _untouched(target, planned, changes)
        region = changed_region(target.doc.lines, new_doc.lines, known)
        exact = changes if planned.document is None else None
        diff, added = anchored_diff(target.doc.lines, new_doc.lines, parsed.anchors, region, exact)
        valid_through = _anchors_valid_through(target, parsed, region.start)
        findings = self.findings
        safety = "overridden" if findings else ("skipped" if writer.skip_safety_check else "clean")
        anchors, lines = parsed.anchors, new_doc.lines
        shown = [anchored(anchors[n - 1], lines[n - 1]) for n in added[:MAX_CHANGED_LINES]]
        self.written = Written(
            target, planned, new_doc, data, sha, anchors, diff, added, valid_through,
            safety, _continuity(target, writer.name), self.corrections, findings, shown,
        )  # fmt: skip

    def progress(self) -> tuple[dict[str, bytes], list[Write]]:
        """The contents to keep and the write to prepare before the final run (a job's
        last planning slice hands them over: the final commit then only names them)."""
        assert self.written is not None
        return _blobs(self.target, *_left(self.written)), [_write(self.target, self.written)]


def applied(written: Written, writer: Writer, warnings: list[str]) -> Outcome:
    """The applied outcome of a write planned to the end: its events, contents, write."""
    target, planned = written.target, written.planned
    warnings = [*warnings, *planned.plan.warnings]
    if written.findings:
        warnings.append("safety check overridden as asked: " + _joined(written.findings))
    return Outcome(
        writer.result(written),
        events=[*target.noticed, _applied_event(written, writer)],
        blobs=_blobs(target, *_left(written)),
        writes=[_write(target, written)],
        warnings=warnings,
    )


@dataclass(frozen=True)
class Stale:
    """A writer's words for its stale refusal."""

    code: ErrorCode = ErrorCode.ANCHOR_STALE
    part: str = "operation"  # what one splice of its plan is to the agent ("hunk", ...)


UNCHECKED_FROM = 20_000  # lines a write moves past which a check it skips is not made
ANCHOR_STALE = Stale()  # `anchor_stale`, per operation: what most writers say


def carried(target: Target, stale: Stale, planned: Planned) -> Planned:
    """The plan in the current content's coordinates, and the lines the agent has not
    been shown; or the one stale refusal, when a line a splice relies on changed since
    the version it was planned against."""
    unseen = target.unseen(target.agent_base)
    base = planned.against
    if base is None:
        return replace(planned, unseen=unseen)
    mapping = base.line_map(target.doc)
    plan, broken = map_plan(planned.plan, mapping)
    if broken:
        ctx, doc, anchors = target.ctx, target.doc, target.anchors
        raise stale_error(ctx, base, doc, anchors, broken, target.version, stale.code, stale.part)
    if planned.by_text:
        _refuse_ambiguous_seams(target, stale, base, planned.plan, mapping)
    agent = target.agent_base
    if agent is None or agent.sha256 != base.sha256:  # lines changed since, nobody showed it
        since = carried_unseen([], mapping, target.doc.line_count)
        unseen = normalized([*(unseen or []), *since])
    notes = _context_carried(target, base, mapping, planned.context)
    plan = replace(plan, auto_corrections=(*plan.auto_corrections, *notes))
    return replace(planned, plan=plan, unseen=unseen)


def _refuse_ambiguous_seams(
    target: Target, stale: Stale, base: Base, plan: EditPlan, mapping: LineMap
) -> None:
    """`anchor_stale` when a change placed by text could be aligned on either of two
    identical lines and another writer changed what one alignment relies on since:
    landing it would guess which line the agent meant."""
    ambiguous = ambiguous_seams(plan, base.doc.lines, mapping)
    if not ambiguous:
        return
    ctx, doc, anchors = target.ctx, target.doc, target.anchors
    spans = [b if b.lines else replace(b, lines=_relied_all(plan, b)) for b in ambiguous]
    error = stale_error(ctx, base, doc, anchors, spans, target.version, stale.code, stale.part)
    error.message += (
        "; its change sits beside an identical line and could be aligned on either, so"
        " which one you meant would be a guess: redo it with the delta's anchors or more"
        " context"
    )
    error.details["reason"] = "ambiguous_seam"
    raise error


def _relied_all(plan: EditPlan, span: BrokenSpan) -> tuple[int, ...]:
    """The lines around the splice a span names (1-based), for the refusal's focus."""
    for splice in plan.splices:
        if splice.index + 1 == span.operation:
            return tuple(n for n in range(splice.start, splice.end + 2) if n >= 1)
    return ()


def _refuse_nul(plan: EditPlan, part: str) -> None:
    """A text file cannot hold a NUL character: no writer writes one (it would make the
    file binary, which every tool then refuses)."""
    for splice in plan.splices:
        if any("\x00" in line for line in splice.new_lines):
            raise ToolError(
                ErrorCode.INVALID_PARAMS,
                f"the new text of {part} {splice.index + 1} contains a NUL character, which a"
                " text file cannot hold: nothing was written",
                {part: splice.index + 1},
            )


def _context_carried(
    target: Target, base: Base, mapping: LineMap, context: Sequence[int]
) -> list[tuple[str, str]]:
    """Say which context lines changed since (and by whom): the change was placed by
    the lines it changes, as the agent may want to check."""
    changed = [n for n in context if mapping[n - 1] is None]
    if not changed:
        return []
    span = BrokenSpan(0, "context", tuple(changed))
    who = named(conflicts_of(target.ctx, base, [span]))
    detail = (
        f"context line(s) {shown_lines(changed)} of version {base.version} changed since"
        + (f" (by {who})" if who else "")
        + ": the change was placed by the lines it changes, which nobody touched"
    )
    return [("context_carried", detail)]


def write_all(jobs: Iterable[tuple[Target, Writer]], warnings: list[str]) -> Outcome:
    """Several files, all or nothing (a restore, a patch): every file's outcome merged,
    its result the list of each writer's result; or, when any file is refused, none is
    written: the refusals and the outside changes noticed are journaled, and the
    first refusal is the error (details.refused lists them all).

    Jobs are planned in order, one after the other, so a later job may be made from
    an earlier one's result (a move's new path from its old path's planned content)."""
    return merge_all([(target, write(target, writer, [])) for target, writer in jobs], warnings)


def merge_all(done: Sequence[tuple[Target, Outcome]], warnings: Sequence[str] = ()) -> Outcome:
    """Planned files' outcomes merged, all or nothing: `write_all`'s second half, also
    used by a many-file write planned a slice at a time (handlers/slicedwrites)."""
    refused = [o for _, o in done if o.error is not None]
    merged = Outcome(result=[], warnings=list(warnings))
    for target, outcome in done:
        if refused and outcome.error is None:
            merged.events.extend(target.noticed)  # facts, whatever happens to the write
            continue
        merged.events.extend(outcome.events)
        merged.blobs.update(outcome.blobs)
        merged.writes.extend(outcome.writes)
        merged.warnings.extend(outcome.warnings)
        merged.result.append(outcome.result)
    if refused:
        merged.writes, merged.result = [], None
        merged.error = _all_refused([o.error for o in refused if o.error is not None])
    return merged


def _all_refused(errors: list[ToolError]) -> ToolError:
    first = errors[0]
    refused = [{"code": e.code.value, "message": e.message, **e.details} for e in errors]
    message = f"{first.message} (nothing was written: all files or none)"
    details = {**first.details, "refused": refused}
    return ToolError(first.code, message, details, first.hint)


def _applied_doc(doc: Document, planned: Planned) -> tuple[Document, tuple[tuple[str, str], ...]]:
    """The new document (endings, BOM and final newline kept unless the tool stated one)."""
    if planned.document is not None:
        return planned.document, planned.plan.auto_corrections
    new_doc = apply_plan(doc, planned.plan)
    corrections = planned.plan.auto_corrections
    if planned.final_newline is not None:
        return with_final_newline(new_doc, planned.final_newline, doc.dominant_ending), corrections
    if new_doc.final_newline and not doc.final_newline:
        corrections = (*corrections, _NEWLINE_ADDED)
    return new_doc, corrections


def _untouched(target: Target, planned: Planned, changes: list[Change]) -> tuple[int, int]:
    """How many first and last lines the splices copied unchanged (none are known when
    the tool made its document itself): `changed_region` need not compare them."""
    if planned.document is not None or not changes:
        return (0, 0)
    first = min(start for start, _, _ in changes)
    return (first, target.doc.line_count - max(end for _, end, _ in changes))


def _applied_event(written: Written, writer: Writer) -> EditApplied:
    target, planned = written.target, written.planned
    line_changes = recorded_changes(target.doc.lines, planned.plan)
    data, sha = _left(written)
    line_count = written.doc.line_count
    if planned.moved_to is not None:  # the content went to the new path: none is left here
        line_changes, line_count = [(0, target.doc.line_count, 0)], 0
    return EditApplied(
        path=target.path,
        writer=writer.name,
        before_sha256=target.snap.sha256,
        after_sha256=sha,
        size=len(data),
        lines_before=target.doc.line_count,
        line_count=line_count,
        operations=writer.operations,
        line_changes=line_changes,
        unseen=after_own_write(planned.unseen, line_changes, target.doc.line_count),
        auto_corrections=[detail for _, detail in written.auto_corrections],
        safety_check=written.safety,
        safety_warnings=[f.message for f in written.findings],
        deleted=planned.removes,
        moved_from=planned.moved_from,
        moved_to=planned.moved_to,
    )


def _left(written: Written) -> tuple[bytes, str]:
    """What the write leaves at its path, and its sha256: the new content, or, for a
    move, nothing (the content is the new path's: this path is removed, as a deletion
    removes it, so undo reads the event as one)."""
    if written.planned.moved_to is not None:
        return b"", EMPTY_SHA256
    return written.data, written.sha256


def recorded_changes(lines: Sequence[str], plan: EditPlan) -> list[tuple[int, int, int]]:
    """The lines the plan really changed: a splice's first and last lines written back
    as they were (a range widened to a good anchor, say) are not changes, so other
    writers' plans that rely on them still carry over this one."""
    changes = []
    for splice in plan.splices:
        start, end, count = _narrowed(splice.start, splice.end, splice.new_lines, lines)
        if end > start or count:
            changes.append((start, end, count))
    return changes


def _narrowed(
    start: int, end: int, new: Sequence[str], lines: Sequence[str]
) -> tuple[int, int, int]:
    """`narrowed_splice`'s span and new line count, without making the narrowed splice
    (a 1,000-hunk write made a thousand)."""
    head, tail = common_ends(lines[start:end], new)
    return start + head, end - tail, len(new) - head - tail


def _write(target: Target, written: Written) -> Write:
    """Guarded by the content it was computed from (or by the file's absence)."""
    based_on = target.snap.sha256 if target.exists else ABSENT
    data = None if written.planned.removes else written.data
    base = target.snap.data if target.exists else None
    return Write(target.path, data, based_on, written.sha256, base)


def _anchors_valid_through(target: Target, new: Parsed, first_change: int) -> int:
    """The last line up to which every old anchor still names the same line.

    Usually the line before the first change (0-based `first_change`); earlier when
    the edit made an old anchor ambiguous (say, by inserting a twin of a line above it).
    """
    return new.index.anchors_kept_until(target.parsed.index, first_change)


def _continuity(target: Target, writer: str) -> str:
    """ "mixed" once more than one writer type changed the file (this request's noticed
    outside change and this write included), "clean" while one only did."""
    known = target.ctx.state.files.get(target.path)
    writers = set(known.writers if known else ()) | {writer}
    if target.noticed:
        writers.add("outside")
    return "clean" if len(writers) <= 1 else "mixed"


def _blobs(target: Target, after: bytes, after_sha: str) -> dict[str, bytes]:
    """Before and after contents, each stored once, so the write can be replayed."""
    blobs = {after_sha: after}
    if not target.ctx.journal.has_blob(target.snap.sha256):
        blobs[target.snap.sha256] = target.snap.data
    return blobs


def unsafe(findings: list[SafetyWarning]) -> ToolError:
    return ToolError(
        ErrorCode.SAFETY_CHECK_FAILED,
        f"the edit was not written: {_joined(findings)}",
        {
            "safety_warnings": [
                {"kind": f.kind, "operation": f.operation, "message": f.message} for f in findings
            ]
        },
    )


def _joined(findings: list[SafetyWarning]) -> str:
    return "; ".join(f.message for f in findings)


def rejected(target: Target, writer: Writer, error: ToolError, warnings: list[str]) -> Outcome:
    """An error reply, journaled with the content it was checked against. An error that
    showed the agent the current content (a delta, or the whole content) advances its
    snapshot: what it was not shown stays unseen."""
    shown = _shown(target, error)
    unseen: list[tuple[int, int]] = []
    if shown is not None:
        unseen = after_showing(target.unseen(), shown, target.doc.line_count)
    event = EditRejected(
        path=target.path,
        writer=writer.name,
        sha256=target.snap.sha256 if target.exists else None,
        code=error.code.value,
        message=error.message,
        # a rejection must not cost its payload: long texts are journaled clipped
        details=clip_text(error.details),
        operations=clip_text(writer.operations),
        shown_sha256=target.snap.sha256 if shown is not None else None,
        unseen=unseen,
    )
    events: list[AnyEvent] = [*target.noticed, event]
    blobs: dict[str, bytes] = {}
    if target.exists and not target.ctx.journal.has_blob(target.snap.sha256):
        blobs[target.snap.sha256] = target.snap.data
    return Outcome(events=events, blobs=blobs, warnings=warnings, error=error)


def _shown(target: Target, error: ToolError) -> Sequence[int] | None:
    """The lines of the current content the error showed the agent, if it showed any."""
    if not target.exists:
        return None
    state = error.details.get("latest_file_state")
    if isinstance(state, dict) and state.get("content") is not None:
        return range(1, target.doc.line_count + 1)
    delta = error.details.get("delta")
    if delta is not None:
        return [row["line"] for row in delta["changed_lines"]]
    return None
