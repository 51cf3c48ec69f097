"""The per-line hashes an anchor is made of, and which of them an edit changes.

Hashes
    ``line_hash(body)`` is xxh3_64 of ``body.encode("utf-8", "surrogatepass")`` as
    16 zero-padded lowercase hex digits; the line ending is not part of the body::

        line_hash("def foo():") == "a5ac1efbea30d3c7"
        line_hash("")           == "2d06800538d394c2"

    ``context_hash(prev, body, next)`` is xxh3_64 hex of ``prev + "\\n" + body +
    "\\n" + next`` where ``prev``/``next`` are the nearest lines before/after whose
    body is not blank (``body.strip() != ""``), or "" at the file edges. Blank
    lines are skipped so inserting or deleting blank lines does not move anchors::

        lines = ["def foo():", "", "    return 1"]
        context of line 3 == context_hash("def foo():", "    return 1", "")
                          == xxh3_64_hexdigest(b"def foo():\\n    return 1\\n")

These are half of the anchor contract (daemon.text.anchors holds the rest): change
them only together with ``read`` and ``edit``. Because a line's context follows its
nearest non-blank neighbours, an edit changes the context hashes of the unchanged
lines next to it too: ``rehashed_regions`` says which lines an index derived through
an edit must hash again (``AnchorIndex.derive``). Pure: no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Sequence

import xxhash

Change = tuple[int, int, int]  # old [start, end) replaced by `count` new lines
Region = tuple[int, int, int, int]  # old [a, b) and new [a, b) that differ (or are rehashed)


def _xxh3_hex(text: str) -> str:
    """xxh3_64 as 16 lowercase hex digits; surrogatepass so any str is hashable."""
    return xxhash.xxh3_64_hexdigest(text.encode("utf-8", "surrogatepass"))


def line_hash(body: str) -> str:
    """Hash of one line body (no ending), identifying the line by content alone."""
    return _xxh3_hex(body)


def context_hash(prev_nonempty: str, body: str, next_nonempty: str) -> str:
    """Hash of a line with its nearest non-blank neighbours, to tell twins apart."""
    return _xxh3_hex(prev_nonempty + "\n" + body + "\n" + next_nonempty)


def is_blank(body: str) -> bool:
    return body.strip() == ""


def context_range(bodies: Sequence[str], a: int, b: int) -> list[str]:
    """Context hashes of lines [a, b): two passes over the range and the blank runs
    around it, so the cost follows the range, not the file."""
    j = a - 1
    while j >= 0 and is_blank(bodies[j]):
        j -= 1
    prev = bodies[j] if j >= 0 else ""
    j = b
    while j < len(bodies) and is_blank(bodies[j]):
        j += 1
    nxt = bodies[j] if j < len(bodies) else ""
    nexts = [""] * (b - a)
    for i in range(b - 1, a - 1, -1):
        nexts[i - a] = nxt
        if not is_blank(bodies[i]):
            nxt = bodies[i]
    result = []
    for i in range(a, b):
        body = bodies[i]
        result.append(context_hash(prev, body, nexts[i - a]))
        if not is_blank(body):
            prev = body
    return result


def rehashed_regions(
    old: Sequence[str],
    new: Sequence[str],
    changes: Sequence[Change] | None,
    verified: bool = False,
) -> list[Region] | None:
    """The changed spans in old and new coordinates, each widened over blank lines to the
    nearest non-blank unchanged line on both sides (whose context may have changed), and
    merged where they touch. None when ``changes`` do not turn ``old`` into ``new``.
    ``verified``: the caller made ``new`` from ``old`` by exactly these changes, so the
    lines between them are not compared (a pass over the whole file)."""
    spans = _spans(old, new, changes, verified)
    if spans is None:
        return None
    merged: list[Region] = []
    for k, (oa, ob, na, nb) in enumerate(spans):
        floor = merged[-1][3] if merged else 0
        while na > floor and is_blank(new[na - 1]):
            oa, na = oa - 1, na - 1
        if na > floor:
            oa, na = oa - 1, na - 1
        ceiling = spans[k + 1][2] if k + 1 < len(spans) else len(new)
        while nb < ceiling and is_blank(new[nb]):
            ob, nb = ob + 1, nb + 1
        if nb < ceiling:
            ob, nb = ob + 1, nb + 1
        if merged and na <= merged[-1][3]:
            oa, na = merged[-1][0], merged[-1][2]
            merged.pop()
        merged.append((oa, ob, na, nb))
    return merged


def _spans(
    old: Sequence[str], new: Sequence[str], changes: Sequence[Change] | None, verified: bool
) -> list[Region] | None:
    """Changes as (old_a, old_b, new_a, new_b), checked against the two texts (their
    shapes only, when the caller ``verified`` them)."""
    if changes is None:
        return None
    spans: list[Region] = []
    shift = 0
    done = 0
    for start, end, count in changes:
        if start < done or end < start or end > len(old):
            return None
        if not verified and old[done:start] != new[done + shift : start + shift]:
            return None
        if spans and start == done:  # touching the previous change: one span
            oa, _, na, nb = spans.pop()
            spans.append((oa, end, na, nb + count))
        else:
            spans.append((start, end, start + shift, start + shift + count))
        shift += count - (end - start)
        done = end
    if len(old) + shift != len(new) or (not verified and old[done:] != new[done + shift :]):
        return None
    return spans
