"""When the journal will not take a commit, the daemon answers `journal_unavailable`,
changes nothing, and keeps serving: another process holds a real SQLite write lock
on the real journal past the daemon's busy timeout."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from editjournal.client import Client
from editjournal.client.library.errors import RequestError
from editjournal.daemon.model.state import fold
from tests.conftest import RunningDaemon, wait_until
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


@pytest.mark.slow
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


APPENDER = """
import sys, time
path, stop = sys.argv[1], sys.argv[2]
import os
n = 0
deadline = time.monotonic() + 20
while not os.path.exists(stop) and time.monotonic() < deadline:
    with open(path, "a") as out:
        out.write(f"person {n}\\n")
    n += 1
    time.sleep(0.0001)  # pacing: thousands of lines a second, not a flood
print(n)
"""


def test_an_edit_racing_a_busy_appender_lands_or_is_stale_never_blind_and_loses_nothing(
    daemon: RunningDaemon, client: Client
):
    """A person's process appends to the file as fast as it can while an agent edits
    its header: an edit whose file changed between reading and writing is planned
    again, and one that still meets a change as it lands is carried over it
    (daemon/landing/exchange.py); an edit that meets a new line at every attempt gives way with
    `file_changing`. Never blind: once the appender stops, the header is the last
    landed edit's and every appended line is in the file."""
    target = daemon.root / "busy.log"
    target.write_text("header = 0\n")
    stop = daemon.root / "stop-appending"
    appender = subprocess.Popen(
        [sys.executable, "-c", APPENDER, str(target), str(stop)], stdout=subprocess.PIPE
    )
    codes: list[str] = []
    landed = 0
    try:
        wait_until(lambda: target.stat().st_size > 1000, 20, "the appender to start")
        for k in range(1, 21):
            anchor = client.read_file("busy.log", range="1-1", hashes=True)
            try:
                client.edit(
                    "busy.log",
                    [{"op": "replace_line", "hash": anchor.lines[0].hash, "content": f"h = {k}"}],
                )
                landed = k
            except RequestError as e:
                codes.append(e.code)
    finally:
        stop.touch()
        written = int(appender.communicate(timeout=30)[0])
    assert set(codes) <= {"anchor_stale", "file_changing"}
    assert landed > 0 and written > 0

    def settled() -> bool:
        lines = target.read_text().splitlines()
        return lines[0] == f"h = {landed}" and set(lines) >= {f"person {n}" for n in range(written)}

    wait_until(settled, 15, "the header and every appended line in the file")

    def caught_up() -> tuple[str, str] | None:
        """The live digest and the fold's, once no outside change is still coming in
        (the watcher journals the last appends, and the stop file, a moment later)."""
        status, folded = client.status(), fold(daemon.journal().records())
        return (
            (status.state_digest, folded.digest()) if status.last_seq == folded.last_seq else None
        )

    live, folded = wait_until(caught_up, 15, "the journal to take in the last outside changes")
    assert live == folded
