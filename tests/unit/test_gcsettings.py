"""daemon.gcsettings: after start-up the survivors are frozen and thresholds raised."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from editjournal.daemon.runtime.gcsettings import THRESHOLDS, settle_after_start_up


@pytest.fixture
def restored_gc() -> Iterator[None]:
    before = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*before)


@pytest.mark.usefixtures("restored_gc")
def test_start_up_objects_are_frozen_and_thresholds_raised() -> None:
    survivor = [object() for _ in range(100)]
    settle_after_start_up()
    assert gc.get_freeze_count() >= len(survivor)
    assert gc.get_threshold() == THRESHOLDS
    assert THRESHOLDS[0] > 700  # rarer young collections than CPython's default
