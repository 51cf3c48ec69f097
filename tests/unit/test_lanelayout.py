"""The report timeline's layout as arithmetic (daemon/audit/lanelayout.py): marks never
overlap or leave their track, whatever the times; lane names never read alike.
tests/e2e/test_report_browser.py checks the same in a real browser."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from editjournal.daemon.audit.lanelayout import (
    GAP_PX,
    MARK_PX,
    NAME_CHARS,
    centre,
    clusters,
    count_text,
    short_names,
    track_width,
)

CLAUDE = [
    "claude-code:9b597960-a05f-5cb7-afa9-6c5710a3eb5c",
    "claude-code:9b597960-a05f-5cb7-afa9-000000000000",
    "claude-code:46f22de0-1111-5cb7-afa9-6c5710a3eb5c",
]


@given(
    st.lists(st.integers(0, 10**9), min_size=1, max_size=300),
    st.integers(1, 200),
)
def test_marks_never_overlap_and_stay_inside_their_track(times: list[int], busiest: int):
    times.sort()
    width = track_width(busiest)
    found = clusters(times, times[0], times[-1], width)
    assert [c.first for c in found] == [0, *(c.last + 1 for c in found[:-1])]
    assert found[-1].last == len(times) - 1  # every event in exactly one mark, in order
    for before, after in itertools.pairwise(found):
        assert after.left >= before.left + MARK_PX + GAP_PX - 1e-9
    assert all(0 <= c.left <= width - MARK_PX for c in found)


def test_a_lone_event_is_centred_on_its_time_and_the_ends_sit_half_a_mark_in():
    width = track_width(100)
    assert centre(0, 0, 1000, width) == MARK_PX / 2
    assert centre(1000, 0, 1000, width) == width - MARK_PX / 2
    assert centre(5, 5, 5, width) == width / 2  # a journal of one instant
    (only,) = clusters([500], 0, 1000, width)
    assert only.left + MARK_PX / 2 == centre(500, 0, 1000, width)


def test_events_closer_than_a_mark_are_one_mark_with_their_count():
    width = track_width(0)
    found = clusters([0, 1, 2, 3, 1000], 0, 1000, width)
    assert [c.count for c in found] == [4, 1]
    assert [count_text(n) for n in (7, 999, 1000, 3500)] == ["7", "999", "1k", "3k"]


def test_long_names_sharing_their_start_are_told_apart_by_their_end():
    shown = short_names([*CLAUDE, "agent-1", "outside"])
    assert shown["agent-1"] == "agent-1" and shown["outside"] == "outside"
    assert shown[CLAUDE[2]] == CLAUDE[2][: NAME_CHARS - 1] + "…"
    assert shown[CLAUDE[0]] != shown[CLAUDE[1]]
    assert shown[CLAUDE[0]] == "claude-code:9b5…eb5c"
    assert shown[CLAUDE[1]] == "claude-code:9b5…0000"
    assert len(set(shown.values())) == len(shown)


@given(st.lists(st.text(st.sampled_from("ab-:…"), min_size=1, max_size=40), unique=True))
def test_no_two_names_ever_read_alike(names: list[str]):
    shown = short_names(names)
    assert len(set(shown.values())) == len(names)
