"""When the journal will not take a commit, the daemon answers `journal_unavailable`,
changes nothing, and keeps serving: another process holds a real SQLite write lock
on the real journal past the daemon's busy timeout."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from client import Client
from client.errors import RequestError
from daemon.state import fold
from tests.conftest import RunningDaemon
from tests.e2e.edit_support import anchors_of


@contextmanager
def journal_locked(daemon: RunningDaemon) -> Iterator[None]:
    """Hold the journal's write lock from this process (as a stray sqlite3 shell would)."""
    conn = sqlite3.connect(daemon.root / ".editjournal" / "journal.db", isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    finally:
        conn.execute("ROLLBACK")
        conn.close()


def test_a_locked_journal_refuses_requests_cleanly_and_the_daemon_goes_on(
    daemon: RunningDaemon, client: Client
):
    target = daemon.root / "f.py"
    target.write_text("first = 1\nsecond = 2\n")
    anchors = anchors_of(client, "f.py")
    before = client.status().event_count
    with journal_locked(daemon):
        with pytest.raises(RequestError) as read_error:
            client.read_file("f.py")
        with pytest.raises(RequestError) as edit_error:
            client.edit("f.py", [{"op": "replace_line", "hash": anchors[1], "content": "x = 1"}])
    for caught in (read_error, edit_error):
        assert caught.value.code == "journal_unavailable"
        assert "nothing was changed" in caught.value.message
    assert target.read_text() == "first = 1\nsecond = 2\n"  # the edit was not written
    assert daemon.proc.poll() is None
    status = client.status()
    assert status.event_count == before
    assert status.state_digest == fold(daemon.journal().records()).digest()
    result = client.edit("f.py", [{"op": "replace_line", "hash": anchors[1], "content": "x = 1"}])
    assert target.read_text() == "x = 1\nsecond = 2\n"
    assert result.version == client.status().last_seq
    assert daemon.journal().verify().ok
