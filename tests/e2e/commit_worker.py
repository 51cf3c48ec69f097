"""One client of the group-commit tests, run as its own process.

`python -m tests.e2e.commit_worker ROOT AGENT PATH COUNT REPORT [survive]`: append
COUNT lines, each unique to this agent and attempt, to PATH (one request each, no
anchors, so none is refused for staleness), and write a JSON report of every
acknowledged line with the version its reply gave. A daemon error is reported, not
raised: the test judges. With `survive` (the kill -9 storm), a request that gets no
reply (the daemon was killed) is not retried as such: the worker waits for a new
daemon and goes on with a new line, since the lost one may or may not be journaled.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from editjournal.client import Client, RequestError
from editjournal.client.library.connection import live_endpoint

LOST = frozenset({"timeout", "daemon_unavailable"})
RESTART_WAIT_S = 60.0


def run(
    root: str, agent: str, path: str, count: int, survive: bool
) -> dict[str, list[dict[str, object]]]:
    acked: list[dict[str, object]] = []
    failed: list[dict[str, object]] = []
    client = Client(root, agent, autostart=False, timeout=10 if survive else 120)
    try:
        for n in range(count):
            line = f"{agent} line {n}"
            try:
                result = client.append_to_file(path, line + "\n")
            except RequestError as e:
                failed.append({"line": line, "code": e.code, "message": str(e)})
                if survive and e.code in LOST:
                    client.close()
                    wait_for_daemon(root)
                    client = Client(root, agent, autostart=False, timeout=10)
                continue
            acked.append({"line": line, "seq": result.version, "sha256": result.sha256})
    finally:
        client.close()
    return {"acked": acked, "failed": failed}


def wait_for_daemon(root: str) -> None:
    """Until a daemon serves `root` again (the test restarts it), bounded."""
    deadline, delay = time.monotonic() + RESTART_WAIT_S, 0.01
    while live_endpoint(Path(root)) is None:
        if time.monotonic() > deadline:
            raise SystemExit(f"no daemon came back within {RESTART_WAIT_S} s")
        time.sleep(delay)
        delay = min(delay * 2, 0.2)


if __name__ == "__main__":
    root, agent, path, count, report = sys.argv[1:6]
    survive = sys.argv[6:7] == ["survive"]
    with open(report, "w") as f:
        json.dump(run(root, agent, path, int(count), survive), f)
