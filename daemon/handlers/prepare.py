"""The `prepare_*` tools: plan an edit, show it, write nothing.

Each tool finds its place in the file as it is now (`daemon.text.hunks`, pure)
and answers with the reviewable plan: a YAML-style summary, the evidence (what
matched where, in which version), the unified diff, a daemon-made `hunk_id`
and when it expires. The plan is journaled (`hunk_prepared`, with the content
it was made against stored), so `apply_file_modification` can write it later —
after a restart too — and carry it over changes made since.

What it must never do: write a file, or accept a hunk_id the caller made up
(`existing_hunk_id` only re-plans the caller's own hunk of the same kind).
"""

from __future__ import annotations

import functools
import secrets
import time
from collections.abc import Callable
from typing import Any

from editjournal.daemon.contract.context import Context
from editjournal.daemon.contract.outcome import Outcome
from editjournal.daemon.handlers import handles
from editjournal.daemon.handlers.hunk_tools import HunkRefused, now_ms, owned_hunk
from editjournal.daemon.settings.config import load
from editjournal.daemon.text.hunks import (
    Found,
    RegexLimit,
    append_found,
    blankline_style,
    block_found,
    glued_warning,
    insert_found,
    normalization,
    range_found,
    regex_seconds,
    spliced,
    unified,
)
from editjournal.daemon.writing.numbers import anchor_line
from editjournal.daemon.writing.target import Target, open_target
from editjournal.schemas.errors import ErrorCode, ToolError
from editjournal.schemas.events import AnyEvent, HunkPrepared, HunkRejected
from editjournal.schemas.suggestions import call
from editjournal.schemas.tools import (
    BlanklineStyle,
    HunkEvidence,
    HunkNormalized,
    HunkPlanResult,
    MatchedLine,
    PrepareFileAppendParams,
    PrepareFileBlockReplaceParams,
    PrepareFileInsertParams,
    PrepareFileRangeEditParams,
    PrepareParams,
)
from editjournal.schemas.units import format_elapsed

Finder = Callable[[Target], Found]  # the place, in the target's current content


@handles("prepare_file_range_edit")
def prepare_file_range_edit(ctx: Context, params: PrepareFileRangeEditParams) -> Outcome:
    start, end = _range_of(params)
    return _prepare(
        ctx, params, "range_edit", lambda t: range_found(t.doc, start, end, params.content)
    )


@handles("prepare_file_append")
def prepare_file_append(ctx: Context, params: PrepareFileAppendParams) -> Outcome:
    return _prepare(ctx, params, "append", lambda t: append_found(t.doc, params.content))


@handles("prepare_file_insert_after")
def prepare_file_insert_after(ctx: Context, params: PrepareFileInsertParams) -> Outcome:
    return _prepare(ctx, params, "insert_after", _inserter(params, after=True))


@handles("prepare_file_insert_before")
def prepare_file_insert_before(ctx: Context, params: PrepareFileInsertParams) -> Outcome:
    return _prepare(ctx, params, "insert_before", _inserter(params, after=False))


@handles("prepare_file_block_replace")
def prepare_file_block_replace(ctx: Context, params: PrepareFileBlockReplaceParams) -> Outcome:
    def find(target: Target) -> Found:
        return block_found(target.doc, params.old_block, params.new_block, _occurrence(params))

    return _prepare(ctx, params, "block_replace", find)


def _inserter(params: PrepareFileInsertParams, after: bool) -> Finder:
    match = params.match or "contains"

    def find(target: Target) -> Found:
        # A `regex` anchor gets regex_seconds() in all, counted from here: one request's
        # pattern must not hold the daemon's one thread (and every other agent) for long.
        doc = target.doc
        limit = RegexLimit.starting(time.monotonic, regex_seconds(doc.line_count))
        occurrence = _occurrence(params)
        # a LINE#ANCHOR among identical lines: its number, as the agent read it, picks
        line_of = functools.partial(anchor_line, target)
        return insert_found(
            doc, params.anchor, match, occurrence, params.content, after, limit, line_of
        )

    return find


def _occurrence(params: PrepareFileInsertParams | PrepareFileBlockReplaceParams) -> int | None:
    value = params.occurrence
    return value if isinstance(value, int) else None


def _range_of(params: PrepareFileRangeEditParams) -> tuple[int, int]:
    """`range` "A-B" (or "A"), or start_line/end_line: exactly one of the two ways."""
    lines = (params.start_line, params.end_line)
    if params.range is not None and any(n is not None for n in lines):
        raise ToolError(
            ErrorCode.INVALID_PARAMS,
            "give range or start_line/end_line, not both - at `$.params.range`",
        )
    if params.range is None:
        if params.start_line is None:
            raise ToolError(
                ErrorCode.INVALID_PARAMS,
                'give range ("A-B") or start_line (and end_line) - at `$.params.range`',
            )
        return params.start_line, params.end_line or params.start_line
    first, _, last = params.range.strip().partition("-")
    if not first.strip().isdigit() or not (last.strip().isdigit() or not last.strip()):
        raise ToolError(
            ErrorCode.INVALID_RANGE,
            f"range {params.range!r} is not 'A-B' (1-based, inclusive) - at `$.params.range`",
            {"range": params.range},
        )
    return int(first), int(last) if last.strip() else int(first)


# --- the shared part ---------------------------------------------------------------------


def _prepare(ctx: Context, params: PrepareParams, kind: str, find: Finder) -> Outcome:
    now = now_ms()
    ttl = load(ctx.workspace.state_dir).hunk_ttl_ms
    try:
        hunk_id = _replanned_id(ctx, params, kind, now) or _new_id(ctx)
    except HunkRefused as refused:
        return refused.outcome()
    target = open_target(ctx, params.path, missing_ok=kind == "append")
    found = find(target)
    event = _event(target, found, kind, hunk_id, now, now + ttl, params)
    result = _result(target, found, event, params)
    blobs: dict[str, bytes] = {}
    if not ctx.journal.has_blob(target.snap.sha256):  # what apply carries the plan from
        blobs[target.snap.sha256] = target.snap.data
    return Outcome(result, events=[*target.noticed, event], blobs=blobs)


def _replanned_id(ctx: Context, params: PrepareParams, kind: str, now: int) -> str | None:
    """The hunk to re-plan: the caller's own, pending, of the same kind."""
    hunk_id = params.existing_hunk_id
    if hunk_id is None:
        return None
    tool = f"prepare_file_{kind}"
    hunk = owned_hunk(ctx, hunk_id, tool, now)
    if hunk.kind != kind:
        error = ToolError(
            ErrorCode.HUNK_KIND_MISMATCH,
            f"hunk {hunk_id} is a {hunk.kind} hunk; {tool} re-plans only {kind} hunks",
            {"hunk_id": hunk_id, "hunk_kind": hunk.kind, "kind": kind},
        )
        rejected: AnyEvent = HunkRejected(
            path=hunk.path, hunk_id=hunk_id, tool=tool, code=error.code.value, message=error.message
        )
        raise HunkRefused(error, [rejected])
    return hunk_id


def _new_id(ctx: Context) -> str:
    while True:
        hunk_id = "h" + secrets.token_hex(5)
        if ctx.state.hunks.get(hunk_id) is None:
            return hunk_id


def _event(
    target: Target, found: Found, kind: str, hunk_id: str, now: int, expires: int, params: Any
) -> HunkPrepared:
    splice, doc = found.splice, target.doc
    content = getattr(params, "content", getattr(params, "new_block", ""))
    return HunkPrepared(
        path=target.path,
        hunk_id=hunk_id,
        hunk_kind=kind,
        created_at_ms=now,
        expires_at_ms=expires,
        base_version=target.version,
        base_sha256=target.snap.sha256,
        start=splice.start,
        end=splice.end,
        new_lines=list(splice.new_lines),
        targets=list(splice.targets),
        diff=unified(target.path, doc.lines, spliced(doc.lines, splice)),
        replanned=params.existing_hunk_id is not None,
        content_eof_newline_added=normalization(doc, content).content_eof_newline_added,
    )


def _result(target: Target, found: Found, event: HunkPrepared, params: Any) -> HunkPlanResult:
    doc = target.doc
    content = getattr(params, "content", getattr(params, "new_block", ""))
    norm = normalization(doc, content)
    normalized = HunkNormalized(
        file_eof_newline_added=norm.file_eof_newline_added,
        content_eof_newline_added=norm.content_eof_newline_added,
    )
    style, warning = None, None
    if event.hunk_kind in ("append", "insert_after", "insert_before"):
        seen = blankline_style(doc.lines, found.splice)
        style = BlanklineStyle(above=seen.above, below=seen.below)
        notes = [seen.warning, glued_warning(doc) if event.hunk_kind == "append" else None]
        warning = "; ".join(n for n in notes if n) or None
    evidence = HunkEvidence(
        path=target.path,
        version=event.base_version,
        sha256=event.base_sha256,
        line_count=doc.line_count,
        start_line=found.first,
        end_line=found.last,
        matched=[MatchedLine(line=n, text=doc.lines[n - 1]) for n in found.matched],
        match=(getattr(params, "match", None) or "contains")
        if "insert" in event.hunk_kind
        else None,
        anchor=getattr(params, "anchor", None),
        occurrence=found.occurrence,
        occurrences=found.occurrences or None,
    )
    result = HunkPlanResult(
        message=(
            f"Planned {event.hunk_kind} hunk {event.hunk_id} for {target.path} (nothing written);"
            f" apply it with {call('apply_file_modification', hunk_id=event.hunk_id)}"
        ),
        summary="",
        hunk_id=event.hunk_id,
        kind=event.hunk_kind,
        file_path=target.path,
        evidence=evidence,
        diff=event.diff,
        created_at_ms=event.created_at_ms,
        expires_at_ms=event.expires_at_ms,
        normalized=normalized,
        blankline_style=style,
        style_warning=warning,
        replanned=event.replanned,
    )
    result.summary = summary(result, found)
    return result


def summary(result: HunkPlanResult, found: Found) -> str:
    """The plan at a glance, one `key: value` per line (YAML-style)."""
    ev, splice = result.evidence, found.splice
    rows: list[tuple[str, object]] = [
        ("hunk_id", result.hunk_id),
        ("kind", result.kind),
        ("path", result.file_path),
        ("base_version", ev.version),
        ("base_sha256", ev.sha256[:12]),
        ("lines", f"{ev.start_line}-{ev.end_line}" if ev.start_line else "end of file"),
    ]
    if ev.match is not None:
        rows.append(("match", ev.match))
    if ev.occurrences:
        rows.append(("occurrence", f"{ev.occurrence or 1} of {ev.occurrences}"))
    rows += [
        ("removed_lines", splice.end - splice.start),
        ("added_lines", len(splice.new_lines)),
        ("final_newline_added", _newline_added(result.normalized)),
    ]
    if result.blankline_style is not None:
        style = result.blankline_style
        rows.append(("blankline_style", f"above {style.above}, below {style.below}"))
    if result.style_warning:
        rows.append(("style_warning", result.style_warning))
    rows += [("expires", _expiry(result)), ("replanned", result.replanned)]
    return "\n".join(f"{key}: {_yaml(value)}" for key, value in rows) + "\n"


def _newline_added(normalized: HunkNormalized) -> str:
    """The final-newline rule in words: where it added one, if anywhere."""
    added = [
        where
        for where, done in (
            ("to the file's last line", normalized.file_eof_newline_added),
            ("to the new content", normalized.content_eof_newline_added),
        )
        if done
    ]
    return " and ".join(added) or "none"


def _expiry(result: HunkPlanResult) -> str:
    """When the plan expires, as a person reads it: a UTC time and how long the plan
    lives (the milliseconds since the epoch stay in `expires_at_ms`)."""
    at = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(result.expires_at_ms / 1000))
    return f"{at} ({format_elapsed(result.expires_at_ms - result.created_at_ms)} after planning)"


def _yaml(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
