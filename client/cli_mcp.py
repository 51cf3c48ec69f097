"""The commands that reach agents: `mcp` (an MCP server on stdio) and `tools` (definitions).

`mcp` imports the MCP SDK only when it runs, so the core CLI works without the
optional `mcp` extra; without it, `mcp` says how to install it (exit 2).
`tools` needs neither the SDK nor a daemon: it prints the definitions that
`client/tooldefs.py` makes from the schemas and the guidance.
"""

from __future__ import annotations

import click

from editjournal.client.cli_common import (
    EXIT_OK,
    BadInput,
    check_workspace,
    global_options,
    print_json,
    settings,
)
from editjournal.client.cli_help import verbatim
from editjournal.client.tooldefs import FORMATS, export


@click.command(
    epilog=verbatim(
        """Register it with an MCP client (see the README's MCP section), e.g.:
  claude mcp add editjournal -- editjournal mcp --workspace ~/src/app

Examples:
  editjournal mcp
  editjournal mcp --workspace ~/src/app --agent reviewer"""
    )
)
@global_options()
def mcp() -> int:
    """Serve the agent tools over MCP on stdin/stdout.

    The agent is named after the MCP client (its clientInfo name plus a
    per-connection id) unless --agent is given. Starts a daemon on the first
    tool call when none serves the workspace. Needs the `mcp` extra:
    pip install 'editjournal[mcp]'."""
    s = settings()
    root = check_workspace()
    try:
        from editjournal.client import mcp as server
    except ImportError as e:
        raise BadInput(
            f"the MCP SDK is not installed ({e}); install it with: pip install 'editjournal[mcp]'"
        ) from e
    server.serve(root, s.agent, s.timeout)
    return EXIT_OK


@click.command(
    epilog=verbatim(
        """Examples:
  editjournal tools --format openai > editjournal-tools.json
  editjournal tools --format gemini"""
    )
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default="mcp",
    show_default=True,
    help="The harness whose shape to print.",
)
@global_options()
def tools(fmt: str) -> int:
    """Print the agent tool definitions as JSON.

    Names, descriptions (the usage guidance) and input schemas, in the shape
    of MCP tools/list entries, OpenAI or Anthropic tools, or Gemini function
    declarations: for harnesses that call the daemon directly (through
    `editjournal call` or the Python client). Needs no daemon."""
    print_json(export(fmt))
    return EXIT_OK


COMMANDS = (mcp, tools)
