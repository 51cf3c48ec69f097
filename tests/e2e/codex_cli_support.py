"""The real Codex CLI, driven by a scripted model: what tests/e2e/test_codex_real.py shares.

Codex is an npm package (`@openai/codex`, its native binary in a platform package, ~400 MB
unpacked): `codex_binary` installs the pinned version with `npm` into a cache directory
once; it fails loudly when it cannot, never skips. Codex talks to any Responses API
endpoint (a `model_providers` entry's `base_url`): `ScriptedResponses` is one on
127.0.0.1 (stdlib `http.server`) that answers `POST /v1/responses` as server-sent events
(`response.created`, one `response.output_item.done` per scripted item,
`response.completed`; the shapes of codex-rs/core/tests/common/responses.rs). A turn is
told by how many tool outputs the request already carries, so a retried request gets
the same answer; a `before` callback runs as a turn is first served (another agent's
change between two of the session's calls). It never decides anything about
editjournal: it only says which tool calls the real CLI makes.

Nothing here touches the real home: `CodexCli` points HOME and CODEX_HOME at the
test's own directories.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

VERSION = "0.169.0"  # the release whose hooks docs/harnesses.md describes
MODEL = "gpt-5.5"  # a model Codex knows: it offers the apply_patch tool for it
INSTALL_TIMEOUT_S = 900
RUN_TIMEOUT_S = 180
VENV_BIN = Path(sys.executable).parent
OUTPUTS = ("function_call_output", "custom_tool_call_output")


class CodexUnavailable(AssertionError):
    """The real CLI could not be had: the stress test fails with this, it never skips."""


def codex_binary(cache: Path) -> Path:
    """`codex` of VERSION, installed in `cache` once (a lock keeps two workers from doing
    it at once). EDITJOURNAL_TEST_CODEX names a binary to use instead."""
    given = os.environ.get("EDITJOURNAL_TEST_CODEX")
    if given:
        return Path(given)
    target = cache / VERSION / "node_modules" / ".bin" / "codex"
    cache.mkdir(parents=True, exist_ok=True)
    with open(cache / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not target.exists():
            _install(cache / VERSION)
    return target


def _install(where: Path) -> None:
    npm = shutil.which("npm")
    if npm is None:
        raise CodexUnavailable("npm is not on PATH: the Codex CLI cannot be installed")
    shutil.rmtree(where, ignore_errors=True)
    command = [npm, "install", "--no-audit", "--no-fund", "--prefix", str(where)]
    done = subprocess.run(
        [*command, f"@openai/codex@{VERSION}"],
        capture_output=True,
        text=True,
        timeout=INSTALL_TIMEOUT_S,
    )
    if done.returncode != 0:
        raise CodexUnavailable(f"npm install @openai/codex@{VERSION}: {done.stderr[-2000:]}")


def function_call(call: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {
        "type": "function_call",
        "call_id": call,
        "name": name,
        "arguments": json.dumps(arguments),
    }


def apply_patch(call: str, patch: str) -> dict[str, Any]:
    """The model's apply_patch, as a custom (freeform) tool call."""
    return {"type": "custom_tool_call", "call_id": call, "name": "apply_patch", "input": patch}


def message(words: str) -> dict[str, Any]:
    content = [{"type": "output_text", "text": words}]
    return {"type": "message", "role": "assistant", "id": "msg_done", "content": content}


@dataclass
class Turn:
    items: list[dict[str, Any]]
    before: Callable[[], None] | None = None  # run once, as the turn is first served


@dataclass
class ScriptedResponses:
    """A Responses API on 127.0.0.1 answering one scripted conversation."""

    turns: Sequence[Turn]
    requests: list[dict[str, Any]] = field(default_factory=list)
    _served: set[int] = field(default_factory=set)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> ScriptedResponses:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def answer(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        given = body.get("input") if isinstance(body.get("input"), list) else []
        number = sum(1 for item in given if item.get("type") in OUTPUTS)
        with self._lock:
            self.requests.append(body)
            first = number not in self._served
            self._served.add(number)
        if number >= len(self.turns):
            return [message("done")]
        turn = self.turns[number]
        if first and turn.before is not None:
            turn.before()
        return turn.items

    def tool_outputs(self) -> dict[str, str]:
        """Each tool call's output as Codex sent it back, by call id."""
        found: dict[str, str] = {}
        for body in self.requests:
            for item in body.get("input") or []:
                if item.get("type") in OUTPUTS:
                    found[item["call_id"]] = str(item.get("output"))
        return found


def _handler(model: ScriptedResponses) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            size = int(self.headers.get("content-length") or 0)
            body = json.loads(self.rfile.read(size) or b"{}")
            items = model.answer(body)
            rid = f"resp_{len(model.requests)}"
            events = [{"type": "response.created", "response": {"id": rid}}]
            events += [{"type": "response.output_item.done", "item": item} for item in items]
            usage = {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0}
            events.append({"type": "response.completed", "response": {"id": rid, "usage": usage}})
            data = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)
            self._send(200, "text/event-stream", data.encode())

        def do_GET(self) -> None:  # the model list: none beyond Codex's own
            self._send(200, "application/json", b'{"models": [], "data": []}')

        def _send(self, status: int, kind: str, data: bytes) -> None:
            self.send_response(status)
            self.send_header("content-type", kind)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


@dataclass
class CodexCli:
    """`codex exec` in `root`, its home and CODEX_HOME under `home` (never the real
    ones), talking to `model`, the project trusted (so its `.codex/hooks.json` loads),
    without sandbox or approvals, hooks run without their trust review for this run."""

    binary: Path
    root: Path
    home: Path
    model: ScriptedResponses

    def env(self) -> dict[str, str]:
        keep = {k: v for k, v in os.environ.items() if not k.startswith(("EDITJOURNAL_", "CODEX_"))}
        config = self.home / ".codex"
        config.mkdir(parents=True, exist_ok=True)
        (config / "config.toml").write_text(
            f'model = "{MODEL}"\nmodel_provider = "scripted"\napproval_policy = "never"\n'
            'sandbox_mode = "danger-full-access"\n\n'
            f'[projects."{self.root}"]\ntrust_level = "trusted"\n\n'
            '[model_providers.scripted]\nname = "scripted"\nwire_api = "responses"\n'
            f'base_url = "{self.model.url}"\nrequest_max_retries = 0\nstream_max_retries = 0\n'
        )
        return {
            **keep,
            "HOME": str(self.home),
            "CODEX_HOME": str(config),
            "PATH": f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}",
            "OPENAI_API_KEY": "sk-scripted",
        }

    def run(self, prompt: str) -> str:
        """The run's stderr (Codex says there which hooks ran); it must exit 0."""
        command = [str(self.binary), "exec", "--dangerously-bypass-hook-trust"]
        command += ["--skip-git-repo-check", "--color", "never", prompt]
        done = subprocess.run(
            command, cwd=self.root, env=self.env(), stdin=subprocess.DEVNULL,
            capture_output=True, text=True, timeout=RUN_TIMEOUT_S,
        )  # fmt: skip
        assert done.returncode == 0, f"codex exited {done.returncode}: {done.stderr[-4000:]}"
        return done.stdout + done.stderr
