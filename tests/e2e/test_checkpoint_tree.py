"""A checkpoint of a big tree is taken in slices: other agents are served meanwhile.

A real daemon, a real client process asking for the checkpoint, and this test's own
client reading while the daemon reports the checkpoint request parked (`status.parked`):
the read is answered — and journaled — before the checkpoint is. Files an agent writes
while the tree is being taken are in the checkpoint as they are at its end.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from editjournal.client import Client
from tests.conftest import RunningDaemon

FILES = 6000  # enough that taking the tree cannot fit the request's inline budget

CHECKPOINT_IN_A_PROCESS = """
import sys
from editjournal.client import Client
with Client(sys.argv[1], "checkpointer", autostart=False, timeout=120) as client:
    made = client.checkpoint_create("big")
    print(made.file_count, made.id)
"""


def _until_parked(client: Client, timeout: float = 60.0) -> None:
    """Ask every few milliseconds (a status is served between two slices of the job):
    the parked window lasts a few hundred milliseconds on a fast machine."""
    deadline = time.monotonic() + timeout
    while client.status().parked != 1:
        assert time.monotonic() < deadline, "the checkpoint was never parked"
        time.sleep(0.002)


def _tree(root: Path) -> None:
    for d in range(60):
        directory = root / f"pkg{d:02}"
        directory.mkdir()
        for f in range(FILES // 60):
            (directory / f"mod{f:03}.py").write_text(f"# module {d}.{f}\nvalue = {f}\n")


@pytest.mark.slow
def test_other_agents_are_served_while_a_big_checkpoint_is_taken(daemon: RunningDaemon) -> None:
    _tree(daemon.root)
    (daemon.root / "notes.md").write_text("before\n")
    reader = daemon.client("reader")
    taker = subprocess.Popen(
        [sys.executable, "-c", CHECKPOINT_IN_A_PROCESS, str(daemon.root)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        _until_parked(reader)
        reader.read_file("notes.md")  # served while the tree is being taken
        reader.append_to_file("notes.md", "written during the checkpoint\n")
        out, err = taker.communicate(timeout=120)
    finally:
        taker.kill()
    assert taker.returncode == 0, err
    file_count, checkpoint_id = map(int, out.split())
    assert file_count == FILES + 1
    [read] = daemon.journal().records(kind="file_read", agent="reader")
    assert read.seq < checkpoint_id  # answered before the checkpoint was
    assert reader.status().parked == 0
    # the write made while the tree was taken is in the checkpoint, as at its end
    (daemon.root / "notes.md").write_text("after\n")
    (daemon.root / "pkg07" / "mod003.py").unlink()
    found = reader.checkpoint_diff("big", patch=False)
    assert {(c.path, c.change) for c in found.changes} == {
        ("notes.md", "modified"),
        ("pkg07/mod003.py", "deleted"),
    }
    assert found.unchanged == FILES - 1
    restored = reader.checkpoint_restore("big")
    assert sorted((f.path, f.action) for f in restored.files) == [
        ("notes.md", "restored"),
        ("pkg07/mod003.py", "recreated"),
    ]
    assert (daemon.root / "notes.md").read_text() == "before\nwritten during the checkpoint\n"
    assert restored.unchanged_count == FILES - 1 and len(restored.unchanged) == 100
