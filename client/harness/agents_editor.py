"""An `ApplyPatchEditor` for the OpenAI Agents SDK that applies through the daemon.

The SDK (`openai-agents`, the `agents` extra) runs the Responses API's hosted
`apply_patch` tool by handing each operation the model asked for to a host
editor's `create_file` / `update_file` / `delete_file`. `DaemonEditor` sends each
to the workspace's daemon as an `apply_patch` call in the Responses shape, with
the agent's name, so every change is journaled, located by its context, carried
over other agents' changes or refused with the delta — and answers as the SDK
expects: `ApplyPatchResult(status="completed" | "failed", output=...)`, the
output being the text the model reads (Codex's summary, or the refusal with what
to do next). A refusal is a "failed" result, not an exception: the model reads it.

The SDK hands the operations of one call to the editor one at a time, so each
operation is all or nothing on its own; a multi-file change made atomic needs one
`apply_patch` call with every operation (`Client.apply_patch(operations=[...])`).

    from agents import Agent, ApplyPatchTool
    from editjournal.client.agents_editor import DaemonEditor

    agent = Agent(name="coder", tools=[ApplyPatchTool(editor=DaemonEditor(".", "coder"))])
"""

from __future__ import annotations

import os

from agents.editor import ApplyPatchOperation, ApplyPatchResult

from editjournal.client.library.asyncclient import AsyncClient
from editjournal.client.library.errors import RequestError
from editjournal.client.views.mcp_text import error_text


class DaemonEditor:
    """The Agents SDK's editor protocol, on the workspace's daemon, as `agent`.

    Its client connects on first use, inside the SDK's event loop (one editor per
    loop); `aclose()` closes it."""

    def __init__(
        self,
        workspace: str | os.PathLike[str] | None = None,
        agent: str | None = None,
        *,
        client: AsyncClient | None = None,
    ) -> None:
        self.client = client if client is not None else AsyncClient(workspace, agent)

    async def create_file(self, operation: ApplyPatchOperation) -> ApplyPatchResult:
        return await self._apply(operation)

    async def update_file(self, operation: ApplyPatchOperation) -> ApplyPatchResult:
        return await self._apply(operation)

    async def delete_file(self, operation: ApplyPatchOperation) -> ApplyPatchResult:
        return await self._apply(operation)

    async def _apply(self, operation: ApplyPatchOperation) -> ApplyPatchResult:
        """One operation, as the Responses API gave it; a refusal is a failed result."""
        sent = {"type": operation.type, "path": operation.path, "diff": operation.diff}
        if operation.move_to:
            sent["move_to"] = operation.move_to
        try:
            result = await self.client.apply_patch(operations=[sent])
        except RequestError as e:
            return ApplyPatchResult(status="failed", output=error_text(e))
        response = self.client.last_response
        warnings = [f"warning: {w}" for w in (response.warnings if response else [])]
        return ApplyPatchResult(status="completed", output="\n".join([result.message, *warnings]))

    async def aclose(self) -> None:
        self.client.close()
