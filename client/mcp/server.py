"""`editjournal mcp`: the agent tools over MCP (stdio), on the official MCP Python SDK.

Built on the SDK's low-level `Server` (mcp 2.x), which takes each tool's input
schema as raw JSON Schema: the definitions come from `tooldefs` (schemas +
short descriptions + annotations), so a tool added to `TOOL_PARAMS` appears here
with no code of its own. `--profile` / `--tools` choose which tools are served
(`toolsets`). Each call goes through the ordinary client, `AsyncClient` (which
starts the daemon when none serves), so MCP adds no second path into the daemon.

The long guidance of the served tools is the server's `instructions`, not their
descriptions. The spec limits neither, but clients do: many hand MCP tools to
their model's API as they are, and OpenAI's refuses the whole request when one
description is over 1,024 characters; Claude Code cuts each description at
2,048. So the descriptions are the short ones every API accepts, and the
guidance is one block of system-prompt text, tool-use rules first (Claude Code
keeps the first 2,048 characters of instructions too).

One process serves one MCP connection (stdio), as one agent: `--agent`, or
else the client's `clientInfo` name plus a per-connection id, so two sessions
of the same harness are two agents in the journal. The `Client` is made on the
first tool call, once the handshake has told us that name. Calls are awaited on
the SDK's event loop, one at a time (a call and its notices belong together).
After every call, `agent_status` says which files the agent read have changed
since (see `staleness`).

The SDK is an optional extra (`pip install 'editjournal[mcp]'`); only this
module imports it, and the CLI imports this module only for `editjournal mcp`.
"""

from __future__ import annotations

import re
import secrets
import sys
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path
from typing import Any

import anyio
import msgspec
from mcp import types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from editjournal.client.library.asyncclient import AsyncClient
from editjournal.client.library.errors import RequestError
from editjournal.client.mcp.staleness import EDITS_LOOKED_UP, StalenessNotices
from editjournal.client.tools.guidance import instructions
from editjournal.client.tools.tooldefs import agent_methods, tool_definitions
from editjournal.client.views.mcp_text import error_text, result_text, structured
from editjournal.schemas.tools import LogEntry
from editjournal.schemas.wire import Response

SERVER_NAME = "editjournal"
FALLBACK_CLIENT_NAME = "mcp-client"  # a client that did not say who it is
MAX_NAME_CHARS = 64


def agent_name(client_name: str | None, connection_id: str) -> str:
    """`clientInfo` name, made journal-friendly, plus the connection's id."""
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "-", client_name or "").strip("-.")
    return f"{cleaned[:MAX_NAME_CHARS] or FALLBACK_CLIENT_NAME}-{connection_id}"


@dataclass
class Reply:
    """One tool call's outcome, before it becomes an MCP result."""

    text: str
    structured: dict[str, Any]
    is_error: bool = False


@dataclass
class Session:
    """The one MCP connection this process serves, as one agent of one workspace."""

    workspace: Path
    agent: str | None = None  # fixed by --agent; else set from clientInfo on the first call
    timeout: float = 30.0
    daemon_options: tuple[str, ...] = ()  # for a daemon this session starts (--allow-broad)
    connection_id: str = field(default_factory=lambda: secrets.token_hex(3))
    client: AsyncClient | None = None
    notices: StalenessNotices = field(default_factory=StalenessNotices)
    lock: anyio.Lock = field(default_factory=anyio.Lock)

    async def connect(self, client_name: str | None) -> AsyncClient:
        if self.client is None:
            self.agent = self.agent or agent_name(client_name, self.connection_id)
            client = AsyncClient(
                self.workspace, self.agent, timeout=self.timeout, daemon_options=self.daemon_options
            )
            self.client = await client.connect()
            if self.client.started_daemon is not None:
                print(
                    f"editjournal mcp: started daemon pid {self.client.daemon_pid}"
                    f" for {self.client.root}",
                    file=sys.stderr,
                )
        return self.client

    async def call(self, method: str, arguments: dict[str, Any], client_name: str | None) -> Reply:
        """One tool call, then the staleness notices it should carry."""
        try:
            client = await self.connect(client_name)
            reply = _reply(method, await client.call(method, arguments))
        except RequestError as e:  # no daemon, a timeout: the client's own errors
            return Reply(error_text(e), _error_object(e), is_error=True)
        told = await self._notices(client)
        if told:
            reply.text = "\n".join([*(f"notice: {n}" for n in told), reply.text])
            reply.structured["notices"] = told  # for clients that show only this
        return reply

    async def _notices(self, client: AsyncClient) -> list[str]:
        try:
            status = await client.agent_status()
            histories: dict[tuple[str, int], list[LogEntry]] = {}
            for path, after_seq in self.notices.wanted(status):
                found = await client.log(
                    path=path, kind="edit_applied", after_seq=after_seq, limit=EDITS_LOOKED_UP
                )
                histories[path, after_seq] = found.events
            return self.notices.notices(status, lambda p, s: histories[p, s])
        except RequestError:  # a notice is a courtesy: never fail the call for it
            return []

    def close(self) -> None:
        if self.client is not None:
            self.client.close()


def _reply(method: str, response: Response) -> Reply:
    if response.ok or response.error is None:
        text = result_text(method, response.result, response.warnings)
        return Reply(text, structured(method, response.result, response.warnings))
    error = RequestError.from_wire(response.error, response.seq)
    return Reply(error_text(error), _error_object(error), is_error=True)


def _error_object(error: RequestError) -> dict[str, Any]:
    body = {
        "code": error.code,
        "message": error.message,
        "details": error.details,
        "suggested_action": error.suggested_action,
        "hint": error.hint,
    }
    return {"error": msgspec.to_builtins(body)}


# --- the SDK's side ----------------------------------------------------------------------


def build_server(session: Session, methods: list[str] | None = None) -> Server[Any]:
    """The server of `methods` (default: every agent tool): their short descriptions in
    tools/list, their long guidance as the server's instructions."""
    methods = agent_methods() if methods is None else methods
    tools = [
        types.Tool(
            name=t.name,
            description=t.description,
            input_schema=t.input_schema,
            output_schema=t.output_schema,
            annotations=types.ToolAnnotations.model_validate(t.annotations),
        )
        for t in tool_definitions(methods)
    ]
    known = set(methods)

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        if params.name not in known:
            text = f"unknown tool {params.name!r}; the tools are {', '.join(sorted(known))}"
            return _result(Reply(text, {"error": {"code": "unknown_tool"}}, is_error=True))
        info = ctx.session.client_params
        client_name = info.client_info.name if info is not None else None
        arguments = dict(params.arguments or {})
        async with session.lock:  # a call and its notices, then the next call
            reply = await session.call(params.name, arguments, client_name)
        return _result(reply)

    return Server(
        SERVER_NAME,
        version=version("editjournal"),
        instructions=instructions(methods),
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def _result(reply: Reply) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=reply.text)],
        structured_content=reply.structured,
        is_error=reply.is_error,
    )


async def _serve(session: Session, methods: list[str] | None) -> None:
    server = build_server(session, methods)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def serve(
    workspace: Path,
    agent: str | None = None,
    timeout: float = 30.0,
    methods: list[str] | None = None,
    daemon_options: tuple[str, ...] = (),
) -> None:
    """Serve `methods` (default: every agent tool) over MCP on stdin/stdout until the
    client closes stdin; `daemon_options` for a daemon it starts."""
    session = Session(workspace, agent, timeout, daemon_options)
    try:
        anyio.run(_serve, session, methods)
    finally:
        session.close()
