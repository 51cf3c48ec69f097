"""How the audit results read at a terminal: the log, diffs in colour, blame, history,
stats, pending hunks; counts in words (`1 file`, `2 files`), durations in units (`8.4 s`).

Only text, styled with `click.style`; `render.emit` drops the styles unless
stdout is a terminal (and NO_COLOR is unset), so pipes and files get plain text.

Columns are as wide as what they hold, up to a cap: a harness session's name
(`claude-code:<uuid>`, 48 characters) would push every row past the terminal, so a
name longer than NAME_CAP is shortened the same way wherever it is shown
(`claude-code:3fa2b1c4…`: `short_names`), lengthened only where two would read alike,
and the table ends with a legend of the names it shortened (`--json` has every name
whole). A change a shell command made shows the command (`$ sed -i …`), cut to its
column; `--json` and the HTML report carry it whole. Every string from the journal
goes through `printable`: one row stays one row.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence

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

NAME_CAP = 32  # a name column's width at most (a shortened name fits it)
KEEPS = (8, 12, 16)  # characters of a long name's part kept, lengthened on a clash
MORE = "…"
COMMAND_CAP = 60  # a command shown at the end of a row (log, history)
COMMAND_COLUMN = 28  # a command shown in blame's kind column


def when(ms: int) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ms / 1000))


def plural(n: float, word: str, words: str | None = None) -> str:
    """`1 file`, `2 files`, `1.5 events` (a mean is plural unless it is exactly one)."""
    shown = f"{n:,}" if isinstance(n, int) else f"{round(n, 1):g}"
    return f"{shown} {word if n == 1 else (words or word + 's')}"


def short_names(names: Iterable[str]) -> dict[str, str]:
    """Each name as a table shows it: escaped (`printable`), whole when it fits
    NAME_CAP, else shortened (`_shortened`); a shortened name that would read like
    another shown name keeps more of itself, until none does (at worst: whole)."""
    full = {name: printable(name) for name in names}
    level = dict.fromkeys(full, 0)
    while True:
        shown = {name: _shortened(text, level[name]) for name, text in full.items()}
        seen: dict[str, list[str]] = {}
        for name, text in shown.items():
            seen.setdefault(text, []).append(name)
        clashing = [n for group in seen.values() if len(group) > 1 for n in group]
        clashing = [n for n in clashing if shown[n] != full[n]]
        if not clashing:
            return shown
        for name in clashing:
            level[name] += 1


def _shortened(name: str, level: int) -> str:
    """`name` (printable already) in at most NAME_CAP characters, keeping KEEPS[level]
    of each part: a harness's session (`claude-code:3fa2b1c4…`, a subagent's
    `claude-code:3fa2b1c4…/a0b1c2d3…`), else its head and its tail. Past the last
    level: whole."""
    if len(name) <= NAME_CAP or level >= len(KEEPS):
        return name
    keep = KEEPS[level]
    harness, colon, session = name.partition(":")
    if colon and 0 < len(harness) <= NAME_CAP // 2:
        parts = [p if len(p) <= keep + 1 else p[:keep] + MORE for p in session.split("/")]
        name = f"{harness}:{'/'.join(parts)}"
    if len(name) <= NAME_CAP:
        return name
    return name[: NAME_CAP - keep - 1] + MORE + name[-keep:]


def legend(shown: dict[str, str]) -> list[str]:
    """The names a table shortened, each with its whole name (escaped): the table's
    last rows, so a shortened name never stands for a guess."""
    cut = sorted(
        (short, printable(name)) for name, short in shown.items() if short != printable(name)
    )
    if not cut:
        return []
    width = max(len(short) for short, _ in cut)
    return ["names shortened above:", *(f"  {short:<{width}}  {name}" for short, name in cut)]


def short_command(commands: Sequence[str], width: int = COMMAND_CAP) -> str:
    """`$ ` and the command a shell window journaled the change with, on one row: its
    first line, escaped, cut at `width` (`…`); `(+N)` when the agent had N more
    running then (which made the change the journal cannot tell). Empty: none."""
    if not commands:
        return ""
    lines = commands[0].strip().splitlines() or [""]
    text = printable(lines[0].strip()) + (f" {MORE}" if len(lines) > 1 else "")
    more = f" (+{len(commands) - 1})" if len(commands) > 1 else ""
    room = max(1, width - 2 - len(more))
    if len(text) > room:
        text = text[: room - 1] + MORE
    return f"$ {text}{more}"


def log_lines(events: list[LogEntry]) -> list[str]:
    """`log`: one row per event, the columns as wide as the longest agent and kind shown
    (`watch` prints live, one event at a time, so it cannot know the widths); a name
    past NAME_CAP shortened (`--json` has it whole); a shell command's change ends with
    its command."""
    seq_width = max((len(str(e.seq)) for e in events), default=0)
    names = short_names(e.agent for e in events if e.agent is not None)
    agents = [names[e.agent] if e.agent is not None else "-" for e in events]
    kinds = [printable(e.kind) for e in events]
    agent_width = max(map(len, agents), default=0)
    kind_width = max(map(len, kinds), default=0)
    return [
        f"{e.seq:>{max(6, seq_width)}}  {when(e.ts)}  {agent:<{agent_width}}  "
        f"{click.style(kind.ljust(kind_width), fg='cyan')}  {printable(e.summary)}"
        + (f"  {short_command(e.commands)}" if e.commands else "")
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
    lines += _command_lines(e.commands)
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


def _command_lines(commands: list[str]) -> list[str]:
    """`show`: each shell command behind the change, whole, a row per line of it (each
    escaped, under the first: a command's own lines never pass for fields)."""
    lines = []
    for command in commands:
        rows = command.splitlines() or [""]
        lines.append(f"{'command:':<9}$ {printable(rows[0])}")
        lines += [f"{'':<9}  {printable(row)}" for row in rows[1:]]
    return lines


def history_lines(result: HistoryResult) -> list[str]:
    """`history`: a row per version, author and kind as wide as their longest (a name
    past NAME_CAP shortened, a legend after the rows); a shell command's version ends
    with its command."""
    names = short_names(v.author for v in result.versions)
    kinds = [printable(v.kind) for v in result.versions]
    author_width = max([len("author"), *(len(n) for n in names.values())])
    kind_width = max([len("kind"), *map(len, kinds)])
    lines = [
        f"{'seq':>6}  {'time':<19}  {'author':<{author_width}}  {'kind':<{kind_width}}"
        f" {'lines':>6} {'+/-':>10}"
    ]
    for v, kind in zip(result.versions, kinds, strict=True):
        count = "-" if v.line_count is None else str(v.line_count)
        lines.append(
            f"{v.seq:>6}  {when(v.ts)}  {names[v.author]:<{author_width}}  {kind:<{kind_width}}"
            f" {count:>6} {_delta(v.added, v.removed, v.sha256)}"
            + ("" if v.stored or v.sha256 is None else "  (content not stored)")
            + (f"  (as {printable(v.path)})" if v.path else "")
            + (f"  (moved from {printable(v.moved_from)})" if v.moved_from else "")
            + (f"  {short_command(v.commands)}" if v.commands else "")
        )
    return lines + legend(names)


def _delta(added: int | None, removed: int | None, sha256: str | None) -> str:
    """`+2/-1` right-aligned in 10 columns (green, red), `gone` or `?`."""
    if added is None or removed is None:
        return f"{'gone' if sha256 is None else '?':>10}"
    pad = " " * max(0, 10 - len(f"+{added}/-{removed}"))
    return pad + click.style(f"+{added}", fg="green") + "/" + click.style(f"-{removed}", fg="red")


def blame_lines(result: BlameResult) -> list[str]:
    """`blame`: a row per line; agent and kind columns as wide as their longest (a name
    past NAME_CAP shortened, a legend after the rows); a line a shell command wrote
    shows the command in the kind column (`$ sed -i …`)."""
    width = len(str(len(result.lines)))
    names = short_names(b.agent for b in result.lines)
    hows = [
        short_command(b.commands, COMMAND_COLUMN) if b.commands else printable(b.kind)
        for b in result.lines
    ]
    agent_width = max((len(n) for n in names.values()), default=0)
    how_width = max(map(len, hows), default=0)
    return [
        f"{click.style(f'{b.seq:>6}', fg='yellow')} {names[b.agent]:<{agent_width}}"
        f" {how:<{how_width}} {when(b.ts)} {b.line:>{width}}|"
        f" {printable(b.text, keep_tabs=True)}"
        for b, how in zip(result.lines, hows, strict=True)
    ] + legend(names)


def stats_lines(agents: list[AgentStats]) -> list[str]:
    """`stats`: a paragraph per agent under its whole name (escaped: no column to fit);
    its shell commands, newest last, each cut to a row."""
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
        lines += _shell_lines(s)
    return lines


def _shell_lines(s: AgentStats) -> list[str]:
    if not s.shell_writes:
        return []
    lines = [f"  shell writes {s.shell_writes}, by these commands (newest last):"]
    for command, n in s.shell_commands.items():
        lines.append(f"    {short_command([command])}: {plural(n, 'change')}")
    return lines
