"""`editjournal undo PATH`: hand-written, because the tool's `agent` field (whose write to
revert) would clash with the global `--agent` (who is calling); here it is `--of AGENT`.
The checkpoint commands need no such care and are generated (`generated`).
"""

from __future__ import annotations

import click

from editjournal.client.cli.common import (
    EXIT_OK,
    check_workspace,
    global_options,
    in_workspace,
    open_client,
    print_result,
    settings,
)
from editjournal.client.cli.generated import result_lines
from editjournal.client.cli.help import verbatim


@click.command(
    epilog=verbatim(
        """Examples:
  editjournal undo src/app.py                 your latest write to it
  editjournal undo src/app.py --of bob        bob's latest write to it
  editjournal undo src/app.py --seq 42        the write at seq 42 (or a restore's seq)
  editjournal undo src/app.py                 again: undoes the undo"""
    )
)
@click.argument("path")
@click.option("--of", "of", metavar="AGENT", help="Whose latest write (default: the caller).")
@click.option("--seq", type=click.IntRange(min=1), help="The write at this seq instead.")
@global_options()
def undo(path: str, of: str | None, seq: int | None) -> int:
    """Revert a write to PATH when the lines it changed still read as it left them. Tool: undo."""
    settings().path = path = in_workspace(path)
    check_workspace()
    with open_client() as client:
        result = client.undo(path, agent=of, seq=seq)
        warnings = client.last_response.warnings if client.last_response else []
    print_result(result, result_lines, warnings)
    return EXIT_OK


COMMANDS: tuple[click.Command, ...] = (undo,)
