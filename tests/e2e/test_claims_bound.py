"""Claims bound to what was checked (issue 40): a harness hook's claim credits a session
with the change its checked edits make, and nothing else.

The attack: `PreToolUse` Edit, then a person saves the file (Claude Code's permission
prompt is open), then the `PostToolUse` claim: the person's line was journaled as the
session's `edit_applied` and blamed on it; session Y announced, session X claimed and
got Y's path and the person's line; `check_write` with `edits: []` kept the watcher away
from 300 paths for 60 s (renewable), so no person's change to them was journaled.

Real daemon, the real hook command (Claude Code's payloads) or the client's
check_write / claim_write; the harness tool's own write is made on disk by the test,
as the tool makes it between the two hooks. Waits are bounded polls.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from editjournal.client import Client
from editjournal.daemon.files.harnesswrites import PER_AGENT
from tests.conftest import RunningDaemon, start
from tests.e2e.hook_support import APP, claude_payload, run_hook
from tests.e2e.hunk_support import configure, refused
from tests.polling import wait_until

EDIT: dict[str, Any] = {"old_string": "v5 = 5\n", "new_string": "v5 = 50\n", "replace_all": False}
PERSON = "person = 1"  # the line a person adds while the session's edit is pending
WAIT_S = 20.0  # the watcher's look: well under the old 60 s an announcement hid a path


def hook(payload: Any) -> subprocess.CompletedProcess[str]:
    return run_hook("claude-code", payload)


def read(root: Path, session: str) -> None:
    lines = APP.count("\n")
    file = {"filePath": str(root / "app.py"), "content": APP, "numLines": lines, "startLine": 1}
    response = {"type": "text", "file": {**file, "totalLines": lines}}
    done = hook(claude_payload(root, session, "PostToolUse", "Read", response=response))
    assert (done.returncode, done.stdout) == (0, ""), done.stderr


def pre_edit(root: Path, session: str) -> None:
    done = hook(claude_payload(root, session, "PreToolUse", "Edit", **EDIT))
    assert (done.returncode, done.stdout) == (0, ""), (done.stdout, done.stderr)


def post_edit(root: Path, session: str) -> subprocess.CompletedProcess[str]:
    done = hook(claude_payload(root, session, "PostToolUse", "Edit", **EDIT, response={}))
    assert (done.returncode, done.stdout) == (0, ""), done.stderr
    return done


def tool_writes(path: Path) -> None:
    """The harness's Edit tool: the replacement, on the file as it is."""
    path.write_text(path.read_text().replace(EDIT["old_string"], EDIT["new_string"], 1))


def person_saves(path: Path) -> None:
    path.write_text(path.read_text().replace("v15 = 15\n", f"v15 = 15\n{PERSON}\n"))


def owners(root: Path, name: str = "app.py") -> dict[str, str]:
    """Each line's text -> the agent blame gives it to."""
    with Client(root, "observer", autostart=False) as client:
        return {line.text: line.agent for line in client.blame(name).lines}


def warnings(client: Client) -> list[str]:
    """The warnings of the client's last reply."""
    assert client.last_response is not None
    return list(client.last_response.warnings)


def records(running: RunningDaemon, kind: str, path: str = "app.py") -> list[Any]:
    return [r for r in running.journal().records(kind=kind) if r.event.path == path]


@pytest.mark.parametrize("order", ["person_then_tool", "tool_then_person", "one_save"])
def test_a_persons_line_between_pre_and_post_is_outside_and_the_session_keeps_its_own(
    served: RunningDaemon, order: str
):
    """Before: the person's line was the session's (`edit_applied` of 2 changes, blame)."""
    root, path = served.root, served.root / "app.py"
    read(root, "s1")
    pre_edit(root, "s1")
    if order == "person_then_tool":  # the save while the permission prompt is open
        person_saves(path)
        tool_writes(path)
    elif order == "tool_then_person":  # the save between the tool and its PostToolUse
        tool_writes(path)
        person_saves(path)
    else:
        both = APP.replace("v5 = 5\n", "v5 = 50\n").replace("v15 = 15\n", f"v15 = 15\n{PERSON}\n")
        path.write_text(both)
    claimed = post_edit(root, "s1")
    if order != "person_then_tool":  # else the watcher may have journaled the save first
        assert "journaled as an outside change" in claimed.stderr

    who = owners(root)
    assert who[PERSON] == "outside"
    assert who["v5 = 50"] == "claude-code:s1"
    assert {who[f"v{n} = {n}"] for n in range(1, 21) if n != 5} == {"outside"}  # found there
    [applied] = records(served, "edit_applied")
    assert (applied.agent, applied.event.line_changes) == ("claude-code:s1", [(4, 5, 1)])
    outside = records(served, "outside_change")  # the watcher's, or the claim's
    assert outside[-1].seq < applied.seq and outside[-1].event.content_stored
    assert outside[-1].event.new_sha256 == applied.event.before_sha256
    assert served.journal().verify().ok


def test_another_sessions_claim_is_refused_and_credits_nothing(served: RunningDaemon):
    """Before: session X's claim journaled Y's edit and the person's line as X's."""
    root, path = served.root, served.root / "app.py"
    read(root, "y")
    read(root, "x")
    pre_edit(root, "y")
    tool_writes(path)
    person_saves(path)

    stolen = post_edit(root, "x")
    assert "wrong_owner" in stolen.stderr and "claude-code:y" in stolen.stderr
    with Client(root, "claude-code:x", autostart=False) as x:
        error = refused(lambda: x.claim_write("app.py", "claude-code:Edit"))
    assert error.code == "wrong_owner" and error.details["announced_by"] == ["claude-code:y"]
    assert [r for r in served.journal().records() if r.agent == "claude-code:x"] == [
        r for r in served.journal().records(kind="file_read") if r.agent == "claude-code:x"
    ]  # x's read, and nothing else

    post_edit(root, "y")
    who = owners(root)
    assert (who["v5 = 50"], who[PERSON]) == ("claude-code:y", "outside")


def test_the_person_changed_the_sessions_own_line_so_all_of_it_is_outside(
    daemon: RunningDaemon,
):
    """The split is not defined (the person rewrote the line the edit wrote): the whole
    change is an outside change, and the reply says so. Before: all the session's."""
    root = daemon.root
    (root / "app.py").write_text(APP)
    session = daemon.client("claude-code:s1")
    session.read_file("app.py")
    session.check_write("app.py", "claude-code:Edit", edits=[EDIT])
    (root / "app.py").write_text(APP.replace("v5 = 5\n", "v5 = 55 # person\n"))

    claimed = session.claim_write("app.py", "claude-code:Edit")
    assert not claimed.recorded
    [warning] = warnings(session)
    assert "cannot be told apart" in warning and "outside change" in warning
    assert owners(root)["v5 = 55 # person"] == "outside"
    assert [r for r in daemon.journal().records(kind="edit_applied")] == []


def test_the_split_reply_says_what_was_journaled_as_outside(daemon: RunningDaemon):
    root = daemon.root
    (root / "app.py").write_text(APP)
    session = daemon.client("claude-code:s1")
    session.read_file("app.py")
    session.check_write("app.py", "claude-code:Edit", edits=[EDIT])
    (root / "app.py").write_text(
        APP.replace("v5 = 5\n", "v5 = 50\n").replace("v15 = 15\n", f"v15 = 15\n{PERSON}\n")
    )
    claimed = session.claim_write("app.py", "claude-code:Edit")
    assert claimed.recorded and (claimed.lines_before, claimed.lines_after) == (21, 21)
    [warning] = warnings(session)
    assert "besides the edits check_write allowed" in warning
    [outside] = records(daemon, "outside_change")
    [applied] = records(daemon, "edit_applied")
    assert applied.seq == claimed.version == outside.seq + 1
    assert applied.event.before_sha256 == outside.event.new_sha256


def test_a_claim_nobody_announced_credits_nothing(daemon: RunningDaemon):
    """No PreToolUse (or it expired): the content is journaled as the outside change it
    is, and the session knows it. Before: all of it was the session's edit."""
    root = daemon.root
    (root / "app.py").write_text(APP)
    session = daemon.client("claude-code:s1")
    session.read_file("app.py")
    (root / "app.py").write_text(APP + f"{PERSON}\n")
    claimed = session.claim_write("app.py", "claude-code:Write")
    assert not claimed.recorded
    assert "no write of app.py by this agent was announced" in warnings(session)[0]
    assert records(daemon, "edit_applied") == []
    assert owners(root)[PERSON] == "outside"
    [status] = session.agent_status("claude-code:s1").files
    assert status.current


def test_a_read_only_agents_claim_is_refused_like_its_write(workspace: Path):
    """`[access]`: the claim of an agent that may not write is `write_access_denied` and
    its change is an outside change. Before: journaled as that agent's edit."""
    configure(workspace, '[access]\nread_only = ["claude-code:ro"]\n')
    (workspace / "app.py").write_text(APP)
    running = start(workspace)
    try:
        ro = running.client("claude-code:ro")
        ro.read_file("app.py")
        (workspace / "app.py").write_text(APP.replace("v5 = 5\n", "v5 = 50\n"))
        error = refused(lambda: ro.claim_write("app.py", "claude-code:Edit"))
        assert error.code == "write_access_denied"
        assert records(running, "edit_applied") == []
        assert owners(workspace)["v5 = 50"] == "outside"
    finally:
        running.stop()


def test_an_empty_announcement_silences_nothing(workspace: Path):
    """300 paths announced with `edits: []`, then a person changes each: every change
    is journaled at the watcher's next look. Before: 0 of 300 for 60 s (renewable)."""
    names = [f"f{i:03}.txt" for i in range(300)]
    for name in names:
        (workspace / name).write_text("one\n")
    running = start(workspace)
    try:
        flooder = running.client("flooder")
        for name in names:
            flooder.check_write(name, "t:Edit", edits=[])
        for name in names:
            (workspace / name).write_text("one\ntwo\n")

        def journaled() -> bool:
            seen = {r.event.path for r in running.journal().records(kind="outside_change")}
            return seen >= set(names)

        wait_until(journaled, timeout=WAIT_S, what="the person's 300 changes journaled")
    finally:
        running.stop()


def test_an_announced_write_never_made_hides_no_persons_change(served: RunningDaemon):
    """Allowed, and the tool never ran (denied at the permission prompt): a person's
    change is journaled at once. Before: the path was the hook's for 60 s."""
    root = served.root
    read(root, "s1")
    pre_edit(root, "s1")
    person_saves(root / "app.py")
    wait_until(
        lambda: records(served, "outside_change"), timeout=WAIT_S, what="the person's change"
    )
    assert owners(root)[PERSON] == "outside"


def test_announcements_are_capped_per_agent(daemon: RunningDaemon):
    """Past PER_AGENT outstanding announcements the next is `invalid_params`, saying
    why; a re-announcement, another agent, and a claim that frees one are not refused.
    Before: 10,000 paths, then the oldest silently forgotten."""
    root = daemon.root
    names = [f"f{i:03}.txt" for i in range(PER_AGENT + 1)]
    for name in names:
        (root / name).write_text("alpha\n")
    agent = daemon.client("flooder")
    edit = [{"old_string": "alpha", "new_string": "beta"}]
    for name in names[:PER_AGENT]:
        agent.check_write(name, "t:Edit", edits=edit)

    error = refused(lambda: agent.check_write(names[-1], "t:Edit", edits=edit))
    assert error.code == "invalid_params"
    assert f"{PER_AGENT} writes announced by check_write and not yet claimed" in error.message
    agent.check_write(names[0], "t:Edit", edits=edit)  # a re-announcement takes no room
    daemon.client("other").check_write(names[-1], "t:Edit", edits=edit)

    (root / names[0]).write_text("beta\n")
    assert agent.claim_write(names[0], "t:Edit").recorded
    agent.check_write(names[-1], "t:Edit", edits=edit)  # the claim made room
