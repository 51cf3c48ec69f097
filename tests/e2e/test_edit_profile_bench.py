"""bench.edit_profile runs at a tiny size, so it cannot rot (no timing is asserted)."""

from __future__ import annotations

import pytest

from bench.edit_profile import run


def test_the_edit_profile_runs_at_a_tiny_size(capsys: pytest.CaptureFixture[str]) -> None:
    run(lines=300, edits=2, top=5, save=None, plain=False)
    out = capsys.readouterr().out
    assert "after a one-line ranged read" in out
    assert "seen.py:after_own_write" in out  # the profile saw the daemon's edits
