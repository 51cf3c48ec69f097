"""The stale-edit replay on real history (bench/replay), small: the first cases of
pallets/click's commits, every writing tool, a real daemon. The full run (300 cases)
is `python -m bench.replay`; its figures are in the README's Guarantees."""

from __future__ import annotations

import pytest

from bench.replay import tools
from bench.replay.__main__ import DEFAULT_CASES
from bench.replay.cases import load
from bench.replay.run import run, summarise
from tests.once import once_per_run

pytestmark = pytest.mark.slow  # started first on its worker (tests/conftest.py)

CASES = 40  # the first 40 of pallets/click's cases: every tool, ~55 s of one worker


@pytest.fixture(scope="module")
def summaries(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    def replayed():  # type: ignore[no-untyped-def]
        verdicts = run(load(DEFAULT_CASES)[:CASES], tools.TOOLS)
        return {s.tool: s for s in summarise(verdicts)}

    return once_per_run(tmp_path_factory, "replay-summaries", replayed)


@pytest.mark.parametrize("tool", tools.TOOLS)
def test_disjoint_stale_edits_land_and_nothing_is_ever_wrong(summaries, tool: str):  # type: ignore[no-untyped-def]
    s = summaries[tool]
    assert s.skipped == 0 and s.cases == CASES
    assert s.wrong == 0, s
    assert s.landed >= 0.9 * s.cases, s
    assert s.near_landed >= 0.98 * s.near_cases, s


@pytest.mark.parametrize("tool", tools.TOOLS)
def test_a_write_over_anothers_change_is_refused_and_the_refusal_is_small(summaries, tool: str):  # type: ignore[no-untyped-def]
    s = summaries[tool]
    assert s.conflicts > 0 and s.conflicts_refused == s.conflicts, s
    assert s.large_cost_max is not None and s.large_cost_max <= 0.05, s


@pytest.mark.stress
def test_the_full_replay_meets_the_goals():
    """All 300 cases (about a minute): the figures the README states."""
    for s in summarise(run(load(DEFAULT_CASES), tools.TOOLS)):
        assert s.wrong == 0 and s.conflicts_refused == s.conflicts, s
        assert s.landed >= 0.9 * s.cases and s.near_landed >= 0.98 * s.near_cases, s
        assert s.large_cost_max is not None and s.large_cost_max <= 0.05, s
