"""The shortcuts a read takes (issue 11): each must answer exactly what the long way did.

- a path's confinement is judged once per request (`Workspace.one_request`), never
  remembered across requests: a link swapped between two requests is seen;
- `_is_within` is a prefix test on POSIX: `/a/bc` is still not inside `/a/b`;
- the blob store remembers digests it saw committed, never one of a failed commit.
"""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

import pytest

from editjournal.daemon.files.pathjudge import _is_within
from editjournal.daemon.files.workspace import Workspace
from editjournal.daemon.store.journal import Journal, JournalError, sha256_hex
from editjournal.schemas.errors import ErrorCode, ToolError
from editjournal.schemas.events import FileRead

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="POSIX paths and symlinks")


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    root = tmp_path / "ws"
    (root / "inside").mkdir(parents=True)
    (root / "inside" / "f.txt").write_text("in\n")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "f.txt").write_text("secret\n")
    (root / "link").symlink_to(root / "inside", target_is_directory=True)
    return Workspace(root)


def _swap_link_outside(ws: Workspace) -> None:
    (ws.root / "link").unlink()
    (ws.root / "link").symlink_to(ws.root.parent / "outside", target_is_directory=True)


@posix_only
def test_a_link_swapped_between_requests_is_judged_again(ws: Workspace) -> None:
    with ws.one_request():
        assert ws.relative("link/f.txt") == "link/f.txt"
    _swap_link_outside(ws)
    with ws.one_request(), pytest.raises(ToolError) as refused:
        ws.relative("link/f.txt")
    assert refused.value.code is ErrorCode.PATH_OUTSIDE_WORKSPACE


@posix_only
def test_within_one_request_a_path_is_judged_once(ws: Workspace) -> None:
    """The memo's trade-off, stated: inside one request the first judgement stands (the
    open itself still confines, walking from the held root fd)."""
    with ws.one_request():
        assert ws.relative("link/f.txt") == "link/f.txt"
        _swap_link_outside(ws)
        assert ws.relative("link/f.txt") == "link/f.txt"
        with pytest.raises(ToolError) as refused:
            ws.read("link/f.txt")
        assert refused.value.code is ErrorCode.PATH_OUTSIDE_WORKSPACE
    with pytest.raises(ToolError):  # the block is over: judged afresh
        ws.relative("link/f.txt")


@posix_only
@pytest.mark.parametrize(
    ("path", "base", "inside"),
    [
        ("/a/b", "/a/b", True),
        ("/a/b/c", "/a/b", True),
        ("/a/bc", "/a/b", False),
        ("/a", "/a/b", False),
        ("/x/y", "/", True),
        ("/a/b/.editjournal/j", "/a/b/.editjournal", True),
        ("/a/b/.editjournalx", "/a/b/.editjournal", False),
    ],
)
def test_containment_is_by_whole_path_components(path: str, base: str, inside: bool) -> None:
    assert _is_within(path, base) is inside


def _read_event(content: bytes) -> FileRead:
    return FileRead(path="f", sha256=sha256_hex(content), size=len(content), line_count=1)


def test_a_stored_blob_is_known_and_a_failed_commits_blob_is_not(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "journal.db")
    try:
        first, second = b"first\n", b"second\n"
        journal.append("a", _read_event(first), {sha256_hex(first): first})
        assert journal.has_blob(sha256_hex(first))
        journal.stage("a", _read_event(second), {sha256_hex(second): second})
        # another writer takes the staged seq first: the commit fails and rolls back
        with sqlite3.connect(tmp_path / "journal.db") as other:
            row = other.execute("SELECT * FROM events ORDER BY seq DESC LIMIT 1").fetchone()
            columns = "seq, ts, agent, kind, path, body, prev_hash, hash"
            other.execute(
                f"INSERT INTO events ({columns}) SELECT seq + 1, ts, agent, kind, path, body,"
                " prev_hash, hash FROM events WHERE seq = ?",
                [row[0]],
            )
        with pytest.raises(JournalError):
            journal.commit()
        assert not journal.has_blob(sha256_hex(second))
        assert journal.has_blob(sha256_hex(first))
    finally:
        journal.close()
