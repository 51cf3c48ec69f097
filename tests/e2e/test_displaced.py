"""A removal killed mid-landing leaves nothing unnamed in the workspace (issue 40).

A removal lands by moving its file aside, looking at what it moved (an outside
writer may have changed it since the batch looked) and only then letting it go. A
kill -9 between the move and the look used to leave `.editjournal-displaced-<random>`
in the workspace: journaled nowhere, ignored by nothing, taken by `git add -A`. Now
the name is chosen before the commit and kept in the removal's `pending_writes` row,
and the next start removes the file when it holds what was removed, or keeps it as
`NAME.editjournal-displaced-SEQ` (journaled by the start-up scan) when it holds
anyone else's change.

The crash is a real SIGKILL of a real daemon held between its commit and its landing
(its test-only `--hold-after-commit FILE`); the file moved aside is what the kill
would leave had it come an instant later (the recorded name, read from the journal).
The stress test kills a daemon at random instants of a 300-file removal instead.
"""

from __future__ import annotations

import os
import signal
import sqlite3
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path

import pytest

from editjournal.client import Client
from editjournal.schemas.endpoint import JOURNAL_FILE
from editjournal.schemas.events import OutsideChangeRecorded
from tests.conftest import STATE_DIR_NAME, RunningDaemon, start, wait_until

DISPLACED = ".editjournal-displaced-"


def deleting(*paths: str) -> str:
    body = [f"*** Delete File: {path}" for path in paths]
    return "\n".join(["*** Begin Patch", *body, "*** End Patch"]) + "\n"


def recorded_asides(root: Path) -> dict[str, tuple[int, str]]:
    """(seq, displaced name) of each removal the journal's `pending_writes` holds."""
    path = root / STATE_DIR_NAME / JOURNAL_FILE
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        rows = db.execute(
            "SELECT path, seq, displaced FROM pending_writes WHERE temp LIKE 'removal:%'"
        ).fetchall()
    return {path: (seq, displaced) for path, seq, displaced in rows}


def leftovers(root: Path) -> list[str]:
    """Every displaced file in the workspace (not in its state directory): transient
    names and kept ones."""
    found = []
    for top, subdirs, names in os.walk(root):
        subdirs[:] = [d for d in subdirs if d != STATE_DIR_NAME]
        found += [str(Path(top, name).relative_to(root)) for name in names if DISPLACED in name]
    return sorted(found)


def removed_some(directory: Path) -> bool:
    return sum(not name.startswith(DISPLACED) for name in os.listdir(directory)) < 300


def killed_while_holding(workspace: Path, hold: Path, patch: str) -> None:
    """Send `patch` to a daemon that holds after its commit, and kill -9 it there."""
    running = start(workspace, "--hold-after-commit", str(hold))
    client = running.client(timeout=30)
    with ThreadPoolExecutor(1) as pool:
        pool.submit(client.apply_patch, patch)
        wait_until(hold.exists, what="the daemon to hold between commit and landing")
        running.stop(signal.SIGKILL)
    hold.unlink()


def test_a_removal_killed_after_moving_its_file_aside_is_cleaned_at_the_next_start(
    workspace: Path, tmp_path: Path
) -> None:
    """What the removal moved aside goes when it holds what was removed; when an outside
    writer changed it in that instant, it is kept beside the file and journaled."""
    (workspace / "same.txt").write_text("removed as it was\n")
    (workspace / "changed.txt").write_text("removed\n")
    killed_while_holding(workspace, tmp_path / "hold", deleting("same.txt", "changed.txt"))
    asides = recorded_asides(workspace)
    assert set(asides) == {"same.txt", "changed.txt"}
    for path, (_, aside) in asides.items():  # as the kill an instant later leaves them
        assert aside.startswith(DISPLACED)
        (workspace / path).rename(workspace / aside)
    (workspace / asides["changed.txt"][1]).write_text("removed\nand a line someone added\n")
    running = start(workspace)
    try:
        kept = f"changed.txt.editjournal-displaced-{asides['changed.txt'][0]}"
        assert leftovers(workspace) == [kept]
        assert (workspace / kept).read_text() == "removed\nand a line someone added\n"
        assert not (workspace / "same.txt").exists() and not (workspace / "changed.txt").exists()
        recovered = running.client().status().group_commit["recovered"]
        assert recovered["displaced_removed"] == 1 and recovered["displaced_kept"] == [kept]
        journal = running.journal()
        try:
            records = journal.records(kind="outside_change", path=kept)
            found = [r.event for r in records if isinstance(r.event, OutsideChangeRecorded)]
        finally:
            journal.close()
        assert [(e.change, e.content_stored, e.displaced_by) for e in found] == [
            ("created", True, asides["changed.txt"][0])
        ]
        assert recorded_asides(workspace) == {}
    finally:
        running.stop()


def test_a_removal_killed_before_moving_its_file_aside_is_finished_with_nothing_left(
    workspace: Path, tmp_path: Path
) -> None:
    """And a transient displaced file no row names (an older daemon's, say) is moved out
    of the workspace into the state directory, never removed: it may hold someone's
    bytes."""
    (workspace / "a.txt").write_text("a\n")
    killed_while_holding(workspace, tmp_path / "hold", deleting("a.txt"))
    orphan = Path("sub", f"{DISPLACED}0123456789abcdef")
    (workspace / orphan).parent.mkdir()
    (workspace / orphan).write_text("someone's\n")
    running = start(workspace, "--no-watch")
    try:
        assert not (workspace / "a.txt").exists()
        assert leftovers(workspace) == []
        moved = workspace / STATE_DIR_NAME / "displaced" / orphan
        assert moved.read_text() == "someone's\n"
        recovered = running.client().status().group_commit["recovered"]
        assert recovered["rolled_forward"] == ["a.txt"]
        assert recovered["displaced_moved"] == [str(orphan)]
    finally:
        running.stop()


@pytest.mark.stress
def test_kill_9_at_random_instants_of_a_batch_of_removals_leaves_no_displaced_file(
    workspace: Path,
) -> None:
    """The issue's attack: kill -9 during a batch of removals, many times over; after each
    restart no transient displaced name is left anywhere in the workspace."""
    for round_ in range(12):  # about one kill in four lands in a file's window, here
        directory = workspace / f"d{round_}"
        directory.mkdir()
        names = [f"d{round_}/f{i}.txt" for i in range(300)]
        for name in names:
            (workspace / name).write_text(f"{name}\n" * 200)
        running = start(workspace, "--no-watch")
        client: Client = running.client(timeout=60)
        with ThreadPoolExecutor(1) as pool:
            pool.submit(client.apply_patch, deleting(*names))
            wait_until(partial(removed_some, directory), what="the removals to be landing")
            running.stop(signal.SIGKILL)
        restarted: RunningDaemon = start(workspace, "--no-watch")
        restarted.stop()
        assert leftovers(workspace) == []
        assert os.listdir(directory) == []  # every removal journaled is finished
