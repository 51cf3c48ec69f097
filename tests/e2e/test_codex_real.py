"""The real Codex CLI end to end against a scripted model, with the hooks `hooks install
codex` wrote (the binary is a ~400 MB npm install, hence `stress`, run by `make stress`).

One `codex exec` session in a workspace whose files agent-a wrote through the journal:
its prompt leaves the turn's checkpoint; a `sed -i` through its shell tool
(`exec_command`, which its hooks call `Bash`) and an `apply_patch` that updates, adds and
deletes files are its own line by line; then agent-b changes a line the session patched,
and the session's next patch over that line is denied by the hook before it runs: Codex
hands the model the reason, and the file keeps agent-b's line.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from editjournal.client import Client
from tests.conftest import RunningDaemon
from tests.e2e.cli_support import cli, cli_env
from tests.e2e.codex_cli_support import (
    VENV_BIN,
    CodexCli,
    ScriptedResponses,
    Turn,
    apply_patch,
    codex_binary,
    function_call,
)

pytestmark = pytest.mark.stress

APP = "".join(f"v{n} = {n}\n" for n in range(1, 11))
FIRST = """*** Begin Patch
*** Update File: app.py
@@
 v6 = 6
-v7 = 7
+v7 = 70
 v8 = 8
*** Add File: notes.txt
+one
+two
*** Delete File: old.txt
*** End Patch
"""
SED = "sed -i 's/^v3 = 3$/v3 = 30/' app.py"  # through its shell tool, exec_command
OVER = "*** Begin Patch\n*** Update File: app.py\n@@\n-v7 = 70\n+v7 = 700\n*** End Patch\n"


@pytest.fixture(scope="session")
def codex(request: pytest.FixtureRequest) -> Path:
    """The real CLI, kept in pytest's cache directory between runs (~400 MB)."""
    return codex_binary(Path(request.config.cache.mkdir("codex-cli")))


def owners(client: Client, path: str) -> list[tuple[str, str]]:
    return [(line.text, line.agent or "outside") for line in client.blame(path).lines]


def test_a_codex_session_s_shell_and_patches_are_its_own_and_a_stale_patch_is_denied(
    daemon: RunningDaemon, codex: Path, tmp_path: Path
):
    root, person = daemon.root, daemon.client("agent-a")
    path = f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}"
    done = cli(root, "hooks", "install", "codex", env=cli_env(PATH=path))
    assert done.returncode == 0, done.stderr
    assert "editjournal hook codex" in (root / ".codex" / "hooks.json").read_text()
    person.write_file("app.py", APP)
    person.write_file("old.txt", "old\n")

    def agent_b_changes_line_7() -> None:
        daemon.client("agent-b").edit_file("app.py", "v7 = 70\n", "v7 = 77\n")

    script = [
        Turn([function_call("call_sed", "exec_command", cmd=SED)]),
        Turn([apply_patch("call_p1", FIRST)]),
        Turn([apply_patch("call_p2", OVER)], before=agent_b_changes_line_7),
    ]
    with ScriptedResponses(script) as model:
        began = time.monotonic()
        said = CodexCli(codex, root, tmp_path / "home", model).run("edit app.py")
        took = time.monotonic() - began
        outputs = model.tool_outputs()
    print(f"\none Codex session, 3 tool calls: the CLI run took {took:.1f} s")

    (checkpoint,) = daemon.client("lister").checkpoint_list().checkpoints
    session = checkpoint.name.removeprefix("codex:").removesuffix("/turn-1")
    agent = f"codex:{session}"
    assert checkpoint.name == f"{agent}/turn-1", said

    blamed = owners(person, "app.py")
    assert blamed[2] == ("v3 = 30", agent)  # the shell window
    assert blamed[6] == ("v7 = 77", "agent-b")  # the session's 70, then agent-b's 77
    assert {who for i, (_, who) in enumerate(blamed) if i not in (2, 6)} == {"agent-a"}
    assert owners(person, "notes.txt") == [("one", agent), ("two", agent)]
    assert not (root / "old.txt").exists()
    records = daemon.journal().records(kind="edit_applied")
    mine = [(r.event.path, r.event.writer) for r in records if r.agent == agent]
    assert mine == [
        ("app.py", "codex:Bash"),
        ("app.py", "codex:apply_patch"),
        ("notes.txt", "codex:apply_patch"),
        ("old.txt", "codex:apply_patch"),
    ], json.dumps(mine)

    denied = outputs["call_p2"]  # what Codex told the model instead of running the patch
    assert "blocked by PreToolUse hook" in denied, denied
    assert "agent-b changed line 7" in denied and "+v7 = 77" in denied, denied
