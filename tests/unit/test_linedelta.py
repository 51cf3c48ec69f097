"""Line deltas (daemon/store/linedelta.py) are difflib's splices, found without its walk
over every occurrence of a repeated line, and bounded: a changed middle of many repeated
lines is compared line for line instead of searched for seconds in a commit's turn."""

from __future__ import annotations

import difflib

from hypothesis import given
from hypothesis import strategies as st

from editjournal.daemon.store import linedelta

LINE = st.sampled_from([b"x", b"", b"}", b"\xff\xfe", b"caf\xc3\xa9", b"  # n", b"\r", b"a"])


def difflib_splices(old: list[bytes], new: list[bytes]) -> list[linedelta.Splice]:
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    return [(i1, i2, new[j1:j2]) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]


@given(old=st.lists(LINE, max_size=40), new=st.lists(LINE, max_size=40))
def test_the_splices_rebuild_the_new_version(old: list[bytes], new: list[bytes]) -> None:
    before, after = b"\n".join(old), b"\n".join(new)
    splices = linedelta.diff(before, after)
    assert linedelta.join(linedelta.apply(linedelta.split(before), splices)) == after


def test_a_reversed_middle_of_repeated_lines_is_compared_line_for_line() -> None:
    lines = [b"line %d {" % (i % 7) if i % 3 else b"" for i in range(2_000)]
    before, after = b"\n".join(lines), b"\n".join(reversed(lines))
    splices = linedelta.diff(before, after)  # difflib took 6 s here: past MAX_STEPS
    assert linedelta.join(linedelta.apply(lines, splices)) == after
    old, new = linedelta.split(before), linedelta.split(after)
    assert splices == linedelta._line_for_line(old, new, 0)


def test_a_plain_change_is_difflibs() -> None:
    lines = [b"    value_%d = compute(%d)" % (i, i) for i in range(2_000)]
    changed = list(lines)
    for k in range(0, 2_000, 97):
        changed[k] = b"    changed()"
    del changed[500:510]
    changed[1200:1200] = [b"new 1", b"new 2"]
    splices = linedelta.diff(b"\n".join(lines), b"\n".join(changed))
    assert splices == difflib_splices(lines, changed)
