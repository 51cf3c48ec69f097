"""Removals prepared in a job's slices (daemon/landing/earlywrites.py) and served as
tombstones until they land (daemon/landing/writeround.py), on real files and a real
SQLite journal: a removal prepared early is taken only for a removal and only while
nothing its checks looked at moved; a removal committed and not yet landed is no file
to every reader, and a write of its path lands after it."""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from editjournal.daemon.contract.outcome import Write
from editjournal.daemon.files.workspace import Workspace
from editjournal.daemon.landing.earlywrites import EarlyWrites
from editjournal.daemon.landing.flusher import Flusher
from editjournal.daemon.landing.pendingwrites import prepare
from editjournal.daemon.landing.writeround import Landings, Prepared, WriteRound
from editjournal.daemon.store.journal import Journal
from editjournal.daemon.tree.take import TreeTaker
from editjournal.schemas.errors import ToolError

EXACT_NS = 0  # timestamps taken as exact: a file changed before the look is not racy
ABSENT = "absent"


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def removal(path: str = "a.txt", base: bytes = b"old\n") -> Write:
    return Write(path, None, based_on=sha(base))


def test_a_removal_prepared_early_is_taken_and_trusted_by_its_stat(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_bytes(b"old\n")
    early = EarlyWrites(EXACT_NS)
    early.prepare(Workspace(tmp_path), [removal()])
    assert len(early) == 1 and (tmp_path / "a.txt").exists()  # checked, nothing done
    ready = early.take(removal())
    assert ready is not None and ready.temp is None and ready.directory.fd >= 0
    assert early.unchanged == {"a.txt": sha(b"old\n")}
    ready.discard()
    assert ready.directory.fd < 0


@pytest.mark.parametrize("since", ["changed", "read-only", "a link", "gone", "a write"])
def test_a_removal_whose_file_moved_on_is_prepared_afresh(tmp_path: Path, since: str) -> None:
    """Changed, made read-only, swapped for a link, removed since its slice, or asked
    for as a content write: never taken (the final run's full checks decide)."""
    path = tmp_path / "a.txt"
    path.write_bytes(b"old\n")
    ws, early = Workspace(tmp_path), EarlyWrites(EXACT_NS)
    early.prepare(ws, [removal()])
    asked = removal()
    if since == "changed":
        path.write_bytes(b"changed\n")
    elif since == "read-only":
        path.chmod(0o444)
    elif since == "a link":
        (tmp_path / "b.txt").write_bytes(b"old\n")
        path.unlink()
        path.symlink_to("b.txt")
    elif since == "gone":
        path.unlink()
    else:
        asked = Write("a.txt", b"", based_on=sha(b"old\n"), sha256=sha(b""))
    assert early.take(asked) is None and early.unchanged == {}
    if since == "read-only":
        with pytest.raises(ToolError) as refused:
            ws.prepare_delete("a.txt")
        assert refused.value.code.value == "read_only_file"


def test_a_removal_is_never_taken_for_a_content_write_nor_the_other_way(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_bytes(b"old\n")
    early = EarlyWrites(EXACT_NS)
    early.prepare(Workspace(tmp_path), [Write("a.txt", b"", sha256=sha(b""))])
    assert early.take(removal()) is None
    assert list(tmp_path.glob(".editjournal-tmp-*")) == []  # its temp file removed


def test_a_file_changed_moments_ago_is_read_again_in_a_later_slice(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_bytes(b"old\n")
    early = EarlyWrites(racy_ns=50_000_000)
    ws = Workspace(tmp_path)
    early.prepare(ws, [removal()])
    time.sleep(0.06)
    early.prepare(ws, [])  # the next slice: its stat now old enough, it is read there
    ready = early.take(removal())
    assert ready is not None and early.unchanged == {"a.txt": sha(b"old\n")}
    ready.close()


@pytest.fixture
def flusher() -> Iterator[Flusher]:
    running = Flusher()
    yield running
    running.close()


def committed_removals(
    tmp_path: Path, flusher: Flusher, names: list[str]
) -> tuple[Workspace, WriteRound]:
    """A round whose removals of `names` are committed and queued, none landed."""
    ws = Workspace(tmp_path)
    journal = Journal(tmp_path / "journal.db")
    prepare(journal)
    round_ = WriteRound(ws, flusher, "this-boot")
    for seq, name in enumerate(names, start=1):
        (tmp_path / name).write_bytes(b"old\n")
        round_.add([Prepared(ws.prepare_delete(name), sha(b"old\n"), b"old\n")], seq, [seq])
    journal.commit(also=round_.statements())
    round_.committed()
    round_.begin(Landings())
    journal.close()
    return ws, round_


def test_a_removal_not_yet_landed_is_no_file_to_any_reader(
    tmp_path: Path, flusher: Flusher
) -> None:
    ws, round_ = committed_removals(tmp_path, flusher, ["a.txt", "b.txt"])
    assert (tmp_path / "a.txt").exists() and round_.landing == 2
    with pytest.raises(ToolError) as missing:
        ws.read("a.txt")
    assert missing.value.code.value == "file_not_found"
    assert ws.fingerprint("a.txt") is None and ws.removed_pending("a.txt")
    assert round_.land(time.monotonic() + 10)
    assert not (tmp_path / "a.txt").exists() and ws.overlay == {}
    assert not ws.removed_pending("a.txt")
    assert [p.name for p in tmp_path.glob(".editjournal-displaced-*")] == []


def test_a_write_of_a_path_being_removed_lands_after_the_removal(
    tmp_path: Path, flusher: Flusher
) -> None:
    ws, round_ = committed_removals(tmp_path, flusher, ["a.txt", "b.txt"])
    write = ws.prepare_write("b.txt", b"new\n", durable=False)
    round_.add([Prepared(write, ABSENT)], 3, [3])  # a later batch, planned on no file
    assert ws.read("b.txt").data == b"new\n"
    round_.discard()  # its commit refused: the removal's tombstone is served again
    assert ws.fingerprint("b.txt") is None and (tmp_path / "b.txt").read_bytes() == b"old\n"
    write = ws.prepare_write("b.txt", b"new\n", durable=False)
    round_.add([Prepared(write, ABSENT)], 3, [3])
    round_.land_keys(round_.keys())  # what a later batch does first (groupcommit._begin)
    assert not (tmp_path / "b.txt").exists()
    assert round_.begin(Landings()) == ["b.txt"]
    round_.land_keys(["b.txt"])
    assert (tmp_path / "b.txt").read_bytes() == b"new\n" and os.path.exists(tmp_path / "a.txt")
    assert round_.land(time.monotonic() + 10) and not (tmp_path / "a.txt").exists()
    assert ws.overlay == {}


def test_a_tree_walk_skips_a_file_whose_removal_has_not_landed(
    tmp_path: Path, flusher: Flusher
) -> None:
    """A checkpoint's walk knows a file by its stat (taken before): its removal committed
    and not yet landed, the walk does not list it, though it is still on disk."""
    ws = Workspace(tmp_path)
    past = time.time() - 10  # older than the stat cache's racy window
    for name in ("a.txt", "b.txt"):
        (tmp_path / name).write_bytes(b"old\n")
        os.utime(tmp_path / name, (past, past))
    first = TreeTaker(ws, [], store=False, has_blob=lambda _: False)
    first.take_all()
    assert set(first.entries) == {"a.txt", "b.txt"}
    round_ = WriteRound(ws, flusher, "this-boot")
    round_.add([Prepared(ws.prepare_delete("a.txt"), sha(b"old\n"), b"old\n")], 1, [1])
    round_.begin(Landings())
    second = TreeTaker(ws, [], store=False, has_blob=lambda _: False)
    second.take_all()
    assert set(second.entries) == {"b.txt"} and second.read == 0  # b known by its stat
    assert (tmp_path / "a.txt").exists()
    assert round_.land(time.monotonic() + 10) and not (tmp_path / "a.txt").exists()
