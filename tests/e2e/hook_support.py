"""What the harness-hook tests share: a workspace with a daemon (`served`: this
module is a pytest plugin of tests/conftest.py), the real `editjournal hook HARNESS`
command fed a payload, and Claude Code's payload shape (which Claude Agent SDK
applications receive too)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import RunningDaemon, start
from tests.e2e.cli_support import SCRIPT, cli_env, run_program

ENTRY = "editjournal.client.entry"  # what the console script runs

APP = "".join(f"v{n} = {n}\n" for n in range(1, 21))


@pytest.fixture
def served(workspace: Path) -> Iterator[RunningDaemon]:
    """A daemon on a workspace holding app.py (APP)."""
    (workspace / "app.py").write_text(APP)
    running = start(workspace)
    yield running
    running.stop()


def run_hook(
    harness: str, payload: Any, cwd: Path | None = None, **env: str
) -> subprocess.CompletedProcess[str]:
    """The console script's code, as the installed hook runs it, with `payload` on stdin
    (forked from the worker's zygote: `editjournal.client.entry`, which the script
    runs; tests/e2e/test_install.py runs the installed script itself)."""
    text = payload if isinstance(payload, str) else json.dumps(payload)
    command = [str(SCRIPT)]
    return run_program(ENTRY, ["hook", harness], command, stdin=text, env=cli_env(**env), cwd=cwd)


def claude_payload(
    root: Path,
    session: str,
    event: str,
    tool: str,
    name: str = "app.py",
    response: Any = None,
    **tool_input: Any,
) -> dict[str, Any]:
    """A PreToolUse / PostToolUse payload in Claude Code's documented shape."""
    found: dict[str, Any] = {
        "session_id": session,
        "transcript_path": f"/tmp/{session}.jsonl",
        "cwd": str(root),
        "permission_mode": "default",
        "hook_event_name": event,
        "tool_name": tool,
        "tool_input": {"file_path": str(root / name), **tool_input},
        "tool_use_id": f"toolu_{session}_{event}",
    }
    if response is not None:
        found["tool_response"] = response
    return found
