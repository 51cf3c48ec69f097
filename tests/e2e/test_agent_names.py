"""Agent names are self-declared, so they are kept from passing for what they are not.

`outside` and `daemon` are the journal's words for changes no agent made: a client
claiming one is refused (`bad_request` at `$.agent`), as is a name with a control
character, which would forge or hide rows where names are printed. The CLI refuses
such an `--agent` / EDITJOURNAL_AGENT itself (exit 2). A journal written before the
rule (the test writes one with `Journal`, as an older daemon would have) is printed
with its control characters escaped: one event is one row of `log`.
"""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest
import zmq

from editjournal.client import Client
from editjournal.client.library.errors import BadRequest
from editjournal.daemon.store.journal import Journal, sha256_hex
from editjournal.schemas.endpoint import JOURNAL_FILE
from editjournal.schemas.events import FileRead
from editjournal.schemas.wire import MAX_AGENT_LEN
from tests.conftest import RunningDaemon, start
from tests.e2e.cli_support import cli, cli_env

FORGED = "forged-row"
# A name that, printed raw, would end its row and start another one of its own
FORGING_NAME = f"evil\n     1  2000-01-01 00:00:00  {FORGED}  file_read  a.txt"


def refusal(daemon: RunningDaemon, agent: str) -> str:
    """The daemon's and the client library's refusal of `agent`, the same: the daemon
    asked over a bare socket (the library refuses before sending), its message returned."""
    with pytest.raises(BadRequest) as caught:
        daemon.client(agent)
    assert caught.value.code == "bad_request" and "$.agent" in caught.value.message
    probe = daemon.client("probe")
    probe.ping()
    sock = zmq.Context.instance().socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.connect(probe.address)
    try:
        sock.send(msgspec.msgpack.encode({"id": 1, "method": "ping", "agent": agent}))
        assert sock.poll(10_000), "no reply"
        reply = msgspec.msgpack.decode(sock.recv())
    finally:
        sock.close()
    assert reply["ok"] is False and reply["error"]["code"] == "bad_request"
    assert reply["error"]["message"] == caught.value.message
    return str(reply["error"]["message"])


@pytest.mark.parametrize("agent", ["outside", "daemon", "Outside", " daemon "])
def test_a_reserved_name_is_refused(daemon: RunningDaemon, agent: str):
    assert "reserved" in refusal(daemon, agent)


@pytest.mark.parametrize(
    "agent", ["a\nb", "a\tb", "a\rb", "a\x1b[31mb", "a\x7fb", "a\x85b", "a\u202eb", "a\u2028b"]
)
def test_a_name_with_a_control_character_is_refused(daemon: RunningDaemon, agent: str):
    assert "control character" in refusal(daemon, agent)


def test_a_name_over_the_length_limit_is_refused(daemon: RunningDaemon):
    assert daemon.client("n" * MAX_AGENT_LEN).ping().pid == daemon.proc.pid
    assert f"at most {MAX_AGENT_LEN} characters" in refusal(daemon, "n" * (MAX_AGENT_LEN + 1))


@pytest.mark.parametrize(
    "agent",
    [
        # fixed session ids: parallel workers must collect the same test names
        "claude-code:0d15e57a-e19f-4c05-a13d-5943287abf89",  # Claude Code's session_id
        "gemini-cli:66831b5e-4d50-46f6-98eb-045f596a583a",
        "cursor-agent-7f3a",  # the MCP server's clientInfo name plus a connection id
        "outsider",  # only the exact words are reserved
        "agent é 東京",  # non-ASCII letters are names, not controls
    ],
)
def test_real_agent_names_pass(daemon: RunningDaemon, workspace: Path, agent: str):
    (workspace / "a.txt").write_text("one\n")
    client = daemon.client(agent)
    client.read_file("a.txt")
    assert client.agent_status().agent == agent


@pytest.mark.parametrize(
    ("given", "where"),
    [(["--agent", "outside"], "--agent"), (["--agent", "a\nb"], "--agent")],
)
def test_the_cli_refuses_a_bad_agent_option(workspace: Path, given: list[str], where: str):
    done = cli(workspace, *given, "status")
    assert done.returncode == 2, done.stderr
    assert f"given by {where}" in done.stderr
    assert not (workspace / ".editjournal" / JOURNAL_FILE).exists()  # refused before a call


@pytest.mark.parametrize("agent", ["daemon", "a\x1bb"])
def test_the_cli_refuses_a_bad_editjournal_agent(workspace: Path, agent: str):
    done = cli(workspace, "status", env=cli_env(EDITJOURNAL_AGENT=agent))
    assert done.returncode == 2, done.stderr
    assert "given by EDITJOURNAL_AGENT" in done.stderr


@pytest.fixture
def old_journal(workspace: Path) -> Path:
    """A workspace whose journal already holds a read by FORGING_NAME."""
    (workspace / ".editjournal").mkdir()
    journal = Journal(workspace / ".editjournal" / JOURNAL_FILE)
    content = b"one\n"
    read = FileRead(path="a.txt", sha256=sha256_hex(content), size=4, line_count=1)
    journal.append(FORGING_NAME, read, {read.sha256: content})
    journal.close()
    (workspace / "a.txt").write_bytes(content)
    return workspace


def test_log_prints_an_old_journals_control_character_name_escaped(old_journal: Path):
    running = start(old_journal)
    try:
        done = cli(old_journal, "log")
    finally:
        running.stop()
    assert done.returncode == 0, done.stderr
    rows = [row for row in done.stdout.splitlines() if "evil" in row]
    assert len(rows) == 1 and "file_read" in rows[0]
    assert "evil\\n" in rows[0]
    assert not any(row.lstrip().startswith("1  2000-01-01") for row in done.stdout.splitlines())


def test_stats_and_agent_status_print_the_name_escaped(old_journal: Path):
    running = start(old_journal)
    try:
        stats = cli(old_journal, "stats")
        status = cli(old_journal, "agent-status", FORGING_NAME)
    finally:
        running.stop()
    for done in (stats, status):
        assert done.returncode == 0, done.stderr
        assert "evil\\n" in done.stdout
        assert not any(row.lstrip().startswith("1  2000-01-01") for row in done.stdout.splitlines())


def test_the_library_default_name_still_passes(daemon: RunningDaemon):
    with Client(daemon.root, None, autostart=False) as client:  # "anonymous"
        assert client.ping().pid == daemon.proc.pid
