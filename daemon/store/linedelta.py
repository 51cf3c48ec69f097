"""Line deltas between two versions of a file's bytes: compute, encode, apply.

Why: the journal keeps every version of every file an agent touched; a copy per
edit costs kilobytes where the change is a few lines. A delta is the list of
line splices that turn the base into the new version, each `(start, end, lines)`:
base lines [start, end) (0-based) become `lines`.

Lines are the pieces between b"\\n" bytes, so a delta is exact for any bytes —
CRLF (the \\r stays in the line), no final newline, any encoding, binary-looking
data: `b"\\n".join(split(data)) == data` always holds. Pure: no I/O, no clock.
"""

from __future__ import annotations

from operator import ne

import msgspec

from editjournal.daemon.text.alignment import matching_blocks, within
from editjournal.daemon.text.region import differing_runs

Splice = tuple[int, int, list[bytes]]
Run = tuple[int, int, int]  # a[i:i+n] matched to b[j:j+n]

# Past this many line pairs in the changed middle, difflib's quadratic worst case is
# not worth it: the middle is compared line for line when both sides have as many
# lines, else it becomes one splice (and likely a full copy is stored).
MAX_DIFF_WORK = 4_000_000
# steps of `alignment.matching_blocks` (a few ms each; a plain change takes none): a
# changed middle of many repeated lines (2,000 of a few distinct ones, reversed) took
# difflib 6 s of a commit's turn, the stepped search 1,200 steps; past this, line for line
MAX_STEPS = 16
_ENCODER = msgspec.msgpack.Encoder()
_DECODER = msgspec.msgpack.Decoder(list[tuple[int, int, list[bytes]]])


class DeltaError(Exception):
    """An encoded delta that does not decode or does not fit its base."""


def split(data: bytes) -> list[bytes]:
    return data.split(b"\n")


def join(lines: list[bytes]) -> bytes:
    return b"\n".join(lines)


def diff(old: bytes, new: bytes, most_lines: int | None = None) -> list[Splice] | None:
    """Splices turning `old`'s lines into `new`'s. The common head and tail are found
    on the bytes (C-speed compares, no per-line Python work), so a small edit of a big
    file costs little; only the changed middle is split and searched. None when the
    splices would bring more than `most_lines` new lines (no delta worth storing: a
    200,000-line rewrite is not compared line by line for nothing)."""
    head_bytes = _line_start(old, _common_prefix(old, new))
    head = old.count(b"\n", 0, head_bytes)
    room = min(len(old), len(new)) - head_bytes
    tail_bytes = _tail_from_newline(old, _common_suffix(old, new, room))
    middle = (old[head_bytes : len(old) - tail_bytes], new[head_bytes : len(new) - tail_bytes])
    a, b = split(middle[0]), split(middle[1])
    if a == b:
        return []
    runs = None
    if len(a) * len(b) <= MAX_DIFF_WORK:
        # latin-1 maps each byte to one character: the same lines compare equal as str
        text_a, text_b = (part.decode("latin-1").split("\n") for part in middle)
        runs = within(matching_blocks(text_a, text_b), MAX_STEPS)
    splices: list[Splice] | None
    if runs is not None:
        splices = _between(runs, a, b, head)
    elif len(a) == len(b):
        splices = _line_for_line(a, b, head, most_lines)
    else:
        splices = [(head, head + len(a), b)]
    if splices is None or (most_lines is not None and sum(len(s[2]) for s in splices) > most_lines):
        return None
    return splices


def _between(runs: list[Run], a: list[bytes], b: list[bytes], head: int) -> list[Splice]:
    """A splice for each gap between matched runs: what difflib's opcodes other than
    "equal" are."""
    splices: list[Splice] = []
    i = j = 0
    for ai, bj, n in [*runs, (len(a), len(b), 0)]:
        if ai > i or bj > j:
            splices.append((head + i, head + ai, b[j:bj]))
        i, j = ai + n, bj + n
    return splices


def _line_for_line(
    a: list[bytes], b: list[bytes], head: int, most_lines: int | None = None
) -> list[Splice] | None:
    """Lines changed in place (as many lines either side: each line i against line i),
    the runs that differ, in linear time: too big a middle for difflib is often that —
    a checkpoint manifest's chunk of a few thousand files, two of them changed far
    apart — and would otherwise be stored whole."""
    if most_lines is not None and sum(map(ne, a, b)) > most_lines:
        return None  # counted by a C loop: a rewrite is not walked up to its half
    return [(head + start, head + end, b[start:end]) for start, end in differing_runs(a, b)]


def _common_prefix(a: bytes, b: bytes) -> int:
    """Length of the common prefix: big strides first, then ever smaller ones."""
    n, i, step = min(len(a), len(b)), 0, 1 << 16
    while step:
        while i + step <= n and a[i : i + step] == b[i : i + step]:
            i += step
        step >>= 4
    return i


def _common_suffix(a: bytes, b: bytes, limit: int) -> int:
    """Length of the common suffix, at most `limit`."""
    la, lb, i, step = len(a), len(b), 0, 1 << 16
    while step:
        while i + step <= limit and a[la - i - step : la - i] == b[lb - i - step : lb - i]:
            i += step
        step >>= 4
    return i


def _line_start(data: bytes, prefix: int) -> int:
    """Bytes of the whole lines (each with its b"\n") within the first `prefix` bytes."""
    return data.rfind(b"\n", 0, prefix) + 1


def _tail_from_newline(data: bytes, suffix: int) -> int:
    """Bytes from the first b"\n" within the last `suffix` bytes to the end (0: none)."""
    found = data.find(b"\n", len(data) - suffix) if suffix else -1
    return len(data) - found if found >= 0 else 0


def apply(base: list[bytes], splices: list[Splice]) -> list[bytes]:
    """The new lines; splices are in ascending order and must not overlap."""
    out = list(base)
    apply_in_place(out, splices)
    return out


def apply_in_place(lines: list[bytes], splices: list[Splice]) -> None:
    """`apply`, splicing `lines` itself, last splice first: a one-line replacement costs
    O(1), not a copy of every line (a version deep in a delta chain pays per splice)."""
    at = 0
    for start, end, _ in splices:
        if not at <= start <= end <= len(lines):
            raise DeltaError(f"splice [{start}, {end}) does not fit a base of {len(lines)} lines")
        at = end
    for start, end, new in reversed(splices):
        lines[start:end] = new


def encode(splices: list[Splice]) -> bytes:
    return _ENCODER.encode(splices)


def decode(data: bytes) -> list[Splice]:
    try:
        return _DECODER.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError) as e:
        raise DeltaError(f"delta does not decode: {e}") from e
