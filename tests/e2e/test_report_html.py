"""`editjournal report --html` read as a browser would have to: the page parsed with
`html.parser`, on a journal a real daemon wrote (thirteen agents, one more than the
palette, reading, writing, one refused and recovering, and an outside editor).

No browser runs here, so the page is checked for what makes it readable: it nests,
it needs nothing from the network, every agent has a lane of its own and a colour
of its own, every mark carries its agent's label and its event, marks sit where
their time puts them, and durations are in units a person reads.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import re
import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

import pytest

from editjournal.client import RequestError
from editjournal.daemon.audit import open_readonly
from editjournal.daemon.audit import report as html_report
from editjournal.schemas.units import format_elapsed
from tests.conftest import start, wait_until
from tests.e2e.cli_support import cli

AGENTS = [f"agent-{n}" for n in range(1, 14)]  # their initials all clash
FILES = ("a.txt", "b.txt", "c.txt")
VOID = {"meta", "br", "hr", "img", "input", "link", "wbr", "col", "area", "base", "source"}
PHRASING = {"span", "a", "b", "code", "small", "summary", "td", "th", "h1", "h2", "h3", "title"}
BLOCK = {"div", "p", "table", "tr", "details", "pre", "h1", "h2", "h3", "ul", "ol", "li"}
READABLE = re.compile(r"^\d+(\.\d)? (ms|s|min|h|d)( \d+ (h|min|s))?$")


@dataclass
class Element:
    tag: str
    attrs: dict[str, str]
    parents: list[Element]
    text: str = ""
    children: list[Element] = field(default_factory=list)

    @property
    def classes(self) -> set[str]:
        return set(self.attrs.get("class", "").split())


class Page(HTMLParser):
    """The page as a tree of the elements it opens; what does not nest is noted."""

    def __init__(self) -> None:
        super().__init__()
        self.root = Element("#document", {}, [])
        self.open: list[Element] = [self.root]
        self.elements: list[Element] = []
        self.misnested: list[str] = []
        self.style = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        element = Element(tag, {k: v or "" for k, v in attrs}, list(self.open))
        self.open[-1].children.append(element)
        self.elements.append(element)
        if tag not in VOID:
            self.open.append(element)

    def handle_endtag(self, tag: str) -> None:
        if self.open[-1].tag != tag:
            self.misnested.append(f"</{tag}> closes <{self.open[-1].tag}>")
            return
        self.open.pop()

    def handle_data(self, data: str) -> None:
        for element in self.open:
            element.text += data
        if self.open[-1].tag == "style":
            self.style += data

    def find(self, cls: str) -> list[Element]:
        return [e for e in self.elements if cls in e.classes]


@dataclass
class Report:
    journal: Path
    page: Page
    html: str
    agents: dict[str, int]  # reads, writes and rejections by lane (agent or outside)
    colours: dict[str, str]  # agent -> background, from the page's own CSS
    labels: dict[str, str]  # agent -> label, from the page's legend


@contextmanager
def isolated() -> Iterator[None]:
    """What the autouse fixture does for each test, for this module's one daemon (a
    module's fixture starts before it): no user's registry, home or settings touched."""
    own = Path(tempfile.mkdtemp(prefix="ejr"))  # short: sockets may be placed in it
    try:
        with pytest.MonkeyPatch.context() as patch:
            for name in ("EDITJOURNAL_WORKSPACE", "EDITJOURNAL_AGENT"):
                patch.delenv(name, raising=False)
            patch.setenv("HOME", str(own / "home"))
            patch.setenv("XDG_RUNTIME_DIR", str(own / "run"))
            patch.setenv("XDG_CONFIG_HOME", str(own / "home" / ".config"))
            patch.setenv("XDG_STATE_HOME", str(own / "home" / ".local" / "state"))
            yield
    finally:
        shutil.rmtree(own, ignore_errors=True)


def busy_run(root: Path) -> None:
    """Thirteen agents read and append to three files; agent-1's anchor goes stale under
    agent-2's edit and is refused, then it reads again and succeeds; an editor saves."""
    for path in FILES:
        (root / path).write_text("first\nsecond\n")
    daemon = start(root)
    try:
        clients = {name: daemon.client(name) for name in AGENTS}
        for n, (name, client) in enumerate(clients.items()):
            path = FILES[n % len(FILES)]
            client.read_file(path)
            client.append_to_file(path, f"{name} was here\n")
        first, second = clients["agent-1"], clients["agent-2"]
        stale = {r.text: r.hash for r in first.read_file("a.txt", hashes=True).lines or []}
        second.edit_file("a.txt", "second\n", "second, by agent-2\n")
        with pytest.raises(RequestError) as refused:
            first.edit("a.txt", [{"op": "replace_line", "hash": stale["second"], "content": "x"}])
        assert refused.value.code == "anchor_stale"
        fresh = {r.text: r.hash for r in first.read_file("a.txt", hashes=True).lines or []}
        first.edit("a.txt", [{"op": "replace_line", "hash": fresh["first"], "content": "1st"}])
        saved = b"an editor saved this\n"
        (root / "c.txt").write_bytes(saved)
        want = hashlib.sha256(saved).hexdigest()
        wait_until(
            lambda: any(
                e.body.get("new_sha256") == want
                for e in first.log(path="c.txt", kind="outside_change", limit=100).events
            ),
            20,
            "the editor's save to be recorded",
        )
    finally:
        daemon.stop()


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Report]:
    root = tmp_path_factory.mktemp("report") / "ws"
    root.mkdir()
    with isolated():
        busy_run(root)
        out = root.parent / "report.html"
        done = cli(root, "report", "--html", str(out))
        assert done.returncode == 0, done.stderr
        text = out.read_text()
        page = Page()
        page.feed(text)
        page.close()
        journal = root / ".editjournal" / "journal.db"
        counts: dict[str, int] = {}
        for record in open_readonly(journal).records():
            if record.kind in {"file_read", "edit_applied", "edit_rejected", "outside_change"}:
                who = "outside" if record.kind == "outside_change" else str(record.agent)
                counts[who] = counts.get(who, 0) + 1
    yield Report(journal, page, text, counts, *_legend(page))


def _legend(page: Page) -> tuple[dict[str, str], dict[str, str]]:
    """Each agent's colour and label as the page declares them: the CSS class of its
    chip in the lane heading, and that class's background."""
    backgrounds = dict(re.findall(r"\.(\w+)\{background:(#[0-9a-f]{6});", page.style))
    colours, labels = {}, {}
    for lane in page.find("lane"):
        who = lane.attrs.get("data-agent")
        if who is None:
            continue
        chip = next(e for e in lane.children[0].children if "m" in e.classes)
        (css,) = chip.classes - {"m"}
        colours[who], labels[who] = backgrounds[css], chip.text
    return colours, labels


def test_every_element_the_page_opens_it_closes_in_order(report: Report):
    assert report.page.misnested == []
    assert [e.tag for e in report.page.open] == ["#document"]
    assert report.html.startswith("<!DOCTYPE html>")


def test_no_block_element_sits_inside_a_line_of_text(report: Report):
    for element in report.page.elements:
        if element.tag in BLOCK:
            inside = [p.tag for p in element.parents if p.tag in PHRASING - {"td", "th"}]
            assert not inside, f"<{element.tag}> inside <{inside[-1]}>"


def test_the_page_references_nothing_outside_itself(report: Report):
    tags = {e.tag for e in report.page.elements}
    assert not tags & {"script", "link", "img", "iframe", "object", "embed", "base", "source"}
    for element in report.page.elements:
        assert "src" not in element.attrs
        href = element.attrs.get("href")
        assert href is None or re.fullmatch(r"#e\d+", href), href
        for value in element.attrs.values():
            assert "//" not in value and "url(" not in value.lower(), value
    style = report.page.style.lower()
    for needle in ("url(", "@import", "@font-face", "http:", "https:", "//"):
        assert needle not in style, needle
    assert not re.search(r"https?:", report.html)


def test_every_agent_and_the_outside_editor_get_one_lane(report: Report):
    lanes = [
        lane.attrs["data-agent"] for lane in report.page.find("lane") if "data-agent" in lane.attrs
    ]
    assert sorted(lanes) == sorted(report.agents) == sorted([*AGENTS, "outside"])
    assert lanes[:13] == AGENTS and lanes[-1] == "outside"  # agent-2 before agent-10
    for lane in report.page.find("lane"):
        if "data-agent" in lane.attrs:
            marks = [e for e in lane.children[1].children if "m" in e.classes]
            assert sum(map(_events_in, marks)) == report.agents[lane.attrs["data-agent"]]


def test_twelve_agents_get_twelve_colours_far_apart_and_the_thirteenth_its_own(report: Report):
    colours = [report.colours[name] for name in AGENTS]
    assert len(set(colours)) == 13 and report.colours["outside"] not in colours
    closest = min(_delta_e(a, b) for a, b in itertools.combinations(colours[:12], 2))
    assert closest > 25, "two of the first twelve agents look alike"


def test_every_mark_carries_its_agents_colour_and_names_its_events(report: Report):
    """A file's row mixes agents: each mark there carries its agent's label too. A lane
    is one agent's (its name heads the lane): a mark there is its colour and the count
    of the events it stands for, and its title names them."""
    assert len(set(report.labels.values())) == len(report.labels)
    assert report.labels["agent-1"] == "A1" and report.labels["agent-13"] == "A13"
    by_css = {_css_of(report, who): who for who in report.labels}
    for row in report.page.find("tl"):
        for mark in (e for e in row.children if "m" in e.classes):
            (css,) = mark.classes & set(by_css)
            assert mark.text.startswith(report.labels[by_css[css]]), mark.attrs["title"]
    for lane in report.page.find("lane"):
        who = lane.attrs.get("data-agent")
        for mark in (e for e in lane.children[1].children if "m" in e.classes) if who else ():
            assert by_css[next(iter(mark.classes & set(by_css)))] == who
            one = r"#\d+ (file_read|edit_applied|edit_rejected|outside_change) \S+ by "
            many = r"\d+ events, #\d+ to #\d+, .* by \S+: \d+ (file_read|edit_\w+|outside_change)"
            assert re.match(one if _events_in(mark) == 1 else many, mark.attrs["title"])


def test_a_refused_write_is_crossed_in_its_agents_lane(report: Report):
    lane = next(e for e in report.page.find("lane") if e.attrs.get("data-agent") == "agent-1")
    refused = [e for e in lane.children[1].children if "rej" in e.classes]
    assert len(refused) == 1 and refused[0].text in {"✕", *map(str, range(2, 10))}
    title = refused[0].attrs["title"]
    assert " edit_rejected a.txt by agent-1, " in title or " 1 edit_rejected" in title


def test_lane_marks_sit_where_their_time_puts_them(report: Report):
    """A mark's centre is its (first) event's time on the track's scale, which runs from
    half a mark in to half a mark short of the end: no mark sticks out of its track."""
    lanes = {"file_read", "edit_applied", "edit_rejected", "outside_change"}
    times = [r.ts for r in open_readonly(report.journal).records() if r.kind in lanes]
    start, end = min(times), max(times)
    assert end > start
    mark_px = html_report.lanelayout.MARK_PX
    for track in report.page.find("track"):
        width = float(re.fullmatch(r"width:([\d.]+)px", track.attrs["style"]).group(1))
        for mark in (e for e in track.children if "m" in e.classes):
            left = float(re.fullmatch(r"left:([\d.]+)px", mark.attrs["style"]).group(1))
            stamp = re.search(r"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\.(\d{3})", mark.attrs["title"])
            ms = time.mktime(time.strptime(stamp.group(1), "%Y-%m-%d %H:%M:%S")) * 1000
            share = (ms + int(stamp.group(2)) - start) / (end - start)
            assert left == pytest.approx(share * (width - mark_px), abs=0.06)
            assert 0 <= left <= width - mark_px


def test_durations_read_in_units_not_raw_milliseconds(report: Report):
    rows = (e for e in report.page.elements if e.tag == "tr" and e.children[0].tag == "td")
    row = next(r for r in rows if r.children[0].text.endswith(" agent-1"))
    mean = row.children[-1].text.split(" / ")
    assert len(mean) == 3 and READABLE.match(mean[1]), mean
    ticks = [e.text.removeprefix("+") for e in report.page.find("tick")]
    assert len(ticks) == 5 and all(READABLE.match(t) for t in ticks[1:]), ticks
    assert "(events / ms / attempts)" not in report.html  # the old raw column


def test_a_long_journals_timeline_keeps_its_last_marks_and_says_so(
    report: Report, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setattr(html_report, "LANE_MARKS", 10)
    page = Page()
    page.feed("".join(html_report.render(open_readonly(report.journal), "long")))
    page.close()
    lanes = [lane for lane in page.find("lane") if "data-agent" in lane.attrs]
    marks = [e for lane in lanes for e in lane.children[1].children if "m" in e.classes]
    assert sum(map(_events_in, marks)) == 10 and page.misnested == []
    total = sum(report.agents.values())
    assert f"the last 10 of {total} reads, writes and rejections" in page.root.text
    shown = {lane.attrs["data-agent"] for lane in lanes}
    idle = [name for name in [*AGENTS, "outside"] if name not in shown]
    assert idle and f"Nothing in this window from: {', '.join(idle)}." in page.root.text


@pytest.mark.parametrize(
    ("ms", "text"),
    [
        (0, "0 ms"),
        (2.5, "2.5 ms"),
        (250, "250 ms"),
        (999.6, "1 s"),
        (1_500, "1.5 s"),
        (42_000, "42 s"),
        (60_000, "1 min"),
        (200_000, "3 min 20 s"),
        (3_725_000, "1 h 2 min"),
        (90_061_000, "1 d 1 h"),
    ],
)
def test_a_duration_is_given_in_its_largest_units(ms: float, text: str):
    assert format_elapsed(ms) == text


def _events_in(mark: Element) -> int:
    """How many events a lane's mark stands for: its count, or one."""
    return int(mark.text) if mark.text.isdigit() else 1


def _css_of(report: Report, who: str) -> str:
    lane = next(e for e in report.page.find("lane") if e.attrs.get("data-agent") == who)
    chip = next(e for e in lane.children[0].children if "m" in e.classes)
    return next(iter(chip.classes - {"m"}))


def _delta_e(a: str, b: str) -> float:
    """CIE76 distance between two #rrggbb colours (sRGB, D65)."""
    return math.dist(_lab(a), _lab(b))


def _lab(colour: str) -> tuple[float, float, float]:
    srgb = [int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    r, g, b = (c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in srgb)
    x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047
    y = 0.2126 * r + 0.7152 * g + 0.0722 * b
    z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883
    fx, fy, fz = (t ** (1 / 3) if t > 0.008856 else 7.787 * t + 16 / 116 for t in (x, y, z))
    return 116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz)
