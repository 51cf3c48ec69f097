"""How a reply reads as text: to a person at a terminal, and to a model.

`render` and `audit_render` word results and errors for the command line (styled
with click, the styles dropped off a terminal); `mcp_text` is the compact text a
model reads back from a tool call (over MCP, or the Agents SDK editor), built on
`render`'s views with the styles removed. Pure: text in, text out, no daemon, no
I/O but printing. Shared by the CLI, the MCP server and the harness integrations;
it imports only the library (docs/architecture.md).
"""
