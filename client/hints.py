"""What a person at a terminal should do about an error: real commands and flags.

The wire catalogue (`schemas.errors`) suggests actions to agents in the tools'
own terms (`pass skip_safety_check`, `details.neighbor_anchors`). A person
uses the CLI, so the CLI keeps its own small table, by error code, of
suggestions that name commands which work as printed (`editjournal read F
--since V`, `--skip-safety-check`, `editjournal start --max-file-size 16MiB`).
Codes without an entry fall back to the catalogue's text. Pure: builds strings.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from editjournal.client.errors import RequestError
from editjournal.schemas.endpoint import LOG_FILE, STATE_DIR_NAME
from editjournal.schemas.units import limit_that_fits


@dataclass(frozen=True)
class HintContext:
    """What a suggestion may name: how to run a command in this workspace, the file."""

    command: Callable[..., str]  # command(*words) -> a pasteable command line
    root: Path | None
    path: str | None


Hint = Callable[[RequestError, HintContext], "str | None"]


def suggestion(error: RequestError, ctx: HintContext) -> str | None:
    """The CLI's suggestion for `error`, else the catalogue's (the daemon's)."""
    hint = HINTS.get(error.code)
    return (hint(error, ctx) if hint else None) or error.suggested_action


def _file(ctx: HintContext) -> str:
    return ctx.path or "FILE"


def _anchor_stale(error: RequestError, ctx: HintContext) -> str:
    delta = error.details.get("delta")
    if delta:
        since = ctx.command("read", _file(ctx), "--since", str(delta["from_version"]))
        return (
            "retry with the fresh anchors of the delta above, no re-read needed"
            f" ({since} shows it again)"
        )
    version = error.details.get("your_version")
    if version is not None:
        return f"see what changed: {ctx.command('read', _file(ctx), '--since', str(version))}"
    return f"re-read the file: {ctx.command('read', _file(ctx), '--hashes')}"


def _file_too_large(error: RequestError, ctx: HintContext) -> str | None:
    size = error.details.get("size")
    if not isinstance(size, int):
        return None
    limit = limit_that_fits(size)
    restart = f"{ctx.command('stop')} && {ctx.command('start', '--max-file-size', limit)}"
    return f"restart the daemon with a higher limit: {restart}"


def _file_changing(error: RequestError, ctx: HintContext) -> str:
    return f"retry once the other writer is done; {ctx.command('log', '--path', _file(ctx))}"


def _state_mismatch(error: RequestError, ctx: HintContext) -> str:
    read = ctx.command("read", _file(ctx), "--json")
    if error.details.get("conflicts"):
        return (
            "the changes since your base are shown above: redo the diff against the file as"
            f" it is now (its sha256 is in {read}); --rebase applies it over them when none"
            " of the lines it relies on changed"
        )
    return f"redo the diff against the file as it is now; {read} shows its content and sha256"


def _timeout(error: RequestError, ctx: HintContext) -> str:
    log = ctx.root / STATE_DIR_NAME / LOG_FILE if ctx.root else LOG_FILE
    return f"check {ctx.command('status')} and the daemon's log, {log}"


HINTS: dict[str, Hint] = {
    "anchor_stale": _anchor_stale,
    "anchor_ambiguous": lambda e, c: (
        'add "occurrence" (1-indexed, from the top) and "line" to the operation'
        " to pick one of the candidates above"
    ),
    "anchor_context_ambiguous": lambda e, c: (
        "anchor a range on a distinctive line nearby (widen it); a single-line operation"
        ' can add "occurrence" and "line"'
    ),
    "anchor_low_entropy": lambda e, c: (
        "anchor on one of the neighbour anchors above, or wrap the line in a replace_range"
    ),
    "invalid_range_order": lambda e, c: "for one line, use replace_line or delete_line",
    "overlapping_operations": lambda e, c: "merge the overlapping operations into one",
    "safety_check_failed": lambda e, c: (
        "fix the operations, or rerun with --skip-safety-check if the edit is what you mean"
    ),
    "invalid_params": lambda e, c: (
        f"fix the field named in the message; {c.command('edit', '--help')} shows the format"
        if e.details.get("method") == "edit"
        else None
    ),
    "unknown_method": lambda e, c: f"{c.command('call', '--help')} lists the methods",
    "file_too_large": _file_too_large,
    "file_changing": _file_changing,
    "daemon_unavailable": lambda e, c: (
        f"start one: {c.command('start')} (or {c.command('serve')} in a terminal of its own)"
    ),
    "daemon_already_running": lambda e, c: f"use it, or stop it first: {c.command('stop')}",
    "timeout": _timeout,
    "no_match": lambda e, c: (
        "copy --old-string exactly from the file (the closest lines above are a hint);"
        f" {c.command('read', _file(c), '--hashes')} shows it"
    ),
    "multiple_matches": lambda e, c: (
        "include more surrounding lines in --old-string, or pass --expected-replacements"
        f" {e.details.get('count', 'N')} to change every one"
    ),
    "section_not_found": lambda e, c: (
        "pass one of the headers the message names as --section-header"
    ),
    "section_ambiguous": lambda e, c: "make the headers unique, or use edit-file for this one",
    "state_mismatch": _state_mismatch,
    "invalid_diff": lambda e, c: (
        "make the diff from the file as it is now (context and removed lines must match it);"
        f" {c.command('read', _file(c))} shows it"
    ),
    "journal_corrupt": lambda e, c: (
        f"stop the daemon ({c.command('stop')}) and restore .editjournal/journal.db from a backup"
    ),
}
