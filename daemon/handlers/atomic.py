"""Atomic text tools: `edit_file`, `append_to_file`, `prepend_to_file`, `update_section`,
`write_file` — planners on the shared writing path.

They serve agents that cannot hold a file in context: the daemon does the
read-modify-write. Each tool only decides the new content (the pure engine in
`daemon.text.replace` and `daemon.text.sections`); `daemon.writing.path`
reads, checks, writes and journals it exactly as for `edit`. What the journal
adds: an agent that has a snapshot of the file cannot clobber what it never
saw — an `edit_file` or `update_section` whose matched lines changed since (by
someone else) is refused `anchor_stale`, naming who changed them and handing
over the delta; agents that never read the file keep the plain semantics. A
`write_file` over content the agent has not seen is written, with a warning
naming what it overwrote. Like the prepare tools, every file they write ends with
a newline (`final_newline=True`); the reply says when that added one.

What it must never do: re-implement a step of the writing path, or touch the disk.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import msgspec

from editjournal.daemon.contract.context import Context
from editjournal.daemon.contract.outcome import Outcome
from editjournal.daemon.handlers import handles
from editjournal.daemon.handlers.aheadjob import planned_in_slices
from editjournal.daemon.handlers.offthread import OffThreadJob
from editjournal.daemon.text.anchors import anchored
from editjournal.daemon.text.edit import EditPlan, Splice
from editjournal.daemon.text.lines import Document
from editjournal.daemon.text.replace import (
    Joined,
    added_lines,
    all_starts,
    find_all,
    matched_lines,
    narrowed_splice,
    newline_added,
    normalized,
    overlapped,
    plan_replace,
    similar_lines,
)
from editjournal.daemon.text.safety import quoting
from editjournal.daemon.text.sections import SLOW_FROM, find_section, headers, known, plan_section
from editjournal.daemon.writing.ahead import WholeContent
from editjournal.daemon.writing.guards import (
    overwrite_warning,
    overwritten_unseen,
    refuse_unseen,
)
from editjournal.daemon.writing.history import Base
from editjournal.daemon.writing.located import located
from editjournal.daemon.writing.path import ANCHOR_STALE, Planned, Stale, Writer, Written, write
from editjournal.daemon.writing.stale import (
    shown_lines,
)
from editjournal.daemon.writing.target import Target, open_target
from editjournal.schemas.errors import ErrorCode, ToolError
from editjournal.schemas.tools import (
    AppendToFileParams,
    AtomicResult,
    EditFileParams,
    PrependToFileParams,
    UpdateSectionParams,
    WriteFileParams,
)

SIMILAR_SHOWN = 4  # lines shown of each similar window of a no_match: a hint, kept small
WRITER_FILE = "write_file"
ATOMIC_HINT = "prefer edit_file, append_to_file or update_section to change part of a file"


@handles("edit_file")
@planned_in_slices
def edit_file(ctx: Context, params: EditFileParams) -> Outcome:
    return write(open_target(ctx, params.path), _EditFile(params), [])


@handles("append_to_file")
@planned_in_slices
def append_to_file(ctx: Context, params: AppendToFileParams) -> Outcome:
    add = _Add(params, "append_to_file", at_end=True)
    return write(open_target(ctx, params.path, missing_ok=True), add, [])


@handles("prepend_to_file")
@planned_in_slices
def prepend_to_file(ctx: Context, params: PrependToFileParams) -> Outcome:
    add = _Add(params, "prepend_to_file", at_end=False)
    return write(open_target(ctx, params.path, missing_ok=True), add, [])


@handles("update_section")
@planned_in_slices
def update_section(ctx: Context, params: UpdateSectionParams) -> Outcome:
    """A big document's headers are found first on the worker thread (a parse of a
    180,000-line file: 2 s), the request parked meanwhile; then written as any write."""
    target = open_target(ctx, params.path)
    key = target.snap.sha256
    if target.doc.line_count >= SLOW_FROM and not known(key):
        lines = target.doc.lines
        return Outcome(job=OffThreadJob(lambda: headers(lines, key)))
    return write(target, _Section(params), [])


@handles("write_file")
@planned_in_slices
def write_file(ctx: Context, params: WriteFileParams) -> Outcome:
    target = open_target(ctx, params.path, missing_ok=True)
    overwrote = overwritten_unseen(target)
    hint = f"{ATOMIC_HINT}, or read the file first"
    warned = [] if overwrote is None else [overwrite_warning(target, overwrote, WRITER_FILE, hint)]
    return write(target, _WriteFile(params, overwrote=tuple(overwrote or ())), warned)


@dataclass(frozen=True)
class _Atomic:
    """What every atomic tool shares: its journal record, refusals and reply."""

    params: Any
    name: str = ""
    stale: Stale = ANCHOR_STALE
    plans_ahead = True  # a big file's write is planned in a job (daemon.writing.ahead)

    @property
    def skip_safety_check(self) -> bool:
        return bool(getattr(self.params, "skip_safety_check", False))

    @property
    def operations(self) -> list[dict[str, Any]]:
        return [{"op": self.name, **msgspec.to_builtins(self.params)}]

    def explain(self, target: Target, error: ToolError) -> ToolError:
        return error

    def message(self, written: Written) -> str:
        return f"{self.name} applied to {written.target.path}"

    def result(self, written: Written) -> AtomicResult:
        target = written.target
        return AtomicResult(
            message=self.message(written),
            file_path=target.path,
            version=written.version,
            sha256=written.sha256,
            **written.reply_fields(self.name),
            created=not target.exists,
            lines=written.lines_written,
            **written.planned.reply,
        )


@dataclass(frozen=True)
class _EditFile(_Atomic):
    name: str = "edit_file"

    def plan(self, target: Target) -> Planned:
        """Exactly the expected number of matches, where the text writers' search finds
        them (`daemon.writing.located`: the current content, the agent's view, the text
        alone); the writing path carries a plan made in the agent's view over what
        changed since, a stale edit like any other. Only the lines the replacement
        changes are relied on; the rest of old_string is context."""
        old, new = normalized(self.params.old_string), normalized(self.params.new_string)
        expected = self.params.expected_replacements or 1

        def plan_in(base: Base | None) -> Planned | None:
            joined = Joined.of(target.doc if base is None else base.doc)
            offsets = find_all(joined, old)
            if len(offsets) != expected or overlapped(joined, old, offsets):
                return None
            return _replaced(joined, offsets, old, new, base, target.doc)

        planned = located(target, plan_in)
        if planned is not None:
            return planned
        stale = target.stale_from_given(lambda given: _found_in(given, old, new, expected))
        if stale is not None:
            raise stale
        joined = Joined.of(target.doc)
        offsets = find_all(joined, old)
        if not offsets:
            raise _no_match(target, old)
        if overlapped(joined, old, offsets):
            offsets = all_starts(joined, old)
        spans = matched_lines(joined, offsets, len(old))
        raise _multiple(target, spans, expected, self.params.expected_replacements)

    def message(self, written: Written) -> str:
        n = written.planned.reply["replacements"]
        return f"Edited {written.target.path}: {n} replacement{'s' * (n != 1)}"


def _found_in(
    base: Base, old: str, new: str, expected: int
) -> tuple[EditPlan, tuple[int, ...]] | None:
    """The replacement planned in an older version the agent was given, if the text is
    there as often as expected."""
    joined = Joined.of(base.doc)
    offsets = find_all(joined, old)
    if len(offsets) != expected or overlapped(joined, old, offsets):
        return None
    planned = _replaced(joined, offsets, old, new, base, base.doc)
    return planned.plan, planned.context


def _replaced(
    joined: Joined, offsets: list[int], old: str, new: str, base: Base | None, now: Document
) -> Planned:
    """The replacements as splices of the lines they change, in `joined`'s content
    (`base`, or the current content `now`); the lines they leave as they were are
    context. The file ends with a newline afterwards, as every text tool leaves it."""
    plan, final = plan_replace(joined, offsets, old, new)
    lines = joined.doc.lines
    narrowed = [narrowed_splice(s, lines) for s in plan.splices]
    context = tuple(n for _, kept in narrowed for n in kept)
    quoted = {n - 1 for n in context}  # what old_string showed of the file: the safety check
    changed = [quoting(s, lines, quoted) for s, _ in narrowed if s.new_lines or s.end > s.start]
    splices = tuple(changed) or plan.splices
    if base is not None:
        final = None  # the end of the file may have moved since: judge the file's own
    left = joined.doc.line_count + sum(len(s.new_lines) - (s.end - s.start) for s in splices)
    notes = newline_added(now, final) if left else ()
    reply = {"replacements": len(offsets)}
    return Planned(EditPlan(splices, notes), base, context, True, reply=reply, by_text=True)


@dataclass(frozen=True)
class _Add(_Atomic):
    """append_to_file (at_end) or prepend_to_file: never relies on a line of the file."""

    at_end: bool = True

    def plan(self, target: Target) -> Planned:
        if self.params.content == "":
            raise ToolError(
                ErrorCode.INVALID_PARAMS,
                f"content is empty: nothing to add to {target.path} - at `$.params.content`",
            )
        doc, lines = target.doc, added_lines(self.params.content)
        ends_newline = normalized(self.params.content).endswith("\n")
        at = doc.line_count if self.at_end else 0
        if self.at_end:
            separated = doc.line_count > 0 and not doc.final_newline
        else:
            separated = doc.line_count > 0 and not ends_newline
        ends = ends_newline if self.at_end or doc.line_count == 0 else None
        splice = Splice(0, self.name, at, at, lines, (at if self.at_end else 1,))
        corrections = (("separator_added", self._separator_note()),) if separated else ()
        plan = EditPlan((splice,), corrections + newline_added(doc, ends))
        return Planned(plan, final_newline=True, reply={"separator_added": separated})

    def _separator_note(self) -> str:
        if self.at_end:
            return "The file did not end with a newline: one was added before the content."
        return "The content did not end with a newline: one was added after it."

    def message(self, written: Written) -> str:
        n = len(added_lines(self.params.content))
        where = "to the end of" if self.at_end else "to the start of"
        return f"Added {n} line{'s' * (n != 1)} {where} {written.target.path}"


@dataclass(frozen=True)
class _Section(_Atomic):
    name: str = "update_section"

    def plan(self, target: Target) -> Planned:
        lines, path = target.doc.lines, target.path
        header, end = find_section(lines, self.params.section_header, path, target.snap.sha256)
        span = (header.start + 1, max(end, header.end))
        refuse_unseen(target, [span], f"section {self.params.section_header!r}", self.name)
        plan = plan_section(lines, header, end, self.params.new_content)
        notes = newline_added(target.doc, None)  # the header stays: never an empty file
        return Planned(EditPlan(plan.splices, notes), final_newline=True)

    def message(self, written: Written) -> str:
        return f"Updated section {self.params.section_header!r} of {written.target.path}"


@dataclass(frozen=True)
class _WriteFile(WholeContent, _Atomic):
    overwrote: tuple[dict[str, Any], ...] = ()
    name: str = "write_file"

    @property
    def skip_safety_check(self) -> bool:
        return True  # the whole content is the agent's: no neighbouring lines to check

    @property
    def operations(self) -> list[dict[str, Any]]:
        """The content itself is the written blob; the record keeps its size."""
        return [{"op": self.name, "path": self.params.path, "size": len(self.params.content)}]

    def plan(self, target: Target) -> Planned:
        content = normalized(self.params.content)
        lines = added_lines(content) if content else ()
        splice = Splice(0, self.name, 0, target.doc.line_count, lines, ())
        notes = newline_added(target.doc, content.endswith("\n")) if content else ()
        reply = {"overwrote_unseen": list(self.overwrote)}
        return Planned(EditPlan((splice,), notes), final_newline=True, reply=reply)

    def message(self, written: Written) -> str:
        verb = "Created" if not written.target.exists else "Written"
        return f"{verb}: {written.target.path} ({len(written.data):,} bytes)"


# --- refusals ------------------------------------------------------------------------------


def _no_match(target: Target, old: str) -> ToolError:
    """`no_match`, with the closest similar lines as a hint (never applied)."""
    doc, anchors = target.doc, target.anchors
    found = similar_lines(doc.lines, old)
    similar = [
        {
            "first_line": first,
            "last_line": last,
            "score": score,
            "lines": [
                msgspec.to_builtins(anchored(anchors[n - 1], doc.lines[n - 1]))
                for n in range(first, min(last, first + SIMILAR_SHOWN - 1) + 1)
            ],
        }
        for first, last, score in found
    ]
    message = (
        f"old_string not found in {target.path}. Make sure it matches exactly (including"
        " whitespace)."
    )
    if found:
        line = found[0][0]
        message += (
            f" Closest similar line: {line} {doc.lines[line - 1]!r} (a hint only; see"
            " details.similar_lines)."
        )
    return ToolError(ErrorCode.NO_MATCH, message, {"path": target.path, "similar_lines": similar})


def _multiple(
    target: Target, spans: list[tuple[int, int]], expected: int, asked: int | None
) -> ToolError:
    n, path = len(spans), target.path
    if asked is None:
        message = (
            f"old_string appears {n} times in {path}. Include more surrounding context to"
            " make it unique."
        )
    else:
        message = (
            f"old_string appears {n} times in {path}, not the {expected} expected_replacements"
            f" asked for. Include more surrounding context, or set expected_replacements to {n}."
        )
    lines = [first for first, _ in spans]
    message += f" It occurs at line{'s' * (n != 1)} {shown_lines(lines)}."
    return ToolError(
        ErrorCode.MULTIPLE_MATCHES, message, {"path": path, "count": n, "lines": lines}
    )


def edit_file_planner(params: EditFileParams, name: str) -> Writer:
    """`edit_file`'s planner under another writer's name: a harness's own Edit tool,
    judged by the daemon before it runs (daemon/handlers/harness.py)."""
    return _EditFile(params, name=name)


def write_file_planner(params: WriteFileParams, name: str) -> Writer:
    """`write_file`'s planner under another writer's name (a harness's own Write tool)."""
    return _WriteFile(params, name=name)
