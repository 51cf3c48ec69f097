"""`ship --follow` goes on across a rescue of the journal it reads.

The daemon takes back a WAL unlinked under it (daemon/store/journalfiles.py): its
frames go into the database file and the daemon's connection is reopened over a fresh
WAL and index. A shipper that had the journal open before reads through the old ones
and SQLite answers "disk I/O error"; the shipper opens the journal again and ships on
(daemon/fleet/shipper.py), every event once, none skipped.
"""

from __future__ import annotations

import threading
from pathlib import Path
from urllib.parse import urlparse

import psycopg

from editjournal.daemon.fleet.shipper import Shipper
from editjournal.schemas.endpoint import JOURNAL_FILE, STATE_DIR_NAME
from tests.conftest import start
from tests.pg_support import PostgresServer
from tests.polling import wait_until


def shipped_seqs(postgres: PostgresServer, url: str) -> list[int]:
    """The seqs on the server, in order; none before the shipper made its tables."""
    try:
        with postgres.connect(urlparse(url).path.lstrip("/")) as conn:
            return [seq for (seq,) in conn.execute("SELECT seq FROM ej_events ORDER BY seq")]
    except psycopg.errors.UndefinedTable:
        return []


def test_a_follower_reads_on_after_the_daemon_takes_back_an_unlinked_wal(
    workspace: Path, postgres: PostgresServer, pg_url: str
) -> None:
    (workspace / "log.txt").write_text("")
    running = start(workspace, "--no-watch")
    client = running.client("agent-a")
    for k in range(5):
        client.append_to_file("log.txt", f"line {k}\n")
    shipper = Shipper(workspace, pg_url)
    stop = threading.Event()
    errors: list[BaseException] = []

    def follow() -> None:
        try:
            shipper.follow(stop, poll_s=0.02)
        except BaseException as e:  # surfaced below
            errors.append(e)

    thread = threading.Thread(target=follow, daemon=True)
    thread.start()
    try:
        last = running.journal().last_seq
        wait_until(lambda: shipped_seqs(postgres, pg_url)[-1:] == [last], what="first ship")
        (workspace / STATE_DIR_NAME / (JOURNAL_FILE + "-wal")).unlink()
        for k in range(5, 10):
            client.append_to_file("log.txt", f"line {k}\n")
        last = running.journal().last_seq
        wait_until(
            lambda: errors or shipped_seqs(postgres, pg_url)[-1:] == [last],
            timeout=20,
            what="the events after the rescue shipped",
        )
        assert not errors, errors
        assert shipped_seqs(postgres, pg_url) == list(range(1, last + 1))
    finally:
        stop.set()
        thread.join(10)
        shipper.close()
        assert running.stop() == 0
