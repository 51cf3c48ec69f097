"""Shell commands in every audit view; long agent names fit the columns (issues 37, 39).

A harness session (`claude-code:<uuid>`, as Claude Code's hooks name it) runs a real
`sed -i` inside a shell window opened and closed through a real daemon; `log`,
`history`, `blame`, `stats`, `agent_status` and `report --html` then name the command
that made the change: whole in the results (`--json`) and the report, cut to its
column in the tables. The command carries a second line and an escape character:
printed, it forges no row and restyles nothing. The session's 48-character name is
shortened the same way in every table (`claude-code:3fa2b1c4…`), a legend after the
rows gives it whole; two names alike in their first characters are told apart.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from dataclasses import dataclass

import click
import pytest

from editjournal.client import Client
from editjournal.client.views.audit_render import (
    NAME_CAP,
    history_lines,
    legend,
    log_lines,
    short_command,
    short_names,
    show_lines,
    stats_lines,
)
from editjournal.daemon.audit import open_readonly
from editjournal.daemon.audit.report import render
from tests.conftest import RunningDaemon, start
from tests.e2e.cli_support import TIMEOUT, cli

SESSION = "claude-code:3fa2b1c4-5d6e-4f70-8a9b-0c1d2e3f4a5b"
SHORT = "claude-code:3fa2b1c4…"
FORGED = "     1  2000-01-01 00:00:00  forged"
# A real command: the sed, then a comment line holding a forged row and an escape
COMMAND = f"sed -i 's/^v7 = 7$/v7 = 70/' app.py\n# {FORGED} \x1b[2J"
APP = "".join(f"v{n} = {n}\n" for n in range(1, 11))


@dataclass
class Shelled:
    daemon: RunningDaemon
    writer: Client  # agent-a: wrote app.py, so its view of it is stale after the command
    session: Client
    seq: int  # the shell edit's event


@pytest.fixture(scope="module")
def shelled(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Shelled]:
    """One daemon: agent-a writes app.py; the session's shell window runs COMMAND."""
    root = tmp_path_factory.mktemp("shell-audit") / "ws"
    root.mkdir()
    daemon = start(root)
    try:
        writer, session = daemon.client("agent-a"), daemon.client(SESSION)
        writer.write_file("app.py", APP)
        session.shell_window("toolu_1", "open", "claude-code:Bash", command=COMMAND)
        subprocess.run(["bash", "-c", COMMAND], cwd=root, check=True, timeout=TIMEOUT)
        closed = session.shell_window("toolu_1", "close", "claude-code:Bash", command=COMMAND)
        [change] = closed.changes
        assert change.credited and change.seq is not None, closed
        yield Shelled(daemon, writer, session, change.seq)
    finally:
        daemon.stop()


def plain(lines: list[str]) -> list[str]:
    return [click.unstyle(line) for line in lines]


def no_forged_row(lines: list[str]) -> None:
    """Each row is one row: the command's second line and escape never print raw."""
    text = "\n".join(lines)
    assert "\x1b[2J" not in text and not any(row.startswith(FORGED) for row in text.split("\n"))


# --- the results: the command whole --------------------------------------------------------


def test_log_history_and_blame_carry_the_whole_command(shelled: Shelled):
    client = shelled.writer
    [entry] = client.log(kind="edit_applied", agent=SESSION).events
    assert entry.seq == shelled.seq and entry.commands == [COMMAND]
    versions = client.history("app.py").versions
    assert versions[-1].commands == [COMMAND] and versions[-1].author == SESSION
    assert all(v.commands == [] for v in versions[:-1])
    lines = client.blame("app.py").lines
    assert (lines[6].agent, lines[6].commands) == (SESSION, [COMMAND])
    assert all(b.commands == [] and b.agent == "agent-a" for n, b in enumerate(lines) if n != 6)


def test_stats_count_the_sessions_shell_writes_by_command(shelled: Shelled):
    [mine] = shelled.writer.stats(SESSION).agents
    assert (mine.applied_writes, mine.shell_writes) == (1, 1)
    assert mine.shell_commands == {COMMAND: 1}
    [other] = shelled.writer.stats("agent-a").agents
    assert (other.shell_writes, other.shell_commands) == (0, {})


def test_agent_status_names_the_command_that_made_a_file_stale(shelled: Shelled):
    status = shelled.writer.agent_status()
    [seen] = status.files
    assert not seen.current
    [change] = seen.changed_since
    assert change["seq"] == shelled.seq and change["agent"] == SESSION
    assert change["commands"] == [COMMAND]


def test_the_html_report_shows_the_command_whole_and_escaped(shelled: Shelled):
    journal = open_readonly(shelled.daemon.root / ".editjournal" / "journal.db")
    try:
        page = "".join(render(journal, "report"))
    finally:
        journal.close()
    whole = "$ sed -i &#x27;s/^v7 = 7$/v7 = 70/&#x27; app.py\n# " + FORGED + " \\x1b[2J"
    assert f"<pre class='cmd'>{whole}</pre>" in page  # the event: its command whole
    assert "<code>$ sed -i &#x27;s/^v7 = 7$/v7 = 70/&#x27; app.py…</code>" in page  # its row
    assert "<summary>1</summary><pre class='cmd'>" + whole in page  # the stats table
    assert "\x1b" not in page  # spelt out, never sent to the browser raw


# --- the tables: the command cut, the name shortened, nothing forged -------------------------


def test_blame_cli_shows_the_command_and_a_shortened_name_with_its_legend(shelled: Shelled):
    done = cli(shelled.daemon.root, "blame", "app.py")
    assert done.returncode == 0, done.stderr
    rows = done.stdout.splitlines()
    assert len(rows) == 10 + 2  # the file's lines, then the legend: its head and one name
    assert rows[6].split()[1:3] == [SHORT, "$"] and "sed -i 's/^v7 = 7$/v7" in rows[6]
    assert rows[6].endswith("7| v7 = 70")
    assert rows[-2:] == ["names shortened above:", f"  {SHORT}  {SESSION}"]
    bars = {row.index("|") for row in rows[:10]}
    assert len(bars) == 1, "every row's text starts in the same column"
    no_forged_row(rows)


def test_history_log_stats_and_show_print_the_command_and_forge_no_row(shelled: Shelled):
    client = shelled.writer
    history = plain(history_lines(client.history("app.py")))
    assert history[0].split() == ["seq", "time", "author", "kind", "lines", "+/-"]
    last = history[2]
    assert (
        SHORT in last
        and "+1/-1" in last
        and last.endswith("$ sed -i 's/^v7 = 7$/v7 = 70/' app.py …")
    )
    assert history[-1] == f"  {SHORT}  {SESSION}"
    log = plain(log_lines(client.log(kind="edit_applied").events))
    assert len(log) == 2 and log[1].endswith("(+0)  $ sed -i 's/^v7 = 7$/v7 = 70/' app.py …")
    assert log[0].index("edit_applied") == log[1].index("edit_applied")
    assert len(log[1].split("edit_applied")[0]) < 12 + 19 + NAME_CAP + 4
    stats = plain(stats_lines(client.stats().agents))
    assert stats[-2:] == [
        "  shell writes 1, by these commands (newest last):",
        "    $ sed -i 's/^v7 = 7$/v7 = 70/' app.py …: 1 change",
    ]
    shown = plain(show_lines(client.show(shelled.seq)))
    at = shown.index("command: $ sed -i 's/^v7 = 7$/v7 = 70/' app.py")
    assert shown[at + 1] == f"           # {FORGED} \\x1b[2J"  # whole, its second line under it
    for table in (history, log, stats, shown):
        no_forged_row(table)


# --- the shortening itself -----------------------------------------------------------------


def test_long_names_are_shortened_alike_everywhere_and_never_into_one_another():
    other = "claude-code:3fa2b1c4-9999-4f70-8a9b-0c1d2e3f4a5b"
    subagent = f"{SESSION}/a0b1c2d3-e4f5-4a6b-8c7d-9e0f1a2b3c4d"
    alone = short_names([SESSION, "agent-a", "outside"])
    assert alone == {SESSION: SHORT, "agent-a": "agent-a", "outside": "outside"}
    both = short_names([SESSION, other, subagent])
    assert (
        both[SESSION] == "claude-code:3fa2b1c4-5d6…" and both[other] == "claude-code:3fa2b1c4-999…"
    )
    assert both[subagent] == "claude-code:3fa2b1c4…/a0b1c2d3…"
    assert len(set(both.values())) == 3 and all(len(s) <= NAME_CAP for s in both.values())
    plain_long = [
        "an-agent-with-a-very-long-name-number-1",
        "an-agent-with-a-very-long-name-number-2",
    ]
    shown = short_names(plain_long)
    assert len(set(shown.values())) == 2 and all(len(s) == NAME_CAP for s in shown.values())
    assert short_names(["evil\nname"]) == {"evil\nname": "evil\\nname"}
    assert legend(alone) == ["names shortened above:", f"  {SHORT}  {SESSION}"]


def test_a_command_is_cut_to_its_column_and_several_are_counted():
    assert short_command([]) == ""
    assert short_command(["ruff format ."]) == "$ ruff format ."
    cut = short_command(["x" * 100], 20)
    assert cut == "$ " + "x" * 17 + "…" and len(cut) == 20
    assert short_command(["make fmt", "make gen"], 30) == "$ make fmt (+1)"
    assert short_command(["a\x1b[2Jb\nsecond line"]) == "$ a\\x1b[2Jb …"


def test_fleet_log_rows_fit_long_names_and_escape_what_the_journal_holds():
    from types import SimpleNamespace

    from editjournal.client.cli.fleet import _log_rows

    def event(seq: int, agent: str | None, summary: str) -> SimpleNamespace:
        return SimpleNamespace(
            workspace_id="3f2c" * 8, seq=seq, ts_ms=0, agent=agent, summary=summary
        )

    rows = _log_rows(
        [
            event(1, SESSION, "read app.py"),
            event(2, "bob", f"x\n{FORGED}"),
            event(3, None, "started"),
        ]
    )
    assert len(rows) == 3 + 2 and rows[-1] == f"  {SHORT}  {SESSION}"
    starts = [row.index(text) for row, text in zip(rows, ["read", "x\\n", "started"], strict=False)]
    assert len(set(starts)) == 1, "every summary starts in the same column"
    no_forged_row(rows)
