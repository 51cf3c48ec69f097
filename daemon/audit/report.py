"""`editjournal report --html`: one self-contained HTML page about a journal.

No script, no network, no CDN: inline CSS, and `<details>` for every diff, so
it opens anywhere and works with scripting off. Sections: per-agent stats,
a timeline per file (one mark per event, coloured by agent, rejections marked
with a cross; each mark links to its event), then the events themselves.

Big journals (100,000 events and more) stay usable by summarising: the
timeline shows each file's last `MARKS_PER_FILE` events and counts the rest;
the event list holds the last `LISTED_EVENTS` events in pages of `PAGE`
(collapsed `<details>`, newest page open), with a count table for the older
ones; diffs are embedded for the last `DIFFED_EVENTS` content changes, each cut
at `DIFF_LINES` lines (`editjournal show SEQ` gives any event in full).
Built with `html.escape` and string joins: a template library would not
make 150 lines shorter.
"""

from __future__ import annotations

import hashlib
import html
import time
from collections import Counter, deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from editjournal.daemon.audit.stats import agent_stats
from editjournal.daemon.audit.views import event_diff
from editjournal.daemon.store.journal import Journal
from editjournal.schemas.events import Record
from editjournal.schemas.tools import AgentStats

MARKS_PER_FILE = 400
LISTED_EVENTS = 5_000
PAGE = 500
DIFFED_EVENTS = 1_000
DIFF_LINES = 400
OUTSIDE_COLOUR = "#777777"
REJECTED = frozenset({"edit_rejected", "hunk_rejected"})
CHANGES = frozenset({"edit_applied", "outside_change"})

_CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{border:1px solid #ccc;padding:2px 8px}
th{background:#f4f4f4;text-align:left}.num{text-align:right}
.tl{display:flex;flex-wrap:wrap;gap:2px;margin:2px 0 10px}
.m{display:inline-block;width:10px;height:14px;border-radius:2px;text-decoration:none}
.m.rej{outline:2px solid #d00;color:#fff;font-size:9px;line-height:14px;text-align:center}
.swatch{display:inline-block;width:12px;height:12px;border-radius:2px;margin-right:4px}
.ev{margin:1px 0}.ev.rej>summary,.ev.rej{background:#fde8e8}
pre{background:#f8f8f8;padding:6px;overflow-x:auto;margin:4px 0 8px}
.add{color:#116611}.del{color:#aa1111}.hunk{color:#555}code{font-size:13px}
"""


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


def render(journal: Journal, title: str) -> Iterator[str]:
    """The page, in pieces (write them in order)."""
    scan = _scan(journal.records())
    stats = agent_stats(journal.records())
    colours = _colours(scan.agents)
    yield f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{_e(title)}</title>"
    yield f"<style>{_CSS}</style></head><body><h1>{_e(title)}</h1>"
    yield _overview(scan, colours)
    yield _stats_table(stats, colours)
    yield from _timelines(scan, colours)
    yield from _events(journal, scan, colours)
    yield "</body></html>\n"


def _scan(records: Iterable[Record]) -> _Scan:
    scan = _Scan(0, None, None, {}, Counter(), deque(maxlen=LISTED_EVENTS), Counter(), set())
    for record in records:
        scan.total += 1
        scan.first_ts = record.ts if scan.first_ts is None else scan.first_ts
        scan.last_ts = record.ts
        scan.agents.add(_who(record))
        if len(scan.listed) == LISTED_EVENTS:
            old = scan.listed[0]
            scan.older[(_who(old), old.kind)] += 1
        scan.listed.append(record)
        if record.path is not None:
            scan.files.setdefault(record.path, deque(maxlen=MARKS_PER_FILE)).append(record)
            scan.file_counts[record.path] += 1
    return scan


def _who(record: Record) -> str:
    if record.kind == "outside_change":
        return "outside"
    return record.agent or "daemon"


def _colours(agents: set[str]) -> dict[str, str]:
    """A stable colour per agent name (hue from its hash); outside and daemon grey."""
    out = {"outside": OUTSIDE_COLOUR, "daemon": "#bbbbbb"}
    for name in sorted(agents - set(out)):
        hue = int(hashlib.blake2b(name.encode(), digest_size=2).hexdigest(), 16) % 360
        out[name] = f"hsl({hue},65%,45%)"
    return out


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _time(ms: int | None) -> str:
    return "-" if ms is None else time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ms / 1000))


def _swatch(name: str, colours: dict[str, str]) -> str:
    return f"<span class='swatch' style='background:{colours[name]}'></span>{_e(name)}"


def _overview(scan: _Scan, colours: dict[str, str]) -> str:
    legend = " &nbsp; ".join(_swatch(n, colours) for n in sorted(scan.agents))
    return (
        f"<p>{scan.total} events, {len(scan.files)} files, {_time(scan.first_ts)} to"
        f" {_time(scan.last_ts)}.</p><p>{legend}</p>"
    )


def _stats_table(stats: list[AgentStats], colours: dict[str, str]) -> str:
    head = (
        "<h2>Agents</h2><table><tr><th>agent</th><th>reads</th><th>applied writes</th>"
        "<th>rejected</th><th>rejections by code</th><th>rebased edits</th>"
        "<th>recoveries</th><th>unrecovered</th>"
        "<th>mean recovery (events / ms / attempts)</th></tr>"
    )
    rows = []
    for s in stats:
        codes = ", ".join(f"{_e(c)}: {n}" for c, n in s.rejections.items()) or "-"
        mean = "-"
        if s.recoveries:
            mean = f"{s.mean_recovery_events} / {s.mean_recovery_ms} / {s.mean_recovery_attempts}"
        cells = (s.reads, s.applied_writes, s.rejected_writes)
        nums = "".join(f"<td class='num'>{n}</td>" for n in cells)
        rows.append(
            f"<tr><td>{_swatch(s.agent, colours) if s.agent in colours else _e(s.agent)}</td>"
            f"{nums}<td>{codes}</td><td class='num'>{s.rebased_edits}</td>"
            f"<td class='num'>{s.recoveries}</td><td class='num'>{s.unrecovered}</td>"
            f"<td>{mean}</td></tr>"
        )
    return head + "".join(rows) + "</table>"


def _timelines(scan: _Scan, colours: dict[str, str]) -> Iterator[str]:
    yield "<h2>Files</h2>"
    listed_from = scan.listed[0].seq if scan.listed else 0
    for path in sorted(scan.files):
        marks = scan.files[path]
        hidden = scan.file_counts[path] - len(marks)
        more = f" ({hidden} earlier events not shown)" if hidden else ""
        count = f"<small>{scan.file_counts[path]} events{more}</small>"
        yield f"<h3><code>{_e(path)}</code> {count}</h3>"
        yield "<div class='tl'>" + "".join(_mark(r, colours, listed_from) for r in marks) + "</div>"


def _mark(record: Record, colours: dict[str, str], listed_from: int) -> str:
    who = _who(record)
    tip = _e(f"#{record.seq} {_time(record.ts)} {who}: {record.event.summary()}")
    rejected = record.kind in REJECTED
    cls = "m rej" if rejected else "m"
    inner = "✕" if rejected else ""
    style = f"background:{colours[who]}"
    if record.seq < listed_from:  # not in the event list: nothing to link to
        return f"<span class='{cls}' style='{style}' title='{tip}'>{inner}</span>"
    return f"<a class='{cls}' style='{style}' title='{tip}' href='#e{record.seq}'>{inner}</a>"


def _events(journal: Journal, scan: _Scan, colours: dict[str, str]) -> Iterator[str]:
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
            yield _event(journal, record, colours, record.seq in diffed)
        yield "</details>"


def _older(scan: _Scan) -> Iterator[str]:
    n = sum(scan.older.values())
    yield f"<p>The first {n} events are summarised (by agent and kind); the last"
    yield f" {len(scan.listed)} are listed below.</p><table><tr><th>agent</th><th>kind</th>"
    yield "<th>events</th></tr>"
    for (who, kind), count in sorted(scan.older.items()):
        yield f"<tr><td>{_e(who)}</td><td>{_e(kind)}</td><td class='num'>{count}</td></tr>"
    yield "</table>"


def _event(journal: Journal, record: Record, colours: dict[str, str], with_diff: bool) -> str:
    who = _who(record)
    rej = " rej" if record.kind in REJECTED else ""
    mark = "✕ " if rej else ""
    line = (
        f"<span class='swatch' style='background:{colours[who]}'></span><b>#{record.seq}</b>"
        f" {_time(record.ts)} {_e(who)} <code>{_e(record.kind)}</code> {mark}"
        f"{_e(record.event.summary())}"
    )
    body = _diff_html(journal, record) if with_diff else ""
    if rej:  # what the agent was told
        body = f"<p>{_e(getattr(record.event, 'message', ''))}</p>"
    if record.kind in CHANGES and not with_diff:
        body = f"<p>diff not embedded: <code>editjournal show {record.seq}</code></p>"
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
