"""Micro-benchmarks of the journal's storage: bytes per small edit, and start-up time.

    .venv/bin/python -m bench.journal_micro growth [--lines 1000] [--edits 200]
    .venv/bin/python -m bench.journal_micro startup [--events 1000000]

`bytes_per_small_edit` drives a real daemon through the client (the daemon's
own writing path, blobs and events), then splits the journal's growth into
event bodies, blob bytes and the rest (SQLite pages, indexes). `startup_with_events`
builds a journal with the daemon's own `Journal` (bench.journal_fill: same
encoding and chain as the daemon) and times the daemon's start-up fold
(`daemon.startup.load_state`) with no snapshot, then with one, in this process,
then a real daemon's start to its first `ping` reply.
Both return plain dicts (printed as JSON when run as a module).
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.daemons import anchor_of, serving, spawn_to_first_ping
from bench.files import python_source, value_line
from bench.growth import checkpointed_size
from bench.journal_fill import fill
from editjournal.client import Client
from editjournal.daemon.store.journal import Journal
from editjournal.daemon.store.startup import load_state
from editjournal.daemon.store.statesnap import Snapshotter
from editjournal.schemas.endpoint import JOURNAL_FILE, STATE_DIR_NAME


def bytes_per_small_edit(root: Path, lines: int = 1000, edits: int = 200) -> dict[str, Any]:
    """Journal growth per one-line edit of a `lines`-line file, after the first edit."""
    root.mkdir(parents=True, exist_ok=True)
    text = python_source(lines)
    (root / "file.py").write_text(text)
    line = value_line(lines // 2)
    original = text.splitlines()[line - 1]
    journal = root / STATE_DIR_NAME / JOURNAL_FILE
    with serving(root), Client(root, "bench-micro", autostart=False) as client:
        anchor = anchor_of(client, "file.py", line)
        for k in range(edits + 1):
            if k == 1:
                before, parts_before = checkpointed_size(journal), _parts(journal)
            op = {"op": "replace_line", "hash": anchor, "content": f"{original}  # edit {k}"}
            anchor = client.edit("file.py", [op]).changed_lines[0].hash
        after, parts_after = checkpointed_size(journal), _parts(journal)
    per = {k: (parts_after[k] - parts_before[k]) / edits for k in parts_after}
    return {
        "file_lines": lines,
        "edits": edits,
        "bytes_per_edit": (after - before) / edits,
        "event_body_bytes_per_edit": per["events"],
        "events_per_edit": per["event_rows"],
        "blob_bytes_per_edit": per["blobs"],
    }


def _parts(journal: Path) -> dict[str, int]:
    with sqlite3.connect(journal) as db:
        events, rows = db.execute("SELECT SUM(LENGTH(body)), COUNT(*) FROM events").fetchone()
        (blobs,) = db.execute("SELECT COALESCE(SUM(LENGTH(data)), 0) FROM blobs").fetchone()
    return {"events": events or 0, "event_rows": rows, "blobs": blobs}


def startup_with_events(root: Path, events: int = 1_000_000) -> dict[str, Any]:
    """Seconds of the start-up fold over `events` events: whole, then from a snapshot."""
    fill(root, events)
    path = root / STATE_DIR_NAME / JOURNAL_FILE
    timings: dict[str, Any] = {"events": events}
    for label in ("full_fold_s", "from_snapshot_s"):
        journal = Journal(path)
        snapshotter = Snapshotter()
        started = time.perf_counter()
        state = load_state(journal, snapshotter)
        timings[label] = time.perf_counter() - started
        if label == "full_fold_s":
            snapshotter.save(journal, state)
        journal.close()
    # the whole daemon, as a client starts it (interpreter, imports, watch): to first ping
    timings["daemon_start_to_first_ping_s"] = spawn_to_first_ping(root) / 1e6  # it gives µs
    return timings


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.journal_micro")
    parser.add_argument("what", choices=["growth", "startup"])
    parser.add_argument("--lines", type=int, default=1000)
    parser.add_argument("--edits", type=int, default=200)
    parser.add_argument("--events", type=int, default=1_000_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ej-micro-") as tmp:
        if args.what == "growth":
            result = bytes_per_small_edit(Path(tmp) / "ws", args.lines, args.edits)
        else:
            result = startup_with_events(Path(tmp) / "ws", args.events)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
