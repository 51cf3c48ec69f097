"""`history`, `blame` and `stats` on a big journal are computed beside the loop.

On a journal of more than `offthread.INLINE_EVENTS` events each is parked and
computed on a worker thread from a read-only connection of its own (on 100,000 events
they held every agent 0.26-0.56 s); the reply is what the same audit function gives on
the journal read back, an error is the one the inline path gives, and a small journal
is still answered in the turn. `status.group_commit.off_thread.done` counts the
worker's requests.
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from editjournal.client import Client, RequestError
from editjournal.daemon.audit import open_readonly, views
from editjournal.daemon.audit.blame import blame as blame_of
from editjournal.daemon.handlers.offthread import INLINE_EVENTS
from editjournal.schemas.endpoint import JOURNAL_FILE, STATE_DIR_NAME
from tests.conftest import RunningDaemon

FILES = 100  # one read_many_files of them journals a file_read each


def off_thread_done(client: Client) -> int:
    result = client.call("status", {}).result
    assert isinstance(result, dict)
    return int(result["group_commit"]["off_thread"]["done"])


def edits_of_hot(client: Client, root: Path) -> None:
    """A file three agents wrote: something to blame and a history to tell."""
    (root / "hot.txt").write_text("one\ntwo\nthree\n")
    for n, agent in enumerate(("alice", "bob", "carol")):
        other = Client(root, agent, autostart=False)
        try:
            other.append_to_file("hot.txt", f"{agent} {n}\n")
        finally:
            other.close()


def grow_journal(client: Client, root: Path, events: int) -> None:
    """Past `events` events, by reads of many small files (an event per file read)."""
    names = [f"f{i:03}.txt" for i in range(FILES)]
    for name in names:
        (root / name).write_text(f"{name}\n")
    while client.call("status", {}).result["last_seq"] <= events:  # type: ignore[index]
        client.read_many_files(names)


def plain(value: object) -> object:
    return msgspec.to_builtins(value)


def test_a_big_journals_audit_is_computed_beside_the_loop_and_answers_the_same(
    daemon: RunningDaemon,
) -> None:
    client = daemon.client()
    edits_of_hot(client, daemon.root)
    small = client.history("hot.txt")  # answered in the turn: the journal is small
    assert off_thread_done(client) == 0
    grow_journal(client, daemon.root, INLINE_EVENTS)

    history = client.history("hot.txt")
    blame = client.blame("hot.txt")
    stats = client.stats()
    assert off_thread_done(client) == 3

    journal = open_readonly(daemon.root / STATE_DIR_NAME / JOURNAL_FILE)
    try:
        assert plain(history) == plain(views.history(journal, "hot.txt"))
        assert plain(blame) == plain(blame_of(journal, "hot.txt", None))
    finally:
        journal.close()
    assert plain(history) == plain(small), "reads of other files change no history of it"
    assert [line.agent for line in blame.lines][-3:] == ["alice", "bob", "carol"]
    assert {a.agent for a in stats.agents} >= {"alice", "bob", "carol", "agent-a"}
    assert stats.last_seq > INLINE_EVENTS


def test_an_error_on_the_worker_is_the_inline_error(daemon: RunningDaemon) -> None:
    client = daemon.client()
    edits_of_hot(client, daemon.root)
    try:
        client.blame("never.txt")
    except RequestError as e:
        inline = (e.code, e.message)
    else:
        raise AssertionError("a file the journal never saw was blamed")
    assert inline[0] == "file_not_in_journal"
    grow_journal(client, daemon.root, INLINE_EVENTS)
    try:
        client.blame("never.txt")
    except RequestError as e:
        assert (e.code, e.message) == inline
    else:
        raise AssertionError("a file the journal never saw was blamed")
    assert off_thread_done(client) == 1
    assert client.ping() is not None, "the daemon goes on after the worker's error"
