"""`editjournal checkpoint create|list|diff|restore`: the checkpoint tools as one group.

The generated `checkpoint-create` / `-list` / `-restore` / `-diff` commands stay (they
take the tools' fields as options); this group reads as people type it, with the
checkpoint as an argument: `editjournal checkpoint diff before-refactor`.
"""

from __future__ import annotations

import click

from editjournal.client.cli.common import (
    EXIT_OK,
    check_workspace,
    global_options,
    in_workspace_all,
    open_client,
    print_result,
)
from editjournal.client.cli.generated import result_lines
from editjournal.client.cli.help import verbatim
from editjournal.client.views.render import (
    checkpoint_create_lines,
    checkpoint_diff_lines,
    checkpoint_restore_lines,
)
from editjournal.schemas.tools import CheckpointDiffResult


@click.group(
    epilog=verbatim(
        """Examples:
  editjournal checkpoint create before-refactor     the whole workspace, now
  editjournal checkpoint create api --path src/api  one directory
  editjournal checkpoint list
  editjournal checkpoint diff before-refactor       what changed since, per file
  editjournal checkpoint restore before-refactor --remove-new"""
    )
)
@global_options()
def checkpoint() -> None:
    """Checkpoints: the workspace (every file not ignored) to come back to."""


def _warnings(client: object) -> list[str]:
    response = getattr(client, "last_response", None)
    return response.warnings if response is not None else []


@checkpoint.command()
@click.argument("name", required=False)
@click.option("--path", "paths", multiple=True, help="Only this file or directory (repeatable).")
@global_options()
def create(name: str | None, paths: tuple[str, ...]) -> int:
    """Record every file of the workspace that is not ignored (or only --path ones)."""
    check_workspace()
    with open_client() as client:
        result = client.checkpoint_create(name, paths=in_workspace_all(paths) or None)
        warnings = _warnings(client)
    print_result(result, checkpoint_create_lines, warnings)
    return EXIT_OK


@checkpoint.command(name="list")
@global_options()
def list_checkpoints() -> int:
    """Every checkpoint, oldest first: id, name, who, when, files and bytes."""
    check_workspace()
    with open_client() as client:
        result = client.checkpoint_list()
    print_result(result, result_lines, [])
    return EXIT_OK


@checkpoint.command()
@click.argument("id_or_name")
@click.option("--path", "paths", multiple=True, help="Only this file or directory (repeatable).")
@click.option("--stat", is_flag=True, help="Only which files changed, no diffs.")
@global_options()
def diff(id_or_name: str, paths: tuple[str, ...], stat: bool) -> int:
    """What changed since checkpoint ID_OR_NAME, per file, without restoring anything."""
    check_workspace()
    with open_client() as client:
        about = in_workspace_all(paths) or None
        result = client.checkpoint_diff(id_or_name, paths=about, patch=not stat)
    print_result(result, _diff_lines, [])
    return EXIT_OK


def _diff_lines(result: CheckpointDiffResult) -> list[str]:
    """The tool's view, its closing hint in this command's words (`--path`, not `paths`)."""
    lines = checkpoint_diff_lines(result)
    if result.truncated:
        lines[-1] = "(more diffs than one reply carries: name files with --path)"
    return lines


@checkpoint.command()
@click.argument("id_or_name")
@click.option("--path", "paths", multiple=True, help="Only this file or directory (repeatable).")
@click.option("--remove-new", is_flag=True, help="Remove files created since the checkpoint.")
@global_options()
def restore(id_or_name: str, paths: tuple[str, ...], remove_new: bool) -> int:
    """Write checkpoint ID_OR_NAME back: every covered file changed since (all or nothing)."""
    check_workspace()
    with open_client() as client:
        result = client.checkpoint_restore(
            id_or_name, paths=in_workspace_all(paths) or None, remove_new=remove_new
        )
        warnings = _warnings(client)
    print_result(result, checkpoint_restore_lines, warnings)
    return EXIT_OK


COMMANDS: tuple[click.Command, ...] = (checkpoint,)
