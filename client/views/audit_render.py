"""How the audit results read at a terminal: the log, diffs in colour, blame, history,
stats, pending hunks; counts in words (`1 file`, `2 files`), durations in units (`8.4 s`).

Only text, styled with `click.style`; `render.emit` drops the styles unless
stdout is a terminal (and NO_COLOR is unset), so pipes and files get plain text.
"""

from __future__ import annotations

import time

import click

from editjournal.client.views.printable import printable
from editjournal.schemas.tools import (
    AgentStats,
    BlameResult,
    HistoryResult,
    HunkInfo,
    LogEntry,
    ShowResult,
)
from editjournal.schemas.units import format_elapsed


def when(ms: int) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ms / 1000))


def plural(n: float, word: str, words: str | None = None) -> str:
    """`1 file`, `2 files`, `1.5 events` (a mean is plural unless it is exactly one)."""
    shown = f"{n:,}" if isinstance(n, int) else f"{round(n, 1):g}"
    return f"{shown} {word if n == 1 else (words or word + 's')}"


def log_lines(events: list[LogEntry]) -> list[str]:
    """`log`: one row per event, the columns as wide as the longest agent and kind shown
    (`watch` prints live, one event at a time, so it cannot know the widths)."""
    seq_width = max((len(str(e.seq)) for e in events), default=0)
    agents = [printable(e.agent or "-") for e in events]
    kinds = [printable(e.kind) for e in events]
    agent_width = max(map(len, agents), default=0)
    kind_width = max(map(len, kinds), default=0)
    return [
        f"{e.seq:>{max(6, seq_width)}}  {when(e.ts)}  {agent:<{agent_width}}  "
        f"{click.style(kind.ljust(kind_width), fg='cyan')}  {printable(e.summary)}"
        for e, agent, kind in zip(events, agents, kinds, strict=True)
    ]


def hunk_lines(hunks: list[HunkInfo], expired: list[str], now_ms: int) -> list[str]:
    """`list-hunks`: the pending hunks as a table, times local and relative."""
    rows = [("HUNK", "KIND", "PATH", "BASE", "PREPARED", "EXPIRES")]
    for h in hunks:
        left = format_elapsed(max(0, h.expires_at_ms - now_ms))
        rows.append(
            (printable(h.hunk_id), printable(h.kind), printable(h.path), f"v{h.base_version}",
             when(h.created_at_ms),
             f"{when(h.expires_at_ms)} (in {left})")
        )  # fmt: skip
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    lines = [
        "  ".join([*(cell.ljust(w) for cell, w in zip(row, widths, strict=False)), row[-1]])
        for row in rows
    ]
    if not hunks:
        lines = ["no pending hunks"]
    if expired:
        lines.append(f"expired (now journaled): {', '.join(expired)}")
    return lines


def diff_lines(diff: str) -> list[str]:
    """A unified diff, + green, - red, @@ cyan, headers bold."""
    out = []
    for row in diff.splitlines():
        if row.startswith(("+++", "---")):
            out.append(click.style(row, bold=True))
        elif row.startswith("@@"):
            out.append(click.style(row, fg="cyan"))
        elif row.startswith("+"):
            out.append(click.style(row, fg="green"))
        elif row.startswith("-"):
            out.append(click.style(row, fg="red"))
        else:
            out.append(row)
    return out


def show_lines(result: ShowResult) -> list[str]:
    e = result.event
    head = click.style(f"event {e.seq}", fg="yellow", bold=True)
    lines = [
        f"{head}  {printable(e.kind)}",
        f"agent:   {printable(e.agent or '-')}",
        f"time:    {when(e.ts)}",
        f"path:    {printable(e.path or '-')}",
        f"hash:    {printable(e.hash)}",
        f"summary: {printable(e.summary)}",
    ]
    lines += _body_lines(e)
    if e.diff:
        lines += ["", *diff_lines(e.diff)]
    return lines


def _body_lines(e: LogEntry) -> list[str]:
    """Fields a person looks for: a rejection's code and message, the operations."""
    body = e.body
    lines = []
    for key in ("writer", "code", "message", "change", "name"):
        if body.get(key):
            lines.append(f"{key + ':':<9}{printable(str(body[key]))}")
    return lines


def history_lines(result: HistoryResult) -> list[str]:
    lines = [f"{'seq':>6}  {'time':<19}  {'author':<12} {'kind':<16} {'lines':>6} {'+/-':>10}"]
    for v in result.versions:
        count = "-" if v.line_count is None else str(v.line_count)
        delta = "gone" if v.sha256 is None else "?"
        if v.added is not None and v.removed is not None:
            delta = (
                click.style(f"+{v.added}", fg="green")
                + "/"
                + click.style(f"-{v.removed}", fg="red")
            )
            delta = " " * max(0, 10 - len(f"+{v.added}/-{v.removed}")) + delta
        else:
            delta = f"{delta:>10}"
        lines.append(
            f"{v.seq:>6}  {when(v.ts)}  {printable(v.author):<12} {printable(v.kind):<16}"
            f" {count:>6} {delta}"
            + ("" if v.stored or v.sha256 is None else "  (content not stored)")
            + (f"  (as {printable(v.path)})" if v.path else "")
            + (f"  (moved from {printable(v.moved_from)})" if v.moved_from else "")
        )
    return lines


def blame_lines(result: BlameResult) -> list[str]:
    width = len(str(len(result.lines)))
    return [
        f"{click.style(f'{b.seq:>6}', fg='yellow')} {printable(b.agent):<12}"
        f" {printable(b.kind):<14} {when(b.ts)} {b.line:>{width}}|"
        f" {printable(b.text, keep_tabs=True)}"
        for b in result.lines
    ]


def stats_lines(agents: list[AgentStats]) -> list[str]:
    lines = []
    for s in agents:
        lines.append(click.style(printable(s.agent), bold=True))
        lines.append(
            f"  reads {s.reads}, applied writes {s.applied_writes}, rejected {s.rejected_writes}"
            f", rebased edits {s.rebased_edits}"
        )
        for code, n in s.rejections.items():
            lines.append(f"    {printable(code)}: {n}")
        if s.recoveries:
            events, ms, attempts = (
                s.mean_recovery_events, s.mean_recovery_ms, s.mean_recovery_attempts
            )  # fmt: skip
            means = [
                None if events is None else plural(events, "event"),
                None if ms is None else format_elapsed(ms),
                None if attempts is None else plural(attempts, "attempt"),
            ]
            shown = ", ".join(m for m in means if m) or "-"
            lines.append(f"  recoveries {s.recoveries}: mean {shown}")
        if s.unrecovered:
            lines.append(f"  unrecovered rejections {s.unrecovered}")
    return lines
