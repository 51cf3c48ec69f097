"""`python -m bench.worker MODE WORKSPACE FILE LINE COUNT NAME`: one process of the
concurrency rows. It prepares, prints "ready", waits for "go" on stdin, makes COUNT
durable edits of line LINE of FILE, and prints its latencies and clock as JSON.

MODE `daemon`: anchored `edit` requests to the workspace's daemon (agent NAME).
MODE `local`: in-process read + replace + fsync + rename; with several writers on
one file, under an exclusive `flock` so no update is lost (what the daemon's one
thread gives its clients)."""

from __future__ import annotations

import fcntl
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

from bench.files import durable_replace, value_text


def daemon_edits(workspace: Path, name: str, line: int, agent: str) -> Callable[[int], None]:
    from bench.daemons import anchor_of
    from editjournal.client import Client, RequestError

    client = Client(workspace, agent, autostart=False)
    anchor = [anchor_of(client, name, line)]

    def edit(k: int) -> None:
        op = {"op": "replace_line", "hash": anchor[0], "content": value_text(line, f"{agent} {k}")}
        try:
            done = client.edit(name, [op])
        except RequestError:  # counted by the caller: a bench must not hide a refusal
            anchor[0] = anchor_of(client, name, line)
            raise
        anchor[0] = done.changed_lines[0].hash

    return edit


def local_edits(workspace: Path, name: str, line: int, agent: str) -> Callable[[int], None]:
    path, lock = workspace / name, open(workspace / f".{name}.lock", "w")  # noqa: SIM115

    def edit(k: int) -> None:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            durable_replace(path, line, value_text(line, f"{agent} {k}"))
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)

    return edit


def main(mode: str, workspace: str, name: str, line: str, count: str, agent: str) -> None:
    make = daemon_edits if mode == "daemon" else local_edits
    edit = make(Path(workspace), name, int(line), agent)
    print("ready", flush=True)
    sys.stdin.readline()
    latencies, errors = [], 0
    started = time.monotonic()
    for k in range(int(count)):
        t0 = time.perf_counter_ns()
        try:
            edit(k)
        except Exception:
            errors += 1
            continue
        latencies.append((time.perf_counter_ns() - t0) / 1000)
    ended = time.monotonic()
    print(json.dumps({"start": started, "end": ended, "latencies": latencies, "errors": errors}))


if __name__ == "__main__":
    main(*sys.argv[1:])
