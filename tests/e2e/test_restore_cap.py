"""A restore writes at most MAX_RESTORE_FILES files (issue 40): its one commit holds
every other agent for all of them (0.5 s at 5,000 files). A bigger one is refused
`invalid_params` before anything is planned or written, and the error names the parts,
by directory, that restores of `paths` can take; those restores put every file back.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from editjournal.schemas.events import CheckpointRestored, EditApplied
from editjournal.schemas.tools import MAX_RESTORE_FILES
from tests.conftest import RunningDaemon, start

PER_DIR = 150  # files per directory: the parts are directories, several to a part
# one directory holds more than the cap, so the parts also name single files
BIG_DIR_FILES = MAX_RESTORE_FILES + 20


@pytest.fixture
def unwatched(workspace: Path) -> Iterator[RunningDaemon]:
    """No watcher: the restore's own look finds the outside changes (and the test
    does not wait for 2,000 of them to be journaled)."""
    running = start(workspace, "--no-watch")
    yield running
    if running.proc.poll() is None:
        running.stop()


def make_tree(root: Path) -> dict[str, bytes]:
    """Small files in directories of PER_DIR, one directory of BIG_DIR_FILES, and a file
    at the top: MAX_RESTORE_FILES and more in all."""
    paths = [f"src/m{i // PER_DIR:02}/f{i:04}.py" for i in range(MAX_RESTORE_FILES // 2)]
    paths += [f"big/f{i:04}.txt" for i in range(BIG_DIR_FILES)]
    paths.append("top.md")
    written = {}
    for path in paths:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(f"first line of {path}\nsecond line\n")
        written[path] = (root / path).read_bytes()
    return written


def on_disk(root: Path, contents: dict[str, bytes]) -> dict[str, bytes]:
    return {path: (root / path).read_bytes() for path in contents}


def test_a_restore_over_the_cap_is_refused_with_parts_that_restore_everything(
    unwatched: RunningDaemon,
) -> None:
    contents = make_tree(unwatched.root)
    client = unwatched.client()
    client.checkpoint_create("before")
    for path in contents:
        (unwatched.root / path).write_bytes(contents[path] + b"changed since\n")
    changed = on_disk(unwatched.root, contents)

    refused = client.call("checkpoint_restore", {"id_or_name": "before"})
    assert refused.error is not None and refused.error.code == "invalid_params"
    message, data = refused.error.message, refused.error.details
    assert f"would write {len(contents):,} files" in message
    assert 'checkpoint_restore({"id_or_name": "before", "paths": [' in message
    assert data["files"] == len(contents) and data["max_files"] == MAX_RESTORE_FILES
    assert on_disk(unwatched.root, contents) == changed, "a refused restore wrote"
    journal = unwatched.journal()
    assert not list(journal.records(kind="edit_applied")), "a refused restore journaled a write"

    cut: list[list[str]] = data["parts"]
    assert len(cut) >= 2 and all(part for part in cut)
    assert any("src" in part for part in cut), "a directory within the cap is named whole"
    assert not any("big" in part for part in cut), "a directory over the cap is split"
    for part in cut:
        done = client.checkpoint_restore("before", paths=part)
        assert 0 < len(done.files) <= MAX_RESTORE_FILES
    assert on_disk(unwatched.root, contents) == contents
    restored = [
        r.event.path
        for r in journal.records(kind="edit_applied")
        if isinstance(r.event, EditApplied) and r.event.writer == "restore"
    ]
    assert sorted(restored) == sorted(contents), "each file restored exactly once"
    groups = list(journal.records(kind="checkpoint_restored"))
    assert len(groups) == len(cut) and all(isinstance(g.event, CheckpointRestored) for g in groups)


def test_a_restore_at_the_cap_is_done_whole(unwatched: RunningDaemon) -> None:
    """Exactly MAX_RESTORE_FILES files written (the rest unchanged): one restore."""
    contents = make_tree(unwatched.root)
    client = unwatched.client()
    client.checkpoint_create("before")
    chosen = sorted(contents)[:MAX_RESTORE_FILES]
    for path in chosen:
        (unwatched.root / path).write_bytes(b"rewritten\n")
    done = client.checkpoint_restore("before")
    assert len(done.files) == MAX_RESTORE_FILES
    assert on_disk(unwatched.root, contents) == contents
