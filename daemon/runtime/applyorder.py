"""Applies that arrive together are handled in their hunks' order.

The seed's rule: applies to one file are serialised by the hunks' `created_at_ms`,
then `hunk_id` — so two agents that planned on one file and apply at the same
moment land in the order they planned, whatever order the socket delivered
them in. One thread handles every request, so applies never run at once; what
this adds is the order among the requests waiting together (one receive
batch). Only `apply_file_modification` requests move, and only among the
places such requests held; everything else keeps its place.

What it must never do: drop or change a request, or fail on one it cannot read
(that request keeps its place, and the handler answers it as usual).
"""

from __future__ import annotations

from typing import Any

import msgspec

from editjournal.daemon.model.hunkbook import HunkBook

METHOD = b"apply_file_modification"
_LOOSE = msgspec.msgpack.Decoder()
MAX_APPLY_BYTES = 4096  # an apply request is tiny: a bigger frame is not looked into


def in_apply_order(requests: list[list[bytes]], hunks: HunkBook) -> list[list[bytes]]:
    """`requests` (multipart frames, payload last) with each file's applies sorted by
    (created_at_ms, hunk_id) among the places that file's applies held."""
    by_path: dict[str, list[tuple[tuple[int, str], int]]] = {}
    for i, frames in enumerate(requests):
        if len(frames[-1]) > MAX_APPLY_BYTES or METHOD not in frames[-1]:
            continue
        hunk = hunks.get(_hunk_id(frames[-1]))
        if hunk is not None:  # unknown hunks keep their place: the handler refuses them
            by_path.setdefault(hunk.path, []).append((hunk.order, i))
    ordered = list(requests)
    for applies in by_path.values():
        places = [i for _, i in applies]
        for place, (_, i) in zip(places, sorted(applies), strict=True):
            ordered[place] = requests[i]
    return ordered


def _hunk_id(payload: bytes) -> str:
    try:
        request: Any = _LOOSE.decode(payload)
    except Exception:  # unreadable: it keeps its place, and the server answers it as usual
        return ""
    if not isinstance(request, dict) or request.get("method") != METHOD.decode():
        return ""
    params = request.get("params")
    hunk_id = params.get("hunk_id") if isinstance(params, dict) else None
    return hunk_id if isinstance(hunk_id, str) else ""
