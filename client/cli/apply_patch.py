"""`editjournal apply-patch [FILE|-]`: OpenAI's patch envelope from a file or stdin.

Hand-written for two reasons: the patch is read from a file or stdin (as `git
apply` and Codex's own `apply_patch` take it), and its relative paths start from
where the user stands, as a shell's would: run from a subdirectory, the command
sends that directory as the tool's `workdir`.
"""

from __future__ import annotations

import click

from editjournal.client.cli.common import (
    EXIT_OK,
    BadInput,
    check_workspace,
    global_options,
    in_workspace,
    open_client,
    print_result,
)
from editjournal.client.cli.help import verbatim
from editjournal.client.cli.tools import read_source
from editjournal.client.views.render import apply_patch_lines


@click.command(
    "apply-patch",
    epilog=verbatim(
        """Examples:
  editjournal apply-patch fix.patch
  codex-style-tool | editjournal apply-patch
  editjournal apply-patch - <<'EOF'
  *** Begin Patch
  *** Update File: src/app.py
  @@ def greet():
  -    print("Hi")
  +    print("Hello, world!")
  *** End Patch
  EOF"""
    ),
)
@click.argument(
    "patch_file", default="-", type=click.Path(dir_okay=False, allow_dash=True), metavar="FILE"
)
@click.option(
    "--skip-safety-check",
    is_flag=True,
    help="Write even when a result looks like a mistake (an unbalanced bracket, say).",
)
@global_options()
def apply_patch(patch_file: str, skip_safety_check: bool) -> int:
    """Apply a patch in OpenAI's apply_patch format (*** Begin Patch ... *** End
    Patch): add, update, delete and move files, all or nothing. Tool: apply_patch.

    FILE is the patch, or - for stdin (the default). Its paths are relative to the
    current directory; hunks are found by their context, never by line numbers."""
    check_workspace()
    where = "on stdin" if patch_file == "-" else f"in {patch_file}"
    patch = read_source(patch_file, "a patch")
    if not patch.strip():
        raise BadInput(f"no patch {where}")
    here = in_workspace(".")
    workdir = None if here in (".", "") or here.startswith("/") else here
    with open_client() as client:
        result = client.apply_patch(patch, workdir=workdir, skip_safety_check=skip_safety_check)
        warnings = client.last_response.warnings if client.last_response else []
    print_result(result, apply_patch_lines, warnings)
    return EXIT_OK


COMMANDS: tuple[click.Command, ...] = (apply_patch,)
