"""The library a harness imports: `Client`, `AsyncClient`, their errors, trust, subscriptions.

A harness author's room: `editjournal.client` exports its names (`Client`,
`AsyncClient`, `StaleWrite`, ...), each imported from here on first use. It
connects to the workspace's daemon (starting one when none serves), exchanges
requests over ZeroMQ, recovers from a daemon that died, and turns error replies
into exceptions. It must stay cheap to import: nothing here imports the CLI
framework (click), the MCP SDK, or `editjournal.daemon` (STYLE.md principle 1),
nor any other room of the client (docs/architecture.md; tests/unit/test_architecture.py).
"""
