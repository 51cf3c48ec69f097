"""Sizes and durations as people write and read them: `16MiB`, `53.2 MB`, `1h 2m`.

Shared by the daemon (its messages name sizes) and the CLI (its options take
them, its status shows them), so both spell them the same way. Pure functions.
Twenty lines did not justify a dependency: the candidates either only format
(humanize) or are no longer maintained (humanfriendly).
"""

from __future__ import annotations

import re

_UNITS = {
    "": 1,
    "b": 1,
    "k": 1000,
    "kb": 1000,
    "kib": 1024,
    "m": 1000**2,
    "mb": 1000**2,
    "mib": 1024**2,
    "g": 1000**3,
    "gb": 1000**3,
    "gib": 1024**3,
}
_SIZE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*")


class UnitError(ValueError):
    """A size that cannot be read; the message says what is accepted."""


def parse_size(text: str) -> int:
    """`"8388608"`, `"16MiB"`, `"20 MB"`, `"1.5G"` -> bytes.

    K/M/G and KB/MB/GB are decimal, KiB/MiB/GiB binary, as `format_size` writes them."""
    match = _SIZE.fullmatch(text)
    unit = match.group(2).lower() if match else ""
    if match is None or unit not in _UNITS:
        raise UnitError(
            f"{text!r} is not a size: write bytes, or a number with a unit"
            " (KB, MB, GB, KiB, MiB, GiB), e.g. 16MiB"
        )
    return int(float(match.group(1)) * _UNITS[unit])


def format_size(size: int) -> str:
    """Bytes as one decimal unit: 512 B, 53.2 MB, 8.4 GB."""
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1000 or unit == "GB":
            return f"{size} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1000
    raise AssertionError("unreachable")


def format_binary_size(size: int) -> str:
    """Bytes in the binary unit an option can take back as written: 8 MiB, 1.5 GiB."""
    for unit, factor in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if size >= factor:
            return f"{size / factor:.4g} {unit}"
    return f"{size} B"


def format_duration(seconds: float) -> str:
    """Uptime-style: 42s, 3m 5s, 1h 2m, 2d 4h."""
    whole = int(seconds)
    days, rest = divmod(whole, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days}d {hours}h"
    if hours:
        return f"{hours}h {minutes}m"
    if minutes:
        return f"{minutes}m {secs}s"
    return f"{secs}s"


def format_elapsed(ms: float) -> str:
    """Milliseconds as a person reads a duration, in its two largest units: `250 ms`,
    `1.5 s`, `42 s`, `3 min 20 s`, `1 h 5 min`, `2 d 3 h` (the CLI and the report alike)."""
    ms = max(ms, 0.0)
    if ms < 999.5:
        return f"{_short_number(ms)} ms"
    if ms < 59_500:
        return f"{_short_number(ms / 1000)} s"
    rest = round(ms / 1000)
    parts: list[str] = []
    for size, unit in ((86_400, "d"), (3_600, "h"), (60, "min"), (1, "s")):
        count, rest = divmod(rest, size)
        if count or parts:
            parts.append(f"{count} {unit}")
    return " ".join(p for p in parts[:2] if not p.startswith("0 "))


def _short_number(value: float) -> str:
    """One decimal below 10 (none when it is 0), whole numbers above."""
    if value >= 9.95:
        return str(round(value))
    return f"{value:.1f}".removesuffix(".0")


def limit_that_fits(size: int) -> str:
    """A `--max-file-size` that takes a file of `size` bytes: a power of two MiB.
    The daemon's refusal and the CLI's suggestion both name it."""
    mib = 1
    while mib * 1024 * 1024 < size:
        mib *= 2
    return f"{mib}MiB"


_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)\s*(ms|s|m|h|d|w)")
_DURATION_UNITS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_duration(text: str) -> float:
    """`"10m"`, `"1h30m"`, `"2d"`, `"45s"`, `"500ms"` -> seconds (as `log --since` takes them)."""
    compact = text.replace(" ", "").lower()
    parts = _DURATION_PART.findall(compact)
    if not compact or "".join(n + u for n, u in parts) != compact:
        raise UnitError(
            f"{text!r} is not a duration: write a number with a unit"
            " (ms, s, m, h, d, w), e.g. 10m or 1h30m"
        )
    return sum(float(n) * _DURATION_UNITS[u] for n, u in parts)
