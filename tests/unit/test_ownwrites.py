"""OwnWrites: the daemon's last rename of a path is known by stat, anything else is not."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from editjournal.daemon.files.ownwrites import OwnWrites


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _publish(root: Path, name: str, data: bytes) -> None:
    """Write the way the daemon does: a temp file renamed over the target."""
    temp = root / f".tmp-{name}"
    temp.write_bytes(data)
    os.replace(temp, root / name)


def test_the_last_write_is_recognised_while_untouched(tmp_path: Path):
    own = OwnWrites(tmp_path)
    _publish(tmp_path, "a.py", b"x = 1\n")
    own.note("a.py", _sha(b"x = 1\n"), len(b"x = 1\n"))
    assert own.unchanged("a.py", _sha(b"x = 1\n")) is not None
    assert own.unchanged("a.py", _sha(b"x = 1\n")) is not None  # asking twice changes nothing


def test_a_same_size_rewrite_in_place_is_not_ours(tmp_path: Path):
    own = OwnWrites(tmp_path)
    _publish(tmp_path, "a.py", b"x = 1\n")
    own.note("a.py", _sha(b"x = 1\n"), len(b"x = 1\n"))
    with open(tmp_path / "a.py", "r+b") as handle:  # same size, same inode
        handle.write(b"x = 2\n")
    assert own.unchanged("a.py", _sha(b"x = 1\n")) is None
    assert own.unchanged("a.py", _sha(b"x = 1\n")) is None  # forgotten, judged by content


def test_a_file_swapped_in_is_not_ours(tmp_path: Path):
    own = OwnWrites(tmp_path)
    _publish(tmp_path, "a.py", b"x = 1\n")
    own.note("a.py", _sha(b"x = 1\n"), len(b"x = 1\n"))
    _publish(tmp_path, "a.py", b"x = 1\n")  # same bytes, another inode: someone else's
    assert own.unchanged("a.py", _sha(b"x = 1\n")) is None


def test_a_state_that_moved_on_or_a_path_never_noted_is_not_ours(tmp_path: Path):
    own = OwnWrites(tmp_path)
    _publish(tmp_path, "a.py", b"x = 1\n")
    own.note("a.py", _sha(b"x = 1\n"), len(b"x = 1\n"))
    assert own.unchanged("a.py", _sha(b"x = 9\n")) is None
    assert own.unchanged("a.py", None) is None
    assert own.unchanged("b.py", _sha(b"x = 1\n")) is None
    (tmp_path / "a.py").unlink()
    assert own.unchanged("a.py", _sha(b"x = 1\n")) is None


def test_a_removal_or_a_missing_file_is_forgotten(tmp_path: Path):
    own = OwnWrites(tmp_path)
    _publish(tmp_path, "a.py", b"x = 1\n")
    own.note("a.py", _sha(b"x = 1\n"), len(b"x = 1\n"))
    own.forget("a.py")
    assert own.unchanged("a.py", _sha(b"x = 1\n")) is None
    own.note("gone.py", _sha(b""), len(b""))
    assert own.unchanged("gone.py", _sha(b"")) is None
