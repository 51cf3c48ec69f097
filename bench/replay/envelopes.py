"""Codex `apply_patch` envelopes, made by Codex's own generator.

`codex_apply_patch.generate_patch` (0.4.0) writes ONE chunk per file whose
context is the whole file. Codex's own instructions (`get_api_instructions`)
ask a model for 3 lines of context above and below each change, no context
repeated between changes closer than that, and more context when 3 lines do
not identify the place. `whole` keeps the generator's envelope as it is;
`focused` keeps its change lines and cuts the context as the instructions say
(widened until the chunk's old side occurs once in the file), which is what a
model writes.
"""

from __future__ import annotations

import codex_apply_patch

CONTEXT = 3  # Codex's "Default Context"
BEGIN, END = "*** Begin Patch", "*** End Patch"


def whole(path: str, before: str, after: str) -> str:
    """The generator's envelope for one file, as it makes it."""
    return str(codex_apply_patch.generate_patch(path, before, after))


def whole_many(files: dict[str, tuple[str, str]]) -> str:
    """The generator's envelope for several files: path -> (before, after)."""
    return str(codex_apply_patch.generate_patch_from_files(files))


def focused(path: str, before: str, after: str) -> str:
    """The generator's change lines for one file with Codex's 3 lines of context."""
    return f"{BEGIN}\n{focused_section(path, before, after)}{END}"


def focused_section(path: str, before: str, after: str) -> str:
    """One file's `*** Update File:` section with focused chunks (ends with a newline)."""
    body = _body(whole(path, before, after))
    old = before.split("\n")[:-1] if before.endswith("\n") else before.split("\n")
    chunks = _chunks(body, old)
    text = "".join("@@\n" + "".join(f"{t}{x}\n" for t, x in body[lo:hi]) for lo, hi in chunks)
    return f"*** Update File: {path}\n{text}"


def _body(envelope: str) -> list[tuple[str, str]]:
    """The generator's single chunk as (tag, text) rows: ' ', '-' or '+'."""
    lines = envelope.split("\n")
    start = next(i for i, x in enumerate(lines) if x.startswith("@@")) + 1
    stop = next(i for i, x in enumerate(lines) if x == END)
    return [(x[:1] or " ", x[1:]) for x in lines[start:stop]]


def _windows(body: list[tuple[str, str]]) -> list[tuple[int, int]]:
    """Each run of changes with CONTEXT rows each side; runs whose context would touch
    or overlap share one chunk (Codex: never repeat context between close changes)."""
    out: list[tuple[int, int]] = []
    for i, (tag, _) in enumerate(body):
        if tag == " ":
            continue
        lo, hi = max(0, i - CONTEXT), min(len(body), i + 1 + CONTEXT)
        if out and lo <= out[-1][1]:
            out[-1] = (out[-1][0], hi)
        else:
            out.append((lo, hi))
    return out


def _chunks(body: list[tuple[str, str]], old: list[str]) -> list[tuple[int, int]]:
    """The focused chunks: each widened until unique, merged when widening made two
    overlap (a chunk is found after the one before it, so they must not share rows)."""
    chunks = _windows(body)
    while True:
        widened = [_widened(body, lo, hi, old) for lo, hi in chunks]
        merged: list[tuple[int, int]] = []
        for lo, hi in widened:
            if merged and lo < merged[-1][1]:
                merged[-1] = (merged[-1][0], max(hi, merged[-1][1]))
            else:
                merged.append((lo, hi))
        if merged == chunks:
            return merged
        chunks = merged


def _widened(body: list[tuple[str, str]], lo: int, hi: int, old: list[str]) -> tuple[int, int]:
    """Widen rows [lo, hi) until their old side occurs once in `old` (or is everything)."""
    while (lo > 0 or hi < len(body)) and _occurrences(
        [x for t, x in body[lo:hi] if t != "+"], old
    ) > 1:
        lo, hi = max(0, lo - 1), min(len(body), hi + 1)
    return lo, hi


def _occurrences(needle: list[str], hay: list[str]) -> int:
    n = len(needle)
    if n == 0:
        return len(hay) + 1
    return sum(hay[i : i + n] == needle for i in range(len(hay) - n + 1) if hay[i] == needle[0])
