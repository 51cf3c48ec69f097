"""Tests for schemas.units: sizes and durations as people write and read them."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from editjournal.schemas.units import (
    UnitError,
    format_binary_size,
    format_duration,
    format_size,
    limit_that_fits,
    parse_size,
)


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("8388608", 8388608),
        ("16MiB", 16 * 1024**2),
        ("16 mib", 16 * 1024**2),
        ("20 MB", 20_000_000),
        ("1.5G", 1_500_000_000),
        ("1KiB", 1024),
        ("512b", 512),
        (" 3k ", 3000),
    ],
)
def test_parse_size_reads_bytes_and_units(text: str, size: int):
    assert parse_size(text) == size


@pytest.mark.parametrize("text", ["", "MiB", "-1", "12 parsecs", "1e6", "1,5MB"])
def test_parse_size_refuses_what_is_not_a_size_and_says_what_is(text: str):
    with pytest.raises(UnitError, match=r"e\.g\. 16MiB"):
        parse_size(text)


@pytest.mark.parametrize(
    ("size", "shown"),
    [(0, "0 B"), (999, "999 B"), (1000, "1.0 KB"), (53_200_000, "53.2 MB"), (8.4e12, "8400.0 GB")],
)
def test_format_size_uses_one_decimal_unit(size: int, shown: str):
    assert format_size(int(size)) == shown


@given(st.integers(min_value=1, max_value=2**40))
def test_a_binary_size_reads_back_to_within_its_rounding(size: int):
    back = parse_size(format_binary_size(size).replace(" ", ""))
    assert abs(back - size) <= size * 0.001 + 1


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [(0, "0s"), (42.9, "42s"), (185, "3m 5s"), (3720, "1h 2m"), (2 * 86400 + 4 * 3600, "2d 4h")],
)
def test_format_duration_reads_like_uptime(seconds: float, shown: str):
    assert format_duration(seconds) == shown


@pytest.mark.parametrize(
    ("size", "limit"),
    [(1, "1MiB"), (1024**2, "1MiB"), (1024**2 + 1, "2MiB"), (12_400_000, "16MiB")],
)
def test_limit_that_fits_is_a_power_of_two_mib_that_takes_the_file(size: int, limit: str):
    assert limit_that_fits(size) == limit
    assert parse_size(limit) >= size
