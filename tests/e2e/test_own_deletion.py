"""An agent's own deletion is not news to it (issue 39): undoing its own new file, or
deleting a file by patch, leaves it nothing STALE in `agent_status`, while a deletion
by someone else still is. The fold stays the daemon's state (`status.state_digest`)."""

from __future__ import annotations

from editjournal.daemon.model.state import fold
from tests.conftest import RunningDaemon


def test_undoing_its_own_new_file_leaves_nothing_stale(daemon: RunningDaemon):
    a = daemon.client("agent-a")
    a.write_file("new.py", "x = 1\n")
    a.undo("new.py")
    assert not (daemon.root / "new.py").exists()
    status = a.agent_status()
    assert status.stale_files == 0
    assert [f.path for f in status.files] == []
    assert fold(daemon.journal().records()).digest() == a.status().state_digest
    a.write_file("new.py", "x = 2\n")  # gone for it too: written again as a new file
    assert (daemon.root / "new.py").read_text() == "x = 2\n"


def test_a_deletion_by_someone_else_is_still_stale(daemon: RunningDaemon):
    (daemon.root / "kept.py").write_text("y = 1\n")
    a, b = daemon.client("agent-a"), daemon.client("agent-b")
    a.read_file("kept.py")
    b.read_file("kept.py")
    b.apply_patch("*** Begin Patch\n*** Delete File: kept.py\n*** End Patch\n")
    mine, theirs = b.agent_status(), a.agent_status()
    assert mine.stale_files == 0 and mine.files == []
    assert theirs.stale_files == 1
    [seen] = theirs.files
    assert seen.path == "kept.py" and seen.current_sha256 is None
    assert [c["agent"] for c in seen.changed_since] == ["agent-b"]
    assert fold(daemon.journal().records()).digest() == a.status().state_digest
