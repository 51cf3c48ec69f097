"""Shell commands bracketed by hooks: what a session's Bash command changed is its own.

Claude Code's documented PreToolUse / PostToolUse payloads for its Bash tool (paired by
`tool_use_id`), and Gemini CLI's BeforeTool / AfterTool for run_shell_command, are fed
to the real `editjournal hook HARNESS` command against a real daemon; the changes are
made between the two by real processes (`sed -i`, `ruff format`, a shell creating and
removing files). Blame then credits the session with exactly the lines that changed;
every other line keeps its author. Overlapping windows of two sessions, a change
between windows, a Post without its Pre and a Pre never closed credit nobody.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from editjournal.client import Client
from tests.conftest import RunningDaemon, wait_until
from tests.e2e.cli_support import TIMEOUT
from tests.e2e.hook_support import run_hook

RUFF = Path(sys.executable).parent / "ruff"
WRITER = "claude-code:Bash"


def hook(
    payload: dict[str, Any], harness: str = "claude-code", **env: str
) -> subprocess.CompletedProcess[str]:
    """`run_hook`, which must allow the call silently."""
    done = run_hook(harness, payload, **env)
    assert done.returncode == 0 and done.stdout == "", (done.stdout, done.stderr)
    return done


def bash(root: Path, session: str, event: str, command: str, call: str) -> dict[str, Any]:
    """Claude Code's Bash payload: PreToolUse, PostToolUse (with the tool's response)."""
    found: dict[str, Any] = {
        "session_id": session,
        "transcript_path": f"/tmp/{session}.jsonl",
        "cwd": str(root),
        "permission_mode": "default",
        "hook_event_name": event,
        "tool_name": "Bash",
        "tool_input": {"command": command, "description": "run it"},
        "tool_use_id": call,
    }
    if event != "PreToolUse":
        found["tool_response"] = {"stdout": "", "stderr": "", "interrupted": False}
    return found


def run(root: Path, command: str) -> None:
    """The command itself, as the harness's shell runs it between its two hooks."""
    subprocess.run(["bash", "-c", command], cwd=root, check=True, timeout=TIMEOUT)


def in_window(root: Path, session: str, command: str, call: str) -> str:
    """Pre, the command, Post; what the Post hook said on stderr."""
    hook(bash(root, session, "PreToolUse", command, call))
    run(root, command)
    return hook(bash(root, session, "PostToolUse", command, call)).stderr


def owners(client: Client, path: str) -> list[tuple[str, str]]:
    return [(line.text, line.agent or "outside") for line in client.blame(path).lines]


def shell_edits(running: RunningDaemon) -> list[Any]:
    return [r for r in running.journal().records(kind="edit_applied") if r.event.writer == WRITER]


@pytest.fixture
def served(workspace: Path) -> RunningDaemon:
    from tests.conftest import start

    running = start(workspace)
    yield running  # type: ignore[misc]
    running.stop()


def journaled(client: Client, name: str, text: str) -> None:
    """`name` written by agent-a through the journal: every line is agent-a's."""
    client.write_file(name, text)


APP = "".join(f"v{n} = {n}\n" for n in range(1, 11))


def test_sed_in_a_bash_window_is_the_sessions_line_by_line(served: RunningDaemon):
    root, a = served.root, served.client("agent-a")
    journaled(a, "app.py", APP)
    said = in_window(root, "s1", "sed -i 's/^v7 = 7$/v7 = 70/' app.py", "toolu_sed")
    assert said == ""
    blamed = owners(a, "app.py")
    assert blamed[6] == ("v7 = 70", "claude-code:s1")
    assert [who for i, (_, who) in enumerate(blamed) if i != 6] == ["agent-a"] * 9
    (edit,) = shell_edits(served)
    assert edit.agent == "claude-code:s1" and edit.event.line_changes == [(6, 7, 1)]
    assert edit.event.operations == [
        {"op": "Bash", "command": "sed -i 's/^v7 = 7$/v7 = 70/' app.py", "window": "toolu_sed"}
    ]


@pytest.mark.skipif(not RUFF.exists(), reason="ruff is not in the venv")
def test_ruff_format_in_a_bash_window_is_the_sessions_on_the_lines_it_changed(
    served: RunningDaemon,
):
    root, a = served.root, served.client("agent-a")
    source = "import os\n\n\ndef f( x ):\n    return x\n\n\nvalue = {'a':1}\nname = os.sep\n"
    journaled(a, "fmt.py", source)
    in_window(root, "s1", f"{RUFF} format --quiet fmt.py", "toolu_ruff")
    blamed = owners(a, "fmt.py")
    expected = subprocess.run(
        [str(RUFF), "format", "-"], input=source, capture_output=True, text=True, check=True
    ).stdout
    assert "".join(f"{text}\n" for text, _ in blamed) == expected
    mine = [text for text, who in blamed if who == "claude-code:s1"]
    assert mine == ["def f(x):", 'value = {"a": 1}']
    kept = [text for text, who in blamed if who == "agent-a"]
    assert kept == ["import os", "", "", "    return x", "", "", "name = os.sep"]


def test_a_file_created_and_one_deleted_in_the_window_are_the_sessions(served: RunningDaemon):
    root, a = served.root, served.client("agent-a")
    journaled(a, "old.txt", "old\n")
    in_window(root, "s1", "printf 'one\\ntwo\\n' > new.txt && rm old.txt", "toolu_mk")
    assert owners(a, "new.txt") == [("one", "claude-code:s1"), ("two", "claude-code:s1")]
    gone = [e for e in shell_edits(served) if e.event.path == "old.txt"]
    assert len(gone) == 1 and gone[0].event.deleted and gone[0].agent == "claude-code:s1"
    assert not (root / "old.txt").exists()


def test_overlapping_windows_of_two_sessions_credit_neither(served: RunningDaemon):
    root, a = served.root, served.client("agent-a")
    journaled(a, "app.py", APP)
    command = "sed -i 's/^v3 = 3$/v3 = 30/' app.py"
    hook(bash(root, "s1", "PreToolUse", command, "toolu_one"))
    hook(bash(root, "s2", "PreToolUse", "true", "toolu_two"))
    run(root, command)
    first = hook(bash(root, "s1", "PostToolUse", command, "toolu_one")).stderr
    second = hook(bash(root, "s2", "PostToolUse", "true", "toolu_two")).stderr
    assert "app.py: not credited to you" in first and "claude-code:s2" in first
    assert "claude-code:s1" in second
    assert owners(a, "app.py")[2] == ("v3 = 30", "outside")
    assert shell_edits(served) == []


def test_a_change_between_windows_stays_outside(served: RunningDaemon):
    root, a = served.root, served.client("agent-a")
    journaled(a, "app.py", APP)
    in_window(root, "s1", "true", "toolu_before")
    run(root, "sed -i 's/^v2 = 2$/v2 = 20/' app.py")
    wait_until(
        lambda: any(
            r.event.path == "app.py" for r in served.journal().records(kind="outside_change")
        ),
        what="the watcher to journal the change",
    )
    in_window(root, "s1", "true", "toolu_after")
    assert owners(a, "app.py")[1] == ("v2 = 20", "outside")
    assert shell_edits(served) == []


def test_a_post_without_its_pre_credits_nothing_and_says_so(served: RunningDaemon):
    root, a = served.root, served.client("agent-a")
    journaled(a, "app.py", APP)
    run(root, "sed -i 's/^v4 = 4$/v4 = 40/' app.py")
    said = hook(bash(root, "s1", "PostToolUse", "sed ...", "toolu_never_opened")).stderr
    assert "no shell window 'toolu_never_opened'" in said and "nothing is credited" in said
    wait_until(lambda: owners(a, "app.py")[3] == ("v4 = 40", "outside"), what="outside")
    assert shell_edits(served) == []


def test_a_pre_never_closed_expires_credits_nothing_and_is_logged(served: RunningDaemon):
    root, a = served.root, served.client("agent-a")
    journaled(a, "app.py", APP)
    command = "sed -i 's/^v5 = 5$/v5 = 50/' app.py"
    hook(bash(root, "s1", "PreToolUse", command, "toolu_dies"), EDITJOURNAL_SHELL_WINDOW_S="1")
    run(root, command)  # and the session dies: no PostToolUse
    wait_until(lambda: owners(a, "app.py")[4] == ("v5 = 50", "outside"), what="outside")
    log = root / ".editjournal" / "daemon.log"
    wait_until(lambda: "toolu_dies" in log.read_text(), what="the daemon log")
    assert "was never closed" in log.read_text()
    late = hook(bash(root, "s1", "PostToolUse", command, "toolu_dies")).stderr
    assert "nothing is credited" in late
    assert shell_edits(served) == []


def test_gemini_cli_run_shell_command_is_paired_by_its_command(served: RunningDaemon):
    root, a = served.root, served.client("agent-a")
    journaled(a, "app.py", APP)
    command = "sed -i 's/^v9 = 9$/v9 = 90/' app.py"
    payload = {
        "session_id": "g1",
        "transcript_path": "/tmp/g1.json",
        "cwd": str(root),
        "timestamp": "2026-01-01T00:00:00Z",
        "tool_name": "run_shell_command",
        "tool_input": {"command": command, "description": "edit"},
    }
    hook({**payload, "hook_event_name": "BeforeTool"}, "gemini-cli")
    run(root, command)
    response = {"llmContent": "", "returnDisplay": ""}
    hook({**payload, "hook_event_name": "AfterTool", "tool_response": response}, "gemini-cli")
    assert owners(a, "app.py")[8] == ("v9 = 90", "gemini-cli:g1")


def test_a_command_run_outside_the_workspace_opens_no_window(served: RunningDaemon, tmp_path: Path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    payload = bash(elsewhere, "s1", "PreToolUse", "true", "toolu_far")
    said = hook(payload, CLAUDE_PROJECT_DIR=str(served.root)).stderr
    assert "outside the workspace" in said and "no shell window is opened" in said


def test_a_bash_payload_without_tool_use_id_is_allowed_and_says_why(served: RunningDaemon):
    payload = bash(served.root, "s1", "PreToolUse", "true", "x")
    del payload["tool_use_id"]
    assert "no tool_use_id" in hook(payload).stderr


# --- a scripted two-session run: how many changed lines are attributed right ------------------

ROUNDS = 5
PER_ROUND = 12  # lines of the file each round changes (one, the person's)


def _set(n: int, who: str) -> str:
    return f"sed -i 's/^L{n} = .*$/L{n} = {who}/' two.py"


def _round(root: Path, r: int) -> dict[int, str]:
    """One round of commands of two sessions, alone, overlapping and in turn, and a
    person's save between windows; the true author of each line changed."""
    base = r * PER_ROUND
    truth: dict[int, str] = {}

    def alone(session: str, lines: list[int]) -> None:
        command = " && ".join(_set(n, session) for n in lines)
        in_window(root, session, command, f"toolu_{session}_{r}_{lines[0]}")
        truth.update(dict.fromkeys(lines, session))

    alone("s1", [base + 1])
    alone("s2", [base + 2])
    # both open, each session's command runs: neither can be told by timing
    hook(bash(root, "s1", "PreToolUse", _set(base + 3, "s1"), f"toolu_o1_{r}"))
    hook(bash(root, "s2", "PreToolUse", _set(base + 4, "s2"), f"toolu_o2_{r}"))
    run(root, _set(base + 3, "s1"))
    run(root, _set(base + 4, "s2"))
    hook(bash(root, "s1", "PostToolUse", _set(base + 3, "s1"), f"toolu_o1_{r}"))
    hook(bash(root, "s2", "PostToolUse", _set(base + 4, "s2"), f"toolu_o2_{r}"))
    truth.update({base + 3: "s1", base + 4: "s2"})
    alone("s1", [base + 5, base + 6, base + 7])
    alone("s2", [base + 8])
    # s1's command ends before s2's window opens, though s1's Post comes after it: s1's
    # change waits in its window, then s2's command changes the same file while both
    # are open: s1 is credited up to its own change, s2's line is outside
    hook(bash(root, "s1", "PreToolUse", _set(base + 9, "s1"), f"toolu_t1_{r}"))
    run(root, _set(base + 9, "s1"))
    hook(bash(root, "s2", "PreToolUse", _set(base + 10, "s2"), f"toolu_t2_{r}"))
    run(root, _set(base + 10, "s2"))
    hook(bash(root, "s1", "PostToolUse", _set(base + 9, "s1"), f"toolu_t1_{r}"))
    hook(bash(root, "s2", "PostToolUse", _set(base + 10, "s2"), f"toolu_t2_{r}"))
    truth.update({base + 9: "s1", base + 10: "s2"})
    run(root, _set(base + 11, "person"))  # a person's save, between windows
    truth[base + 11] = "person"
    alone("s2", [base + 12])
    return truth


@pytest.mark.slow
def test_a_scripted_two_session_run_credits_no_line_to_the_wrong_session(
    served: RunningDaemon,
):
    root, a = served.root, served.client("agent-a")
    journaled(a, "two.py", "".join(f"L{n} = 0\n" for n in range(1, ROUNDS * PER_ROUND + 1)))
    truth: dict[int, str] = {}
    for r in range(ROUNDS):
        truth.update(_round(root, r))
    wait_until(
        lambda: [t for t, _ in owners(a, "two.py")][ROUNDS * PER_ROUND - 2].endswith("person"),
        what="the last person's save to be journaled",
    )
    blamed = {n: who for n, (_, who) in enumerate(owners(a, "two.py"), start=1)}
    sessions = {n: who for n, who in truth.items() if who != "person"}
    right = sum(blamed[n] == f"claude-code:{who}" for n, who in sessions.items())
    outside = sum(blamed[n] == "outside" for n in sessions)
    wrong = len(sessions) - right - outside
    people = sum(blamed[n] == "outside" for n, who in truth.items() if who == "person")
    print(
        f"session lines: {right} right, {wrong} wrong, {outside} left outside;"
        f" a person's lines outside: {people} of {ROUNDS}"
    )
    assert wrong == 0 and people == ROUNDS
    left = sorted(n % PER_ROUND for n in sessions if blamed[n] == "outside")
    assert left == sorted([3, 4, 10] * ROUNDS)
    assert (right, outside) == (8 * ROUNDS, 3 * ROUNDS)
    untouched = [who for n, who in blamed.items() if n not in truth]
    assert untouched == []  # every line of the file was changed by someone


@pytest.mark.skipif(not RUFF.exists(), reason="ruff is not in the venv")
def test_a_file_no_agent_read_is_credited_line_by_line_when_the_command_names_it(
    served: RunningDaemon,
):
    root, a = served.root, served.client("agent-a")
    source = "import os\n\n\ndef f( x ):\n    return x\n\n\nname = os.sep\n"
    (root / "raw.py").write_text(source)  # an outside file: the journal keeps no content
    (root / "other.py").write_text("x = 1\n")
    command = f"{RUFF} format --quiet raw.py && find . -name 'oth*.py' -exec sed -i s/1/2/ {{}} +"
    said = in_window(root, "s1", command, "toolu_raw")
    blamed = owners(a, "raw.py")
    assert [text for text, who in blamed if who == "claude-code:s1"] == ["def f(x):"]
    assert [who for text, who in blamed if text != "def f(x):"] == ["outside"] * 7
    assert "other.py: not credited to you" in said and "did not name it" in said
    assert owners(a, "other.py") == [("x = 2", "outside")]
