"""A committed record as a span: its name, attributes, error and counter increments.

Pure (no SDK, no I/O), so it runs on the export thread and reads only the record it
is given. The GenAI semantic conventions are followed where they fit: a write, a
refusal, a checkpoint and a restore are tool executions by an agent, so their span is
`execute_tool {tool}` with `gen_ai.operation.name = execute_tool`, `gen_ai.tool.name`
and the agent (its session) as `gen_ai.conversation.id`. An outside change is not:
nobody's tool made it, so its span is `editjournal.outside_change` with no `gen_ai.*`
attribute rather than a tool call that never happened. Everything of our own is under
`editjournal.*`. Nothing of a file's content is exported, only paths, counts and hashes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from editjournal.schemas.errors import ErrorCode
from editjournal.schemas.events import (
    CheckpointCreated,
    CheckpointRestored,
    EditApplied,
    EditRejected,
    HunkRejected,
    OutsideChangeRecorded,
    Record,
)

AttributeValue = str | int | bool
EXECUTE_TOOL = "execute_tool"
OUTSIDE_CHANGE_SPAN = "editjournal.outside_change"
STALE_CODES = frozenset({ErrorCode.ANCHOR_STALE.value})
# the kinds exported: everything else (reads, hunks prepared, daemon start/stop,
# keyed replies) stays in the journal only
EXPORTED_KINDS = frozenset(
    {
        "edit_applied",
        "edit_rejected",
        "hunk_rejected",
        "outside_change",
        "checkpoint_created",
        "checkpoint",
        "checkpoint_restored",
    }
)


@dataclass
class SpanFacts:
    """What the exporter needs of one record; `ts_ms` is both the span's start and end
    (the journal keeps when an event was committed, not how long the tool took)."""

    name: str
    ts_ms: int
    attributes: dict[str, AttributeValue]
    error: str | None = None  # the refusal's error code: the span's status is ERROR
    edit_outcome: str | None = None  # "applied" | "rejected": counted in editjournal.edits
    stale: bool = False  # counted in editjournal.stale_refusals
    carried: bool = False  # counted in editjournal.carried_edits
    extra: dict[str, AttributeValue] = field(default_factory=dict)


def describe(record: Record, workspace_id: str) -> SpanFacts | None:
    """The span of an exported kind of record; None for the others."""
    event = record.event
    common: dict[str, AttributeValue] = {
        "editjournal.workspace.id": workspace_id,
        "editjournal.seq": record.seq,
        "editjournal.event.kind": event.kind,
        "editjournal.event.hash": record.hash,
    }
    if event.path is not None:
        common["editjournal.path"] = event.path
    if isinstance(event, OutsideChangeRecorded):
        return SpanFacts(OUTSIDE_CHANGE_SPAN, record.ts, {**common, **_outside(event)})
    tool, facts = _tool_facts(record)
    if tool is None:
        return None
    attributes: dict[str, AttributeValue] = {
        "gen_ai.operation.name": EXECUTE_TOOL,
        "gen_ai.tool.name": tool,
        "gen_ai.tool.type": "function",
        **common,
    }
    if record.agent is not None:
        attributes["gen_ai.conversation.id"] = record.agent
    if facts.error is not None:
        attributes["error.type"] = facts.error
        attributes["editjournal.error.code"] = facts.error
    attributes.update(facts.extra)
    facts.name, facts.ts_ms, facts.attributes = f"{EXECUTE_TOOL} {tool}", record.ts, attributes
    return facts


def _tool_facts(record: Record) -> tuple[str | None, SpanFacts]:
    """The tool that made the event, and what the event adds to its span."""
    event, facts = record.event, SpanFacts("", 0, {})
    if isinstance(event, EditApplied):
        facts.edit_outcome, facts.carried = "applied", bool(event.unseen)
        facts.extra = _applied(event)
        return event.writer, facts
    if isinstance(event, EditRejected):
        facts.edit_outcome, facts.error = "rejected", event.code
        facts.stale = event.code in STALE_CODES
        facts.extra = {"editjournal.writer": event.writer}
        return event.writer, facts
    if isinstance(event, HunkRejected):
        facts.error, facts.stale = event.code, event.code in STALE_CODES
        facts.extra = {"editjournal.hunk.id": event.hunk_id}
        return event.tool, facts
    if isinstance(event, CheckpointCreated):  # and CheckpointTaken, its subclass
        facts.extra = {
            "editjournal.checkpoint.name": event.name,
            "editjournal.checkpoint.files": event.file_count,
            "editjournal.checkpoint.bytes": event.total_bytes,
        }
        return "checkpoint_create", facts
    if isinstance(event, CheckpointRestored):
        facts.extra = {
            "editjournal.checkpoint.seq": event.checkpoint,
            "editjournal.checkpoint.name": event.name,
            "editjournal.restore.files": len(event.files),
            "editjournal.restore.removed": len(event.removed),
        }
        return "checkpoint_restore", facts
    return None, facts


def _applied(event: EditApplied) -> dict[str, AttributeValue]:
    """Lines added and removed from the write's exact line changes. A writer that does
    not know them records none: then only a deletion's count is certain, and the
    attributes are left out rather than guessed from the line counts."""
    extra: dict[str, AttributeValue] = {
        "editjournal.writer": event.writer,
        "editjournal.lines.before": event.lines_before,
        "editjournal.lines.after": event.line_count,
        "editjournal.content.sha256": event.after_sha256,
        "editjournal.carried": bool(event.unseen),
        "editjournal.safety_check": event.safety_check,
    }
    if event.line_changes:
        extra["editjournal.lines.added"] = sum(n for _, _, n in event.line_changes)
        extra["editjournal.lines.removed"] = sum(
            end - start for start, end, _ in event.line_changes
        )
    elif event.deleted:
        extra["editjournal.lines.added"], extra["editjournal.lines.removed"] = 0, event.lines_before
    if event.deleted:
        extra["editjournal.deleted"] = True
    if event.moved_from is not None:
        extra["editjournal.moved_from"] = event.moved_from
    if event.moved_to is not None:
        extra["editjournal.moved_to"] = event.moved_to
    return extra


def _outside(event: OutsideChangeRecorded) -> dict[str, AttributeValue]:
    extra: dict[str, AttributeValue] = {"editjournal.change": event.change}
    if event.new_sha256 is not None:
        extra["editjournal.content.sha256"] = event.new_sha256
    if event.line_count is not None:
        extra["editjournal.lines.after"] = event.line_count
    if event.moved_to is not None:
        extra["editjournal.moved_to"] = event.moved_to
    if event.displaced_by is not None:
        extra["editjournal.displaced_by"] = event.displaced_by
    return extra
