"""Waiting for the file watcher: a sentinel file shows it has caught up.

inotify delivers in order and the debouncer flushes earlier paths no later than
the sentinel, so once the sentinel's event is journaled, so is everything before.
"""

from __future__ import annotations

import itertools
from pathlib import Path

from editjournal.client import Client
from tests.conftest import wait_until

_sentinels = itertools.count()


def outside(client: Client, path: str | None = None) -> list:
    """Every `outside_change` in the journal (for `path`, if given), oldest first."""
    return list(client.log(path=path, kind="outside_change", limit=10_000).events)


def settle(client: Client, root: Path) -> None:
    """Write a sentinel and wait until the watcher has recorded it."""
    name = f"sentinel-{next(_sentinels)}.txt"
    (root / name).write_text(name)
    wait_until(lambda: outside(client, name), 20, f"the watcher to record {name}")


def not_sentinels(events: list) -> list:
    return [e for e in events if not e.path.startswith("sentinel-")]
