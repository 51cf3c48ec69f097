"""The temp files a long job writes before its commit (daemon/landing/earlywrites.py), on
real files: taken only when the final run writes exactly those bytes and nothing its
checks looked at moved; a file verified in the slice is trusted by stat alone only when
its last change is older than the racy window."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from editjournal.daemon.contract.outcome import Write
from editjournal.daemon.files.statcache import RACY_NS
from editjournal.daemon.files.tempfiles import TEMP_PREFIX
from editjournal.daemon.files.workspace import Workspace
from editjournal.daemon.landing.earlywrites import EarlyWrites
from editjournal.schemas.errors import ToolError


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def temps(root: Path) -> list[Path]:
    return list(root.glob(f"{TEMP_PREFIX}*"))


def old_file(root: Path, name: str, data: bytes) -> Path:
    path = root / name
    path.write_bytes(data)
    return path


# a file system whose timestamps are exact: a file changed before the look is not racy
# (a real one's racy window, 2 s, would need the test to wait that long)
EXACT_NS = 0


def write_of(data: bytes, base: bytes) -> Write:
    return Write("a.txt", data, based_on=sha(base), sha256=sha(data))


def test_a_temp_file_is_taken_for_the_same_bytes_and_trusted_by_its_stat(tmp_path: Path) -> None:
    old_file(tmp_path, "a.txt", b"old\n")
    early, write = EarlyWrites(EXACT_NS), write_of(b"new\n", b"old\n")
    early.prepare(Workspace(tmp_path), [write])
    assert len(temps(tmp_path)) == 1 and (tmp_path / "a.txt").read_bytes() == b"old\n"
    ready = early.take(write)
    assert ready is not None and ready.snapshot.data == b"new\n"
    assert early.unchanged == {"a.txt": sha(b"old\n")}
    ready.discard()


def test_other_bytes_a_change_or_a_read_only_file_get_no_temp_file(tmp_path: Path) -> None:
    """Each is prepared afresh by the full checks: a file made read-only since its temp
    file was written is refused there, never written through the early one."""
    path = old_file(tmp_path, "a.txt", b"old\n")
    ws, early = Workspace(tmp_path), EarlyWrites(EXACT_NS)
    early.prepare(ws, [write_of(b"new\n", b"old\n")])
    assert early.take(write_of(b"other\n", b"old\n")) is None and temps(tmp_path) == []
    early.prepare(ws, [write_of(b"new\n", b"old\n")])
    path.write_bytes(b"changed\n")
    assert early.take(write_of(b"new\n", b"old\n")) is None and temps(tmp_path) == []
    old_file(tmp_path, "a.txt", b"old\n")
    early.prepare(ws, [write_of(b"new\n", b"old\n")])
    path.chmod(0o444)
    assert early.take(write_of(b"new\n", b"old\n")) is None and temps(tmp_path) == []
    with pytest.raises(ToolError) as refused:
        ws.prepare_write("a.txt", b"new\n", durable=False)
    assert refused.value.code.value == "read_only_file"
    assert early.unchanged == {}


def test_a_file_changed_moments_ago_is_not_trusted_by_its_stat(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_bytes(b"old\n")  # now: within the racy window
    early, write = EarlyWrites(RACY_NS), write_of(b"new\n", b"old\n")
    early.prepare(Workspace(tmp_path), [write])
    ready = early.take(write)
    assert ready is not None and early.unchanged == {}  # the final run reads it again
    ready.discard()


def test_what_is_not_taken_is_removed(tmp_path: Path) -> None:
    early = EarlyWrites()
    early.prepare(Workspace(tmp_path), [Write(f"f{i}.txt", b"x\n") for i in range(3)])
    assert len(temps(tmp_path)) == 3
    early.discard()
    assert temps(tmp_path) == [] and len(early) == 0


def test_a_directory_moved_since_gets_no_temp_file(tmp_path: Path) -> None:
    """The temp file lies in the directory held when it was written: if the path now
    leads elsewhere (moved, or swapped for another), the final run prepares afresh."""
    (tmp_path / "d").mkdir()
    old_file(tmp_path, "d/a.txt", b"old\n")
    early, write = EarlyWrites(EXACT_NS), Write("d/a.txt", b"new\n", based_on=sha(b"old\n"))
    early.prepare(Workspace(tmp_path), [write])
    (tmp_path / "d").rename(tmp_path / "moved")
    (tmp_path / "d").mkdir()
    old_file(tmp_path, "d/a.txt", b"old\n")
    assert early.take(write) is None
    assert list((tmp_path / "moved").glob(f"{TEMP_PREFIX}*")) == []
