"""Idempotent retries: a request sent again with its `idempotency_key` is applied once.

The retry gets the first reply back (same result, same seq), the file changes once,
and the journal keeps the reply, so a retry after a daemon restart is answered too.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from editjournal.client import Client, RequestError
from tests.conftest import RunningDaemon, start


def test_a_retry_with_the_same_key_returns_the_first_reply_and_applies_once(
    daemon: RunningDaemon, client: Client
) -> None:
    (daemon.root / "a.txt").write_text("one\n")
    params = {"path": "a.txt", "content": "two\n", "skip_safety_check": True}
    first = client.call("append_to_file", params, idempotency_key="k1")
    again = client.call("append_to_file", params, idempotency_key="k1")
    assert first.ok and again.ok
    assert again.seq == first.seq
    assert again.result == first.result
    assert any("retry" in w for w in again.warnings)
    assert (daemon.root / "a.txt").read_text() == "one\ntwo\n"


def test_without_a_key_a_second_send_applies_twice(daemon: RunningDaemon, client: Client) -> None:
    (daemon.root / "a.txt").write_text("one\n")
    params = {"path": "a.txt", "content": "two\n", "skip_safety_check": True}
    assert client.call("append_to_file", params).ok
    assert client.call("append_to_file", params).ok
    assert (daemon.root / "a.txt").read_text() == "one\ntwo\ntwo\n"


def test_a_key_reused_for_another_request_is_refused(daemon: RunningDaemon, client: Client) -> None:
    (daemon.root / "a.txt").write_text("one\n")
    client.call("append_to_file", {"path": "a.txt", "content": "two\n"}, idempotency_key="k")
    with pytest.raises(RequestError) as refused:
        client.request(
            "append_to_file", {"path": "a.txt", "content": "three\n"}, idempotency_key="k"
        )
    assert refused.value.code == "idempotency_key_reused"
    assert (daemon.root / "a.txt").read_text() == "one\ntwo\n"


def test_keys_belong_to_their_agent(daemon: RunningDaemon) -> None:
    (daemon.root / "a.txt").write_text("one\n")
    params = {"path": "a.txt", "content": "x\n", "skip_safety_check": True}
    daemon.client("agent-a").call("append_to_file", params, idempotency_key="same")
    daemon.client("agent-b").call("append_to_file", params, idempotency_key="same")
    assert (daemon.root / "a.txt").read_text() == "one\nx\nx\n"


def test_a_retry_after_a_restart_is_still_answered_from_the_journal(workspace: Path) -> None:
    (workspace / "a.txt").write_text("one\n")
    params = {"path": "a.txt", "content": "two\n", "skip_safety_check": True}
    running = start(workspace, "--no-watch")
    client = running.client()
    first = client.call("append_to_file", params, idempotency_key="across")
    running.stop()
    running = start(workspace, "--no-watch")
    retrying = running.client(credential=client.credential)  # the same client, restarted
    again = retrying.call("append_to_file", params, idempotency_key="across")
    running.stop()
    assert first.ok and again.ok and again.seq == first.seq
    assert (workspace / "a.txt").read_text() == "one\ntwo\n"
    kinds = [r.kind for r in running.journal().records()]
    assert kinds.count("request_answered") == 1
