"""A temp file made while its target's last change was too recent for a stat to vouch
for it (daemon/landing/earlywrites.py) is looked at again in a later slice: its stat
the same and now old enough, its content read there, so the final run trusts it by
stat (a restore begun right after the files changed read them all again in its one
long step); a file changed meanwhile is left to the final run's checks."""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

from editjournal.daemon.contract.outcome import Write
from editjournal.daemon.files.workspace import Workspace
from editjournal.daemon.landing.earlywrites import EarlyWrites
from tests.polling import wait_until

RACY_NS = 200_000_000  # a short racy window: the test waits it out, bounded


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def write_of(name: str, data: bytes, base: bytes) -> Write:
    return Write(name, data, based_on=sha(base), sha256=sha(data))


def racy_window_passed(path: Path) -> None:
    changed = max(path.stat().st_mtime_ns, path.stat().st_ctime_ns)
    wait_until(lambda: time.time_ns() > changed + RACY_NS, 5, "the racy window to pass")


def test_a_file_too_recent_when_prepared_is_verified_in_a_later_slice(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_bytes(b"old\n")
    ws, early = Workspace(tmp_path), EarlyWrites(RACY_NS)
    write = write_of("a.txt", b"new\n", b"old\n")
    early.prepare(ws, [write])  # within the window: not trusted yet
    racy_window_passed(tmp_path / "a.txt")
    early.prepare(ws, [])  # the next slice looks again
    ready = early.take(write)
    assert ready is not None and early.unchanged == {"a.txt": sha(b"old\n")}
    ready.discard()


def test_a_file_changed_after_its_temp_file_is_left_to_the_final_run(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_bytes(b"old\n")
    ws, early = Workspace(tmp_path), EarlyWrites(RACY_NS)
    write = write_of("a.txt", b"new\n", b"old\n")
    early.prepare(ws, [write])
    (tmp_path / "a.txt").write_bytes(b"changed\n")
    racy_window_passed(tmp_path / "a.txt")
    early.prepare(ws, [])
    assert early.take(write) is None and early.unchanged == {}
