"""The hook over HTTP's rows (issue 39): Claude Code's `"type": "http"` hook, one POST
to the daemon's loopback endpoint per tool call, beside the command hook it replaces
(`editjournal hook claude-code`, an interpreter started per call). Goal: p50 ≤ 5 ms.

The same two payloads as bench/hooks.py — the PostToolUse of a Read (journals the
read) and the PreToolUse of an Edit (judged, allowed) — through both doors,
interleaved in the same run against one serving daemon. Each POST of the row opens a
connection of its own (the worse case: whether the harness keeps one alive is its
business); the figure over one kept-alive connection is in the row's notes. Each
carries the token and reads the whole answer. The worker that decides is
warmed by the warm-up rounds, as it is after a session's first hook.
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from pathlib import Path

from bench.daemons import serving
from bench.files import python_source
from bench.hooks import SCRIPT, _payload, _run
from bench.rows import Figure, Row
from bench.sizes import Sizes
from bench.stats import interleaved

GOAL_US = 5_000


def rows(tmp: Path, sizes: Sizes) -> Iterator[Row]:
    ws = tmp / "ws"
    ws.mkdir()
    (ws / "app.py").write_text(python_source(sizes.file_lines))
    n = max(5, sizes.latency_n // 20)
    with serving(ws):
        port, token = _endpoint(ws)
        read = _payload(ws, "PostToolUse", "Read", {})
        edit = _payload(ws, "PreToolUse", "Edit", {"old_string": "def ", "new_string": "def "})
        command = [str(SCRIPT), "hook", "claude-code"]
        kept = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        got = interleaved(
            {
                "http read": lambda: _post(port, token, read),
                "http edit": lambda: _post(port, token, edit),
                "kept read": lambda: _post(port, token, read, kept),
                "kept edit": lambda: _post(port, token, edit, kept),
                "command read": lambda: _run(command, read),
                "command edit": lambda: _run(command, edit),
            },
            n,
            warmup=2 if sizes.latency_n < 100 else 5,  # --quick: the command hook is slow
        )
        kept.close()
    for name, what in (("read", "PostToolUse of a Read"), ("edit", "PreToolUse of an Edit")):
        ours, theirs, alive = got[f"http {name}"], got[f"command {name}"], got[f"kept {name}"]
        yield Row(
            f"hook round trip over HTTP, {what} (a loopback POST, a connection per call)",
            Figure("editjournal", ours.p50, "us", p99=ours.p99),
            [Figure("`editjournal hook` (a process per call)", theirs.p50, "us", p99=theirs.p99)],
            goal="p50 ≤ 5 ms",
            met=ours.p50 <= GOAL_US,
            notes=[
                f"over a kept-alive connection: {alive.p50 / 1000:.2f} ms p50,"
                f" {alive.p99 / 1000:.2f} ms p99"
            ],
        )


def _endpoint(root: Path) -> tuple[int, str]:
    state = root / ".editjournal"
    port = json.loads((state / "hook-http.json").read_text())["port"]
    return int(port), (state / "hook-http.token").read_text().strip()


def _post(port: int, token: str, body: str, kept: http.client.HTTPConnection | None = None) -> None:
    """One POST, on `kept` (a connection left open) or on a connection of its own."""
    conn = kept or http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
        conn.request("POST", "/hook/claude-code", body=body.encode(), headers=headers)
        response = conn.getresponse()
        said = response.read()
    finally:
        if kept is None:
            conn.close()
    if response.status != 200 or said:  # both payloads are allowed: an empty answer
        raise RuntimeError(f"hook over HTTP: {response.status}: {said[:300]!r}")
