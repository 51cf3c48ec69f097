"""`editjournal report --html`: one self-contained HTML page about a journal.

No script, no network, no CDN, no web font: inline CSS only, and `<details>`
for every diff, so it opens anywhere, offline, with scripting off. Sections:
per-agent stats; a timeline to scale with one lane per agent (each read, write
and rejection a mark at its time; events too close to tell apart one mark with
their count, laid out by `lanelayout` so that no two overlap or leave the track);
a timeline per file (one mark per event); then the events themselves. Each mark
links to its (first) event and names its events in its hover title.

An agent is told apart by colour *and* by a short label (its initial, longer
only when initials clash) printed in every mark of a file's timeline and at the
head of its lane, so the page reads in grey and for colour-blind eyes; the kind
is a shape (a read round, a write square, a rejection crossed). The lanes scroll
sideways with their axis under a names column that stays in view; a long name
is shortened only as far as it stays unlike the others (whole in its title).
Colours come from a fixed qualitative palette, then by hue rotation past its
twelve; they are given in name order, so an agent's colour is stable within a
page, not across journals.

Big journals (100,000 events and more) stay usable by summarising: the agent
timeline holds the last `LANE_MARKS` reads, writes and rejections; each file's
timeline its last `MARKS_PER_FILE` events (the rest counted); the event list
the last `LISTED_EVENTS` events in pages of `PAGE` (collapsed `<details>`,
newest page open), with a count table for the older ones; diffs are embedded
for the last `DIFFED_EVENTS` content changes, each cut at `DIFF_LINES` lines
(`editjournal show SEQ` gives any event in full). Built with `html.escape`
and string joins: a template library would not make it shorter.

A change an agent's shell command made (a shell window's edit) shows the command
(`timeline.commands_of`): whole in the event list, cut to TIP_COMMAND characters
in hover titles; the stats table counts each agent's shell writes and lists its
commands.
"""

from __future__ import annotations

import colorsys
import html
import re
import time
from collections import Counter, deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from editjournal.daemon.audit import lanelayout
from editjournal.daemon.audit.stats import agent_stats
from editjournal.daemon.audit.timeline import commands_of
from editjournal.daemon.audit.views import event_diff
from editjournal.daemon.store.journal import Journal
from editjournal.schemas.events import Record
from editjournal.schemas.tools import AgentStats
from editjournal.schemas.units import format_elapsed

MARKS_PER_FILE = 400
LANE_MARKS = 3_000
LISTED_EVENTS = 5_000
PAGE = 500
DIFFED_EVENTS = 1_000
DIFF_LINES = 400
TIP_COMMAND = 200  # characters of a shell command a hover title holds
LINE_COMMAND = 80  # ... and an event's row (its details hold it whole)
TIP_PATHS = 10  # paths a cluster's hover title names
OUTSIDE, DAEMON = "outside", "daemon"
FIXED = {OUTSIDE: ("#777777", "✎"), DAEMON: ("#bbbbbb", "⚙")}  # colour, label
# Okabe & Ito's colour-blind-safe set, then Paul Tol's: every pair is at least
# 30 apart (CIELAB ΔE) and at least 13 apart under simulated deuteranopia,
# protanopia and tritanopia; the label in each mark tells the closest apart.
PALETTE = (
    "#0072b2",  # blue
    "#e69f00",  # orange
    "#009e73",  # bluish green
    "#cc79a7",  # reddish purple
    "#cc3311",  # red
    "#f0e442",  # yellow
    "#99ddff",  # pale blue
    "#332288",  # indigo
    "#882255",  # wine
    "#999933",  # olive
    "#663300",  # brown
    "#785ef0",  # violet
)
REJECTED = frozenset({"edit_rejected", "hunk_rejected"})
CHANGES = frozenset({"edit_applied", "outside_change"})
SHAPES = {"file_read": "rd", "edit_applied": "wr", "outside_change": "wr"} | dict.fromkeys(
    REJECTED, "rej"
)  # the kinds the agent timeline shows, and the shape of each

_CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{border:1px solid #ccc;padding:2px 8px}
th{background:#f4f4f4;text-align:left}.num{text-align:right}
.tl{display:flex;flex-wrap:wrap;gap:2px;margin:2px 0 10px}
.m{display:inline-block;box-sizing:border-box;min-width:16px;height:16px;padding:0 2px;
border-radius:2px;font:bold 10px/16px system-ui,sans-serif;text-align:center;
text-decoration:none;white-space:nowrap;vertical-align:middle}
.m.rd{border-radius:8px}.m.rej{outline:2px solid #d00;outline-offset:-1px}
.lanes{display:grid;grid-template-columns:max-content max-content;overflow-x:auto;
margin:6px 0 18px;padding-bottom:4px}
.lane{display:contents}
.who{position:sticky;left:0;z-index:2;background:#fff;padding-right:8px;white-space:nowrap;
line-height:20px;border-bottom:1px solid #eee}
.track{position:relative;height:20px;margin-left:8px;border-bottom:1px solid #eee}
.track .m{position:absolute;top:2px;width:24px;padding:0}
.track .m:hover{z-index:1;outline:2px solid #000}
.axis .track{height:1.5em;font-size:11px;color:#555}
.tick{position:absolute;top:0;border-left:1px solid #999;padding-left:3px;white-space:nowrap}
.tick.end{border-left:0;border-right:1px solid #999;padding:0 3px 0 0;transform:translateX(-100%)}
.ev{margin:1px 0}.ev.rej>summary,.ev.rej{background:#fde8e8}
pre{background:#f8f8f8;padding:6px;overflow-x:auto;margin:4px 0 8px}
.add{color:#116611}.del{color:#aa1111}.hunk{color:#555}code{font-size:13px}
.cmd{white-space:pre-wrap;word-break:break-all;background:#eef3f8}
.key{white-space:nowrap}
"""


@dataclass(frozen=True)
class Look:
    """How one agent shows: its colour, its label in every mark, its CSS class."""

    colour: str
    label: str
    css: str


@dataclass
class _Scan:
    """What one pass over the journal keeps: bounded, whatever the journal's length."""

    total: int
    first_ts: int | None
    last_ts: int | None
    files: dict[str, deque[Record]]
    file_counts: Counter[str]
    listed: deque[Record]
    older: Counter[tuple[str, str]]  # (agent, kind) of events not listed
    agents: set[str]
    lanes: deque[Record]  # the last reads, writes and rejections
    lane_counts: Counter[str]  # reads, writes and rejections by agent, all of them


def render(journal: Journal, title: str) -> Iterator[str]:
    """The page, in pieces (write them in order)."""
    scan = _scan(journal.records())
    stats = agent_stats(journal.records())
    looks = agent_looks(scan.agents)
    yield f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{_e(title)}</title>"
    yield f"<style>{_CSS}{_look_css(looks)}</style></head><body><h1>{_e(title)}</h1>"
    yield _overview(scan, looks)
    yield _stats_table(stats, looks)
    yield from _lanes(scan, looks)
    yield from _timelines(scan, looks)
    yield from _events(journal, scan, looks)
    yield "</body></html>\n"


def _scan(records: Iterable[Record]) -> _Scan:
    scan = _Scan(0, None, None, {}, Counter(), deque(maxlen=LISTED_EVENTS), Counter(), set(),
                 deque(maxlen=LANE_MARKS), Counter())  # fmt: skip
    for record in records:
        scan.total += 1
        scan.first_ts = record.ts if scan.first_ts is None else scan.first_ts
        scan.last_ts = record.ts
        who = _who(record)
        scan.agents.add(who)
        if len(scan.listed) == LISTED_EVENTS:
            old = scan.listed[0]
            scan.older[(_who(old), old.kind)] += 1
        scan.listed.append(record)
        if record.path is not None:
            scan.files.setdefault(record.path, deque(maxlen=MARKS_PER_FILE)).append(record)
            scan.file_counts[record.path] += 1
        if record.kind in SHAPES:
            scan.lanes.append(record)
            scan.lane_counts[who] += 1
    return scan


def _who(record: Record) -> str:
    if record.kind == "outside_change":
        return OUTSIDE
    return record.agent or DAEMON


def agent_looks(agents: Iterable[str]) -> dict[str, Look]:
    """Each agent's colour and label: the palette in name order, then hue rotation;
    outside and daemon grey, with labels no agent's can take."""
    names = sorted(set(agents) - set(FIXED), key=name_order)
    labels = _labels(names)
    looks: dict[str, Look] = {}
    for n, name in enumerate(names):
        looks[name] = Look(palette_colour(n), labels[name], f"a{n}")
    for n, (name, (colour, label)) in enumerate(FIXED.items()):
        looks[name] = Look(colour, label, f"x{n}")
    return looks


def name_order(name: str) -> tuple[bool, list[str | int]]:
    """Agents by name, numbers by value (`agent-2` before `agent-10`); outside and
    daemon last."""
    parts = re.split(r"(\d+)", name)
    return name in FIXED, [int(p) if n % 2 else p for n, p in enumerate(parts)]


def palette_colour(n: int) -> str:
    """The nth agent's colour: the palette, then hues a golden angle apart, lightness
    alternating so that neighbours in the rotation differ in two ways."""
    if n < len(PALETTE):
        return PALETTE[n]
    k = n - len(PALETTE)
    hue = (17 + k * 137.508) % 360 / 360
    rgb = colorsys.hls_to_rgb(hue, 0.38 if k % 2 else 0.58, 0.7)
    return "#" + "".join(f"{round(c * 255):02x}" for c in rgb)


def _labels(names: list[str]) -> dict[str, str]:
    """Each name's initial; where initials clash, the initial and the name's last word
    (`agent-a` -> `Aa`, `claude-10` -> `C10`), else its first letters (`Al`, `Am`),
    else a number: unique, and never a label outside or daemon has."""
    groups: dict[str, list[str]] = {}
    for name in names:
        groups.setdefault(name[:1].upper(), []).append(name)
    reserved = {label for _, label in FIXED.values()}
    labels: dict[str, str] = {}
    for initial, group in groups.items():
        words = [(_last_word(name), name) for name in group]
        tries = [[initial]] if len(group) == 1 else []
        tries.append([initial + (w[:3] or name[1:2]) for w, name in words])
        tries.append([initial + (w[-3:] or name[1:3]) for w, name in words])
        tries += [[initial + name[1:k] for name in group] for k in (2, 3)]
        tries.append([f"{initial}{i}" for i in range(1, len(group) + 1)])
        chosen = next(t for t in tries if len(set(t)) == len(group) and not reserved & set(t))
        labels.update(zip(group, chosen, strict=True))
    return labels


def _last_word(name: str) -> str:
    """What follows the name's last separator (`-`, `_`, ...); empty when it has none."""
    match = re.search(r"[^0-9A-Za-z]([0-9A-Za-z]+)$", name[1:])
    return match.group(1) if match else ""


def _ink(colour: str) -> str:
    """Black or white, whichever reads better on `colour` (WCAG contrast)."""
    channels = [int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    luminance = 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]
    return "#000" if (luminance + 0.05) / 0.05 > 1.05 / (luminance + 0.05) else "#fff"


def _look_css(looks: dict[str, Look]) -> str:
    return "".join(
        f".{look.css}{{background:{look.colour};color:{_ink(look.colour)}}}"
        for look in looks.values()
    )


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


# What a page would act on rather than show (C0 but tab and newline, DEL, C1, line and
# paragraph separators, bidi controls: `schemas.wire.is_control`'s set, newlines kept:
# a command's lines are its own)
_CONTROL = re.compile(
    r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]"
)


def _command(text: str) -> str:
    """A shell command as the page shows it: escaped for HTML, and each control
    character spelt out (`\\x1b`), so a command cannot restyle or reorder the page."""
    return _e(_visible(text))


def _visible(text: str) -> str:
    return _CONTROL.sub(lambda m: _spelt(m.group(0)), text)


def _spelt(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def _time(ms: int | None) -> str:
    return "-" if ms is None else time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ms / 1000))


def _chip(name: str, looks: dict[str, Look]) -> str:
    """The agent's mark as the legend and the event list show it."""
    look = looks[name]
    return f"<span class='m {look.css}'>{_e(look.label)}</span>"


def _named(name: str, looks: dict[str, Look]) -> str:
    return f"{_chip(name, looks)} {_e(name)}" if name in looks else _e(name)


def _overview(scan: _Scan, looks: dict[str, Look]) -> str:
    legend = " &nbsp; ".join(  # an entry never breaks inside a long name
        f"<span class='key'>{_named(n, looks)}</span>" for n in sorted(scan.agents, key=name_order)
    )
    span = ""
    if scan.first_ts is not None and scan.last_ts is not None:
        span = f" ({format_elapsed(scan.last_ts - scan.first_ts)})"
    return (
        f"<p>{scan.total} events, {len(scan.files)} files, {_time(scan.first_ts)} to"
        f" {_time(scan.last_ts)}{span}.</p><p>{legend}</p>"
    )


def _stats_table(stats: list[AgentStats], looks: dict[str, Look]) -> str:
    head = (
        "<h2>Agents</h2><table><tr><th>agent</th><th>reads</th><th>applied writes</th>"
        "<th>rejected</th><th>rejections by code</th><th>rebased edits</th>"
        "<th>recoveries</th><th>unrecovered</th><th>shell writes</th>"
        "<th>mean recovery (events / time / attempts)</th></tr>"
    )
    rows = []
    for s in sorted(stats, key=lambda s: name_order(s.agent)):
        codes = ", ".join(f"{_e(c)}: {n}" for c, n in s.rejections.items()) or "-"
        mean = "-"
        if s.recoveries and s.mean_recovery_ms is not None:
            took = format_elapsed(s.mean_recovery_ms)
            mean = f"{s.mean_recovery_events} / {took} / {s.mean_recovery_attempts}"
        cells = (s.reads, s.applied_writes, s.rejected_writes)
        nums = "".join(f"<td class='num'>{n}</td>" for n in cells)
        rows.append(
            f"<tr><td>{_named(s.agent, looks)}</td>"
            f"{nums}<td>{codes}</td><td class='num'>{s.rebased_edits}</td>"
            f"<td class='num'>{s.recoveries}</td><td class='num'>{s.unrecovered}</td>"
            f"<td>{_shell_cell(s)}</td><td>{mean}</td></tr>"
        )
    return head + "".join(rows) + "</table>"


def _shell_cell(s: AgentStats) -> str:
    """How many of the agent's writes its shell commands made, the commands behind a
    click (whole, each with its count of changes)."""
    if not s.shell_writes:
        return "-"
    listed = "".join(
        f"<pre class='cmd'>$ {_command(command)}</pre><small>{n} change(s)</small>"
        for command, n in s.shell_commands.items()
    )
    return f"<details><summary>{s.shell_writes}</summary>{listed}</details>"


def _lanes(scan: _Scan, looks: dict[str, Look]) -> Iterator[str]:
    """One lane per agent, marks placed by time: who was editing what, when. The lanes
    scroll sideways together with their axis, the names column staying in view."""
    yield "<h2>Timeline</h2>"
    marks = list(scan.lanes)
    if not marks:
        yield "<p>No reads, writes or rejections yet.</p>"
        return
    start, end = min(r.ts for r in marks), max(r.ts for r in marks)
    yield _lanes_intro(scan, start, end)
    listed_from = scan.listed[0].seq if scan.listed else 0
    by_who: dict[str, list[Record]] = {}
    for record in marks:
        by_who.setdefault(_who(record), []).append(record)
    width = lanelayout.track_width(max(len(lane) for lane in by_who.values()))
    shown = lanelayout.short_names(by_who)
    yield "<div class='lanes'>"
    for who in sorted(by_who, key=name_order):
        lane = sorted(by_who[who], key=lambda r: (r.ts, r.seq))
        times = [r.ts for r in lane]
        track = "".join(
            _cluster(lane[c.first : c.last + 1], c.left, looks, listed_from)
            for c in lanelayout.clusters(times, start, end, width)
        )
        name = f"{_chip(who, looks)} {_e(shown[who])}"
        yield (
            f"<div class='lane' data-agent='{_e(who)}'><span class='who' title='{_e(who)}'>"
            f"{name}</span><div class='track' style='width:{width}px'>{track}</div></div>"
        )
    yield _axis(start, end, width) + "</div>"
    idle = sorted(set(scan.lane_counts) - set(by_who), key=name_order)
    if idle:
        yield f"<p>Nothing in this window from: {_e(', '.join(idle))}.</p>"


def _lanes_intro(scan: _Scan, start: int, end: int) -> str:
    total = sum(scan.lane_counts.values())
    which = "every read, write and rejection"
    if total > len(scan.lanes):
        which = f"the last {len(scan.lanes)} of {total} reads, writes and rejections"
    shapes = (
        "<span class='m rd x1'>●</span> read, <span class='m x1'>■</span> write,"
        " <span class='m rej x1'>✕</span> rejected, <span class='m x1'>12</span> twelve"
        " events too close in time to tell apart (drawn at the first; square if any"
        " wrote, crossed if any was rejected)"
    )
    return (
        f"<p>To scale: {which}, {_time(start)} to {_time(end)}"
        f" ({format_elapsed(end - start)}); {shapes}. Hover a mark for its events.</p>"
    )


def _cluster(records: list[Record], left: float, looks: dict[str, Look], listed_from: int) -> str:
    """One mark in a lane: one event, or several close in time (their count shown). Its
    shape is the strongest kind among them: a rejection, else a write, else a read."""
    kinds = {SHAPES[r.kind] for r in records}
    shape = next(k for k in ("rej", "wr", "rd") if k in kinds)
    look = looks[_who(records[0])]
    cls = f"m {shape} {look.css}"
    if len(records) == 1:
        text, tip = ("✕" if shape == "rej" else ""), _lane_title(records[0])
    else:
        text, tip = lanelayout.count_text(len(records)), _cluster_title(records)
    attrs = f"class='{cls}' title='{_e(tip)}' style='left:{left:.1f}px'"
    linked = [r for r in records if r.seq >= listed_from]
    if not linked:  # not in the event list: nothing to link to
        return f"<span {attrs}>{text}</span>"
    return f"<a {attrs} href='#e{linked[0].seq}'>{text}</a>"


def _lane_title(record: Record) -> str:
    where = f"{record.path or '-'} by {_who(record)}, {_stamp(record.ts)}"
    return f"#{record.seq} {record.kind} {where}{_tip_command(record)}"


def _cluster_title(records: list[Record]) -> str:
    """`N events, #a to #b, from .. to .. by who: 5 file_read, 5 edit_applied; paths`."""
    first, last = records[0], records[-1]
    kinds = Counter(r.kind for r in records)
    paths = list(dict.fromkeys(r.path or "-" for r in records))
    more = len(paths) - TIP_PATHS
    named = ", ".join(paths[:TIP_PATHS]) + (f" and {more} more" if more > 0 else "")
    return (
        f"{len(records)} events, #{first.seq} to #{last.seq}, {_stamp(first.ts)} to"
        f" {_stamp(last.ts)} by {_who(first)}: "
        + ", ".join(f"{n} {kind}" for kind, n in kinds.most_common())
        + f"; {named}"
    )


def _stamp(ms: int) -> str:
    return f"{_time(ms)}.{ms % 1000:03d}"


def _first_line(command: str, width: int) -> str:
    """The command's first line, cut at `width` (`…` when anything is left out)."""
    lines = command.strip().splitlines() or [""]
    first = lines[0]
    if len(first) > width or len(lines) > 1:
        return first[: width - 1] + "…"
    return first


def _tip_command(record: Record) -> str:
    """` $ command` for a hover title (cut at TIP_COMMAND), empty when no shell made it."""
    found = commands_of(record.event)
    if not found:
        return ""
    command = found[0] if len(found) == 1 else " | or | ".join(found)
    cut = command[:TIP_COMMAND] + ("…" if len(command) > TIP_COMMAND else "")
    return f" $ {_visible(cut)}"


def _axis(start: int, end: int, width: int) -> str:
    """Ticks at the start, each quarter and the end, each at the centre a mark of that
    time has; the last one's label ends at its tick, inside the track."""
    ticks = [_tick("", lanelayout.centre(start, start, end, width), _time(start))]
    if end > start:
        for share in (25, 50, 75, 100):
            took = format_elapsed((end - start) * share / 100)
            at = lanelayout.centre(start + (end - start) * share // 100, start, end, width)
            ticks.append(_tick(" end" if share == 100 else "", at, f"+{took}"))
    return (
        f"<div class='lane axis'><span class='who'></span>"
        f"<div class='track' style='width:{width}px'>{''.join(ticks)}</div></div>"
    )


def _tick(cls: str, at: float, text: str) -> str:
    return f"<span class='tick{cls}' style='left:{at:.1f}px'>{_e(text)}</span>"


def _timelines(scan: _Scan, looks: dict[str, Look]) -> Iterator[str]:
    yield "<h2>Files</h2>"
    listed_from = scan.listed[0].seq if scan.listed else 0
    for path in sorted(scan.files):
        marks = scan.files[path]
        hidden = scan.file_counts[path] - len(marks)
        more = f" ({hidden} earlier events not shown)" if hidden else ""
        count = f"<small>{scan.file_counts[path]} events{more}</small>"
        yield f"<h3><code>{_e(path)}</code> {count}</h3>"
        tips = (
            f"#{r.seq} {_time(r.ts)} {_who(r)}: {r.event.summary()}{_tip_command(r)}" for r in marks
        )
        row = "".join(_mark(r, looks, listed_from, t) for r, t in zip(marks, tips, strict=True))
        yield f"<div class='tl'>{row}</div>"


def _mark(
    record: Record, looks: dict[str, Look], listed_from: int, tip: str, style: str = ""
) -> str:
    """An event's mark: the agent's colour and label, its kind's shape, `tip` on hover;
    a link to the event when the list below holds it."""
    look = looks[_who(record)]
    shape = SHAPES.get(record.kind, "")
    cls = f"m {shape} {look.css}" if shape else f"m {look.css}"
    label = _e(look.label) + ("✕" if shape == "rej" else "")
    attrs = f"class='{cls}' title='{_e(tip)}'" + (f" style='{style}'" if style else "")
    if record.seq < listed_from:  # not in the event list: nothing to link to
        return f"<span {attrs}>{label}</span>"
    return f"<a {attrs} href='#e{record.seq}'>{label}</a>"


def _events(journal: Journal, scan: _Scan, looks: dict[str, Look]) -> Iterator[str]:
    yield "<h2>Events</h2>"
    if scan.older:
        yield from _older(scan)
    listed = list(scan.listed)
    diffed = {r.seq for r in listed if r.kind in CHANGES}
    diffed = set(sorted(diffed)[-DIFFED_EVENTS:])
    pages = [listed[i : i + PAGE] for i in range(0, len(listed), PAGE)]
    for n, page in enumerate(pages):
        is_open = " open" if n == len(pages) - 1 else ""
        yield f"<details{is_open}><summary>events {page[0].seq} to {page[-1].seq}</summary>"
        for record in page:
            yield _event(journal, record, looks, record.seq in diffed)
        yield "</details>"


def _older(scan: _Scan) -> Iterator[str]:
    n = sum(scan.older.values())
    yield f"<p>The first {n} events are summarised (by agent and kind); the last"
    yield f" {len(scan.listed)} are listed below.</p><table><tr><th>agent</th><th>kind</th>"
    yield "<th>events</th></tr>"
    for (who, kind), count in sorted(scan.older.items()):
        yield f"<tr><td>{_e(who)}</td><td>{_e(kind)}</td><td class='num'>{count}</td></tr>"
    yield "</table>"


def _event(journal: Journal, record: Record, looks: dict[str, Look], with_diff: bool) -> str:
    who = _who(record)
    rej = " rej" if record.kind in REJECTED else ""
    mark = "✕ " if rej else ""
    line = (
        f"{_chip(who, looks)} <b>#{record.seq}</b> {_time(record.ts)} {_e(who)}"
        f" <code>{_e(record.kind)}</code> {mark}{_e(record.event.summary())}"
    )
    body = _diff_html(journal, record) if with_diff else ""
    if rej:  # what the agent was told
        body = f"<p>{_e(getattr(record.event, 'message', ''))}</p>"
    if record.kind in CHANGES and not with_diff:
        body = f"<p>diff not embedded: <code>editjournal show {record.seq}</code></p>"
    commands = commands_of(record.event)
    if commands:  # whole: several when the agent had several running (which, unknown)
        ran = "".join(f"<pre class='cmd'>$ {_command(c)}</pre>" for c in commands)
        line += f" <code>$ {_command(_first_line(commands[0], LINE_COMMAND))}</code>"
        body = ran + body
    if not body:
        return f"<div class='ev{rej}' id='e{record.seq}'>{line}</div>"
    return f"<details class='ev{rej}' id='e{record.seq}'><summary>{line}</summary>{body}</details>"


def _diff_html(journal: Journal, record: Record) -> str:
    diff = event_diff(journal, record)
    if diff is None:
        return "<p>(content not stored: no diff)</p>"
    rows = diff.splitlines()
    cut = len(rows) - DIFF_LINES
    shown = "".join(_diff_row(row) for row in rows[:DIFF_LINES])
    more = f"\n… {cut} more lines: editjournal show {record.seq}" if cut > 0 else ""
    return f"<pre>{shown}{_e(more)}</pre>"


def _diff_row(row: str) -> str:
    cls = ""
    if row.startswith("@@"):
        cls = "hunk"
    elif row.startswith("+") and not row.startswith("+++"):
        cls = "add"
    elif row.startswith("-") and not row.startswith("---"):
        cls = "del"
    text = _e(row) + "\n"
    return f"<span class='{cls}'>{text}</span>" if cls else text
