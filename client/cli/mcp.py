"""The commands that reach agents: `mcp` (an MCP server on stdio) and `tools` (definitions).

`mcp` imports the MCP SDK only when it runs, so the core CLI works without the
optional `mcp` extra; without it, `mcp` says how to install it (exit 2). Hosts
start their servers wherever they like (some in `/` or the home directory): a
workspace too broad to serve is refused at once, its code on stderr (exit 2),
before any daemon could start watching everything under it.
`tools` needs neither the SDK nor a daemon: it prints the definitions that
`client/tools/tooldefs.py` makes from the schemas and the short descriptions, and with
`--instructions FILE` writes the long guidance for the system prompt. Both
commands serve a profile or a list of tools (`client/tools/toolsets.py`).
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import shlex
import sysconfig
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import click

from editjournal.client.cli.common import (
    EXIT_OK,
    BadInput,
    global_options,
    print_json,
    settings,
)
from editjournal.client.cli.help import verbatim
from editjournal.client.library.connection import (
    ALLOW_BROAD,
    live_endpoint,
    refuse_too_broad,
    require_workspace,
)
from editjournal.client.tools.guidance import instructions
from editjournal.client.tools.tooldefs import (
    EXPORT_FORMATS,
    STRICT_FORMATS,
    export,
    tool_definitions,
)
from editjournal.client.tools.toolsets import (
    DEFAULT_PROFILE,
    PROFILES,
    TOKENIZER,
    Cost,
    costs,
    select_tools,
)

F = TypeVar("F", bound=Callable[..., object])


def tool_choice(f: F) -> F:
    """--profile and --tools: which tools a command serves or prints."""
    f = click.option(
        "--tools",
        "names",
        metavar="A,B,...",
        help="Only these tools, comma-separated (instead of --profile).",
    )(f)
    return click.option(
        "--profile",
        type=click.Choice(list(PROFILES)),
        default=DEFAULT_PROFILE,
        show_default=True,
        help=profiles_help(),
    )(f)


def profiles_help() -> str:
    """Each profile and its tools, from `PROFILES` itself: a help text written by hand
    named the wrong tools for `minimal` once."""
    said = [
        f"{name}: {', '.join(select_tools(name)) if wanted else 'every tool'}"
        for name, wanted in PROFILES.items()
    ]
    return "; ".join(said) + "."


def chosen_tools(profile: str, names: str | None) -> list[str]:
    try:
        return select_tools(profile, [n.strip() for n in (names or "").split(",") if n.strip()])
    except ValueError as e:
        raise BadInput(str(e)) from e


@click.command(
    epilog=verbatim(
        """Register it with an MCP client (see the README's MCP section), e.g.:
  claude mcp add editjournal -- editjournal mcp --workspace ~/src/app

Examples:
  editjournal mcp
  editjournal mcp --workspace ~/src/app --agent reviewer
  editjournal mcp --profile anchored
  editjournal mcp --tools read_file,edit_file,undo"""
    )
)
@tool_choice
@click.option(
    "--allow-broad",
    is_flag=True,
    help="Serve / or the home directory itself if that is the workspace (not advised).",
)
@global_options()
def mcp(profile: str, names: str | None, allow_broad: bool) -> int:
    """Serve the agent tools over MCP on stdin/stdout.

    The agent is named after the MCP client (its clientInfo name plus a
    per-connection id) unless --agent is given. Starts a daemon on the first
    tool call when none serves the workspace. Without --workspace, the workspace
    is found from the server's working directory; started from / or the home
    directory itself, it refuses to run (workspace_too_broad) unless a daemon
    serves that directory already or --allow-broad is given. Needs the `mcp` extra:
    pip install 'editjournal[mcp]' (from a checkout: .venv/bin/pip install -e '.[mcp]')."""
    s = settings()
    methods = chosen_tools(profile, names)
    choice = s.choice
    root = require_workspace(choice.root)
    options = (ALLOW_BROAD,) if allow_broad else ()
    if live_endpoint(root) is None:  # a host that starts its servers in / or ~: say so now
        refuse_too_broad(root, options)
    click.echo(f"editjournal mcp: workspace {root} ({choice.why})", err=True)
    try:
        from editjournal.client.mcp import server
    except ImportError as e:
        raise BadInput(
            f"the MCP SDK is not installed ({e}); install it with: {sdk_install_command()}"
        ) from e
    server.serve(root, s.agent, s.timeout, methods, options)
    return EXIT_OK


RELEASE_INSTALL = "pip install 'editjournal[mcp]'"


def sdk_install_command() -> str:
    """How to add the `mcp` extra to the editjournal that is running. A release
    installed from an index takes `pip install 'editjournal[mcp]'`; a checkout's
    editable install (`make run`'s `.venv`) would get a second, released editjournal
    that way, in whatever environment `pip` is first on PATH: it needs its own pip,
    on its own source tree (`.venv/bin/pip install -e '.[mcp]'`)."""
    return install_command(_editable_source(), Path(sysconfig.get_path("scripts")), Path.cwd())


def install_command(source: Path | None, scripts: Path, cwd: Path) -> str:
    """The command for an install from `source` (None: not an editable install) whose
    scripts are in `scripts`, as typed in `cwd`: relative to the source tree, with a
    `cd` there first when the user stands elsewhere."""
    if source is None:
        return RELEASE_INSTALL
    pip = scripts / ("pip.exe" if os.name == "nt" else "pip")
    shown = pip.relative_to(source) if pip.is_relative_to(source) else pip
    command = f"{shlex.quote(str(shown))} install -e {shlex.quote('.[mcp]')}"
    if cwd.resolve() != source.resolve():
        command = f"cd {shlex.quote(str(source))} && {command}"
    return f"{command} (editjournal runs from this checkout; {RELEASE_INSTALL} would add a release)"


def _editable_source() -> Path | None:
    """The source tree of an editable install of editjournal, from its PEP 610
    `direct_url.json` (`{"dir_info": {"editable": true}, "url": "file:///..."}`). The
    first record that has one: a checkout's `editjournal.egg-info`, found first when
    Python runs from the checkout, has none."""
    found = importlib.metadata.distributions(name="editjournal")
    recorded = next((t for d in found if (t := d.read_text("direct_url.json"))), None)
    try:
        direct = json.loads(recorded or "null")
    except ValueError:
        return None
    if not isinstance(direct, dict) or not (direct.get("dir_info") or {}).get("editable"):
        return None
    url = urllib.parse.urlparse(str(direct.get("url", "")))
    if url.scheme != "file":
        return None
    return Path(urllib.request.url2pathname(url.path))


@click.command(
    epilog=verbatim(
        """Examples:
  editjournal tools --format openai --instructions system-prompt.md > tools.json
  editjournal tools --format gemini --profile anchored
  editjournal tools --format anthropic --tools read_file,edit_file --stats
  editjournal tools --format openai-responses --strict --profile minimal"""
    )
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(EXPORT_FORMATS),
    default="mcp",
    show_default=True,
    help="The harness whose shape to print (openai: chat completions; openai-responses:"
    " the Responses API's flat tools).",
)
@click.option(
    "--strict",
    is_flag=True,
    help="For OpenAI's strict mode (openai, openai-responses): every property required,"
    " null where optional (null: not given), no defaults, closed objects.",
)
@tool_choice
@click.option(
    "--instructions",
    "instructions_file",
    type=click.Path(dir_okay=False, writable=True, path_type=Path),
    help="Also write the long guidance (tool-use rules, each tool's full description)"
    " to this file, for the system prompt.",
)
@click.option(
    "--stats", is_flag=True, help="Print each profile's size in tokens instead of the tools."
)
@global_options()
def tools(
    fmt: str,
    strict: bool,
    profile: str,
    names: str | None,
    instructions_file: Path | None,
    stats: bool,
) -> int:
    """Print the agent tool definitions as JSON.

    Names, short descriptions (what each tool does and when to use it, within
    every vendor's limits), input schemas and, for MCP, annotations, in the
    shape of MCP tools/list entries, OpenAI (chat completions or Responses) or
    Anthropic tools, or Gemini function declarations: for harnesses that call
    the daemon directly (through `editjournal call` or the Python client).
    --strict: in OpenAI's strict mode. The full usage guidance belongs in the
    system prompt: --instructions FILE writes it. Needs no daemon."""
    if strict and fmt not in STRICT_FORMATS:
        raise BadInput(f"--strict is OpenAI's strict mode: --format {' or '.join(STRICT_FORMATS)}")
    if strict and stats:
        raise BadInput("--stats measures the formats as they are; leave out --strict")
    methods = chosen_tools(profile, names)
    if stats:
        show_costs(fmt, costs(fmt, methods if names else None))
        return EXIT_OK
    if instructions_file is not None:
        instructions_file.write_text(instructions(methods), encoding="utf-8")
    print_json(export(fmt, tool_definitions(methods), strict=strict))
    return EXIT_OK


def show_costs(fmt: str, rows: list[Cost]) -> None:
    if settings().json:
        print_json([{**vars(r), "definitions_tokens": r.definitions_tokens,
                     "instructions_tokens": r.instructions_tokens, "tokenizer": TOKENIZER}
                    for r in rows])  # fmt: skip
        return
    click.echo(f"{fmt} format; tokens estimated as {TOKENIZER}")
    click.echo(f"{'set':<10}{'tools':>6}{'definitions':>13}{'tokens':>8}"
               f"{'instructions':>14}{'tokens':>8}")  # fmt: skip
    for r in rows:
        click.echo(f"{r.name:<10}{r.tools:>6}{r.definitions_chars:>13,}"
                   f"{r.definitions_tokens:>8,}{r.instructions_chars:>14,}"
                   f"{r.instructions_tokens:>8,}")  # fmt: skip


COMMANDS = (mcp, tools)
