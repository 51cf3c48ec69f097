"""`editjournal mcp` end to end: the MCP SDK's own client, a real stdio subprocess, a real daemon.

Each test drives `editjournal mcp` as a harness would (`stdio_client` +
`ClientSession`, handshake with a `clientInfo` name) against a daemon of a
temp workspace, and checks the replies, the journal and the files on disk.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import jsonschema
import pytest

from editjournal.client import Client
from editjournal.client.library.recovery import READ_ONLY_METHODS
from editjournal.client.tools.guidance import (
    ANCHOR_FRESHNESS_RULE,
    DESCRIPTIONS,
    OPERATION_SELECTION_MATRIX,
    SAFE_PATCH_USAGE_PROTOCOL,
    TOOL_USE_RULES,
)
from editjournal.client.tools.summaries import SUMMARIES
from editjournal.client.tools.tooldefs import agent_methods
from tests.conftest import RunningDaemon
from tests.e2e.cli_support import CLI_MODULE, CLI_PRELOAD
from tests.e2e.test_readme import stop_daemon
from tests.forkrelay import launcher_command

if TYPE_CHECKING:  # the SDK is imported where a test connects, not at collection (1.1 s)
    from mcp import types
    from mcp.client.session import ClientSession

BIN = Path(sys.executable).parent
HARNESS = "test-harness"
MCP_PRELOAD = (*CLI_PRELOAD, "editjournal.client.mcp.server")  # and the SDK it imports
SOURCE = "".join(f"def step_{n}(state):\n    return state + {n}\n\n" for n in range(1, 6))
EMPTY_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

# One call per agent tool, valid by its input schema: the daemon must accept each too.
# A tool added later needs a sample here (test_every_tool_has_a_sample says so).
SAMPLES: dict[str, dict[str, Any]] = {
    "read_file": {"path": "app.py", "hashes": True, "range": "1-3"},
    "read_many_files": {"paths": ["app.py", "missing.py"], "max_lines": 5},
    "edit": {
        "path": "app.py",
        "operations": [{"op": "insert_before", "hash": "000000", "content": "# x"}],
    },
    "safe_patch": {
        "path": "new.py",
        "unified_diff": "--- /dev/null\n+++ b/new.py\n@@ -0,0 +1 @@\n+x = 1\n",
        "base_content_sha256": EMPTY_SHA256,
        "include_content": False,
    },
    "apply_patch": {"patch": "*** Begin Patch\n*** Add File: added.py\n+y = 2\n*** End Patch"},
    "agent_status": {},
    "edit_file": {"path": "app.py", "old_string": "state + 1", "new_string": "state + 10"},
    "append_to_file": {"path": "notes.md", "content": "- entry\n"},
    "prepend_to_file": {"path": "notes.md", "content": "# Notes\n"},
    "update_section": {"path": "notes.md", "section_header": "# Notes", "new_content": "- x"},
    "write_file": {"path": "made/new.md", "content": "made\n"},
    "prepare_file_range_edit": {"path": "app.py", "range": "1-1", "content": "# first\n"},
    "prepare_file_append": {"path": "notes.md", "content": "- more\n", "existing_hunk_id": ""},
    "prepare_file_insert_after": {"path": "app.py", "anchor": "def step_1", "content": "# x\n"},
    "prepare_file_insert_before": {
        "path": "app.py",
        "anchor": "def step_2",
        "content": "# x\n",
        "match": "",
        "occurrence": "",
    },
    "prepare_file_block_replace": {
        "path": "app.py",
        "old_block": "state + 1\n",
        "new_block": "s\n",
    },
    "apply_file_modification": {"hunk_id": "hunknotthere"},
    "overwrite_entire_file": {"path": "made/over.md", "content": "over\n", "content_format": ""},
    "list_hunks": {},
    "discard_hunk": {"hunk_id": "hunknotthere"},
    "checkpoint_create": {"name": "mcp-point", "paths": ["notes.md"]},
    "checkpoint_list": {},
    "checkpoint_diff": {"id_or_name": "mcp-point"},
    "checkpoint_restore": {"id_or_name": "mcp-point", "remove_new": False},
    "undo": {"path": "notes.md"},
    "show": {"seq": 1},
    "history": {"path": "app.py"},
    "blame": {"path": "app.py"},
    "stats": {},
}


@asynccontextmanager
async def connected(
    root: Path, *options: str, name: str = HARNESS, forked: bool = True
) -> AsyncIterator[ClientSession]:
    """A session with `editjournal mcp` over stdio: the installed command when not
    `forked`, else the same program forked from a zygote with the SDK imported
    (tests/forkrelay.py: the SDK's import is ~1.2 s of CPU a process)."""
    from mcp import types
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    args = ["mcp", "--workspace", str(root), *options]
    real = [str(BIN / "editjournal"), *args]
    if forked:
        command, argv, env = launcher_command(MCP_PRELOAD, CLI_MODULE, args, real)
        server = StdioServerParameters(command=command, args=argv, env=env)
    else:
        server = StdioServerParameters(command=real[0], args=args)
    info = types.Implementation(name=name, version="1.0")
    async with (
        stdio_client(server) as (read, write),
        ClientSession(read, write, client_info=info) as session,
    ):
        with anyio.fail_after(30):
            await session.initialize()
        yield session


def run(scenario: Callable[[], Awaitable[None]]) -> None:
    anyio.run(scenario)


def text(result: types.CallToolResult) -> str:
    from mcp import types

    assert result.content and isinstance(result.content[0], types.TextContent)
    return result.content[0].text


def anchor_of(rendered: str, line: int) -> str:
    row = next(r for r in rendered.splitlines() if r.startswith(f"{line}#"))
    return row.split("|", 1)[0].split("#", 1)[1].rstrip("~?")


def test_every_tool_has_a_sample():
    assert set(SAMPLES) == set(agent_methods())


def test_tools_list_every_agent_tool_with_valid_schemas_and_the_guidance(daemon: RunningDaemon):
    (daemon.root / "app.py").write_text(SOURCE)

    async def scenario() -> None:
        async with connected(daemon.root) as session:
            listed = {t.name: t for t in (await session.list_tools()).tools}
            assert list(listed) == agent_methods()
            for name, tool in listed.items():
                jsonschema.Draft202012Validator.check_schema(tool.input_schema)
                assert "$ref" not in str(tool.input_schema)
                assert tool.description == SUMMARIES[name]  # short: every API takes it
                assert tool.annotations is not None
                assert tool.annotations.read_only_hint is (name in READ_ONLY_METHODS)
                jsonschema.validate(SAMPLES[name], tool.input_schema)
                reply = await session.call_tool(name, SAMPLES[name])
                code = (reply.structured_content or {}).get("error", {}).get("code")
                assert code != "invalid_params", f"{name}: {text(reply)}"
            # the long guidance is the server's instructions: the rules first, then each tool's
            guide = session.instructions or ""
            assert guide.startswith(TOOL_USE_RULES)
            assert " ".join(ANCHOR_FRESHNESS_RULE.split()) in " ".join(guide.split())
            assert "| Change a contiguous block of lines | replace_range |" in guide
            assert OPERATION_SELECTION_MATRIX in guide
            assert SAFE_PATCH_USAGE_PROTOCOL in guide
            assert all(f"## {name}\n\n{DESCRIPTIONS[name]}" in guide for name in listed)

            # what the schema refuses, the daemon refuses too, with msgspec's path
            bad = {"path": "app.py", "max_lines": -1}  # (0 is the "not given" sentinel)
            with pytest.raises(jsonschema.ValidationError):
                jsonschema.validate(bad, listed["read_file"].input_schema)
            reply = await session.call_tool("read_file", bad)
            assert reply.is_error
            assert "invalid_params" in text(reply) and "$.params.max_lines" in text(reply)
            # past 64 bits no frame can carry it: a tool error too, never a JSON-RPC one
            huge = await session.call_tool("read_file", {"path": "app.py", "since_version": 2**80})
            assert huge.is_error and "invalid_params" in text(huge), text(huge)

    run(scenario)
    assert (daemon.root / "new.py").read_text() == "x = 1\n"  # the safe_patch sample landed


def test_read_edit_stale_anchor_and_notice_of_another_agents_edit(daemon: RunningDaemon):
    target = daemon.root / "app.py"
    target.write_text(SOURCE)
    (daemon.root / "other.py").write_text("x = 1\n")
    other = daemon.client("agent-b")

    async def scenario() -> None:
        async with connected(daemon.root) as session:
            read = await session.call_tool("read_file", {"path": "app.py", "hashes": True})
            assert not read.is_error
            rows = text(read).split("\n", 1)[1]
            assert rows.splitlines()[0].startswith("1#") and "|def step_1(state):" in rows
            assert read.structured_content and read.structured_content["line_count"] == 15
            # the rows ride in the structured content too (some clients show only that),
            # without a row object per line: anchors + marks + content hold those
            assert read.structured_content["rendered"] == rows
            assert "lines" not in read.structured_content
            assert len(read.structured_content["anchors"]) == 15

            edited = await session.call_tool(
                "edit",
                {
                    "path": "app.py",
                    "operations": [
                        {
                            "op": "replace_line",
                            "hash": anchor_of(rows, 2),
                            "content": "    return 0",
                        }
                    ],
                },
            )
            assert not edited.is_error, text(edited)
            assert text(edited).startswith("1 operation applied: app.py version")
            assert target.read_text().splitlines()[1] == "    return 0"

            # another agent changes line 5; the next call of ours, about another file, says so
            b_anchors = other.read_file("app.py", hashes=True).lines or []
            b_done = other.edit(
                "app.py",
                [{"op": "replace_line", "hash": b_anchors[4].hash, "content": "    return -2"}],
            )
            reply = await session.call_tool("read_file", {"path": "other.py"})
            first = text(reply).splitlines()[0]
            assert edited.structured_content is not None
            assert first == (
                "notice: app.py changed since you read it: line 5 by agent-b,"
                f" seq {b_done.version}. Your anchors for those lines are stale: read_file"
                f" with since_version {edited.structured_content['version']} shows what"
                " changed, with fresh anchors."
            )
            assert reply.structured_content is not None
            assert reply.structured_content["notices"] == [first.removeprefix("notice: ")]
            again = await session.call_tool("read_file", {"path": "other.py"})
            assert "notice:" not in text(again)  # each change is told once
            assert again.structured_content and "notices" not in again.structured_content

            # our anchor of line 5 is stale now: an error the model can act on
            stale = await session.call_tool(
                "edit",
                {
                    "path": "app.py",
                    "operations": [
                        {"op": "replace_line", "hash": anchor_of(rows, 5), "content": "    pass"}
                    ],
                },
            )
            assert stale.is_error
            message = text(stale)
            assert message.startswith("error anchor_stale:")
            assert f"seq {b_done.version}  agent-b" in message  # the conflict: who, which seq
            assert "5#" in message and "|    return -2" in message  # the delta, fresh anchors
            assert "suggested action:" in message
            assert stale.structured_content["error"]["code"] == "anchor_stale"
            assert target.read_text().splitlines()[4] == "    return -2"  # nothing written

            # retry at once with the fresh anchor from the delta
            fresh = re.search(r"5#([0-9a-f]+)[~?]?\|    return -2", message)
            assert fresh is not None
            retried = await session.call_tool(
                "edit",
                {
                    "path": "app.py",
                    "operations": [
                        {"op": "replace_line", "hash": fresh.group(1), "content": "    pass"}
                    ],
                },
            )
            assert not retried.is_error, text(retried)
            assert target.read_text().splitlines()[4] == "    pass"

    run(scenario)


def test_a_profile_serves_its_tools_and_their_guidance_only(daemon: RunningDaemon):
    (daemon.root / "app.py").write_text(SOURCE)

    async def scenario() -> None:
        async with connected(daemon.root, "--profile", "patch") as session:
            listed = [t.name for t in (await session.list_tools()).tools]
            assert listed == ["read_file", "safe_patch", "agent_status"]
            guide = session.instructions or ""
            assert SAFE_PATCH_USAGE_PROTOCOL in guide and DESCRIPTIONS["edit"] not in guide
            refused = await session.call_tool("edit", SAMPLES["edit"])
            assert refused.is_error and "unknown tool 'edit'" in text(refused)
            assert refused.structured_content == {"error": {"code": "unknown_tool"}}
        async with connected(daemon.root, "--tools", "read_file,undo") as session:
            listed = [t.name for t in (await session.list_tools()).tools]
            assert listed == ["read_file", "undo"]
            read = await session.call_tool("read_many_files", {"paths": ["app.py"], "hashes": True})
            assert read.is_error
            read = await session.call_tool("read_file", {"file_path": "app.py", "hashes": True})
            assert not read.is_error, text(read)
            structured = read.structured_content or {}
            assert structured["rendered"].startswith("1#")  # the rows, built by the server
            assert any("file_path" in w for w in structured["warnings"])  # deprecated alias

    run(scenario)


def test_a_read_of_many_files_carries_each_files_rows(daemon: RunningDaemon):
    (daemon.root / "app.py").write_text(SOURCE)

    async def scenario() -> None:
        async with connected(daemon.root, "--profile", "all") as session:
            reply = await session.call_tool(
                "read_many_files", {"paths": ["app.py", "missing.py"], "hashes": True}
            )
            files = (reply.structured_content or {})["files"]
            assert files[0]["result"]["rendered"].splitlines()[0].startswith("1#")
            assert "lines" not in files[0]["result"]
            assert files[1]["ok"] is False and files[1]["error"]["code"] == "file_not_found"

    run(scenario)


def test_an_unknown_profile_or_tool_is_refused_before_serving(daemon: RunningDaemon):
    for option in (["--profile", "tiny"], ["--tools", "read_file,nope"]):
        done = subprocess.run(
            [str(BIN / "editjournal"), "mcp", "--workspace", str(daemon.root), *option],
            capture_output=True,
            text=True,
            timeout=30,
            stdin=subprocess.DEVNULL,
        )
        assert done.returncode == 2, done.stderr
        assert "tiny" in done.stderr or "unknown tool nope" in done.stderr


def test_two_connections_are_two_agents_and_the_daemon_is_started(workspace: Path):
    (workspace / "app.py").write_text(SOURCE)

    async def scenario() -> None:
        async with (
            connected(workspace, forked=False) as first,  # the installed command itself
            connected(workspace) as second,
            connected(workspace, "--agent", "reviewer") as named,
        ):
            for session in (first, second, named):
                reply = await session.call_tool("read_file", {"path": "app.py"})
                assert not reply.is_error, text(reply)
            status = await named.call_tool("agent_status", {})
            assert status.structured_content and status.structured_content["agent"] == "reviewer"

    try:
        run(scenario)
        with Client(workspace, "observer", autostart=False) as observer:
            readers = {e.agent for e in observer.log(kind="file_read").events}
        harness = {a for a in readers if a and a.startswith(f"{HARNESS}-")}
        assert len(harness) == 2 and readers == {*harness, "reviewer"}
    finally:
        stop_daemon(workspace)


def test_mcp_without_a_workspace_is_refused(tmp_path: Path):
    done = subprocess.run(
        [str(BIN / "editjournal"), "mcp", "--workspace", str(tmp_path / "nope")],
        capture_output=True,
        text=True,
        timeout=30,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2
    assert "workspace_not_found" in done.stderr
    assert not (tmp_path / "nope").exists()
