"""The watcher knows the daemon's own renames by stat (daemon/files/ownwrites.py), and
still records every outside change made right after one, however alike it looks."""

from __future__ import annotations

import hashlib

from editjournal.client import Client
from tests.conftest import RunningDaemon, wait_until
from tests.e2e.edit_support import anchors_of
from tests.e2e.watch_support import not_sentinels, outside, settle


def test_own_edits_are_not_outside_changes(daemon: RunningDaemon, client: Client):
    (daemon.root / "own.py").write_text("a = 1\nb = 2\n")
    client.read_file("own.py")
    for n in range(5):
        anchor = anchors_of(client, "own.py")[1]
        client.edit("own.py", [{"op": "replace_line", "hash": anchor, "content": f"a = {n}"}])
    settle(client, daemon.root)
    assert not_sentinels(outside(client, "own.py")) == []


def test_a_same_size_rewrite_right_after_an_edit_is_recorded(daemon: RunningDaemon, client: Client):
    target = daemon.root / "raced.py"
    target.write_text("a = 1\nb = 2\n")
    client.read_file("raced.py")
    anchor = anchors_of(client, "raced.py")[1]
    client.edit("raced.py", [{"op": "replace_line", "hash": anchor, "content": "a = 3"}])
    with open(target, "r+b") as handle:  # in place: same inode, same size
        handle.write(b"a = 4\n")
    want = hashlib.sha256(b"a = 4\nb = 2\n").hexdigest()
    wait_until(
        lambda: [e for e in outside(client, "raced.py") if e.body["new_sha256"] == want],
        20,
        "the rewrite to be recorded",
    )
