"""The real Claude Code CLI, driven by a scripted model: what tests/e2e/test_claude_code_real.py
shares.

The `claude-agent-sdk` wheel bundles the Claude Code CLI (`claude_agent_sdk/_bundled/claude`,
~400 MB unpacked from a ~180 MB wheel). `claude_binary` downloads the wheel of the SDK
version installed here (pip, `--only-binary :all: --no-deps`) into a cache directory once and
unpacks that one file; it fails loudly when it cannot, never skips. The CLI talks to any
Messages API endpoint (`ANTHROPIC_BASE_URL`): `ScriptedModel` is one on 127.0.0.1 (stdlib
`http.server`) that answers `POST /v1/messages` — streamed as server-sent events when the
request asks (`stream: true`), as one JSON message otherwise — with the turns a test
scripts: each conversation is told apart by a marker word in its first user message (a
session's prompt, a subagent's task), its turn by how many assistant messages the request
already holds, so a retried request gets the same answer. Anything unscripted (a title, a
summary) gets a short text. It never decides anything about editjournal: it only says which
tool calls the real CLI makes, and the real CLI runs its real tools and real hooks.

Nothing here touches the real home: `run_claude` points HOME and CLAUDE_CONFIG_DIR at the
test's own directories.
"""

from __future__ import annotations

import fcntl
import importlib.metadata
import itertools
import json
import os
import shutil
import subprocess
import sys
import threading
import zipfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

SDK = "claude-agent-sdk"
BUNDLED = "claude_agent_sdk/_bundled/claude"
MODEL = "claude-sonnet-4-5"  # any name: the scripted server answers them all
DOWNLOAD_TIMEOUT_S = 900
RUN_TIMEOUT_S = 180


class ClaudeCliUnavailable(AssertionError):
    """The real CLI could not be had: the stress test fails with this, it never skips."""


def claude_binary(cache: Path) -> Path:
    """The `claude` binary bundled in the wheel of the installed SDK version, kept in
    `cache` (downloaded and unpacked once; a lock keeps two workers from doing it at
    once). EDITJOURNAL_TEST_CLAUDE names a binary to use instead."""
    given = os.environ.get("EDITJOURNAL_TEST_CLAUDE")
    if given:
        return _checked(Path(given))
    version = importlib.metadata.version(SDK)
    target = cache / version / "claude"
    cache.mkdir(parents=True, exist_ok=True)
    with open(cache / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not target.exists():
            _unpack(_download(cache, version), target)
    return _checked(target)


def _download(cache: Path, version: str) -> Path:
    where = cache / f"wheel-{version}"
    shutil.rmtree(where, ignore_errors=True)
    command = [sys.executable, "-m", "pip", "download", f"{SDK}=={version}"]
    command += ["--only-binary", ":all:", "--no-deps", "--disable-pip-version-check", "-d"]
    done = subprocess.run(
        [*command, str(where)], capture_output=True, text=True, timeout=DOWNLOAD_TIMEOUT_S
    )
    wheels = sorted(where.glob("*.whl"))
    if done.returncode != 0 or not wheels:
        raise ClaudeCliUnavailable(
            f"`pip download {SDK}=={version}` found no wheel (exit {done.returncode}):"
            f" {done.stderr.strip()[-2000:]}"
        )
    return wheels[0]


def _unpack(wheel: Path, target: Path) -> None:
    """The one bundled binary, written beside `target` and renamed into place (a run
    killed mid-way leaves no half binary), then the 180 MB wheel removed."""
    partial = target.with_name("claude.partial")
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        with (
            zipfile.ZipFile(wheel) as archive,
            archive.open(BUNDLED) as source,
            open(partial, "wb") as out,
        ):
            shutil.copyfileobj(source, out, 1 << 20)
    except KeyError:
        raise ClaudeCliUnavailable(f"{wheel.name} bundles no {BUNDLED}") from None
    partial.chmod(0o755)
    os.replace(partial, target)
    shutil.rmtree(wheel.parent, ignore_errors=True)


def _checked(binary: Path) -> Path:
    try:
        done = subprocess.run(
            [str(binary), "--version"], capture_output=True, text=True, timeout=60
        )
    except OSError as e:
        raise ClaudeCliUnavailable(f"{binary} does not run: {e}") from None
    if done.returncode != 0 or "Claude Code" not in done.stdout:
        raise ClaudeCliUnavailable(f"{binary} --version: {done.stdout}{done.stderr}")
    return binary


# --- the scripted model --------------------------------------------------------------------


def tool_use(name: str, **tool_input: Any) -> dict[str, Any]:
    """One tool call the model makes (its id is given when it is answered)."""
    return {"type": "tool_use", "name": name, "input": tool_input}


def text(words: str) -> dict[str, Any]:
    return {"type": "text", "text": words}


Turn = list[dict[str, Any]]  # the content blocks of one assistant message
GATE_TIMEOUT_S = 120.0


@dataclass(frozen=True)
class Step:
    """One turn of a script, answered only once every conversation named in `after` has
    reached its turn there (`("one", 3)`: conversation "one" asked for its turn 3, so its
    first three turns' tools and hooks are done). Two CLI processes are ordered this way
    by the model, outside every tool call: a wait inside a Bash command would hold that
    command's shell window open."""

    blocks: Turn
    after: tuple[tuple[str, int], ...] = ()


@dataclass
class ScriptedModel:
    """A Messages API on 127.0.0.1: `scripts[marker]` is the list of turns of the
    conversation whose first user message holds `marker`; the turn after the last is a
    plain "done". Every request is kept (`requests`) for the test to look at."""

    scripts: dict[str, list[Step]]
    requests: list[dict[str, Any]] = field(default_factory=list)
    _ids: Iterator[int] = field(default_factory=lambda: itertools.count(1))
    _reached: dict[str, int] = field(default_factory=dict)
    _turned: threading.Condition = field(default_factory=threading.Condition)

    def __post_init__(self) -> None:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> ScriptedModel:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def answer(self, body: dict[str, Any]) -> Turn:
        """The turn this request is at (after its gate opens), tool calls given fresh ids."""
        messages = body.get("messages") or []
        opening = _opening_text(messages)
        marker = next((m for m in self.scripts if m in opening), None)
        turn = sum(1 for m in messages if m.get("role") == "assistant")
        with self._turned:
            self.requests.append(body)
            if marker is None:
                return [text("ok")]
            self._reached[marker] = max(self._reached.get(marker, -1), turn)
            self._turned.notify_all()
        steps = self.scripts[marker]
        step = steps[turn] if turn < len(steps) else Step([text("done")])
        with self._turned:
            if not self._turned.wait_for(lambda: self._open(step), GATE_TIMEOUT_S):
                return [text(f"gate {step.after} never opened")]
            return [
                {**b, "id": f"toolu_{marker}_{turn}_{next(self._ids)}"}
                if b["type"] == "tool_use"
                else b
                for b in step.blocks
            ]

    def _open(self, step: Step) -> bool:
        return all(self._reached.get(marker, -1) >= turn for marker, turn in step.after)

    def tool_results(self, marker: str) -> list[dict[str, Any]]:
        """The tool_result blocks the CLI sent back in `marker`'s conversation (its last
        request holds them all), so a test can tell a tool that failed."""
        found: list[dict[str, Any]] = []
        with self._turned:
            bodies = list(self.requests)
        for body in bodies:
            messages = body.get("messages") or []
            if marker not in _opening_text(messages):
                continue
            blocks = [
                b
                for m in messages
                if m.get("role") == "user" and isinstance(m.get("content"), list)
                for b in m["content"]
                if isinstance(b, dict) and b.get("type") == "tool_result"
            ]
            found = blocks if len(blocks) > len(found) else found
        return found


def _opening_text(messages: Sequence[dict[str, Any]]) -> str:
    """The text of the user messages before the first assistant one: the prompt (or a
    subagent's task), with whatever context the CLI puts around it."""
    words: list[str] = []
    for message in messages:
        if message.get("role") == "assistant":
            break
        content = message.get("content")
        if isinstance(content, str):
            words.append(content)
            continue
        words += [str(b.get("text", "")) for b in content or () if isinstance(b, dict)]
    return " ".join(words)


def _handler(model: ScriptedModel) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            if not self.path.startswith("/v1/messages") or self.path.startswith(
                "/v1/messages/count_tokens"
            ):
                self._json(200, {"input_tokens": 10} if "count_tokens" in self.path else {})
                return
            body = json.loads(raw or b"{}")
            blocks = model.answer(body)
            message = _message(body, blocks, next(model._ids))
            if body.get("stream"):
                self._stream(message)
            else:
                self._json(200, message)

        def do_GET(self) -> None:
            self._json(200, {})

        do_HEAD = do_GET

        def _json(self, status: int, value: dict[str, Any]) -> None:
            data = json.dumps(value).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _stream(self, message: dict[str, Any]) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            for event in _events(message):
                line = f"event: {event['type']}\ndata: {json.dumps(event)}\n\n"
                self.wfile.write(line.encode())
            self.wfile.flush()
            self.close_connection = True

        def log_message(self, format: str, *args: Any) -> None:
            pass  # the test reads `requests`, not a log

    return Handler


def _message(body: dict[str, Any], blocks: Turn, number: int) -> dict[str, Any]:
    """The assistant message; its id is its own (the CLI merges the blocks of messages
    that share an id into one message: the next request would hold one turn fewer)."""
    calls = any(b["type"] == "tool_use" for b in blocks)
    return {
        "id": f"msg_scripted_{number}",
        "type": "message",
        "role": "assistant",
        "model": body.get("model") or MODEL,
        "content": blocks,
        "stop_reason": "tool_use" if calls else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 10},
    }


def _events(message: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The Messages API's stream of one message: start, each block (a text as one
    text_delta, a tool call's input as one input_json_delta), delta, stop."""
    head = {**message, "content": [], "stop_reason": None}
    yield {"type": "message_start", "message": head}
    for index, block in enumerate(message["content"]):
        if block["type"] == "tool_use":
            start = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        else:
            start = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        yield {"type": "content_block_start", "index": index, "content_block": start}
        yield {"type": "content_block_delta", "index": index, "delta": delta}
        yield {"type": "content_block_stop", "index": index}
    stop = {"stop_reason": message["stop_reason"], "stop_sequence": None}
    yield {"type": "message_delta", "delta": stop, "usage": {"output_tokens": 10}}
    yield {"type": "message_stop"}


# --- the CLI, headless ---------------------------------------------------------------------

VENV_BIN = Path(sys.executable).parent
# hooks of the test's own, beside editjournal's: each payload the CLI sends, a file each
CAPTURED = ("PreToolUse", "PostToolUse", "SubagentStart", "SubagentStop", "UserPromptSubmit")


@dataclass(frozen=True)
class ClaudeCli:
    """The real CLI run headless in `root`, its home and config in `home` (never the
    real ones), talking to `model`; the tools run without asking (`--allowedTools`:
    `bypassPermissions` is refused to root, as this machine's tests run)."""

    binary: Path
    root: Path
    home: Path
    model: ScriptedModel

    def env(self) -> dict[str, str]:
        keep = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("EDITJOURNAL_", "ANTHROPIC_", "CLAUDE_"))
        }
        tmp = self.home / "tmp"
        tmp.mkdir(parents=True, exist_ok=True)
        return {
            **keep,
            "HOME": str(self.home),
            "CLAUDE_CONFIG_DIR": str(self.home / ".claude"),
            "TMPDIR": str(tmp),
            "PATH": f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}",
            "ANTHROPIC_BASE_URL": self.model.url,
            "ANTHROPIC_API_KEY": "sk-ant-scripted",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
        }

    def start(self, prompt: str, session: str) -> subprocess.Popen[str]:
        """`claude -p PROMPT` as session `session` (a UUID), started, not waited for."""
        command = [str(self.binary), "-p", prompt, "--output-format", "json"]
        command += ["--session-id", session, "--model", MODEL]
        command += ["--allowedTools", "Read,Edit,Write,Bash,Agent"]
        return subprocess.Popen(
            command,
            cwd=self.root,
            env=self.env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def run(self, prompt: str, session: str) -> dict[str, Any]:
        return finished(self.start(prompt, session))

    def capture_payloads(self, into: Path) -> None:
        """Hooks that keep each payload the CLI sends (a file each, so two hooks running
        at once never interleave), in the local settings file: editjournal's own go in
        the project's file (`hooks install`), which this leaves alone."""
        into.mkdir(parents=True, exist_ok=True)
        keep = {"type": "command", "command": f"cat > \"$(mktemp '{into}/p.XXXXXXXX')\""}
        hooks = {event: [{"matcher": "*", "hooks": [keep]}] for event in CAPTURED}
        for event in ("UserPromptSubmit", "SubagentStart", "SubagentStop"):
            hooks[event] = [{"hooks": [keep]}]
        local = self.root / ".claude" / "settings.local.json"
        local.parent.mkdir(exist_ok=True)
        local.write_text(json.dumps({"hooks": hooks}, indent=2))


def finished(proc: subprocess.Popen[str]) -> dict[str, Any]:
    """The run's JSON result; a run that failed fails the test with what it said."""
    try:
        out, err = proc.communicate(timeout=RUN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        raise AssertionError(f"claude did not finish in {RUN_TIMEOUT_S} s: {out}{err}") from None
    assert proc.returncode == 0, f"claude exited {proc.returncode}: {out[-3000:]}{err[-3000:]}"
    result = json.loads(out)
    assert result.get("is_error") is False, result
    return dict(result)


def payloads(into: Path) -> list[dict[str, Any]]:
    """What `capture_payloads` kept, each a hook's JSON input."""
    return [json.loads(p.read_text()) for p in sorted(into.glob("p.*")) if p.read_text().strip()]
