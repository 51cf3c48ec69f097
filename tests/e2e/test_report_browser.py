"""The HTML report's timeline as people see it: Debian's headless Chromium loads the
report of a busy journal from disk (file://, offline) and the page itself measures
what it drew (issue 39: marks close in time overlapped and clipped, three lanes read
`claude-code…`, the timeline hid its last events and the end of its axis).

The journal: twenty agents, six of them `claude-code:<uuid>` and three
`gemini-cli:<uuid>` (long names that share a prefix), each reading its files and
patching some in rounds, one refused a stale edit, and an outside editor: 2,000
events or more, written by a real daemon for real clients in 200 requests (one reads
sixteen files, one patches four). Its events crowd together in time, which is the
case that broke.

The browser is Debian's `chromium` (installed by the session fixture when missing),
driven over the DevTools protocol (tests/e2e/browser_support.py). A screenshot of
the timeline is written beside the report; with EDITJOURNAL_DOCS_SCREENSHOT=1 it
also replaces docs/img/report-timeline.png (the docs' picture is regenerated on
purpose, never by every run of the suite).
"""

from __future__ import annotations

import json
import os
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from editjournal.client import Client, RequestError
from editjournal.daemon.audit import open_readonly
from tests.conftest import start, wait_until
from tests.e2e.browser_support import chromium, ensure_chromium
from tests.e2e.cli_support import cli

pytestmark = pytest.mark.slow

LONG = [f"claude-code:{uuid.uuid5(uuid.NAMESPACE_DNS, f'c{n}.example')}" for n in range(6)]
LONG += [f"gemini-cli:{uuid.uuid5(uuid.NAMESPACE_DNS, f'g{n}.example')}" for n in range(3)]
AGENTS = [*LONG, *(f"agent-{n}" for n in range(1, 10)), "codex", "cursor"]
ROUNDS = 5  # each agent reads its files then patches some, once a round
FILES_EACH = 16  # files per agent, all read in one request...
PATCHED = 4  # ... and this many patched in one (a write costs the daemon 4 reads' CPU)
VIEWPORT = (1280, 900)  # the screenshot's: the timeline fits
NARROW = 720  # the lanes must scroll sideways
DOCS_PNG = Path(__file__).parents[2] / "docs" / "img" / "report-timeline.png"
ROOT = Path(__file__).parents[2]


@dataclass
class Seen:
    """What the page measured of itself (by viewport width), what the browser saw it
    do, and what the journal holds."""

    pages: dict[int, dict[str, Any]]
    requests: list[str]
    errors: list[str]
    last_seq: int  # the last read, write or rejection
    lane_events: int  # how many reads, writes and rejections
    png: bytes


def busy_run(root: Path) -> None:
    """Twenty agents read their sixteen files each and patch four, round after round;
    agent-1's stale anchor is refused once; an editor saves two files."""
    for n in range(len(AGENTS)):
        for f in range(FILES_EACH):
            (root / f"a{n:02d}" / f"f{f}.txt").parent.mkdir(exist_ok=True)
            (root / f"a{n:02d}" / f"f{f}.txt").write_text("v0\n")
    daemon = start(root)
    try:
        clients = [daemon.client(name) for name in AGENTS]
        for r in range(ROUNDS):
            for n, client in enumerate(clients):
                paths = [f"a{n:02d}/f{f}.txt" for f in range(FILES_EACH)]
                client.read_many_files(paths)
                client.apply_patch(operations=[_bump(p, r) for p in paths[:PATCHED]])
            if r == ROUNDS // 2:
                _refused_then_recovered(clients[AGENTS.index("agent-1")], clients[0])
        _outside_saves(root, clients[-1])
    finally:
        daemon.stop()


def _bump(path: str, r: int) -> dict[str, str]:
    return {"type": "update_file", "path": path, "diff": f"@@\n-v{r}\n+v{r + 1}\n"}


def _refused_then_recovered(agent: Client, other: Client) -> None:
    """`agent` edits a line `other` changed after its read: refused, then it reads again."""
    (Path(agent.root) / "shared.txt").write_text("one\ntwo\n")
    stale = {r.text: r.hash for r in agent.read_file("shared.txt", hashes=True).lines or []}
    other.read_file("shared.txt")
    other.edit_file("shared.txt", "two\n", "two, changed\n")
    with pytest.raises(RequestError) as refused:
        agent.edit("shared.txt", [{"op": "replace_line", "hash": stale["two"], "content": "2"}])
    assert refused.value.code == "anchor_stale"
    fresh = {r.text: r.hash for r in agent.read_file("shared.txt", hashes=True).lines or []}
    agent.edit("shared.txt", [{"op": "replace_line", "hash": fresh["one"], "content": "1"}])


def _outside_saves(root: Path, client: Client) -> None:
    for path in ("a00/f0.txt", "a01/f0.txt"):
        (root / path).write_text("an editor saved this\n")
    wait_until(
        lambda: len(client.log(kind="outside_change", limit=10).events) >= 2,
        20,
        "the editor's saves to be recorded",
    )


# The page measures itself: every rectangle in CSS pixels, in the lanes' scrollable
# content where that is what counts (a mark is clipped if it leaves its track or the
# area the lanes scroll over; an end of the axis past it is lost).
MEASURE = """
(() => {
  const box = e => e.getBoundingClientRect();
  const lanes = document.querySelector('.lanes');
  const within = (inner, outer) => inner.left >= outer.left - 0.5
    && inner.right <= outer.right + 0.5 && inner.top >= outer.top - 0.5
    && inner.bottom <= outer.bottom + 0.5;
  const describe = (e) => (e.title || e.textContent).slice(0, 120);
  lanes.scrollLeft = 0;
  const lb = box(lanes);
  const content = {left: lb.left, top: lb.top, right: lb.left + lanes.scrollWidth,
                   bottom: lb.top + lanes.scrollHeight};
  const marks = [...document.querySelectorAll('.track .m, .tl .m')]
    .map(e => ({e, r: box(e)})).sort((a, b) => a.r.left - b.r.left);
  const overlaps = [];
  for (let i = 0; i < marks.length; i++) {
    const a = marks[i].r;
    for (let j = i + 1; j < marks.length && marks[j].r.left < a.right - 0.5; j++) {
      const b = marks[j].r;
      if (b.top < a.bottom - 0.5 && a.top < b.bottom - 0.5)
        overlaps.push([describe(marks[i].e), describe(marks[j].e)]);
    }
  }
  const clipped = [];
  for (const e of document.querySelectorAll('.track .m, .track .tick')) {
    const r = box(e);
    if (!within(r, box(e.closest('.track'))) || !within(r, content)) clipped.push(describe(e));
    else if (e.scrollWidth > e.clientWidth + 0.5) clipped.push('text of ' + describe(e));
  }
  const names = [...document.querySelectorAll('.lane[data-agent]')].map(lane => {
    const who = lane.querySelector('.who');
    return {agent: lane.dataset.agent, shown: who.innerText.trim(),
            cut: who.scrollWidth > who.clientWidth + 0.5};
  });
  const seen = (e) => {
    e.scrollIntoView({block: 'center', inline: 'center'});
    const r = box(e);
    const hit = document.elementFromPoint((r.left + r.right) / 2, (r.top + r.bottom) / 2);
    return r.left >= 0 && r.right <= innerWidth && r.top >= 0 && r.bottom <= innerHeight
      && (hit === e || e.contains(hit));
  };
  const last = [...document.querySelectorAll('.track .m')].find(
    e => e.title.startsWith('#LAST ') || e.title.includes(' to #LAST, '));
  const ticks = [...document.querySelectorAll('.axis .tick')];
  const result = {
    marks: marks.length,
    events: [...document.querySelectorAll('.track .m')]
      .reduce((n, e) => n + (/^\\d+$/.test(e.textContent) ? +e.textContent : 1), 0),
    scrollsNow: lanes.scrollWidth > lanes.clientWidth,
    laneMarks: document.querySelectorAll('.track .m').length,
    overlaps: overlaps.slice(0, 20), overlapCount: overlaps.length,
    clipped: clipped.slice(0, 20), clippedCount: clipped.length,
    names,
    scrolls: getComputedStyle(lanes).overflowX,
    lanesFit: lb.left >= 0 && lb.right <= innerWidth + 0.5,
    axisInLanes: ticks.length > 0 && ticks.every(t => lanes.contains(t)),
    lastMark: last ? describe(last) : null,
    lastReachable: last ? seen(last) : false,
    axisEndReachable: ticks.length > 0 && seen(ticks[ticks.length - 1]),
    axisStartReachable: ticks.length > 0 && seen(ticks[0]),
  };
  lanes.scrollLeft = 0;
  scrollTo(0, 0);
  const heading = [...document.querySelectorAll('h2')].find(h => h.textContent === 'Timeline');
  const top = box(heading).top + scrollY, end = box(lanes).bottom + scrollY;
  result.clip = {x: 0, y: top - 24, width: innerWidth, height: end - top + 32};
  return result;
})()
"""


@pytest.fixture(scope="session")
def chromium_binary() -> Path:
    """Debian's chromium, installed now if missing; the test fails when it cannot be."""
    return ensure_chromium()


def test_a_busy_journals_timeline_reads_in_a_real_browser(tmp_path: Path, chromium_binary: Path):
    """One test, not one per check: pytest-xdist may run a module's tests on different
    workers, each then paying for its own journal and browser."""
    seen = _seen(tmp_path, chromium_binary)
    for width, page in seen.pages.items():
        where = f"at {width} px wide"
        assert page["events"] == seen.lane_events >= 2_000, where  # every event in a mark
        assert page["overlapCount"] == 0, (where, page["overlaps"])
        assert page["clippedCount"] == 0, (where, page["clipped"])
        names = page["names"]
        assert sorted(n["agent"] for n in names) == sorted([*AGENTS, "outside"])
        shown = [n["shown"] for n in names]
        assert len(set(shown)) == len(shown), (where, shown)
        assert not [n for n in names if n["cut"]], f"a lane's name is cut {where}"
        assert page["lanesFit"] and page["scrolls"] == "auto" and page["axisInLanes"], where
        assert page["lastMark"] is not None, f"no lane mark holds #{seen.last_seq}"
        assert page["lastReachable"], (where, page["lastMark"])
        assert page["axisStartReachable"] and page["axisEndReachable"], where
    assert seen.pages[NARROW]["scrollsNow"], "the narrow page's lanes do not scroll"
    assert seen.requests == []  # offline: nothing asked for but the file itself
    assert seen.errors == []
    assert seen.png.startswith(b"\x89PNG\r\n\x1a\n") and len(seen.png) > 10_000


def _seen(tmp_path: Path, chromium_binary: Path) -> Seen:
    """The busy journal's report, rendered by the CLI, loaded from disk in Chromium and
    measured at two widths: one it fits in, and one it must scroll in."""
    root = tmp_path / "ws"
    root.mkdir()
    busy_run(root)
    out = tmp_path / "report.html"
    done = cli(root, "report", "--html", str(out))
    assert done.returncode == 0, done.stderr
    lane_seqs = [
        r.seq
        for r in open_readonly(root / ".editjournal" / "journal.db").records()
        if r.kind in {"file_read", "edit_applied", "edit_rejected", "outside_change"}
    ]
    url = out.resolve().as_uri()
    measure = MEASURE.replace("LAST", str(max(lane_seqs)))
    with chromium(chromium_binary) as browser:
        browser.open(url, *VIEWPORT)
        pages = {VIEWPORT[0]: browser.evaluate(measure)}
        png = browser.screenshot(pages[VIEWPORT[0]]["clip"])
        browser.resize(NARROW, VIEWPORT[1])
        pages[NARROW] = browser.evaluate(measure)
        events = list(browser.events)
    (tmp_path / "report-timeline.png").write_bytes(png)
    if os.environ.get("EDITJOURNAL_DOCS_SCREENSHOT") == "1":
        DOCS_PNG.parent.mkdir(exist_ok=True)
        DOCS_PNG.write_bytes(png)
    return Seen(pages, _requests(events, url), _errors(events), max(lane_seqs), len(lane_seqs), png)


def _requests(events: list[dict[str, Any]], url: str) -> list[str]:
    """Every URL the page asked for but its own file."""
    sent = (
        e["params"]["request"]["url"]
        for e in events
        if e.get("method") == "Network.requestWillBeSent"
    )
    return [u for u in sent if u != url]


def _errors(events: list[dict[str, Any]]) -> list[str]:
    """Console errors, uncaught exceptions and error-level log entries, as text."""
    found = []
    for event in events:
        method, params = event.get("method"), event.get("params", {})
        if method == "Runtime.consoleAPICalled" and params.get("type") == "error":
            found.append(json.dumps(params.get("args")))
        elif method == "Runtime.exceptionThrown":
            found.append(json.dumps(params.get("exceptionDetails")))
        elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
            found.append(json.dumps(params["entry"]))
    return found
