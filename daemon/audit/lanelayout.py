"""Where the HTML report's timeline puts things: marks on a track of fixed pixels, lane
names short enough to read and still told apart. Pure arithmetic, no HTML, no I/O.

A track is `width` pixels; a time's place is the centre of a mark drawn at it, so a
mark at the first or last instant still lies whole inside the track (marks centred on
the track's very ends stuck out and were cut, and so was the axis's end). Marks are
all `MARK_PX` wide: events closer in time than a mark's width and a gap are one mark,
a cluster, drawn at its first event's time with its count inside. Clusters are made
greedily from the left, so each starts at least a mark and a gap after the one
before: no two marks of a lane can overlap, however crowded the journal.

A lane's name is shown whole up to `NAME_CHARS` characters; longer names keep their
start and, only where that is not enough to tell them apart, the end of the name too
(`claude-code:9b59796…`, or `claude-code:9b5…eb5c` beside `claude-code:9b5…0000`):
never two lanes read alike.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

MARK_PX = 24  # a mark's width: room for a three-digit count
GAP_PX = 2  # at least this much between two marks of a lane
TRACK_PX = (600, 4_800)  # a track's least and greatest width: wider scrolls sideways
PX_PER_EVENT = 8  # a lane's track widens with its busiest lane, up to TRACK_PX[1]
NAME_CHARS = 20  # a lane's name longer than this is shortened (whole in its title)
ELLIPSIS = "…"


@dataclass(frozen=True)
class Cluster:
    """Events `first` to `last` (indexes into the lane's time-ordered list), drawn as
    one mark whose left edge is `left` pixels from the track's start."""

    first: int
    last: int
    left: float

    @property
    def count(self) -> int:
        return self.last - self.first + 1


def track_width(busiest: int) -> int:
    """The track's width for a page whose busiest lane has `busiest` marks."""
    return min(TRACK_PX[1], max(TRACK_PX[0], PX_PER_EVENT * busiest))


def centre(ts: int, start: int, end: int, width: int) -> float:
    """The pixel a time sits at: from half a mark in at `start` to half a mark short of
    the track's end at `end` (the middle when the journal spans one instant)."""
    usable = width - MARK_PX
    share = 0.5 if end == start else (ts - start) / (end - start)
    return MARK_PX / 2 + share * usable


def clusters(times: Sequence[int], start: int, end: int, width: int) -> list[Cluster]:
    """`times` (oldest first) as marks that never overlap: each mark takes every later
    event whose own mark would begin before it ends (plus the gap)."""
    found: list[Cluster] = []
    first = 0
    while first < len(times):
        left = centre(times[first], start, end, width) - MARK_PX / 2
        last = first
        while (
            last + 1 < len(times)
            and centre(times[last + 1], start, end, width) - MARK_PX / 2 < left + MARK_PX + GAP_PX
        ):
            last += 1
        found.append(Cluster(first, last, left))
        first = last + 1
    return found


def count_text(n: int) -> str:
    """A cluster's count as its mark shows it: three characters at most."""
    return str(n) if n < 1000 else f"{n // 1000}k"


def short_names(names: Iterable[str]) -> dict[str, str]:
    """Each name as its lane shows it: whole when short, else shortened, as little as
    still tells it from every other lane's (the whole name when nothing shorter does)."""
    choices = {name: _candidates(name) for name in names}
    level = dict.fromkeys(choices, 0)
    while True:
        shown = {name: choices[name][level[name]] for name in choices}
        by_text: dict[str, list[str]] = {}
        for name, text in shown.items():
            by_text.setdefault(text, []).append(name)
        clashing = [name for group in by_text.values() if len(group) > 1 for name in group]
        movable = [name for name in clashing if level[name] + 1 < len(choices[name])]
        if not movable:  # no clash left (whole names never clash: they are keys)
            return shown
        for name in movable:
            level[name] += 1


def _candidates(name: str) -> list[str]:
    """The ways to show `name`, most of its start first, ending with the whole name: its
    start cut at NAME_CHARS; then, as long, a shorter start and more and more of its end."""
    if len(name) <= NAME_CHARS:
        return [name]
    cut = [name[: NAME_CHARS - 1] + ELLIPSIS]
    for tail in range(4, NAME_CHARS // 2 + 1):
        cut.append(name[: NAME_CHARS - 1 - tail] + ELLIPSIS + name[-tail:])
    return [*cut, name]
