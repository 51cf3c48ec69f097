"""An index whose counts went on to a derived version (`AnchorIndex.derive`) still
answers lookups (and builds line anchors) exactly as a fresh index of the same
lines does: by scanning first, then by rebuilding its counts."""

from __future__ import annotations

import random

import pytest

from editjournal.daemon.text.anchors import AnchorIndex


def _lines(rng: random.Random, n: int) -> list[str]:
    pool = ["", "pass", "return x", "}", "x = 1", "    y = 2"]  # duplicates and blanks
    lines = [
        rng.choice(pool) if rng.random() < 0.4 else f"v{rng.randrange(10**6)} = {i}"
        for i in range(n)
    ]
    return lines + [f"twice = {k}" for k in range(20)] * 2  # repeats decide a line's quality


def _queries(fresh: AnchorIndex, rng: random.Random) -> list[str]:
    """Short prefixes (which many lines share), longer ones, and the chosen anchors."""
    digests = fresh._hashes + fresh._contexts
    picked = rng.sample(digests, 40)
    return [d[: rng.choice((4, 4, 5, 6, 8, 16))] for d in picked] + fresh.anchor_strings[:20]


def _retired(lines: list[str], rng: random.Random) -> AnchorIndex:
    """An index of `lines` after an edit was derived from it."""
    base = AnchorIndex(lines)
    at = rng.randrange(len(lines))
    base.derive([*lines[:at], "inserted = 1", *lines[at + 1 :]], [(at, at + 1, 1)])
    return base


@pytest.mark.slow
def test_a_retired_index_answers_like_a_fresh_one() -> None:
    rng = random.Random(11)
    for _ in range(6):
        lines = _lines(rng, rng.randrange(2_000, 5_000))
        fresh, base = AnchorIndex(lines), _retired(lines, rng)
        for query in _queries(fresh, rng):  # past the first scans too: counts are rebuilt
            assert base.match(query) == fresh.match(query), query
            assert base.line_matches(query) == fresh.line_matches(query), query
        for query in _queries(fresh, rng):  # scanned, each by a newly retired index
            assert _retired(lines, rng).line_matches(query) == fresh.line_matches(query), query
        base = _retired(lines, rng)
        for i in [
            *range(len(lines) - 40, len(lines)),
            *rng.sample(range(len(lines)), 30),
        ]:  # scanned, then rebuilt
            assert base.anchor_at(i) == fresh.anchor_at(i), i
