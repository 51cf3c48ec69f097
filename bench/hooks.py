"""The harness hook's row: one `editjournal hook claude-code` invocation, interpreter
start included, as a harness pays it on every tool call (issue 26: p50 ≤ 60 ms).

Two payloads in Claude Code's shape against a serving daemon — the PostToolUse of a
Read (journals the read) and the PreToolUse of an Edit (judged, allowed) — each run
as the console script a harness runs, interleaved with the bare interpreter
(`python -c pass`, the floor no Python hook goes under) in the same run.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from bench.daemons import serving
from bench.files import python_source
from bench.rows import Figure, Row
from bench.sizes import Sizes
from bench.stats import interleaved

GOAL_US = 60_000
SCRIPT = Path(sys.executable).parent / "editjournal"


def rows(tmp: Path, sizes: Sizes) -> Iterator[Row]:
    ws = tmp / "ws"
    ws.mkdir()
    (ws / "app.py").write_text(python_source(sizes.file_lines))
    n = max(5, sizes.latency_n // 20)
    with serving(ws):
        read = _payload(ws, "PostToolUse", "Read", {})
        edit = _payload(ws, "PreToolUse", "Edit", {"old_string": "def ", "new_string": "def "})
        got = interleaved(
            {
                "read": lambda: _run([str(SCRIPT), "hook", "claude-code"], read),
                "edit": lambda: _run([str(SCRIPT), "hook", "claude-code"], edit),
                "bare": lambda: _run([sys.executable, "-c", "pass"], ""),
            },
            n,
        )
    bare = Figure("bare interpreter (python -c pass)", got["bare"].p50, "us", p99=got["bare"].p99)
    for name, what in (("read", "PostToolUse of a Read"), ("edit", "PreToolUse of an Edit")):
        ours = got[name]
        yield Row(
            f"`editjournal hook claude-code`, {what} (a process per call)",
            Figure("editjournal", ours.p50, "us", p99=ours.p99),
            [bare],
            goal="p50 ≤ 60 ms",
            met=ours.p50 <= GOAL_US,
            notes=[f"beyond the bare interpreter: {(ours.p50 - got['bare'].p50) / 1000:.1f} ms"],
        )


def _payload(root: Path, event: str, tool: str, extra: dict[str, object]) -> str:
    return json.dumps(
        {
            "session_id": "bench",
            "cwd": str(root),
            "hook_event_name": event,
            "tool_name": tool,
            "tool_input": {"file_path": str(root / "app.py"), **extra},
        }
    )


def _run(argv: list[str], stdin: str) -> None:
    done = subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=60)
    if done.returncode != 0 or done.stderr:
        raise RuntimeError(f"{argv}: {done.returncode}: {done.stderr}")
