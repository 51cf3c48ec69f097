"""An outside writer racing agents' writes: nothing it wrote is lost.

A real process adds one numbered line to a file every ~5 ms — in place
(`open(path, "a")`, as a logger does) or as an editor saves (temp file + rename)
— while an agent writes the same file through a real daemon with each writing
tool. Every write lands by an exchange that keeps what it displaces
(daemon/landing/exchange.py), and bytes that reach a displaced file a moment later are
carried in (daemon/files/latewrites.py). So once the writer stops, every line it wrote
is in the file (or, should one conflict with a late write, in a file kept beside
it and in the journal): 0 lost. With in-place appends, no agent write that was
acknowledged is lost either (an editor's save legitimately drops what it never
read: that is the editor's own overwrite, journaled as an outside change).
`make test` races each tool briefly; `make stress` for a minute per mode.
"""

from __future__ import annotations

import itertools
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from editjournal.client import Client
from editjournal.client.library.errors import RequestError
from editjournal.daemon.text.linehashes import line_hash
from tests.conftest import RunningDaemon, start, wait_until

MODES = ("append", "save")
NAME = "shared.txt"


@dataclass
class Agent:
    """One agent's side of the race: a header line it owns, and what it added."""

    client: Client
    header: int = 0  # the agent's header line is `HEADER n`
    sha256: str = ""  # the content its last write or read returned
    added: list[str] = field(default_factory=list)  # acknowledged lines it added
    refused: dict[str, int] = field(default_factory=dict)

    def reread(self) -> None:
        """After a refusal: the file as it is now (an editor's save may have put an older
        header back: it never read this agent's change)."""
        read = self.client.read_file(NAME)
        self.sha256 = read.sha256
        for line in read.content.splitlines():  # below any lines prepended since
            if line.startswith("HEADER "):
                self.header = int(line.split()[1])
                break

    def bump(self, write: Callable[[str, str], object]) -> None:
        """Change `HEADER n` to `HEADER n+1` with one tool; a refusal is counted."""
        old, new = f"HEADER {self.header}", f"HEADER {self.header + 1}"
        try:
            result = write(old, new)
        except RequestError as e:
            self.refused[e.code] = self.refused.get(e.code, 0) + 1
            self.reread()
            return
        self.header += 1
        state = getattr(result, "latest_file_state", None)  # safe_patch's reply
        self.sha256 = state.sha256 if state is not None else getattr(result, "sha256", "")


def _added(agent: Agent, n: int, write: Callable[[str, str], object]) -> None:
    """Add the line `agent-N` with one tool; a refusal is counted."""
    line = f"agent-{n}"
    try:
        write(NAME, line + "\n")
    except RequestError as e:
        agent.refused[e.code] = agent.refused.get(e.code, 0) + 1
        return
    agent.added.append(line)


def _prepend(agent: Agent, n: int) -> None:
    _added(agent, n, agent.client.prepend_to_file)


def _append(agent: Agent, n: int) -> None:
    _added(agent, n, agent.client.append_to_file)


def _edit_file(agent: Agent, n: int) -> None:
    agent.bump(lambda old, new: agent.client.edit_file(NAME, old, new))


def _edit(agent: Agent, n: int) -> None:
    def anchored(old: str, new: str) -> object:
        op = {"op": "replace_line", "hash": line_hash(old)[:6], "content": new}
        return agent.client.edit(NAME, [op])

    agent.bump(anchored)


def _safe_patch(agent: Agent, n: int) -> None:
    def patched(old: str, new: str) -> object:
        diff = f"--- a/{NAME}\n+++ b/{NAME}\n@@ -1 +1 @@\n-{old}\n+{new}\n"
        return agent.client.safe_patch(NAME, diff, agent.sha256, rebase=True, include_content=False)

    agent.bump(patched)


def _prepare_apply(agent: Agent, n: int) -> None:
    def applied(old: str, new: str) -> object:
        hunk = agent.client.prepare_file_block_replace(NAME, old, new)
        return agent.client.apply_file_modification(hunk.hunk_id)

    agent.bump(applied)


TOOLS: dict[str, Callable[[Agent, int], None]] = {
    "prepend_to_file": _prepend,
    "append_to_file": _append,
    "edit_file": _edit_file,
    "edit": _edit,
    "safe_patch": _safe_patch,
    "prepare_apply": _prepare_apply,
}


@pytest.fixture
def shared(workspace: Path) -> Iterator[tuple[RunningDaemon, Path]]:
    (workspace / NAME).write_text("HEADER 0\nbody\n")
    running = start(workspace)
    yield running, workspace / NAME
    if running.proc.poll() is None:
        running.stop()


def _race(
    daemon: RunningDaemon, target: Path, mode: str, tools: list[str], seconds: float
) -> tuple[Agent, int]:
    """Agents' writes with `tools` in turn against the outside writer for `seconds`;
    returns the agent and how many lines the outside writer added."""
    agent = Agent(daemon.client("agent-a"))
    agent.reread()
    stop = target.parent.parent / "stop-writer"
    writer = subprocess.Popen(
        [sys.executable, "-m", "tests.e2e.outside_writer_worker", str(target), mode, str(stop)],
        cwd=str(Path(__file__).resolve().parents[2]),
    )
    try:
        deadline, bound = time.monotonic() + seconds, time.monotonic() + seconds + 30
        for n in itertools.count():
            now = time.monotonic()
            if now > bound or (now > deadline and _raced(agent, target)):
                break
            TOOLS[tools[n % len(tools)]](agent, n)
    finally:
        stop.write_text("stop")
        writer.wait(30)
    return agent, int(stop.with_name(stop.name + ".count").read_text())


def _raced(agent: Agent, target: Path) -> bool:
    """Whether both sides did enough to call it a race (`_check`'s floor): on a busy
    machine `seconds` alone may leave either side a handful of turns."""
    outside = target.read_text(errors="replace").count("outside-")
    return outside > 20 and agent.header + len(agent.added) >= 5


def _missing(target: Path, added: int) -> list[str]:
    """The outside lines in neither the file nor a file kept beside it."""
    present = set(target.read_text().splitlines())
    for kept in target.parent.glob(f"{NAME}.editjournal-late-*"):
        present |= set(kept.read_text().splitlines())
    return [f"outside-{i}" for i in range(added) if f"outside-{i}" not in present]


def _check(daemon: RunningDaemon, target: Path, mode: str, agent: Agent, added: int) -> None:
    assert added > 20, f"the outside writer added only {added} lines"
    landed = agent.header + len(agent.added)
    assert landed >= 5, f"only {landed} agent writes landed (refused: {agent.refused})"
    print(f"{mode}: {added} outside lines, {landed} agent writes landed, refused {agent.refused}")
    wait_until(lambda: not _missing(target, added), 15, "every outside line to be in place")
    if mode == "append":  # nobody but the daemon rewrites the file: no agent line is lost
        lines = set(target.read_text().splitlines())
        assert [line for line in agent.added if line not in lines] == []
    assert agent.client.status().watcher["state"] == "running"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("tool", list(TOOLS))
def test_an_outside_writer_racing_an_agents_writes_loses_no_line(
    shared: tuple[RunningDaemon, Path], mode: str, tool: str
) -> None:
    daemon, target = shared
    agent, added = _race(daemon, target, mode, [tool], 1.0)
    _check(daemon, target, mode, agent, added)


def test_a_write_that_met_an_outside_change_journals_it_with_its_content(
    shared: tuple[RunningDaemon, Path],
) -> None:
    daemon, target = shared
    agent, added = _race(daemon, target, "append", ["prepend_to_file"], 1.0)
    _check(daemon, target, "append", agent, added)
    journal = daemon.journal()
    met = [r for r in journal.records(kind="outside_change") if r.event.displaced_by]
    for record in met:  # each names the write it met, and its content is stored
        assert journal.blob(record.event.new_sha256) is not None
    verified = journal.verify()
    assert verified.ok, verified


@pytest.mark.stress
@pytest.mark.parametrize("mode", MODES)
def test_a_minute_of_an_outside_writer_racing_every_tool_loses_no_line(
    shared: tuple[RunningDaemon, Path], mode: str
) -> None:
    daemon, target = shared
    agent, added = _race(daemon, target, mode, list(TOOLS), 60.0)
    _check(daemon, target, mode, agent, added)


def _landed(target: Path, inode: int) -> bool:
    """The daemon's write has replaced the file (a new inode is at its name)."""
    return target.stat().st_ino != inode


def test_a_line_appended_through_an_fd_opened_before_a_write_landed_is_carried_in(
    shared: tuple[RunningDaemon, Path],
) -> None:
    """A logger holding the file open across the daemon's write: its next line goes into
    the displaced inode, which the daemon holds open a moment and carries into the file."""
    daemon, target = shared
    client = daemon.client("agent-a")
    client.read_file(NAME)
    inode = target.stat().st_ino
    with open(target, "a", encoding="utf-8") as logger:  # opened before the write lands
        client.prepend_to_file(NAME, "agent line\n")
        assert _landed(target, inode)
        logger.write("late line\n")
    wait_until(lambda: "late line" in target.read_text().splitlines(), 10, "the late line")
    assert target.read_text().splitlines()[:2] == ["agent line", "HEADER 0"]
    wait_until(
        lambda: any(
            b"late line\n" in (daemon.journal().blob(r.event.new_sha256) or b"")
            for r in daemon.journal().records(kind="outside_change", path=NAME)
        ),
        10,
        "the late line to be journaled",
    )


def test_an_in_place_rewrite_through_an_old_fd_is_kept_beside_the_file(
    shared: tuple[RunningDaemon, Path],
) -> None:
    """Not an append: nothing is merged blind; the late content is kept beside the file
    (`NAME.editjournal-late-SEQ`), journaled with its content."""
    daemon, target = shared
    client = daemon.client("agent-a")
    client.read_file(NAME)
    inode = target.stat().st_ino
    with open(target, "r+b") as editor:
        result = client.prepend_to_file(NAME, "agent line\n")
        assert _landed(target, inode)
        editor.write(b"REWRITE!")  # over "HEADER 0" in the old inode
    kept = target.with_name(f"{NAME}.editjournal-late-{result.version}")
    wait_until(kept.exists, 10, "the late content kept beside the file")
    assert kept.read_bytes() == b"REWRITE!\nbody\n"
    assert target.read_text() == "agent line\nHEADER 0\nbody\n"
    [event] = daemon.journal().records(kind="outside_change", path=kept.name)
    assert daemon.journal().blob(event.event.new_sha256) == b"REWRITE!\nbody\n"


def test_a_line_written_through_an_fd_held_past_the_grace_is_carried_in(
    shared: tuple[RunningDaemon, Path],
) -> None:
    """A writer descheduled between its `open` and its `write` for longer than the 0.5 s
    grace: the daemon finds it still has the displaced file open for writing (a read
    lease cannot be placed), keeps holding it and takes its line in, and lets the file
    go once the writer closed it (daemon/files/latewrites.py)."""
    daemon, target = shared
    client = daemon.client("agent-a")
    client.read_file(NAME)
    inode = target.stat().st_ino
    with open(target, "a", encoding="utf-8") as writer:  # opened before the write lands
        client.prepend_to_file(NAME, "agent line\n")
        assert _landed(target, inode)
        wait_until(
            lambda: _late_writes(client)["kept_for_writers"] >= 1,
            10,
            "the grace check to find the writer still there",
        )
        writer.write("late line\n")
        writer.flush()
        wait_until(
            lambda: "late line" in target.read_text().splitlines(),
            10,
            "the line taken in while its writer holds the displaced file",
        )
    wait_until(lambda: _late_writes(client)["held"] == 0, 10, "the displaced file let go")
    assert target.read_text().splitlines() == ["agent line", "HEADER 0", "body", "late line"]


def _late_writes(client: Client) -> dict[str, int]:
    stats: dict[str, int] = client.status().group_commit["late_writes"]
    return stats


PINNED = ("taskset", "-c", "0")


@pytest.fixture
def starved(workspace: Path) -> Iterator[tuple[RunningDaemon, Path]]:
    """The daemon pinned to core 0 beside a busy loop pinned there too: both starved of
    CPU, as on a loaded machine. Only processes this test starts are pinned."""
    (workspace / NAME).write_text("HEADER 0\nbody\n")
    busy = subprocess.Popen([*PINNED, sys.executable, "-c", "while True: pass"])
    try:
        running = start(workspace, prefix=PINNED)
        yield running, workspace / NAME
        if running.proc.poll() is None:
            running.stop()
    finally:
        busy.kill()
        busy.wait(10)


STARVED_RACE_S = 180.0


@pytest.mark.stress
def test_minutes_of_a_starved_writer_at_ten_times_the_rate_lose_no_line(
    starved: tuple[RunningDaemon, Path],
) -> None:
    """The issue's race made harder: an appender every 0.5 ms (ten times the rate above),
    every 50th of its lines written 0.6-1.2 s after its `open`
    (tests/e2e/starved_writer_worker.py), the writer and the daemon sharing one core
    with a busy loop, agents writing with every tool for three minutes (the issue asks for
    minutes): 0 lines lost."""
    daemon, target = starved
    agent = Agent(daemon.client("agent-a"))
    agent.reread()
    stop = target.parent.parent / "stop-writer"
    writer = subprocess.Popen(
        [*PINNED, sys.executable, "-m", "tests.e2e.starved_writer_worker", str(target), str(stop)],
        cwd=str(Path(__file__).resolve().parents[2]),
    )
    try:
        deadline = time.monotonic() + STARVED_RACE_S
        for n in itertools.count():
            if time.monotonic() > deadline:
                break
            TOOLS[list(TOOLS)[n % len(TOOLS)]](agent, n)
    finally:
        stop.write_text("stop")
        writer.wait(60)
    added = int(stop.with_name(stop.name + ".count").read_text())
    _check(daemon, target, "append", agent, added)
    print(f"late writes: {_late_writes(agent.client)}")
