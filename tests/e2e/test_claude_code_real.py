"""The real Claude Code CLI, end to end, against a scripted model (issue 37).

The CLI the installed claude-agent-sdk bundles (tests/e2e/claude_cli_support.py fetches
it: a ~180 MB wheel, hence `stress`, run by `make stress`) runs headless in a workspace a
real daemon serves, with the hooks `editjournal hooks install claude-code` wrote into the
workspace's `.claude/settings.json`. A Messages API on 127.0.0.1 scripts which tools the
model calls; the CLI runs its real Read, Edit, Bash (a real `sed -i`, a real `ruff
format`) and Agent tools, and fires its real hooks, which run our real `editjournal hook
claude-code`. Then blame, the checkpoints and `undo --by` are asked as a person would:

- one session: what its Edit and its Bash commands (`sed -i`, `ruff format`, a `sed -i`
  that then fails, whose `PostToolUseFailure` closes its window) changed is its own,
  line by line, its prompt left a checkpoint, and `undo --by` that session takes it all back;
- two sessions at once (two CLI processes): what each did alone is its own; the change
  each made while the other's Bash command ran is credited to neither (the attribution's
  right / wrong / left-outside counts are printed: run with `-s` to see them);
- a subagent: its tool calls carry its `agent_id`, its work is `claude-code:SESSION/ID`,
  and `undo --by` the subagent leaves its parent's change.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from editjournal.client import Client
from tests.conftest import RunningDaemon
from tests.e2e.claude_cli_support import (
    ClaudeCli,
    ScriptedModel,
    Step,
    claude_binary,
    finished,
    payloads,
    text,
    tool_use,
)
from tests.e2e.cli_support import cli, cli_env

pytestmark = pytest.mark.stress

RUFF = Path(sys.executable).parent / "ruff"  # the venv's formatter: a real process
PERSON = "agent-a"  # wrote every file first, through the journal
ONE = "11111111-1111-4111-8111-111111111111"  # session ids: the CLI takes UUIDs
TWO = "22222222-2222-4222-8222-222222222222"
# a command that changes a line and fails: its PostToolUseFailure closes its window
FAILING = "sed -i 's/^v5 = 5$/v5 = 50/' app.py; exit 3"
UNFORMATTED = "import os\n\n\ndef f( x ):\n    return x\n\n\nvalue = {'a':1}\nname = os.sep\n"


def numbered(prefix: str, count: int) -> str:
    return "".join(f"{prefix}{n} = {n}\n" for n in range(1, count + 1))


@pytest.fixture(scope="session")
def claude(request: pytest.FixtureRequest) -> Path:
    """The real CLI, kept in pytest's cache directory between runs (~400 MB)."""
    return claude_binary(Path(request.config.cache.mkdir("claude-code-cli")))


@pytest.fixture
def served(daemon: RunningDaemon) -> Iterator[RunningDaemon]:
    """The daemon, with editjournal's hooks installed in the workspace's project file."""
    done = cli(daemon.root, "hooks", "install", "claude-code", env=cli_env(PATH=_path()))
    assert done.returncode == 0, done.stderr
    assert "editjournal hook claude-code" in (daemon.root / ".claude/settings.json").read_text()
    yield daemon


def _path() -> str:
    return f"{RUFF.parent}{os.pathsep}{os.environ.get('PATH', '')}"


def written(client: Client, files: dict[str, str]) -> None:
    for name, content in files.items():
        client.write_file(name, content)


def owners(client: Client, path: str) -> list[tuple[str, str]]:
    return [(line.text, line.agent or "outside") for line in client.blame(path).lines]


def no_tool_failed(model: ScriptedModel, marker: str) -> None:
    failed = [r for r in model.tool_results(marker) if r.get("is_error")]
    assert not failed, failed


def edit(path: Path, old: str, new: str) -> dict[str, Any]:
    return tool_use("Edit", file_path=str(path), old_string=old, new_string=new)


def sed(path: str, *changes: tuple[str, str]) -> dict[str, Any]:
    script = " ".join(f"-e 's/^{old}$/{new}/'" for old, new in changes)
    return tool_use("Bash", command=f"sed -i {script} {path}", description="sed")


def test_one_sessions_edit_sed_and_formatter_are_its_own_and_undo_by_takes_them_back(
    served: RunningDaemon, claude: Path, tmp_path: Path
):
    root, person = served.root, served.client(PERSON)
    written(person, {"app.py": numbered("v", 10), "fmt.py": UNFORMATTED})
    script = [
        Step([tool_use("Read", file_path=str(root / "app.py"))]),
        Step([edit(root / "app.py", "v2 = 2", "v2 = 20")]),
        Step([sed("app.py", ("v3 = 3", "v3 = 30"))]),
        Step([tool_use("Bash", command=FAILING, description="fails")]),
        Step([tool_use("Bash", command=f"{RUFF} format --quiet fmt.py", description="format")]),
        Step([text("done")]),
    ]
    agent = f"claude-code:{ONE}"
    with ScriptedModel({"solo-run": script}) as model:
        began = time.monotonic()
        ClaudeCli(claude, root, tmp_path / "home", model).run("solo-run: edit app.py", ONE)
        took = time.monotonic() - began
        failed = [r for r in model.tool_results("solo-run") if r.get("is_error")]
        assert len(failed) == 1 and "Exit code 3" in str(failed[0].get("content")), failed
    print(f"\none session, 5 tool calls: the CLI run took {took:.1f} s")

    app = owners(person, "app.py")
    assert app[1] == ("v2 = 20", agent) and app[2] == ("v3 = 30", agent)
    assert app[4] == ("v5 = 50", agent)  # a failed command's window closes too
    assert {who for i, (_, who) in enumerate(app) if i not in (1, 2, 4)} == {PERSON}
    fmt = owners(person, "fmt.py")
    assert [line for line, who in fmt if who == agent] == ["def f(x):", 'value = {"a": 1}']
    assert {who for _, who in fmt if who != agent} == {PERSON}
    applied = served.journal().records(kind="edit_applied")
    writers = {(r.agent, getattr(r.event, "writer", None)) for r in applied}
    assert {(agent, "claude-code:Edit"), (agent, "claude-code:Bash")} <= writers
    reads = {(r.agent, r.event.path) for r in served.journal().records(kind="file_read")}
    assert (agent, "app.py") in reads
    checkpoints = [c.name for c in person.checkpoint_list().checkpoints]
    assert f"{agent}/turn-1" in checkpoints

    undone = cli(root, "undo", "--by", agent)
    assert undone.returncode == 0, undone.stderr
    assert (root / "app.py").read_text() == numbered("v", 10)
    assert (root / "fmt.py").read_text() == UNFORMATTED


def wait_for(flag: Path) -> str:
    """Shell words: wait (bounded: 30 s) until `flag` exists."""
    return f"for i in $(seq 600); do [ -e {flag} ] && break; sleep 0.05; done"


def test_two_sessions_at_once_their_overlapping_bash_changes_are_not_guessed(
    served: RunningDaemon, claude: Path, tmp_path: Path
):
    root, person = served.root, served.client(PERSON)
    files = {"one.py": numbered("a", 6), "two.py": numbered("b", 6), "shared.py": numbered("s", 6)}
    written(person, files)
    sync = tmp_path / "sync"
    sync.mkdir()

    def session(marker: str, other: str, name: str, prefix: str, shared: str) -> list[Step]:
        """Alone: a Read, an Edit, a sed of two lines; then, once the other session is
        done with its own, a Bash command that changes a shared line while the other's
        runs (each waits, inside its command, until the other's has started)."""
        overlap = (
            f"touch {sync / marker}; {wait_for(sync / other)};"
            f" sed -i 's/^{shared} = {shared[1:]}$/{shared} = 0/' shared.py"
        )
        two, three = ((f"{prefix}{n} = {n}", f"{prefix}{n} = 0") for n in (2, 3))
        first = marker == "session-one"  # goes first; the other waits for its turn 3
        return [
            Step(
                [tool_use("Read", file_path=str(root / name))], after=() if first else ((other, 3),)
            ),
            Step([edit(root / name, f"{prefix}1 = 1", f"{prefix}1 = 0")]),
            Step([sed(name, two, three)]),
            Step(
                [tool_use("Bash", command=overlap, description="overlap")],
                after=((other, 3),) if first else (),
            ),
            Step([text("done")]),
        ]

    scripts = {
        "session-one": session("session-one", "session-two", "one.py", "a", "s2"),
        "session-two": session("session-two", "session-one", "two.py", "b", "s5"),
    }
    with ScriptedModel(scripts) as model:
        cli_one = ClaudeCli(claude, root, tmp_path / "home-one", model)
        cli_two = ClaudeCli(claude, root, tmp_path / "home-two", model)
        began = time.monotonic()
        runs = [cli_one.start("session-one: go", ONE), cli_two.start("session-two: go", TWO)]
        for run in runs:
            finished(run)
        took = time.monotonic() - began
        no_tool_failed(model, "session-one")
        no_tool_failed(model, "session-two")

    one, two = f"claude-code:{ONE}", f"claude-code:{TWO}"
    made = {  # (file, line) -> the session whose tool changed it
        **{("one.py", n): one for n in (1, 2, 3)},
        **{("two.py", n): two for n in (1, 2, 3)},
        ("shared.py", 2): one,
        ("shared.py", 5): two,
    }
    overlapped = {("shared.py", 2), ("shared.py", 5)}
    right = wrong = outside = 0
    for name in files:
        for n, (line, who) in enumerate(owners(person, name), 1):
            maker = made.get((name, n))
            if maker is None:
                assert (line, who) == (files[name].splitlines()[n - 1], PERSON), (name, n)
                continue
            assert line.endswith(" = 0"), (name, n, line)
            if who == "outside":
                outside += 1
            elif who == maker:
                right += 1
            else:
                wrong += 1
    print(
        f"\ntwo sessions at once: lines attributed right {right} / wrong {wrong} /"
        f" left outside {outside} of {len(made)} changed ({len(overlapped)} in overlapping"
        f" Bash windows); the two CLI runs took {took:.1f} s"
    )
    assert (right, wrong, outside) == (len(made) - len(overlapped), 0, len(overlapped))


def test_a_subagents_calls_are_its_own_agent_and_undo_by_it_keeps_the_parents_change(
    served: RunningDaemon, claude: Path, tmp_path: Path
):
    root, person = served.root, served.client(PERSON)
    written(person, {"c.py": numbered("c", 6)})
    path = root / "c.py"
    delegate = tool_use(
        "Agent",
        description="change c3",
        prompt="subagent-task: c3 and c5",
        subagent_type="general-purpose",
    )
    scripts = {
        "parent-run": [
            Step([tool_use("Read", file_path=str(path))]),
            Step([delegate]),
            Step(  # once the subagent is done with its tools (it may run in the background)
                [edit(path, "c1 = 1", "c1 = 10")], after=(("subagent-task", 3),)
            ),
            Step([text("done")]),
        ],
        "subagent-task": [
            Step([tool_use("Read", file_path=str(path))]),
            Step([edit(path, "c3 = 3", "c3 = 30")]),
            Step([sed("c.py", ("c5 = 5", "c5 = 50"))]),
            Step([text("subagent done")]),
        ],
    }
    model = ScriptedModel(scripts)
    harness = ClaudeCli(claude, root, tmp_path / "home", model)
    harness.capture_payloads(tmp_path / "payloads")
    with model:
        harness.run("parent-run: delegate", ONE)
        no_tool_failed(model, "parent-run")
        no_tool_failed(model, "subagent-task")

    seen = payloads(tmp_path / "payloads")
    (start,) = [p for p in seen if p["hook_event_name"] == "SubagentStart"]
    sub = start["agent_id"]
    tools = [p for p in seen if p["hook_event_name"] in ("PreToolUse", "PostToolUse")]
    subagents = [p for p in tools if p["tool_use_id"].startswith("toolu_subagent-task")]
    parents = [p for p in tools if p["tool_use_id"].startswith("toolu_parent-run")]
    assert len(subagents) == 6 and len(parents) == 6
    assert {(p["session_id"], p.get("agent_id")) for p in subagents} == {(ONE, sub)}
    assert {(p["session_id"], p.get("agent_id")) for p in parents} == {(ONE, None)}

    parent, child = f"claude-code:{ONE}", f"claude-code:{ONE}/{sub}"
    assert owners(person, "c.py") == [
        ("c1 = 10", parent), ("c2 = 2", PERSON), ("c3 = 30", child),
        ("c4 = 4", PERSON), ("c5 = 50", child), ("c6 = 6", PERSON),
    ]  # fmt: skip
    undone = cli_undo(root, child)
    assert undone == numbered("c", 6).replace("c1 = 1\n", "c1 = 10\n")


def cli_undo(root: Path, agent: str) -> str:
    done = cli(root, "undo", "--by", agent)
    assert done.returncode == 0, done.stderr
    return (root / "c.py").read_text()
