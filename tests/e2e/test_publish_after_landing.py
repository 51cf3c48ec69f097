"""A write's event goes on the PUB feed once its file is in place (issue 40's loose end).

The feed announced a write's `edit_applied` at the commit, before its file was renamed
into place (for a restore of many files: before the whole landing, which goes a slice
at a time after the commit), so a subscriber that reacted by reading the file could
read the old content. Now a write's event is published when its file has landed and
every other event at its commit. Each test: a real daemon, a real `Client.subscribe`
in a thread of the test that reads the file from disk on every write event, as an
agent's watcher would; what it read must be the new content, every time.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from editjournal.client import Client
from tests.conftest import RunningDaemon, start

RESTORED_FILES = 150  # more than SLICED_WRITES (64): the restore lands in slices


@pytest.fixture
def unwatched(workspace: Path) -> Iterator[RunningDaemon]:
    """A daemon without the watcher: the restore finds the changes by taking the tree."""
    running = start(workspace, "--no-watch")
    yield running
    if running.proc.poll() is None:
        running.stop(signal.SIGKILL)


class Reader:
    """Subscribes to every event; on each `edit_applied`, reads its file from disk at
    once, until `wanted` such events came (or 60 s pass without one)."""

    def __init__(self, client: Client, root: Path, wanted: int) -> None:
        self.feed = client.subscribe()
        self.root, self.wanted = root, wanted
        self.read: list[tuple[str, bytes | None]] = []  # (path, what the disk held)
        self.kinds: list[str] = []
        self.thread = threading.Thread(target=self._run)

    def ready(self, client: Client) -> None:
        """The subscription is live (a read publishes), then the reader starts."""
        self.feed.wait_ready(lambda: client.read_file("ready.txt"))
        self.thread.start()

    def _run(self) -> None:
        while len(self.read) < self.wanted:
            event = self.feed.next_event(60)
            if event is None:
                return
            self.kinds.append(event.kind)
            if event.kind == "edit_applied" and event.path is not None:
                path = self.root / event.path
                self.read.append((event.path, path.read_bytes() if path.exists() else None))

    def finish(self) -> list[tuple[str, bytes | None]]:
        self.thread.join(90)
        self.feed.close()
        return self.read


def test_a_subscriber_reading_on_a_write_event_finds_the_new_content(
    unwatched: RunningDaemon,
) -> None:
    """Three writes of one file, one after another: on each event the file holds that
    write's content (or a later one's), never the one before."""
    daemon = unwatched
    (daemon.root / "ready.txt").write_text("ready\n")
    (daemon.root / "notes.txt").write_text("v0\n")
    writer = daemon.client("writer")
    reader = Reader(daemon.client("reader"), daemon.root, wanted=3)
    reader.ready(writer)
    for n in (1, 2, 3):
        writer.write_file("notes.txt", f"v{n}\n")
    read = reader.finish()
    assert [path for path, _ in read] == ["notes.txt"] * 3
    versions = [int(data.decode()[1:]) for _, data in read if data is not None]
    assert len(versions) == 3
    assert all(seen >= n for n, seen in zip((1, 2, 3), versions, strict=True))


def test_a_subscriber_reading_on_each_write_of_a_sliced_restore_finds_the_restored_file(
    unwatched: RunningDaemon,
) -> None:
    """A restore of 150 files commits them in one transaction and lands them a slice at a
    time: each file's event comes once that file is back, byte for byte; the grouping
    `checkpoint_restored` is published at the commit, as every other event."""
    daemon = unwatched
    root = daemon.root
    (root / "ready.txt").write_text("ready\n")
    contents = {}
    for i in range(RESTORED_FILES):
        path = f"d{i // 50}/f{i:03}.py"
        (root / path).parent.mkdir(exist_ok=True)
        contents[path] = "".join(f"line {j} of {i}\n" for j in range(6)).encode()
        (root / path).write_bytes(contents[path])
    client = daemon.client("restorer")
    client.checkpoint_create("before")
    for path, data in contents.items():
        (root / path).write_bytes(data.replace(b"line 3 ", b"LINE 3 "))
    reader = Reader(daemon.client("reader"), root, wanted=RESTORED_FILES)
    reader.ready(client)
    restored = client.checkpoint_restore("before")
    read = reader.finish()
    assert len(restored.files) == RESTORED_FILES
    assert dict(read) == contents, "a write's event came before its file was in place"
    assert "checkpoint_restored" in reader.kinds
