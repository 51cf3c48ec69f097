"""Hooks over HTTP: the daemon answers Claude Code's `"type": "http"` hooks.

The same payloads go through the real `editjournal hook claude-code` command and
through a POST to the daemon's loopback endpoint (daemon/runtime/hookhttp.py), and the
answers must be the same bytes of JSON: one decision, two doors. A request without the
token (or with a wrong one) is refused 401 and leaves the journal as it was; the
endpoint listens on 127.0.0.1 only; a daemon that stopped takes the endpoint with it
(the harness's POST is refused: it fails open, as the command hook does).
"""

from __future__ import annotations

import http.client
import json
import socket
import stat
from pathlib import Path
from typing import Any

from editjournal.client.harness import hook_settings
from editjournal.daemon.runtime import hookhttp
from editjournal.schemas.events import EditApplied
from tests.conftest import RunningDaemon, start
from tests.e2e.hook_support import APP, claude_payload, run_hook

Answer = tuple[int, bytes]


def endpoint(root: Path) -> tuple[str, int, str]:
    """The URL the daemon serves hooks on, its port, and the token (both 0600 files)."""
    state = root / ".editjournal"
    for name in ("hook-http.json", "hook-http.token"):
        assert stat.S_IMODE((state / name).stat().st_mode) == 0o600, name
    found = json.loads((state / "hook-http.json").read_text())
    return found["url"], found["port"], (state / "hook-http.token").read_text().strip()


def post(port: int, payload: Any, token: str | None, harness: str = "claude-code") -> Answer:
    body = payload if isinstance(payload, str) else json.dumps(payload)
    headers = {"Content-Type": "application/json"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request("POST", f"/hook/{harness}", body=body.encode(), headers=headers)
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def both(root: Path, port: int, token: str, payload: Any) -> tuple[str, str]:
    """The command's stdout and the HTTP body for one payload (the command first)."""
    done = run_hook("claude-code", payload)
    assert done.returncode == 0, done.stderr
    status, body = post(port, payload, token)
    assert status == 200
    return done.stdout, body.decode()


def test_the_same_payloads_get_the_same_json_through_the_command_and_over_http(
    served: RunningDaemon,
):
    root = served.root
    url, port, token = endpoint(root)
    assert url == f"http://127.0.0.1:{port}/hook/"
    text = (root / "app.py").read_text()
    file = {"filePath": str(root / "app.py"), "content": text, "numLines": 20, "startLine": 1}
    shown = {"type": "text", "file": file | {"totalLines": 20}}
    read = claude_payload(root, "s1", "PostToolUse", "Read", response=shown)
    assert post(port, read, token) == (200, b"")  # s1's read, journaled over HTTP
    assert run_hook("claude-code", read | {"session_id": "s2"}).stdout == ""
    edit: dict[str, Any] = {
        "old_string": "v5 = 5\n",
        "new_string": "v5 = 50\n",
        "replace_all": False,
    }
    assert post(port, claude_payload(root, "s2", "PreToolUse", "Edit", **edit), token)[1] == b""
    (root / "app.py").write_text(APP.replace("v5 = 5\n", "v5 = 50\n"))
    claimed = claude_payload(root, "s2", "PostToolUse", "Edit", response={}, **edit)
    assert post(port, claimed, token) == (200, b"")

    over = {"old_string": "v4 = 4\nv5 = 5\n", "new_string": "v4 = 4\nv5 = 55\n"}
    stale = claude_payload(root, "s1", "PreToolUse", "Edit", **over)
    apart = claude_payload(root, "s1", "PreToolUse", "Edit", old_string="v15 = 15", new_string="x")
    outside = claude_payload(root, "s1", "PreToolUse", "Edit", **over) | {
        "tool_input": {"file_path": "/etc/hosts", **over}
    }
    for payload in (stale, apart, outside, "{not json", {"hook_event_name": "Stop"}):
        command, over_http = both(root, port, token, payload)
        assert command == over_http, payload
    denied = json.loads(both(root, port, token, stale)[1])["hookSpecificOutput"]
    assert denied["permissionDecision"] == "deny" and denied["permissionDecisionReason"]
    agents = {r.agent for r in served.journal().records(kind="file_read")}
    assert agents == {"claude-code:s1", "claude-code:s2"}
    [applied] = served.journal().records(kind="edit_applied")
    assert isinstance(applied.event, EditApplied)
    assert (applied.agent, applied.event.writer) == ("claude-code:s2", "claude-code:Edit")


def test_without_the_token_a_request_is_refused_and_journaled_nowhere(served: RunningDaemon):
    root = served.root
    _, port, token = endpoint(root)
    before = served.journal().last_seq
    read = claude_payload(root, "s1", "PostToolUse", "Read", response={})
    assert post(port, read, None)[0] == 401
    assert post(port, "x" * 200_000, None)[0] == 401  # its body unread: still an answer
    assert post(port, read, token[:-1] + ("A" if token[-1] != "A" else "B"))[0] == 401
    assert post(port, read, f"{token} ")[0] == 200  # the header's spacing is not the secret
    assert served.journal().last_seq == before + 1  # only the authorised read
    assert [r.agent for r in served.journal().records(kind="file_read")] == ["claude-code:s1"]


def test_the_endpoint_listens_on_loopback_only(served: RunningDaemon):
    _, port, _ = endpoint(served.root)
    here = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        here.connect(("192.0.2.1", 9))  # no packet is sent: it only picks the outward address
        outward = here.getsockname()[0]
    finally:
        here.close()
    if outward.startswith("127."):
        return  # a machine with no other interface: nothing else to try
    probe = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    probe.settimeout(5)
    try:
        assert probe.connect_ex((outward, port)) != 0
    finally:
        probe.close()


def test_a_stopped_daemon_takes_its_endpoint_and_the_next_start_keeps_url_and_token(
    served: RunningDaemon,
):
    root = served.root
    url, port, token = endpoint(root)
    assert post(port, "{}", None)[0] == 401  # closed by the daemon: TIME_WAIT on its side
    assert served.stop() == 0
    probe = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        assert probe.connect_ex(("127.0.0.1", port)) != 0  # refused: the harness fails open
    finally:
        probe.close()
    again = start(root)
    try:
        assert endpoint(root) == (url, port, token)  # the installed hooks stay right
        assert post(port, {"hook_event_name": "Stop"}, token) == (200, b"")
    finally:
        again.stop()


def test_the_installer_reads_the_files_the_daemon_writes():
    """The client may not import the daemon: the names are written twice, held equal here."""
    assert (hookhttp.URL_FILE, hookhttp.TOKEN_FILE) == (
        hook_settings.HOOK_URL_FILE,
        hook_settings.HOOK_TOKEN_FILE,
    )
