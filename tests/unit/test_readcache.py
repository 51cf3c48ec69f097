"""daemon.readcache: an unchanged file is served from the last snapshot, a changed
one never is. Real files in a tmp workspace; `racy_ns=0` stands for "the file has
been still for long enough" so no test has to wait 2 s."""

from __future__ import annotations

import dataclasses
import hashlib
import os
from pathlib import Path

import pytest

from editjournal.daemon.files.readcache import SnapshotCache
from editjournal.daemon.files.textcache import TextCache
from editjournal.daemon.files.workspace import Workspace
from editjournal.schemas.errors import ToolError


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "f.txt").write_text("alpha\nbeta\n")
    return Workspace(root)


def test_an_unchanged_file_is_served_from_the_cache(ws: Workspace) -> None:
    cache = SnapshotCache(racy_ns=0)
    first = cache.read(ws, "f.txt")
    assert cache.read(ws, "./f.txt") is first and cache.hits == 1
    assert first.text == "alpha\nbeta\n" and first.path == "f.txt"


def test_a_same_size_rewrite_with_the_old_mtime_is_seen(ws: Workspace) -> None:
    """In place, same size, mtime put back: only ctime tells, and it is in the key."""
    cache = SnapshotCache(racy_ns=0)
    path = ws.root / "f.txt"
    before = os.stat(path)
    cache.read(ws, "f.txt")
    path.write_text("ALPHA\nbeta\n")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert cache.read(ws, "f.txt").text == "ALPHA\nbeta\n" and cache.hits == 0


def test_a_rename_over_the_file_is_seen(ws: Workspace) -> None:
    cache = SnapshotCache(racy_ns=0)
    cache.read(ws, "f.txt")
    (ws.root / "new.txt").write_text("gamma\nbeta\n")
    os.replace(ws.root / "new.txt", ws.root / "f.txt")
    assert cache.read(ws, "f.txt").text == "gamma\nbeta\n" and cache.hits == 0


def test_a_recently_changed_file_is_always_read_again(ws: Workspace) -> None:
    """Within 2 s of its last change a same-tick rewrite could hide: never served by its
    stat; the bytes read are compared with the last snapshot, whose text and hash are
    taken when they are the same."""
    cache = SnapshotCache()
    first = cache.read(ws, "f.txt")
    second = cache.read(ws, "f.txt")
    assert cache.hits == 0
    assert second.text is first.text and second.sha256 == first.sha256


def test_a_same_size_rewrite_within_the_racy_window_is_seen_by_its_bytes(ws: Workspace) -> None:
    cache = SnapshotCache()
    path = ws.root / "f.txt"
    before = os.stat(path)
    first = cache.read(ws, "f.txt")
    path.write_text("alpha\nBETA\n")  # same size
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    second = cache.read(ws, "f.txt")
    assert second.text == "alpha\nBETA\n" and second.sha256 != first.sha256
    assert second.sha256 == hashlib.sha256(b"alpha\nBETA\n").hexdigest()


def test_a_content_about_to_be_written_answers_the_next_read_by_its_bytes(ws: Workspace) -> None:
    cache = SnapshotCache()
    expected = dataclasses.replace(ws.read("f.txt"), data=b"new\n", text="new\n", size=4)
    expected = dataclasses.replace(expected, sha256=hashlib.sha256(b"new\n").hexdigest())
    cache.expect("f.txt", expected)
    (ws.root / "f.txt").write_text("new\n")
    got = cache.read(ws, "f.txt")
    assert got.text is expected.text and got.sha256 == expected.sha256
    (ws.root / "f.txt").write_text("not what was expected\n")
    assert cache.read(ws, "f.txt").text == "not what was expected\n"


def test_a_pending_write_of_the_batch_answers_first(ws: Workspace) -> None:
    cache = SnapshotCache(racy_ns=0)
    cache.read(ws, "f.txt")
    pending = dataclasses.replace(ws.read("f.txt"), data=b"pending\n", text="pending\n")
    ws.overlay["f.txt"] = pending
    try:
        assert cache.read(ws, "f.txt") == pending and cache.hits == 0
    finally:
        ws.overlay.clear()


def test_a_deleted_file_is_not_served(ws: Workspace) -> None:
    cache = SnapshotCache(racy_ns=0)
    cache.read(ws, "f.txt")
    (ws.root / "f.txt").unlink()
    with pytest.raises(ToolError, match=r"f\.txt"):
        cache.read(ws, "f.txt")


def test_the_cache_is_bounded(ws: Workspace) -> None:
    cache = SnapshotCache(entries=2, racy_ns=0)
    for name in ("a", "b", "c"):
        (ws.root / name).write_text(name * 10)
        cache.read(ws, name)
    assert cache.bytes == 2 * 20
    cache.read(ws, "a")  # evicted: read again
    assert cache.hits == 0


def test_the_cache_is_bounded_by_bytes(ws: Workspace) -> None:
    cache = SnapshotCache(entries=100, max_bytes=500, racy_ns=0)
    for name in ("a", "b", "c"):
        (ws.root / name).write_text(name * 100)  # 200 bytes each: data and text
        cache.read(ws, name)
    assert cache.bytes == 400  # "a" made room for "c"
    cache.read(ws, "b")
    cache.read(ws, "c")
    assert cache.hits == 2
    cache.read(ws, "a")  # evicted: read again
    assert cache.hits == 2 and cache.bytes <= 500
    (ws.root / "huge").write_text("h" * 300)  # alone over the budget: never kept
    cache.read(ws, "huge")
    cache.read(ws, "huge")
    assert cache.hits == 2 and cache.bytes <= 500


def test_the_text_cache_gives_the_snapshot_cache_a_share_of_its_budget() -> None:
    assert TextCache(max_bytes=4000).files.max_bytes == 1000
