"""How results and errors read to a person at a terminal (the `--json` output is elsewhere).

Only text: nothing here talks to a daemon or decides an exit code. Colour is
used only when the stream is a terminal and `NO_COLOR` is unset or empty
(https://no-color.org). An error is shown with what it refers to — a stale
edit's conflicts and delta with fresh anchors, a low-entropy line's neighbour
anchors, an ambiguous anchor's candidates — since a person, unlike an agent,
never sees `details`; the daemon's messages name `details.x` for agents, so
those references are reworded to point at what is printed with them, and the
params they say to pass (`pass rebase: true`) are named as the flags a person
types (`pass --rebase`). The calls a suggestion names become commands in
`cli.hints`; the MCP server's text (`mcp_text`) keeps the calls as calls. The
views of results serve both: the CLI's commands and the MCP server's text.
"""

from __future__ import annotations

import os
import re
import sys
import time
from collections.abc import Callable, Iterator
from typing import IO, Any

import click

from editjournal.client.library.errors import RequestError
from editjournal.client.views.audit_render import short_command
from editjournal.client.views.printable import printable
from editjournal.schemas.endpoint import Endpoint
from editjournal.schemas.tools import (
    TOOL_PARAMS,
    AgentStatusResult,
    ApplyPatchResult,
    ApplyResult,
    AtomicResult,
    CheckpointCreateResult,
    CheckpointDiffResult,
    CheckpointListResult,
    CheckpointRestoreResult,
    EditResult,
    HunkNormalized,
    HunkPlanResult,
    LogEntry,
    OverwriteResult,
    SafePatchResult,
    StatusResult,
    UndoResult,
    WrittenResult,
)
from editjournal.schemas.units import format_duration, format_size
from editjournal.schemas.wire import PublishedEvent

INDENT = "  "


def colour_enabled(stream: IO[str]) -> bool:
    return stream.isatty() and not os.environ.get("NO_COLOR")


def emit(lines: str | list[str], *, err: bool = False) -> None:
    """Print, keeping ANSI styles only where colour is wanted."""
    stream = sys.stderr if err else sys.stdout
    text = lines if isinstance(lines, str) else "\n".join(lines)
    click.echo(text, err=err, color=colour_enabled(stream))


def aligned(rows: list[tuple[str, str]]) -> list[str]:
    """`label   value` rows, the values in one column."""
    width = max((len(label) for label, _ in rows), default=0)
    return [f"{click.style(label.ljust(width), bold=True)}  {value}" for label, value in rows]


# --- results ---------------------------------------------------------------------------


def status_lines(result: StatusResult) -> list[str]:
    return aligned(
        [
            ("workspace", result.workspace),
            ("workspace id", result.workspace_id or "-"),
            ("pid", str(result.pid)),
            ("version", result.version),
            ("uptime", format_duration(result.uptime_s)),
            ("events", f"{result.event_count} (last seq {result.last_seq})"),
            ("files", f"{result.known_files} known"),
            ("agents", str(result.agents)),
            ("journal", f"{result.journal_path} ({format_size(result.journal_bytes)})"),
            ("watcher", watcher_words(result.watcher)),
            *otel_row(result.group_commit.get("otel") or {}),
            ("log", result.log_path),
            ("socket", result.socket),
            ("events socket", result.events_socket),
            ("state digest", result.state_digest),
        ]
    )


def watcher_words(watcher: dict[str, Any]) -> str:
    """The watcher's state as a person would say it, coloured by how well it goes."""
    state = watcher.get("state", "disabled")
    poll = watcher.get("poll_interval_s")
    polling = f"polling every {poll:g} s" if poll else "polling"
    if state == "running":
        return click.style("running", fg="green")
    if state == "degraded":
        unwatched = watcher.get("unwatched_dirs", 0)
        words = f"degraded: {unwatched} directories unwatched" + (f", {polling}" if poll else "")
        return click.style(words, fg="yellow")
    if state == "failed":
        why = watcher.get("error")
        return click.style(polling + (f" ({why})" if why else ""), fg="yellow")
    return state


def otel_row(otel: dict[str, Any]) -> list[tuple[str, str]]:
    """The OpenTelemetry export's row (daemon/telemetry/tap.py `stats`), when it is on or
    wanted and unavailable; none when it is off."""
    state = otel.get("state")
    if state == "unavailable":
        return [("otel", click.style(f"unavailable: {otel.get('problem')}", fg="yellow"))]
    if state != "on":
        return []
    words = (
        f"to {otel.get('endpoint') or 'the OTEL_EXPORTER_OTLP_* endpoint'}:"
        f" {otel.get('exported', 0)} exported, {otel.get('queued', 0)} queued,"
        f" {otel.get('dropped', 0)} dropped"
    )
    failing = [
        *(["the collector is failing"] if otel.get("collector_failing") else []),
        *(["the receiver refuses the counters"] if otel.get("metrics_failing") else []),
    ]
    if failing:
        return [("otel", click.style(f"{words} ({'; '.join(failing)})", fg="yellow"))]
    return [("otel", words)]


def event_line(event: PublishedEvent | LogEntry, *, with_time: bool = False) -> str:
    """One event as `watch` (live) and `log` (from the journal) print it."""
    when = time.strftime("%Y-%m-%d %H:%M:%S  ", time.localtime(event.ts / 1000))
    kind = click.style(f"{printable(event.kind):<16}", fg="cyan")
    return (
        f"{event.seq:>6}  {when if with_time else ''}{printable(event.agent or '-'):<16} {kind} "
        f"{printable(event.summary)}"
    )


def edit_lines(result: EditResult) -> list[str]:
    lines = [
        f"{result.message.rstrip('.')}: {result.file_path} version {result.version}",
        f"lines {result.lines_before} -> {result.lines_after} ({result.net_change:+d})",
    ]
    if result.rebased_from_version is not None:
        lines.append(f"carried over others' changes since version {result.rebased_from_version}")
    lines += [f"auto-corrected: {c.detail}" for c in result.auto_corrections]
    return [*lines, result.diff]


def patch_lines(result: SafePatchResult) -> list[str]:
    state = result.latest_file_state
    lines = [
        f"{result.message.rstrip('.')}: {state.file_path} version {state.version}"
        f" sha256 {state.sha256}",
        f"lines {result.lines_before} -> {result.lines_after} ({result.net_change:+d})",
    ]
    for hunk in result.hunks:
        if hunk.offset:
            lines.append(
                f"hunk {hunk.hunk} ({hunk.header}) applied at line {hunk.applied_line},"
                f" {hunk.offset:+d} from the line it states"
            )
    if result.rebased_from_version is not None:
        lines.append(f"carried over others' changes since version {result.rebased_from_version}")
    lines += [f"auto-corrected: {c.detail}" for c in result.auto_corrections]
    return [*lines, result.diff]


def apply_patch_lines(result: ApplyPatchResult) -> list[str]:
    """Codex's summary, then each file: where it stands, how its hunks landed, its diff."""
    lines = [result.message]
    for f in result.files:
        moved = f" (from {f.moved_from})" if f.moved_from else ""
        where = "removed" if f.sha256 is None else f"version {f.version} sha256 {f.sha256[:12]}"
        lines.append(
            f"{f.action} {f.path}{moved}: {where}, lines {f.lines_before} -> {f.lines_after}"
        )
        if f.rebased_from_version is not None:
            since = f.rebased_from_version
            lines.append(f"{INDENT}carried over others' changes since version {since}")
        lines += [f"{INDENT}auto-corrected: {c.detail}" for c in f.auto_corrections]
        if f.diff:
            lines.append(f.diff)
    return lines


def agent_status_lines(result: AgentStatusResult) -> list[str]:
    n = len(result.files)
    lines = [
        f"{printable(result.agent)}: {n} file{'s' * (n != 1)} seen, {result.stale_files} stale"
    ]
    for seen in result.files:
        state = (
            "current"
            if seen.current
            else click.style(f"STALE ({len(seen.changed_since)} changes since)", fg="yellow")
        )
        lines.append(f"{INDENT}{printable(seen.path)}  saw version {seen.version_seen}  {state}")
        for change in seen.changed_since:
            who = printable(change["agent"] or "outside")
            kind = printable(str(change["kind"]))
            ran = short_command(change.get("commands") or [])  # a shell window's change
            lines.append(
                f"{INDENT * 3}seq {change['seq']} {kind} by {who}" + f"  {ran}" * bool(ran)
            )
    return lines


def change_words(change: dict[str, Any]) -> str:
    """One change of the journal's `{seq, agent, kind}` as words: `seq 12 by agent-b`."""
    who = change.get("agent")
    return (
        f"seq {change.get('seq')} by {printable(str(who))}"
        if who
        else (f"seq {change.get('seq')} by an outside writer")
    )


def written_lines(result: WrittenResult) -> list[str]:
    """A write that names its file (the atomic tools, overwrite, an applied hunk, an undo of
    one write): its message, where the file stands, what it carried or overwrote, the
    diff with the new anchors. The fields only some results have are shown when set."""
    lines = [
        result.message,
        f"{result.file_path} version {result.version}, lines {result.lines_before}"
        f" -> {result.lines_after} ({result.net_change:+d})",
    ]
    rebased = getattr(result, "rebased_from_version", None)
    if rebased is not None:
        lines.append(f"carried over others' changes since version {rebased}")
    over = getattr(result, "rebased_over", None) or []
    if isinstance(result, UndoResult):
        lines += ["the file was removed (the undone write created it)"] * result.deleted
        lines += ["the file was recreated (the undone write removed it)"] * result.created
        if over:
            lines.append(f"kept the later changes: {', '.join(map(change_words, over))}")
    if isinstance(result, AtomicResult) and result.overwrote_unseen:
        said = ", ".join(map(change_words, result.overwrote_unseen))
        lines.append(f"overwrote changes you had not read: {said}")
    normalized = getattr(result, "normalized", None)
    if isinstance(normalized, HunkNormalized):
        lines += newline_notes(normalized)
    lines += [f"auto-corrected: {c.detail}" for c in result.auto_corrections]
    return [*lines, result.diff] if result.diff else lines


def newline_notes(normalized: HunkNormalized) -> list[str]:
    """The final-newline rule, when it added one."""
    notes = []
    if normalized.file_eof_newline_added:
        notes.append("a final newline was added to the file's last line first")
    if normalized.content_eof_newline_added:
        notes.append("a final newline was added to the new content")
    return notes


def atomic_lines(result: AtomicResult) -> list[str]:
    return written_lines(result)


def overwrite_lines(result: OverwriteResult) -> list[str]:
    return written_lines(result)


def applied_hunk_lines(result: ApplyResult) -> list[str]:
    return written_lines(result)


def hunk_plan_lines(result: HunkPlanResult) -> list[str]:
    """A planned hunk: what to call next, what it relies on, the planned diff."""
    seen = result.evidence
    where = f"lines {seen.start_line}-{seen.end_line}"
    if seen.start_line == seen.end_line:
        where = "the end of the file" if seen.end_line == 0 else f"line {seen.end_line}"
    if seen.occurrence is not None and seen.occurrences is not None:
        where += f" (match {seen.occurrence} of {seen.occurrences})"
    lines = [
        result.message,
        f"planned against {result.file_path} version {seen.version}, at {where}"
        + ("; planned again over a newer version" if result.replanned else ""),
        *newline_notes(result.normalized),
    ]
    if result.style_warning:
        lines.append(f"style: {result.style_warning}")
    return [*lines, result.diff.rstrip("\n")]


def checkpoint_create_lines(result: CheckpointCreateResult) -> list[str]:
    lines = [result.message]
    if result.absent:
        lines.append(f"not there (recorded as absent): {', '.join(result.absent)}")
    lines += [f"not taken: {s.get('path')}: {s.get('message')}" for s in result.skipped]
    return lines


def checkpoint_list_lines(result: CheckpointListResult) -> list[str]:
    return [result.message] if result.checkpoints else ["no checkpoints"]


def checkpoint_diff_lines(result: CheckpointDiffResult) -> list[str]:
    """Which files changed since, then each modified file's diff."""
    lines = [result.message]
    lines += [c.diff.rstrip("\n") for c in result.changes if c.change == "modified" and c.diff]
    if result.truncated:
        lines.append("(more diffs than one reply carries: name the files in paths)")
    return lines


def checkpoint_restore_lines(result: CheckpointRestoreResult) -> list[str]:
    """What was written back, each file's diff with the new anchors, and what was not."""
    lines = [result.message]
    for f in result.files:
        if f.diff:
            lines += [f"--- {f.path} ({f.action}, version {f.version})", f.diff]
    lines += [f"left alone: {x.get('path')} ({x.get('why') or x.get('message')})"
              for x in result.left_alone]  # fmt: skip
    return lines


def undo_lines(result: UndoResult) -> list[str]:
    """One write undone (where the file stands, its diff) or every write of an agent
    (`by`): the message, then each file's diff."""
    if result.by is None:
        return written_lines(result)
    lines = [result.message]
    for f in result.files:
        if f.diff:
            lines += [f"--- {f.path} ({f.action})", f.diff]
    return lines


def daemon_rows(daemons: list[tuple[Endpoint, int | None]], now_ms: int) -> list[str]:
    """`editjournal list`: one row per daemon, under a header."""
    rows = [("WORKSPACE", "PID", "UPTIME", "EVENTS")]
    for endpoint, events in daemons:
        started = endpoint.started_at_ms
        uptime = format_duration((now_ms - started) / 1000) if started else "?"
        rows.append(
            (endpoint.workspace, str(endpoint.pid), uptime, "?" if events is None else str(events))
        )
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    return [
        "  ".join([*(cell.ljust(w) for cell, w in zip(row, widths, strict=False)), row[3]])
        for row in rows
    ]


# --- errors ---------------------------------------------------------------------------------

_SHOWN_BELOW = {
    "delta": "the delta below",
    "problems": "the problems below",
    "neighbor_anchors": "the neighbour anchors below",
    "candidates": "the candidates below",
    "safety_warnings": "the warnings below",
    "conflicts": "the conflicts below",
    "similar_lines": "the similar lines below",
}


def plain_message(message: str, where: str = "below") -> str:
    """The daemon's text with `details.x` references pointed at what is printed
    `where` ("below" the message, "above" the suggestion that ends an error)."""

    def shown(m: re.Match[str]) -> str:
        said = _SHOWN_BELOW.get(m.group(1))
        return said.replace("below", where) if said else m.group(0)

    return re.sub(r"details\.(\w+)", shown, message)


# Every param a tool takes but `path` (an argument, never a flag): the words `pass X` may name.
_PARAMS = {name for params in TOOL_PARAMS.values() for name in params.__struct_fields__}
_PASS = re.compile(r"\bpass (\w+)(?:: (true|\"[^\"]*\"|-?\d+\b))?")


def flags_named(text: str) -> str:
    """`pass rebase: true` -> `pass --rebase`, `pass content_format: "text"` ->
    `pass --content-format text`: a param of the call as the command's option (the
    generated commands name every param so; the hand-written ones keep the names)."""

    def flag(m: re.Match[str]) -> str:
        name, value = m.group(1), m.group(2)
        if name not in _PARAMS or name == "path":
            return m.group(0)
        option = "--" + name.replace("_", "-")
        if value is None or value == "true":
            return f"pass {option}"
        return f"pass {option} {value.strip(chr(34))}"

    return _PASS.sub(flag, text)


def cli_message(message: str, where: str = "below") -> str:
    """The daemon's text in the CLI's words: what is printed, and flags."""
    return flags_named(plain_message(message, where))


def error_lines(
    error: RequestError, suggestion: str | None, say: Callable[[str], str] = cli_message
) -> list[str]:
    """An error as a person reads it: code and message, what it refers to, what to do.
    `say` puts the daemon's words in the surface's own (the CLI's by default)."""
    head = click.style(f"editjournal: {error.code}:", fg="red", bold=True)
    lines = [f"{head} {say(error.message)}"]
    for key, show in _DETAIL_VIEWS.items():
        if error.details.get(key):
            lines += list(show(error.details[key], say))
    if suggestion:
        lines.append(f"{INDENT}suggested action: {suggestion}")
    return lines


def _conflicts(conflicts: list[dict[str, Any]], say: Callable[[str], str]) -> Iterator[str]:
    yield f"{INDENT}conflicts (the later changes to those lines):"
    for c in conflicts:
        who = c.get("agent") or "an outside writer"
        lines = ", ".join(map(str, c.get("lines", [])))
        yield f"{INDENT * 2}seq {c['seq']}  {who}  {c['kind']}  line(s) {lines}"


def _delta(delta: dict[str, Any], say: Callable[[str], str]) -> Iterator[str]:
    yield (
        f"{INDENT}delta from version {delta.get('from_version')} to {delta.get('to_version')}"
        " (new lines with fresh anchors):"
    )
    for row in str(delta.get("diff", "")).splitlines():
        colour = {"+": "green", "-": "red", "@": "cyan"}.get(row[:1])
        yield INDENT * 2 + (click.style(row, fg=colour) if colour else row)


def _neighbours(anchors: list[str], say: Callable[[str], str]) -> Iterator[str]:
    yield f"{INDENT}neighbour anchors: {'  '.join(anchors)}"


def _candidates(candidates: list[dict[str, Any]], say: Callable[[str], str]) -> Iterator[str]:
    yield f"{INDENT}candidates:"
    for c in candidates:
        yield f"{INDENT * 2}line {c['line']}: {c.get('preview', '')!r}"


def _warnings(warnings: list[dict[str, Any]], say: Callable[[str], str]) -> Iterator[str]:
    """Each finding, by operation (0: the edit as a whole); one alone is the message."""
    if len(warnings) < 2:
        return
    yield f"{INDENT}safety warnings:"
    for w in warnings:
        where = f"operation {w['operation']}" if w.get("operation") else "the whole edit"
        yield f"{INDENT * 2}{where}: {say(str(w.get('message')))}"


def _problems(problems: list[dict[str, Any]], say: Callable[[str], str]) -> Iterator[str]:
    yield f"{INDENT}problems:"
    for n, p in enumerate(problems, start=1):
        yield f"{INDENT * 2}{n}. {p.get('code')}: {say(str(p.get('message')))}"


def _similar(windows: list[dict[str, Any]], say: Callable[[str], str]) -> Iterator[str]:
    yield f"{INDENT}closest similar lines (a hint only; nothing was changed):"
    for window in windows:
        for row in window.get("lines", []):
            yield f"{INDENT * 2}{row['line']}#{row['hash']}|{row['text']}"


_DETAIL_VIEWS: dict[str, Callable[[Any, Callable[[str], str]], Iterator[str]]] = {
    "similar_lines": _similar,
    "conflicts": _conflicts,
    "delta": _delta,
    "neighbor_anchors": _neighbours,
    "candidates": _candidates,
    "safety_warnings": _warnings,
    "problems": _problems,
}
