"""The seed's tokens stay on the wire (issue 34), and a made-up anchor says so.

Seed 000 refuses an unknown or stale anchor `anchor_stale` with
`suggested_action: "re-read_file"`: harnesses written against the seed key on
that token, so it is what `suggested_action` carries, and what to do in words
(a call spelt with its real params) travels in `hint`, which the CLI prints as
its command and the MCP server as the tool call. An anchor that was never in
any version of the file the agent was given is still `anchor_stale` (the seed
says so), with `details.reason: "unknown_anchor"`: no delta can hold it, so
the README's recipe (retry from `details.delta`, else re-read) re-reads.
Black box: a real daemon, the Python client, `editjournal` and `editjournal mcp`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from editjournal.client import Client, StaleAnchor, StaleWrite
from editjournal.daemon.text.anchors import AnchorIndex
from tests.conftest import RunningDaemon
from tests.e2e.cli_support import cli
from tests.e2e.edit_support import anchors_of, rejected
from tests.e2e.test_mcp import connected, run, text

SOURCE = "".join(f"def step_{n}(state):\n    return state + {n}\n\n" for n in range(1, 6))
READ_AGAIN = 'read_file({"path": "app.py", "hashes": true})'


def made_up(*texts: str) -> str:
    """A 6-hex anchor that names no line of any of `texts` at any level of the ladder."""
    indexes = [AnchorIndex(t.splitlines()) for t in texts]
    for n in range(1 << 24):
        anchor = f"{(n * 2654435761) % (1 << 24):06x}"
        if all(index.match(anchor).level == "none" for index in indexes):
            return anchor
    raise AssertionError("every anchor is taken")


def replace(anchor: str, content: str = "    pass") -> list[dict[str, Any]]:
    return [{"op": "replace_line", "hash": anchor, "content": content}]


def put(daemon: RunningDaemon, text: str = SOURCE) -> Path:
    target = daemon.root / "app.py"
    target.write_text(text)
    return target


# --- the Python client -------------------------------------------------------------------


def test_a_stale_anchor_carries_the_seeds_token_and_a_hint(daemon: RunningDaemon):
    target = put(daemon)
    alice, bob = daemon.client("alice"), daemon.client("bob")
    seen = anchors_of(alice, "app.py")
    bob.edit("app.py", replace(anchors_of(bob, "app.py")[2], "    return -1"))

    with pytest.raises(StaleAnchor) as caught:
        alice.edit("app.py", replace(seen[2]))

    error = caught.value
    assert error.code == "anchor_stale"
    assert error.suggested_action == "re-read_file"  # seed 000, for programs
    assert error.token == "re-read_file"
    assert error.hint == "retry at once with the fresh anchors of details.delta: no re-read needed"
    assert error.details["delta"]["changed_lines"]  # what the hint refers to
    assert "reason" not in error.details  # a real anchor whose line changed
    assert target.read_text().splitlines()[1] == "    return -1"


def test_a_made_up_anchor_is_a_stale_write_that_says_it_never_was_an_anchor(
    daemon: RunningDaemon, client: Client
):
    target = put(daemon)
    anchors_of(client, "app.py")  # the agent read the file: nothing changed since
    invented = made_up(SOURCE)

    with pytest.raises(StaleWrite) as caught:
        client.edit("app.py", replace(invented))

    error = caught.value
    assert error.code == "anchor_stale" and error.suggested_action == "re-read_file"
    assert error.details["reason"] == "unknown_anchor"
    assert error.details["unknown_anchors"] == [invented]
    assert invented in error.message and "not one of its anchors" in error.message
    assert "delta" not in error.details  # nothing changed: the recipe's other branch
    assert error.hint == f"use anchors a read gave you; this one never was: {READ_AGAIN}"
    assert target.read_text() == SOURCE


def test_a_made_up_anchor_in_a_file_changed_since_the_read_has_the_delta_too(
    daemon: RunningDaemon, client: Client
):
    target = put(daemon)
    anchors_of(client, "app.py")
    changed = SOURCE.replace("state + 3", "state * 3")
    target.write_text(changed)  # an outside change after the agent's read

    error = rejected(client, "app.py", replace(made_up(SOURCE, changed)))

    assert isinstance(error, StaleWrite) and error.details["reason"] == "unknown_anchor"
    assert "state * 3" in error.details["delta"]["diff"]  # the README's recipe: delta first
    assert error.hint.endswith(READ_AGAIN)  # but the made-up line is in no delta


def test_in_a_batch_only_the_made_up_anchor_is_named_unknown(daemon: RunningDaemon, client: Client):
    """An anchor of an older read is stale, not made up: only the invented one is
    listed, and `reason` speaks of `details.anchor` (the first problem, the old one)."""
    target = put(daemon)
    old = anchors_of(client, "app.py")[5]  # `    return state + 2`, in the first read
    changed = SOURCE.replace("state + 2", "state * 2")
    target.write_text(changed)
    anchors_of(client, "app.py")  # read again: the old anchor is gone from the file
    invented = made_up(SOURCE, changed)

    error = rejected(client, "app.py", [*replace(old), *replace(invented)])

    assert error.code == "anchor_stale" and error.suggested_action == "re-read_file"
    assert error.details["anchor"] == old
    assert error.details["unknown_anchors"] == [invented]
    assert "reason" not in error.details


def test_the_readme_recipe_recovers_from_every_stale_anchor(daemon: RunningDaemon, client: Client):
    """Retry from `details.delta`, or re-read when there is none: either way the retry
    applies. A changed line's old anchor takes the first way, a made-up one the second."""
    target = put(daemon)
    changed = SOURCE.replace("state + 4", "state * 4")
    stale = anchors_of(client, "app.py")[11]  # `    return state + 4`
    target.write_text(changed)  # an outside change after the agent's read
    ways = []
    for anchor in (stale, made_up(SOURCE, changed)):
        with pytest.raises(StaleWrite) as caught:
            client.edit("app.py", replace(anchor, "    return 4"))
        fresh, way = recipe(client, caught.value, "    return state * 4")
        client.edit("app.py", replace(fresh, "    return 4"))
        assert target.read_text() == SOURCE.replace("state + 4", "4")
        ways.append(way)
        target.write_text(changed)
        anchors_of(client, "app.py")
    assert ways == ["delta", "re-read"]


def recipe(client: Client, error: StaleWrite, line: str) -> tuple[str, str]:
    """The README's: the fresh anchor of `line` from the delta, else from a re-read."""
    rows = error.details.get("delta", {}).get("changed_lines", [])
    found = [r["hash"] for r in rows if r.get("text") == line]
    if found:
        return found[0], "delta"
    read = client.read_file("app.py", hashes=True).lines or []
    return next(r.hash for r in read if r.text == line), "re-read"


# --- the raw wire: `editjournal call` ---------------------------------------------------


def test_the_wire_error_has_the_token_and_the_hint_with_its_call(daemon: RunningDaemon):
    put(daemon)
    params = {"path": "app.py", "operations": replace(made_up(SOURCE))}
    done = cli(daemon.root, "call", "edit", stdin=json.dumps(params))
    error = json.loads(done.stdout)["error"]
    assert error["code"] == "anchor_stale"
    assert error["suggested_action"] == "re-read_file"
    assert error["hint"] == f"use anchors a read gave you; this one never was: {READ_AGAIN}"


# --- the CLI ----------------------------------------------------------------------------


def test_the_cli_prints_the_hints_call_as_its_command(daemon: RunningDaemon):
    put(daemon)
    invented = made_up(SOURCE)
    ops = json.dumps(replace(invented))
    assert cli(None, "read", "app.py", "--hashes", cwd=daemon.root).returncode == 0

    done = cli(None, "edit", "app.py", stdin=ops, cwd=daemon.root)
    assert done.returncode == 1
    assert (
        "suggested action: use anchors a read gave you; this one never was:"
        " `editjournal read app.py --hashes`"
    ) in done.stderr
    assert "re-read_file" not in done.stderr and "read_file(" not in done.stderr

    as_json = cli(None, "edit", "app.py", "--json", stdin=ops, cwd=daemon.root)
    error = json.loads(as_json.stdout)
    assert error["suggested_action"] == "re-read_file"  # as on the wire
    assert error["hint"].endswith("`editjournal read app.py --hashes`")
    assert error["details"]["reason"] == "unknown_anchor"


# --- MCP ----------------------------------------------------------------------------------


def test_mcp_renders_the_hint_and_keeps_the_token_in_structured_content(
    daemon: RunningDaemon,
):
    put(daemon)
    invented = made_up(SOURCE)

    async def scenario() -> None:
        async with connected(daemon.root) as session:
            await session.call_tool("read_file", {"path": "app.py", "hashes": True})
            reply = await session.call_tool(
                "edit", {"path": "app.py", "operations": replace(invented)}
            )
            assert reply.is_error
            shown = text(reply)
            assert shown.startswith("error anchor_stale:")
            action = shown.split("suggested action: ", 1)[1].splitlines()[0]
            assert action == f"use anchors a read gave you; this one never was: {READ_AGAIN}"
            assert "reason: unknown_anchor" in shown  # the detail is shown with the others
            assert reply.structured_content is not None
            error = reply.structured_content["error"]
            assert error["suggested_action"] == "re-read_file"
            assert error["hint"] == action
            assert error["details"]["unknown_anchors"] == [invented]

    run(scenario)
