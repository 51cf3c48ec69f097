"""The replays the way agents work (bench/replay), small: a few real cases of each mode,
a real daemon. The multi-hunk play (A writes all its hunks from memory after B landed
one) on click and requests, and the Codex-envelope replay with Codex beside us. Nothing
may ever be wrong, every writer must have its row, and the text writers land every
call of these cases (the goals of issue 35 hold on the full runs, in docs/guarantees.md).
The full runs are `python -m bench.replay --mode multi|codex`."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.replay import codex_replay, multi_cases, multi_summary, multi_tools
from bench.replay.__main__ import CODEX_CASES, MULTI_CASES, main
from bench.replay.multi_run import run
from tests.once import once_per_run

CASES = 4  # per project: every writer plays each (a few seconds on 2 cores)
COMMITS = 8


@pytest.fixture(scope="module", params=[p.name.split("-")[0] for p in MULTI_CASES])
def multi(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, multi_summary.MultiSummary]:
    source = next(p for p in MULTI_CASES if p.name.startswith(request.param))

    def played() -> dict[str, multi_summary.MultiSummary]:
        plays = run(multi_cases.load(source)[:CASES])
        return {s.tool: s for s in multi_summary.summarise(plays)}

    return once_per_run(tmp_path_factory, f"multi-{request.param}", played)


def test_every_writer_plays_every_case_and_nothing_is_wrong(
    multi: dict[str, multi_summary.MultiSummary],
) -> None:
    assert list(multi) == list(multi_tools.TOOLS)
    for s in multi.values():
        assert s.plays == CASES and s.skipped == 0, s
        assert s.calls >= CASES, s
        assert s.wrong == 0 and s.wrong_calls == 0, s


@pytest.mark.parametrize("tool", ["safe_patch", "edit_file", "apply_patch"])
def test_text_writers_land_every_hunk_from_memory(
    multi: dict[str, multi_summary.MultiSummary], tool: str
) -> None:
    s = multi[tool]
    assert s.calls_landed == s.calls and s.landed == s.plays, s


def test_the_anchored_edit_lands_most_hunks_from_memory(
    multi: dict[str, multi_summary.MultiSummary],
) -> None:
    s = multi["edit"]
    assert s.calls_landed >= 0.9 * s.calls, s


def test_a_codex_envelope_is_never_applied_wrong() -> None:
    verdicts = codex_replay.run(codex_replay.load(CODEX_CASES)[:COMMITS])
    summaries = {s.variant: s for s in codex_replay.summarise(verdicts)}
    assert list(summaries) == list(codex_replay.VARIANTS)
    for s in summaries.values():
        assert s.commits == COMMITS and s.wrong == 0, s
        assert s.applied == s.codex_applied == COMMITS, s  # files over the read window too


def test_the_command_writes_its_table_and_verdicts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "multi.json"
    assert main(["--mode", "multi", "--limit", "2", "--cases", str(MULTI_CASES[0]),
                 "--out", str(out)]) == 0  # fmt: skip
    table = capsys.readouterr().out
    assert all(f"| {tool} |" in table for tool in multi_tools.TOOLS)
    assert '"plays"' in out.read_text()
