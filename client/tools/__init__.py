"""The tools as an agent is told of them: descriptions, definitions, limits, toolsets.

`guidance` holds the full usage guidance of every tool and `summaries` the short
descriptions a tool definition carries; `tooldefs` builds the definitions (input
schema from `schemas.tools`, description, annotations) and fits them to each
vendor's limits (`vendor_limits`); `toolsets` says which tools a session gets and
what they cost. The MCP server serves these definitions, the CLI's generated
commands and help are made from them, and `callgen` writes the library's typed
calls (`library/calls.py`) from the same schemas and guidance. Pure data and
functions: no daemon, no click, no MCP SDK; it imports only the library
(docs/architecture.md).
"""
