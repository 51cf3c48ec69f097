"""`editjournal hook HARNESS`, as the CLI lists it.

The console script runs the hook before the CLI is even imported (client/entry.py):
this command is what `editjournal --help` shows, and what runs when the CLI is
entered another way (`python -m editjournal.client.cli hook claude-code`).
"""

from __future__ import annotations

import os

import click

from editjournal.client.cli.common import global_options, settings
from editjournal.client.cli.help import verbatim
from editjournal.client.harness.adapters import HARNESSES
from editjournal.client.harness.hook import main as run_hook


@click.command(
    "hook",
    epilog=verbatim(
        """Examples (a harness runs it; by hand, to see what a payload gets):
  echo '{"session_id": "s1", "cwd": "'$PWD'", "hook_event_name": "PostToolUse",
         "tool_name": "Read", "tool_input": {"file_path": "'$PWD'/app.py"}}' \\
    | editjournal hook claude-code
  editjournal hooks install claude-code       # what puts it in the settings"""
    ),
)
@click.argument("harness", type=click.Choice(HARNESSES))
@global_options()
def hook(harness: str) -> int:
    """Judge one of HARNESS's own tool calls (its hook payload on stdin).

    Installed by `editjournal hooks install HARNESS`: after a Read it journals the
    read; before an Edit, MultiEdit or Write it denies the call when the change
    would land on lines someone changed since this session read them; after one it
    journals the change as the session's. Anything unexpected allows the call."""
    workspace = settings().workspace
    if workspace is not None:  # the hook finds its workspace as the harness says, else so
        os.environ["EDITJOURNAL_WORKSPACE"] = str(workspace)
    return run_hook([harness])


COMMANDS: tuple[click.Command, ...] = (hook,)
