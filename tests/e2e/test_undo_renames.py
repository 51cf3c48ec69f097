"""`undo --by AGENT` follows the renames the journal recorded (issue 37): an agent's
lines in a file someone renamed since are taken back where the file is now, other
writers' changes kept; a line changed since still refuses `undo_conflict`; a rename
by the agent itself is its own write, undone as such."""

from __future__ import annotations

import pytest

from editjournal.client import RequestError
from editjournal.daemon.store.journal import Journal
from editjournal.schemas.events import Record
from tests.conftest import RunningDaemon
from tests.polling import wait_until

APP = "".join(f"line_{n} = {n}\n" for n in range(1, 9))


def _move(ws: RunningDaemon, agent: str, src: str, dest: str, old: str = "", new: str = "") -> None:
    """`agent` renames `src` to `dest` with apply_patch (a line changed too, if given)."""
    hunk = f"@@\n-{old}\n+{new}\n" if old else ""
    patch = f"*** Begin Patch\n*** Update File: {src}\n*** Move to: {dest}\n{hunk}*** End Patch\n"
    ws.client(agent).apply_patch(patch)


def test_an_agents_lines_are_undone_in_the_file_another_agent_renamed(daemon: RunningDaemon):
    (daemon.root / "app.py").write_text(APP)
    daemon.client("alice").edit_file("app.py", "line_2 = 2", "line_2 = 'alice'")
    _move(daemon, "bob", "app.py", "lib/app.py", "line_7 = 7", "line_7 = 'bob'")
    daemon.client("carol").edit_file("lib/app.py", "line_8 = 8", "line_8 = 'carol'")
    done = daemon.client("boss").undo(by="alice")
    assert [(f.path, f.action) for f in done.files] == [("lib/app.py", "reverted")]
    expected = APP.replace("line_7 = 7", "line_7 = 'bob'").replace("line_8 = 8", "line_8 = 'carol'")
    assert (daemon.root / "lib" / "app.py").read_text() == expected
    assert not (daemon.root / "app.py").exists()


def _outside(journal: Journal) -> list[Record]:
    return list(journal.records(kind="outside_change"))


def test_a_file_the_agent_made_in_a_directory_a_shell_renamed_is_removed_where_it_is(
    daemon: RunningDaemon,
):
    journal = daemon.journal()
    for attempt in range(6):
        agent, old, new = f"alice{attempt}", f"pkg{attempt}", f"lib{attempt}"
        daemon.client(agent).write_file(f"{old}/made.py", "made = 1\n")
        daemon.client(agent).read_file(f"{old}/made.py")  # read: the watcher keeps its content
        (daemon.root / old).rename(daemon.root / new)  # `mv pkg lib`: each file's move
        there = f"{new}/made.py"
        wait_until(
            lambda there=there: any(
                there in (r.event.path, r.event.moved_to) for r in _outside(journal)
            ),
            what="the watcher to journal the rename",
        )
        if any(r.event.moved_to == there for r in _outside(journal)):
            break
        # a starved watcher may see the directory's move as a deletion and a creation
        # (the kernel's two halves paired too late): nothing to follow; try again
    else:
        pytest.fail("the watcher never journaled the directory's rename as a move")
    (daemon.root / "app.py").write_text(APP)  # a file the agent never wrote: left alone
    done = daemon.client("boss").undo(by=agent)
    assert [(f.path, f.action) for f in done.files] == [(f"{new}/made.py", "removed")]
    assert not (daemon.root / new / "made.py").exists()
    assert not (daemon.root / old / "made.py").exists()


def test_a_line_changed_after_the_rename_still_refuses(daemon: RunningDaemon):
    (daemon.root / "app.py").write_text(APP)
    daemon.client("alice").edit_file("app.py", "line_2 = 2", "line_2 = 'alice'")
    _move(daemon, "bob", "app.py", "lib.py")
    daemon.client("carol").edit_file("lib.py", "line_2 = 'alice'", "line_2 = 'carol'")
    with pytest.raises(RequestError) as refused:
        daemon.client("boss").undo(by="alice")
    assert refused.value.code == "undo_conflict"
    assert refused.value.details["path"] == "lib.py" and "carol" in refused.value.message


def test_the_agents_own_rename_is_undone_as_its_write(daemon: RunningDaemon):
    (daemon.root / "app.py").write_text(APP)
    alice = daemon.client("alice")
    alice.edit_file("app.py", "line_2 = 2", "line_2 = 'alice'")
    _move(daemon, "alice", "app.py", "lib.py")
    done = daemon.client("boss").undo(by="alice")
    assert sorted((f.path, f.action) for f in done.files) == [
        ("app.py", "recreated"), ("lib.py", "removed"),
    ]  # fmt: skip
    assert (daemon.root / "app.py").read_text() == APP
