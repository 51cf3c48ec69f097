"""`AsyncClient`: the blocking Client's conversation on an asyncio loop, against a real daemon.

Many tasks on one loop talk to the daemon at once (two agents, and several tasks
sharing one client); error replies raise the same exception families; a daemon
that hangs gives `timeout`, one that dies is replaced for a read-only request —
each decision the same as the blocking Client's, because they share it
(`client/library/exchange.py`).
"""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import pytest

from editjournal.client import AsyncClient, DaemonUnavailable, RequestTimeout, StaleAnchor
from editjournal.client.library.connection import live_endpoint
from tests.conftest import RunningDaemon, pid_alive, start, wait_until

EDITS_EACH = 15


async def _edit_own_file(root: Path, agent: str, name: str) -> list[int]:
    """`EDITS_EACH` anchored edits in a row, each by the anchor the last one returned."""
    versions = []
    async with AsyncClient(root, agent, autostart=False) as client:
        rows = (await client.read_file(name, hashes=True)).lines or []
        anchor = rows[-1].hash
        for i in range(EDITS_EACH):
            op = {"op": "insert_after", "hash": anchor, "content": f"{agent} {i}"}
            done = await client.edit(name, [op])
            anchor = done.changed_lines[-1].hash
            versions.append(done.version)
    return versions


def test_two_agents_edit_at_once_from_one_loop(daemon: RunningDaemon) -> None:
    for name in ("a.txt", "b.txt"):
        (daemon.root / name).write_text("start\n")

    async def both() -> list[list[int]]:
        return await asyncio.gather(
            _edit_own_file(daemon.root, "agent-a", "a.txt"),
            _edit_own_file(daemon.root, "agent-b", "b.txt"),
        )

    versions_a, versions_b = asyncio.run(both())
    for agent, name in (("agent-a", "a.txt"), ("agent-b", "b.txt")):
        expected = ["start", *(f"{agent} {i}" for i in range(EDITS_EACH))]
        assert (daemon.root / name).read_text().splitlines() == expected
    assert len(set(versions_a) | set(versions_b)) == 2 * EDITS_EACH  # every edit journaled
    applied = daemon.journal().records(kind="edit_applied")
    assert sorted(r.agent for r in applied) == ["agent-a"] * EDITS_EACH + ["agent-b"] * EDITS_EACH


def test_tasks_sharing_one_client_each_get_their_own_reply(daemon: RunningDaemon) -> None:
    for i in range(8):
        (daemon.root / f"f{i}.txt").write_text(f"file {i}\n")

    async def reads() -> list[str]:
        async with AsyncClient(daemon.root, "agent-a", autostart=False) as client:
            found = await asyncio.gather(*(client.read_file(f"f{i}.txt") for i in range(8)))
            return [r.content for r in found]

    assert asyncio.run(reads()) == [f"file {i}\n" for i in range(8)]


def test_an_error_reply_raises_its_family(daemon: RunningDaemon) -> None:
    (daemon.root / "a.txt").write_text("one\ntwo\n")

    async def stale_edit() -> None:
        async with AsyncClient(daemon.root, "agent-a", autostart=False) as client:
            rows = (await client.read_file("a.txt", hashes=True)).lines or []
            (daemon.root / "a.txt").write_text("ONE\nTWO\n")  # every line changes outside
            wait_until(lambda: daemon.journal().records(kind="outside_change"), 10, "the change")
            await client.edit(
                "a.txt", [{"op": "replace_line", "hash": rows[1].hash, "content": "x"}]
            )

    with pytest.raises(StaleAnchor) as caught:
        asyncio.run(stale_edit())
    assert caught.value.code == "anchor_stale"
    assert (daemon.root / "a.txt").read_text() == "ONE\nTWO\n"


def test_a_daemon_that_hangs_is_a_timeout(daemon: RunningDaemon) -> None:
    async def ping_twice() -> bool:
        async with AsyncClient(daemon.root, "agent-a", autostart=False, timeout=0.3) as client:
            os.kill(daemon.proc.pid, signal.SIGSTOP)
            try:
                with pytest.raises(RequestTimeout) as caught:
                    await client.ping()
            finally:
                os.kill(daemon.proc.pid, signal.SIGCONT)
            assert "did not answer ping" in caught.value.message
            client.timeout = 10
            return (await client.ping()).pong  # the late reply to the first is skipped

    assert asyncio.run(ping_twice())


def test_without_a_daemon_and_without_autostart_it_says_so(workspace: Path) -> None:
    async def connect() -> None:
        await AsyncClient(workspace, "agent-a", autostart=False).connect()

    with pytest.raises(DaemonUnavailable) as caught:
        asyncio.run(connect())
    assert str(workspace) in caught.value.message


def test_a_read_is_served_by_a_new_daemon_after_the_first_was_killed(workspace: Path) -> None:
    (workspace / "a.txt").write_text("one\n")
    first = start(workspace, "--no-watch")

    async def read_across_a_kill() -> tuple[str, int | None]:
        async with AsyncClient(workspace, "agent-a") as client:  # may start a new daemon
            assert (await client.read_file("a.txt")).content == "one\n"
            first.stop(signal.SIGKILL)
            read = await client.read_file("a.txt")  # not a timeout 30 s later
            return read.content, client.daemon_pid

    try:
        content, served_by = asyncio.run(read_across_a_kill())
        assert content == "one\n"
        assert served_by not in (None, first.proc.pid)
    finally:
        endpoint = live_endpoint(workspace)
        if endpoint is not None:
            os.kill(endpoint.pid, signal.SIGTERM)
            wait_until(lambda: not pid_alive(endpoint.pid), 15, "the started daemon to stop")
