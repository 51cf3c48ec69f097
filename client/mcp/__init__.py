"""The MCP server: the agent tools over MCP (stdio), for any MCP-capable agent.

`server` is `editjournal mcp`, on the official MCP SDK (the optional `mcp` extra:
only `server` imports it, and the CLI imports `server` only when the command
runs); `staleness` tells an agent, on its next tool result, which files it read
have changed since. The tool definitions it serves are the `tools` room's, the
text a model reads back the `views` room's, and every call goes through the
library's `AsyncClient`: MCP adds no second path into the daemon
(docs/architecture.md).
"""
