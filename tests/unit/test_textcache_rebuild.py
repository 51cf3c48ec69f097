"""A content mostly changed from its base gets an index built afresh, not derived.

Deriving moves each replaced and each new line through the counts (~80 us a line, a
fresh build ~5): a 200,000-line rewrite took 19 s to derive. Past a sixteenth of the
lines moved (`DERIVE_COST_RATIO`) the index is built anew; either way it is the index
of the new lines (`AnchorIndex(lines)`), as a derive's contract says. A derive takes
its base's counts over (the base's `_tables` emptied); a fresh build leaves them.
"""

from __future__ import annotations

from editjournal.daemon.files.textcache import DERIVE_COST_RATIO, Parsed, TextCache
from editjournal.daemon.text.anchors import AnchorIndex
from editjournal.daemon.text.linehashes import Change
from editjournal.daemon.text.lines import parse


def text(prefix: str, lines: int) -> str:
    return "".join(f"{prefix}{i} = f({i % 97})\n" for i in range(lines))


def indexed(old: str, new: str, changes: list[Change]) -> tuple[Parsed, Parsed]:
    cache = TextCache()
    base = cache.parsed("old", old)
    base.index  # noqa: B018 - the base's index, as a read leaves it
    return base, cache.put("new", parse(new), base, changes)


def test_a_rewrite_is_indexed_afresh_and_the_base_keeps_its_counts() -> None:
    old, new = text("v", 10_000), text("w", 10_000)
    base, parsed = indexed(old, new, [(0, 10_000, 10_000)])
    assert parsed.index.anchor_strings == AnchorIndex(parse(new).lines).anchor_strings
    assert base.index._tables is not None  # not taken over: built afresh


def test_a_small_change_is_still_derived_and_equal() -> None:
    lines = 4 * DERIVE_COST_RATIO * 10
    old = text("v", lines)
    new_lines = old.splitlines(keepends=True)
    new_lines[5] = "changed = 1\n"
    new = "".join(new_lines)
    base, parsed = indexed(old, new, [(5, 6, 1)])
    assert parsed.index.anchor_strings == AnchorIndex(parse(new).lines).anchor_strings
    assert base.index._tables is None  # taken over by the derive
