"""A run that ended without `daemon_stopped` (kill -9, a crash, power lost) is named by
the next `daemon_started`: which pid, and when it was last seen journaling.

The daemon derives it from the journal's last event, not from leftover run files, so
what is tested here with SIGKILL holds for a power loss too: either way the journal
simply ends before any `daemon_stopped`.
"""

from __future__ import annotations

import signal
import time
from pathlib import Path
from typing import Any

import msgspec

from editjournal.client import Client
from tests.conftest import start


def starts(client: Client) -> list[Any]:
    return list(client.log(kind="daemon_started", limit=100).events)


def test_a_killed_daemon_is_named_by_the_next_start(workspace: Path):
    (workspace / "a.txt").write_text("a\n")
    first = start(workspace)
    first.client().read_file("a.txt")
    last_seen = list(first.journal().records())[-1]
    assert last_seen.kind == "file_read"
    first.stop(signal.SIGKILL)

    second = start(workspace)
    try:
        latest = starts(second.client())[-1]
        assert latest.body["previous_unclean"] is True
        assert latest.body["previous_pid"] == first.proc.pid
        assert latest.body["previous_last_seen_ms"] == last_seen.ts
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(last_seen.ts / 1000))
        assert latest.summary == (
            f"daemon {latest.body['version']} started, pid {second.proc.pid}; previous run"
            f" (pid {first.proc.pid}) did not stop cleanly; last seen {when}"
        )
    finally:
        second.stop()


def test_a_daemon_killed_right_after_starting_is_named_too(workspace: Path):
    first = start(workspace, "--no-watch")  # nothing journaled after daemon_started
    started = list(first.journal().records())[-1]
    first.stop(signal.SIGKILL)
    second = start(workspace)
    try:
        latest = starts(second.client())[-1]
        assert latest.body["previous_pid"] == first.proc.pid
        assert latest.body["previous_last_seen_ms"] == started.ts
    finally:
        second.stop()


def test_a_clean_stop_and_a_first_start_say_nothing_of_a_previous_run(workspace: Path):
    first = start(workspace)
    [fresh] = starts(first.client())
    first.stop()
    second = start(workspace)
    try:
        for event in (fresh, starts(second.client())[-1]):
            assert event.body["previous_unclean"] is False and event.body["previous_pid"] is None
            assert "did not stop cleanly" not in event.summary
        rows = second.journal().db.execute("SELECT body FROM events WHERE kind = 'daemon_started'")
        for (body,) in rows:  # defaults are left out of the stored event
            assert "previous_unclean" not in msgspec.msgpack.decode(body)
    finally:
        second.stop()
