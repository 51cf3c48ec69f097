"""What a model reads back from every MCP tool: compact text, never the result as JSON.

One real `editjournal mcp` process (the MCP SDK's own client over stdio) and a real
daemon: every agent tool is called once so that it succeeds, in an order where each
call sets up the next (a prepared hunk is applied, a checkpoint restored). Each
result's text must not be JSON, must not name wire fields the model never sees
(`details.delta`), and its structured content must match the tool's declared
`outputSchema` — the SDK's client validates that on every successful call and
raises when it does not.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from editjournal.client.cli.mcp import tools as tools_command
from editjournal.client.tools.tooldefs import agent_methods
from editjournal.client.tools.toolsets import PROFILES, select_tools
from tests.conftest import RunningDaemon
from tests.e2e.test_mcp import EMPTY_SHA256, SOURCE, anchor_of, connected, text

if TYPE_CHECKING:  # the SDK is imported where a test connects (test_mcp.connected)
    from mcp import types
    from mcp.client.session import ClientSession

# wire words a model reads nowhere: `details.delta`, `latest_file_state`, a line of JSON
WIRE_WORDS = re.compile(r"details\.\w+|latest_file_state|^\s*[\[{]\"", re.MULTILINE)

# refusals whose texts name details: one safety warning, a stale base, a stale anchor
REFUSED: dict[str, dict[str, Any]] = {
    "prepend_to_file": {"path": "notes.md", "content": "# Notes\n"},
    "safe_patch": {
        "path": "app.py",
        "unified_diff": "--- a/app.py\n+++ b/app.py\n@@ -1 +1 @@\n-nope\n+yes\n",
        "base_content_sha256": EMPTY_SHA256,
    },
    "edit_file": {"path": "app.py", "old_string": "not in the file", "new_string": "x"},
}


def is_json(shown: str) -> bool:
    try:
        json.loads(shown)
    except ValueError:
        return False
    return True


async def _every_tool(session: ClientSession, root: Path) -> dict[str, types.CallToolResult]:
    """Each agent tool called once, successfully, in an order where each sets up the next."""
    done: dict[str, types.CallToolResult] = {}

    async def call(name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        reply = await session.call_tool(name, arguments)  # the SDK validates outputSchema
        assert not reply.is_error, f"{name}: {text(reply)}"
        done[name] = reply
        return reply

    read = await call("read_file", {"path": "app.py", "hashes": True})
    rows = text(read).split("\n", 1)[1]
    await call("read_many_files", {"paths": ["app.py", "notes.md"], "max_lines": 5})
    await call(
        "edit",
        {
            "path": "app.py",
            "operations": [{"op": "insert_before", "hash": anchor_of(rows, 1), "content": "# x"}],
        },
    )
    diff = "--- /dev/null\n+++ b/new.py\n@@ -0,0 +1 @@\n+x = 1\n"
    await call(
        "safe_patch",
        {"path": "new.py", "unified_diff": diff, "base_content_sha256": EMPTY_SHA256},
    )
    await call(
        "apply_patch", {"patch": "*** Begin Patch\n*** Add File: added.py\n+y = 2\n*** End Patch"}
    )
    await call("agent_status", {})
    await call("checkpoint_create", {"name": "before", "paths": ["notes.md"]})
    await call(
        "edit_file", {"path": "app.py", "old_string": "state + 1", "new_string": "state + 10"}
    )
    await call("append_to_file", {"path": "notes.md", "content": "- entry\n"})
    await call("prepend_to_file", {"path": "notes.md", "content": "# Title\n"})
    await call(
        "update_section", {"path": "notes.md", "section_header": "# Notes", "new_content": "- x"}
    )
    await call("write_file", {"path": "made/new.md", "content": "made\n"})
    plan = await call(
        "prepare_file_range_edit", {"path": "app.py", "range": "1-1", "content": "# first\n"}
    )
    hunk_id = (plan.structured_content or {})["hunk_id"]
    await call("list_hunks", {})
    await call("apply_file_modification", {"hunk_id": hunk_id})
    spare = await call("prepare_file_append", {"path": "notes.md", "content": "- more\n"})
    await call("discard_hunk", {"hunk_id": (spare.structured_content or {})["hunk_id"]})
    await call(
        "prepare_file_insert_after", {"path": "app.py", "anchor": "def step_1", "content": "# a\n"}
    )
    await call(
        "prepare_file_insert_before", {"path": "app.py", "anchor": "def step_2", "content": "# b\n"}
    )
    await call(
        "prepare_file_block_replace",
        {"path": "app.py", "old_block": "    return state + 2\n", "new_block": "    return 2\n"},
    )
    await call("overwrite_entire_file", {"path": "made/over.md", "content": "over\n"})
    await call("checkpoint_list", {})
    await call("checkpoint_diff", {"id_or_name": "before"})
    await call("checkpoint_restore", {"id_or_name": "before"})
    await call("undo", {"path": "made/new.md"})
    await call("show", {"seq": 1})
    await call("history", {"path": "app.py"})
    await call("blame", {"path": "app.py"})
    await call("stats", {})
    return done


async def _refusals(session: ClientSession, stale_anchor: str) -> dict[str, str]:
    """The texts of a few refusals, the stale anchor of a line someone changed since."""
    texts = {}
    for name, arguments in REFUSED.items():
        reply = await session.call_tool(name, arguments)
        assert reply.is_error, f"{name}: {text(reply)}"
        texts[name] = text(reply)
    operation = {"op": "replace_line", "hash": stale_anchor, "content": "    return 0"}
    reply = await session.call_tool("edit", {"path": "app.py", "operations": [operation]})
    assert reply.is_error
    texts["edit"] = text(reply)
    return texts


def test_every_tool_answers_in_compact_text_beside_its_declared_structured_content(
    daemon: RunningDaemon,
):
    (daemon.root / "app.py").write_text(SOURCE)
    (daemon.root / "notes.md").write_text("# Notes\n- first\n")
    replies: dict[str, types.CallToolResult] = {}
    listed: dict[str, types.Tool] = {}
    refusals: dict[str, str] = {}

    async def scenario() -> None:
        async with connected(daemon.root, "--profile", "all") as session:
            listed.update({t.name: t for t in (await session.list_tools()).tools})
            replies.update(await _every_tool(session, daemon.root))
            first_read = text(replies["read_file"]).split("\n", 1)[1]
            refusals.update(await _refusals(session, anchor_of(first_read, 2)))

    anyio.run(scenario)
    assert set(replies) == set(agent_methods())  # a new tool needs a call above
    for name, reply in replies.items():
        shown = text(reply)
        assert not is_json(shown), f"{name} answers in JSON:\n{shown}"
        assert not WIRE_WORDS.search(shown), f"{name} names wire fields:\n{shown}"
    for name in agent_methods():  # (the SDK's client checked every reply against it)
        schema = listed[name].output_schema
        assert schema is not None and "$ref" not in str(schema), name
    # undoing its own write_file is no news to the agent: no "changed since you read it"
    assert not text(replies["undo"]).startswith("notice:"), text(replies["undo"])
    for name, shown in refusals.items():
        assert not WIRE_WORDS.search(shown), f"{name} names wire fields:\n{shown}"
    assert "the file as it is now: app.py version" in refusals["safe_patch"]


def test_the_profile_help_names_the_tools_each_profile_serves():
    option = next(p for p in tools_command.params if p.name == "profile")
    said = dict(part.split(": ", 1) for part in str(option.help).rstrip(".").split("; "))
    assert list(said) == list(PROFILES)
    for profile, tools in said.items():
        expected = ", ".join(select_tools(profile)) if PROFILES[profile] else "every tool"
        assert tools == expected, profile
