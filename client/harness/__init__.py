"""The harness integrations: editjournal inside another agent's own tools.

`hook` is `editjournal hook HARNESS`, the command a harness (Claude Code, Codex)
runs around each of its file tools: lean, it imports neither click nor the typed
client, and a failure never blocks a tool. `hook_settings` installs and checks
those hooks in a harness's settings files. The SDK adapters put the same inside an
application: `claude_sdk_hooks` (Claude Agent SDK hook callbacks, the hook's
decisions) and `agents_editor` (an apply_patch editor for the OpenAI Agents SDK,
through the library's `AsyncClient`). Their documented import paths,
`editjournal.client.claude_sdk_hooks` and `editjournal.client.agents_editor`,
re-export them. It imports the library and `views` (docs/architecture.md).
"""
