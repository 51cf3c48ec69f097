"""`daemon.tree.parts`: paths cut into parts of at most `cap`, by directory."""

from __future__ import annotations

import random

from hypothesis import given
from hypothesis import strategies as st

from editjournal.daemon.tree.parts import parts


def covered(part: list[str], paths: list[str]) -> list[str]:
    """The paths a part's tops name: a top is the path itself or a directory of it."""
    return [p for p in paths if any(p == top or p.startswith(top + "/") for top in part)]


def test_directories_within_the_cap_are_named_whole_and_packed_together() -> None:
    paths = [f"a/{i}" for i in range(3)] + [f"b/{i}" for i in range(4)] + ["c/x/1", "top"]
    assert parts(paths, 5) == [["a"], ["b", "c"], ["top"]]


def test_a_directory_over_the_cap_is_split_a_level_deeper_down_to_files() -> None:
    paths = [f"big/sub/{i}" for i in range(3)] + [f"big/{i}" for i in range(3)]
    found = parts(paths, 3)
    assert found == [["big/0", "big/1", "big/2"], ["big/sub"]]


names = st.text(alphabet="abc", min_size=1, max_size=2)


@given(
    st.sets(st.lists(names, min_size=1, max_size=4).map("/".join), max_size=60), st.integers(1, 9)
)
def test_every_path_is_in_exactly_one_part_and_no_part_is_over_the_cap(
    found: set[str], cap: int
) -> None:
    paths = sorted(p for p in found if not any(q.startswith(p + "/") for q in found))
    random.Random(len(paths)).shuffle(paths)  # a file is never also a directory here
    cut = parts(paths, cap)
    shares = [covered(part, paths) for part in cut]
    assert all(0 < len(share) <= cap for share in shares)
    assert sorted(p for share in shares for p in share) == sorted(paths)
