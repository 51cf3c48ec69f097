"""`undo` compares content, not events (issue 34), through a real daemon, the real CLI
and the client: a later write that was undone, or two that cancel out, do not block an
undo; a real conflict names only the writes whose changes are still there, and its
advice, followed literally (the commands or calls parsed from the reply and run),
ends in a landed undo or a plain "cannot" — never in a loop. The clients keep the
identity the CLI keeps for their agent (`kept`), so a plain `undo` from the
CLI takes back a write one of them made under the same name."""

from __future__ import annotations

import json
import re
import shlex
import subprocess

import pytest

from editjournal.client import Client, RequestError
from editjournal.schemas.events import EditApplied
from editjournal.schemas.suggestions import calls_in
from tests.conftest import RunningDaemon
from tests.e2e.cli_support import cli
from tests.polling import wait_until

LINES = [f"value_{n} = {n}" for n in range(1, 13)]
TEXT = "\n".join(LINES) + "\n"
MAX_STEPS = 12  # more than any chain below needs; a loop would run past it


@pytest.fixture
def ws(daemon: RunningDaemon) -> RunningDaemon:
    (daemon.root / "F").write_text(TEXT)
    return daemon


def kept(ws: RunningDaemon, agent: str) -> Client:
    """A client of `agent` with the identity the CLI keeps for it."""
    return ws.client(agent, keep_identity=True)


def rewrite(client: Client, changes: dict[int, str]) -> int:
    """Read F with anchors and replace the given 1-based lines in one edit; its seq."""
    rows = client.read_file("F", hashes=True).lines or []
    ops = [
        {"op": "replace_line", "hash": rows[n - 1].hash, "content": new}
        for n, new in changes.items()
    ]
    return client.edit("F", ops).version


def content(ws: RunningDaemon) -> str:
    return (ws.root / "F").read_text()


def undo_cli(ws: RunningDaemon, agent: str, *args: str) -> subprocess.CompletedProcess[str]:
    return cli(None, "--agent", agent, "undo", *args, cwd=ws.root)


def last_undo(ws: RunningDaemon) -> EditApplied:
    record = next(ws.journal().records(kind="edit_applied", newest_first=True, limit=1))
    assert isinstance(record.event, EditApplied) and record.event.writer == "undo"
    return record.event


# --- the loop of the issue, and writes that cancel out -------------------------------------


@pytest.mark.parametrize("undoer", ["u1", "u2"])
def test_undo_lands_once_the_later_write_is_undone(ws: RunningDaemon, undoer: str):
    u1, u2 = kept(ws, "u1"), kept(ws, "u2")
    mine = rewrite(u1, {3: "value_3 = 30"})
    theirs = rewrite(u2, {3: "value_3 = 300"})
    refused = undo_cli(ws, "u1", "F")
    assert refused.returncode == 1 and "undo_conflict" in refused.stderr
    assert f"--seq {theirs}" in refused.stderr and f"--seq {mine}" in refused.stderr
    taken_back = undo_cli(ws, undoer, "F", "--seq", str(theirs))
    assert taken_back.returncode == 0, taken_back.stderr
    assert content(ws) == TEXT.replace("value_3 = 3\n", "value_3 = 30\n")
    # u2's own undo leaves u1's latest write the one to undo; u1's own is undone by seq
    again = ("F",) if undoer == "u2" else ("F", "--seq", str(mine))
    done = undo_cli(ws, "u1", *again)
    assert done.returncode == 0, done.stderr
    assert f"Undid seq {mine} (edit by u1)" in done.stdout
    assert content(ws) == TEXT
    assert last_undo(ws).operations[0]["seq"] == mine


def test_two_later_writes_that_cancel_out_do_not_block_an_undo(ws: RunningDaemon):
    u1, u2, u3 = kept(ws, "u1"), kept(ws, "u2"), kept(ws, "u3")
    mine = rewrite(u1, {3: "value_3 = 30"})
    there = rewrite(u2, {3: "value_3 = 300", 10: "value_10 = 1000"})
    back = rewrite(u3, {3: "value_3 = 30"})  # u2's line 3 taken back by hand, its line 10 kept
    done = undo_cli(ws, "u1", "F", "--json")
    assert done.returncode == 0, done.stderr
    reply = json.loads(done.stdout)
    assert reply["undone"]["seq"] == mine
    assert [c["seq"] for c in reply["rebased_over"]] == [there, back]
    assert content(ws) == TEXT.replace("value_10 = 10\n", "value_10 = 1000\n")


def test_an_outside_change_taken_back_does_not_block_an_undo(ws: RunningDaemon):
    u1 = kept(ws, "u1")
    rewrite(u1, {3: "value_3 = 30"})
    mine = content(ws)
    (ws.root / "F").write_text(mine.replace("value_3 = 30", "value_3 = 31"))
    wait_until(lambda: _outside_changes(ws) >= 1, what="the outside change to be journaled")
    (ws.root / "F").write_text(mine)  # and put back by the same outside hand
    wait_until(lambda: _outside_changes(ws) >= 2, what="the change back to be journaled")
    done = undo_cli(ws, "u1", "F")
    assert done.returncode == 0, done.stderr
    assert content(ws) == TEXT


def _outside_changes(ws: RunningDaemon) -> int:
    return len(list(ws.journal().records(path="F", kind="outside_change")))


def test_a_write_since_undone_is_not_named_as_a_conflict(ws: RunningDaemon):
    u1, u2, u3 = kept(ws, "u1"), kept(ws, "u2"), kept(ws, "u3")
    mine = rewrite(u1, {3: "value_3 = 30"})
    rewrite(u2, {3: "value_3 = 300"})
    u2.undo("F")
    last = rewrite(u3, {3: "value_3 = 3000"})
    with pytest.raises(RequestError) as e:
        u1.undo("F")
    assert e.value.code == "undo_conflict"
    assert [(c["seq"], c["agent"], c["lines"]) for c in e.value.details["conflicts"]] == [
        (last, "u3", [3])
    ]
    advice = calls_in(e.value.suggested_action or "", {"undo"})
    assert [c.params for c in advice] == [
        {"path": "F", "seq": last},
        {"path": "F", "seq": mine},
    ]


# --- advice followed literally ends ---------------------------------------------------------


def a_real_conflict(ws: RunningDaemon) -> int:
    """u1 writes line 3; u2 rewrites it; u3 rewrites it and line 8 in one edit; u4
    rewrites line 8: undoing u1's write needs u4's, u3's and u2's undone first."""
    mine = rewrite(kept(ws, "u1"), {3: "value_3 = 30"})
    rewrite(kept(ws, "u2"), {3: "value_3 = 300"})
    rewrite(kept(ws, "u3"), {3: "value_3 = 3000", 8: "value_8 = 80"})
    rewrite(kept(ws, "u4"), {8: "value_8 = 800"})
    return mine


UNDO_COMMAND = re.compile(r"`(editjournal [^`]*\bundo\b[^`]*)`")


def follow_cli(ws: RunningDaemon, agent: str, first: list[str]) -> tuple[str, list[str]]:
    """Run `first`; on a refusal run the undo commands its advice prints, in order (the
    later writes' first, then this one again), as long as there is advice. "landed"
    when the first undo lands, else "cannot" and the last refusal's stderr."""
    stack, seen, steps = [first], set(), 0
    while stack:
        args = stack[-1]
        state = (tuple(args), content(ws))
        assert state not in seen, f"the advice loops: {args} again on the same content"
        seen.add(state)
        steps += 1
        assert steps <= MAX_STEPS, f"the advice did not end within {MAX_STEPS} steps"
        done = cli(None, "--agent", agent, *args, cwd=ws.root)
        if done.returncode == 0:
            stack.pop()
            continue
        assert "undo_conflict" in done.stderr, done.stderr
        advice = [shlex.split(c)[1:] for c in UNDO_COMMAND.findall(done.stderr)]
        if not advice:
            return "cannot", [done.stderr]
        stack[-1:] = [advice[-1], advice[0]]  # this one again, after the latest
    return "landed", [str(steps)]


def test_the_cli_advice_of_a_real_conflict_followed_literally_lands_the_undo(
    ws: RunningDaemon,
):
    mine = a_real_conflict(ws)
    ended, how = follow_cli(ws, "u1", ["undo", "F"])
    assert ended == "landed", how
    assert content(ws) == TEXT  # u4's, u3's, u2's and u1's writes all taken back
    assert last_undo(ws).operations[0]["seq"] == mine
    assert int(how[0]) == 7  # u1, u2, u3 refused; u4, u3, u2, u1 undone


def follow_client(client: Client, first: dict[str, object]) -> tuple[str, RequestError | None]:
    """The same through the client: the `undo({...})` calls of the reply's suggested
    action, run as they are spelt."""
    stack: list[dict[str, object]] = [first]
    steps = 0
    while stack:
        steps += 1
        assert steps <= MAX_STEPS, f"the advice did not end within {MAX_STEPS} steps"
        try:
            client.undo(**stack[-1])  # type: ignore[arg-type]
        except RequestError as e:
            assert e.code == "undo_conflict", e
            advice = [c.params for c in calls_in(e.suggested_action or "", {"undo"})]
            if not advice:
                return "cannot", e
            stack[-1:] = [advice[-1], advice[0]]
            continue
        stack.pop()
    return "landed", None


def test_the_clients_advice_of_a_real_conflict_followed_literally_lands_the_undo(
    ws: RunningDaemon,
):
    mine = a_real_conflict(ws)
    ended, error = follow_client(kept(ws, "u1"), {"path": "F"})
    assert ended == "landed", error
    assert content(ws) == TEXT
    assert last_undo(ws).operations[0]["seq"] == mine


def test_an_outside_change_in_the_way_is_a_plain_cannot(ws: RunningDaemon):
    rewrite(kept(ws, "u1"), {3: "value_3 = 30"})
    rewrite(kept(ws, "u2"), {3: "value_3 = 300"})
    now = content(ws).replace("value_3 = 300", "value_3 = 3_000")
    (ws.root / "F").write_text(now)  # by hand, over u2's write
    wait_until(lambda: _outside_changes(ws) >= 1, what="the outside change to be journaled")
    ended, how = follow_cli(ws, "u1", ["undo", "F"])
    assert ended == "cannot"
    assert "an outside writer (outside_change" in how[0]
    assert "cannot be undone now (an outside change is in the way" in how[0]
    assert content(ws) == now  # nothing written
    ended, error = follow_client(kept(ws, "u1"), {"path": "F"})
    assert ended == "cannot" and error is not None and error.code == "undo_conflict"
    assert [c["kind"] for c in error.details["conflicts"]] == ["outside_change"]
