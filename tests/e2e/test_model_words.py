"""The words a model and a person read (issue 39): what they see, never a wire name.

One real daemon for the module. A shell window's change makes another agent's file
stale: `agent-status` (the CLI and the MCP text alike) names the command that made
it. A planned hunk's summary says where a final newline went and when the plan
expires, not `normalized.file_eof_newline_added` and `expires_at_ms`. An anchor
that identical lines share gets the CLI's suggestion that fits what was given: the
line number read with it picks one; a number that picked none wants a fresh read.
`editjournal mcp` without the SDK names the install that adds it to this
editjournal: the checkout's own pip for an editable install. The short tool
descriptions say what the model sees (the delta it shows) and how a `?` line is
picked (its line number), never `details.x` or "needs occurrence + line".
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import click
import msgspec
import pytest

from editjournal.client import Client, RequestError
from editjournal.client.cli.app import cli as editjournal_group
from editjournal.client.cli.hints import HintContext, suggestion
from editjournal.client.cli.mcp import RELEASE_INSTALL, install_command
from editjournal.client.tools.guidance import DESCRIPTIONS
from editjournal.client.tools.summaries import SUMMARIES
from editjournal.client.views.mcp_text import result_text
from tests.conftest import RunningDaemon, start
from tests.e2e.cli_support import TIMEOUT, cli, cli_env

REPO = Path(__file__).resolve().parents[2]
SESSION = "claude-code:0c1d2e3f-4a5b"
COMMAND = "sed -i 's/^b = 2$/b = 20/' app.py"
# blanks 5-7 share an anchor and a context (as in test_identical_lines)
CODE = "f() {\n  g() {\n  }\n}\n\n\n\nh() {\n  g() {\n  }\n}\n"


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningDaemon]:
    root = tmp_path_factory.mktemp("model-words") / "ws"
    root.mkdir()
    running = start(root)
    try:
        yield running
    finally:
        running.stop()


def test_agent_status_names_the_shell_command_that_made_a_file_stale(daemon: RunningDaemon):
    writer, session = daemon.client("agent-a"), daemon.client(SESSION)
    writer.write_file("app.py", "a = 1\nb = 2\n")
    session.shell_window("toolu_1", "open", "claude-code:Bash", command=COMMAND)
    subprocess.run(["bash", "-c", COMMAND], cwd=daemon.root, check=True, timeout=TIMEOUT)
    closed = session.shell_window("toolu_1", "close", "claude-code:Bash", command=COMMAND)
    [change] = closed.changes
    row = f"seq {change.seq} edit_applied by {SESSION}  $ {COMMAND}"
    shown = cli(daemon.root, "agent-status", "agent-a")
    assert shown.returncode == 0, shown.stderr
    assert row in [line.strip() for line in click.unstyle(shown.stdout).splitlines()]
    status = msgspec.to_builtins(writer.agent_status())
    assert row in [line.strip() for line in result_text("agent_status", status, []).split("\n")]


def test_a_planned_hunks_summary_speaks_words_not_wire_names(daemon: RunningDaemon):
    (daemon.root / "notes.md").write_text("# Notes")  # no final newline: one is added
    shown = cli(daemon.root, "prepare-file-append", "notes.md", "--content", "- one")
    assert shown.returncode == 0, shown.stderr
    assert "normalized." not in shown.stdout and "_at_ms" not in shown.stdout
    said = dict(
        line.split(": ", 1) for line in shown.stdout.splitlines() if re.match(r"[a-z_]+: ", line)
    )
    assert said["final_newline_added"] == "to the file's last line and to the new content"
    assert re.fullmatch(
        r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \(1 h after planning\)", said["expires"]
    )
    assert re.fullmatch(r"h[0-9a-f]+", said["hunk_id"])  # still what apply takes


def _refused(client: Client, ops: list[dict[str, str]]) -> RequestError:
    try:
        client.edit("c.c", ops)
    except RequestError as e:
        return e
    raise AssertionError("the edit was applied")


def test_identical_lines_hint_at_the_line_number_then_at_a_fresh_read(daemon: RunningDaemon):
    (daemon.root / "c.c").write_text(CODE)
    agent = daemon.client("agent-h")
    read = agent.read_file("c.c", hashes=True).lines or []
    rows = {row.line: f"{row.line}#{row.hash}" for row in read}  # copied whole, as agents do
    blank = rows[5].split("#")[1]
    ctx = HintContext(
        command=lambda *words: " ".join(["editjournal", *words]),
        root=daemon.root,
        path="c.c",
        program=editjournal_group,
    )
    bare = _refused(agent, [{"op": "delete_range", "start_hash": blank, "end_hash": rows[8]}])
    assert bare.code == "anchor_context_ambiguous"
    hint = suggestion(bare, ctx) or ""
    assert hint.startswith("give the anchor with the line number you read it at"), hint
    wrong = _refused(
        agent, [{"op": "delete_range", "start_hash": f"9#{blank}", "end_hash": rows[11]}]
    )
    assert "does not single one out" in wrong.message
    hint = suggestion(wrong, ctx) or ""
    assert hint.startswith("read the file again (`editjournal read c.c --hashes`)"), hint
    agent.edit("c.c", [{"op": "delete_range", "start_hash": rows[6], "end_hash": rows[7]}])
    assert (daemon.root / "c.c").read_text() == CODE.replace("\n\n\n\n", "\n\n")


def test_mcp_without_its_sdk_names_the_checkouts_own_install():
    """Run from the checkout by this test environment's venv (an editable install, as
    `make run` makes): the command is that venv's pip on the source tree."""
    no_sdk = "import sys; sys.modules['mcp'] = None; from editjournal.client.entry import main"
    done = subprocess.run(
        [sys.executable, "-c", f"{no_sdk}; sys.argv[0] = 'editjournal'; sys.exit(main())",
         "mcp", "--workspace", str(REPO)],
        capture_output=True, text=True, timeout=TIMEOUT, stdin=subprocess.DEVNULL,
        env=cli_env(), cwd=REPO,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    pip = Path(sys.executable).parent / "pip"
    said = done.stderr.split("install it with: ", 1)[1]
    if pip.is_relative_to(REPO):  # this environment is the checkout's own .venv
        assert said.startswith(f"{pip.relative_to(REPO)} install -e '.[mcp]' ("), said
    assert install_command(None, pip.parent, REPO) == RELEASE_INSTALL
    elsewhere = install_command(REPO, REPO / ".venv" / "bin", Path("/"))
    assert elsewhere.startswith(f"cd {REPO} && .venv/bin/pip install -e '.[mcp]'")


def test_the_short_descriptions_say_what_the_model_sees():
    for name, text in SUMMARIES.items():
        assert "details." not in text, name
        assert "needs occurrence" not in text, name
    for name in ("edit", "read_file"):
        assert "needs occurrence" not in DESCRIPTIONS[name], name
    assert "the number picks the twin you read" in SUMMARIES["edit"]
    assert "the delta it shows" in SUMMARIES["apply_file_modification"]
    assert "closest similar lines" in SUMMARIES["edit_file"]
    assert "the conflicts it lists" in SUMMARIES["undo"]
