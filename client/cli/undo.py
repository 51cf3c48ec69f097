"""`editjournal undo PATH` and `editjournal undo --by AGENT`: hand-written, because the
tool's `agent` field (whose write to revert) would clash with the global `--agent` (who is
calling); here it is `--of AGENT`. The checkpoint commands need no such care and are
generated (`generated`).
"""

from __future__ import annotations

from typing import Any

import click
import msgspec

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
  editjournal undo src/app.py                 again: undoes the undo
  editjournal undo --by bob                   every write bob made, in every file
  editjournal undo --by bob --since before    only bob's writes after checkpoint "before"
  editjournal undo --by bob --since 40        only bob's writes after seq 40
  editjournal undo --by bob --dry-run         the diffs it would write; writes nothing
  editjournal undo --by claude-code:3fa2 --since turn-4
                                              rewind that session to its prompt 4:
                                              turn 4 and later taken back

Rewind a session: undo --by SESSION --since turn-N (the checkpoint its hook took as
prompt N was submitted: claude-code:SESSION/turn-N)."""
    )
)
@click.argument("path", required=False)
@click.option("--of", "of", metavar="AGENT", help="Whose latest write (default: the caller).")
@click.option("--seq", type=click.IntRange(min=1), help="The write at this seq instead.")
@click.option("--by", metavar="AGENT", help="Every write of AGENT, in every file (no PATH).")
@click.option(
    "--since", metavar="REF", help="With --by: only after this checkpoint, seq or turn-N."
)
@click.option("--dry-run", is_flag=True, help="With --by: show the diffs, write nothing.")
@global_options()
def undo(
    path: str | None,
    of: str | None,
    seq: int | None,
    by: str | None,
    since: str | None,
    dry_run: bool,
) -> int:
    """Revert a write to PATH when the lines it changed still read as it left them, or
    (--by) every write of one agent, all files or none. Tool: undo."""
    if path is not None:
        settings().path = path = in_workspace(path)
    check_workspace()
    with open_client() as client:
        result = client.undo(path, agent=of, seq=seq, by=by, since=since, dry_run=dry_run)
        warnings = client.last_response.warnings if client.last_response else []
    print_result(result, by_lines if by is not None else result_lines, warnings)
    return EXIT_OK


def by_lines(result: Any) -> list[str]:
    """An undo by an agent as text: its message (a line per file), then each file's diff."""
    reply = result if isinstance(result, dict) else msgspec.to_builtins(result)
    lines = [str(reply["message"])]
    for file in reply.get("files", []):
        if file.get("diff"):
            lines += [f"--- {file['path']} ({file['action']})", str(file["diff"])]
    return lines


COMMANDS: tuple[click.Command, ...] = (undo,)
