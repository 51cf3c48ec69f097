"""What a person at a terminal should do about an error: real commands and flags.

The daemon words its suggestions for agents, in the tools' terms, and spells
every call it suggests as `method({...})` with the real arguments
(`schemas.suggestions`). The CLI says the same in its own words (`cli_words`):
each such call becomes the command that makes it (`command_for`: the method's
command — generated from the tool's schema, or hand-written — with each param
as its argument or option), in backticks and runnable as printed; each
`pass param: value` names the option; each `details.x` what is printed. The
commands are looked up in the `editjournal` group the caller gives (`HintContext.
program`): this module imports no command module, which import it. A few
codes get the CLI's own suggestion (`HINTS`), where a person's next step is not
an agent's: a flag of the command just run, the daemon's lifecycle. Pure:
builds strings.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from editjournal.client.cli.standpoint import Standpoint
from editjournal.client.library.errors import RequestError
from editjournal.client.views.render import cli_message
from editjournal.schemas.endpoint import LOG_FILE, STATE_DIR_NAME
from editjournal.schemas.errors import ErrorCode, hint_for
from editjournal.schemas.suggestions import FoundCall, calls_in
from editjournal.schemas.tools import TOOL_PARAMS
from editjournal.schemas.units import limit_that_fits


@dataclass(frozen=True)
class HintContext:
    """What a suggestion may name: how to run a command in this workspace, the file (the
    wire's path), where the user stands (every path printed as typed from there) and
    the paths the error or reply names (what its prose may mention)."""

    command: Callable[..., str]  # command(*words) -> a pasteable command line
    root: Path | None
    path: str | None
    program: click.Group  # the `editjournal` group: the commands a call may become
    where: Standpoint | None = None
    known: frozenset[str] = frozenset()

    def shown(self, path: str) -> str:
        """A workspace path as the user types it from where they stand."""
        return self.where.shown(path) if self.where else path

    def prose(self, text: str, where: str) -> str:
        """The daemon's prose (no call in it) in the CLI's words, its paths as shown."""
        if self.where is None or not self.where.base:
            return cli_message(text, where)
        named = self.where.in_text(text, self.known | {self.path or ""})
        return cli_message(named.replace(_WIRE_RELATIVE, _TYPED_RELATIVE), where)


# What the daemon tells an agent about its paths, and what is true of a person's here.
_WIRE_RELATIVE, _TYPED_RELATIVE = "(workspace-relative)", "(relative to the current directory)"


Hint = Callable[[RequestError, HintContext], "str | None"]


def suggestion(error: RequestError, ctx: HintContext) -> str | None:
    """The CLI's suggestion for `error`, else the daemon's hint in the CLI's words."""
    hint = HINTS.get(error.code)
    made = hint(error, ctx) if hint else None
    if made is not None:
        return made
    return cli_words(error.hint, ctx) if error.hint else None


# --- the daemon's words, the CLI's way ---------------------------------------------------


def cli_words(text: str, ctx: HintContext, where: str = "above") -> str:
    """`text` with every call it suggests as its command (in backticks), its params as
    flags and its `details.x` as what is printed `where` (a suggestion ends an error:
    what it refers to is above it)."""
    parts, at = [], 0
    for found in calls_in(text, TOOL_PARAMS):
        parts += [ctx.prose(text[at : found.start], where), f"`{_command_line(found, ctx)}`"]
        at = found.end
    return "".join([*parts, ctx.prose(text[at:], where)])


def cli_text(
    text: str,
    command: Callable[..., str],
    program: click.Group,
    where: Standpoint | None = None,
    known: Iterable[str] = (),
) -> str:
    """A daemon's message or warning in the CLI's words, for a command to print
    (`command(*words)`: a pasteable command line in its workspace; `program`: the
    `editjournal` group; `known`: the paths it may name, printed as typed from `where`)."""
    ctx = HintContext(command, None, None, program, where=where, known=frozenset(known))
    return cli_words(text, ctx, "below")


def _command_line(found: FoundCall, ctx: HintContext) -> str:
    """The command that makes the call, its paths as typed from where the user stands;
    `editjournal call` (params on stdin, the wire's paths) when no command takes all
    its params."""
    words = command_for(found.method, _typed(found.params, ctx), ctx.program)
    if words is not None:
        return ctx.command(*words)
    params = shlex.quote(json.dumps(found.params, ensure_ascii=False))
    return f"echo {params} | {ctx.command('call', found.method)}"


def _typed(params: dict[str, Any], ctx: HintContext) -> dict[str, Any]:
    """A call's params as a command takes them: `path` and `paths` as typed here."""
    typed = dict(params)
    if isinstance(typed.get("path"), str):
        typed["path"] = ctx.shown(typed["path"])
    if isinstance(typed.get("paths"), list):
        typed["paths"] = [ctx.shown(p) if isinstance(p, str) else p for p in typed["paths"]]
    return typed


# A hand-written command's words, where they are not the generated `method-name`.
_COMMAND_OF: dict[str, tuple[str, ...]] = {
    "read_file": ("read",),
    "safe_patch": ("patch",),
    "checkpoint_create": ("checkpoint", "create"),
    "checkpoint_list": ("checkpoint", "list"),
    "checkpoint_diff": ("checkpoint", "diff"),
    "checkpoint_restore": ("checkpoint", "restore"),
}
# (method, param) -> the click parameter a hand-written command takes it as, where the
# names differ (`undo --of AGENT`: its `agent` would clash with the global --agent).
_PARAM_OF: dict[tuple[str, str], str] = {
    ("read_file", "since_version"): "since",
    ("read_file", "range"): "range_",
    ("safe_patch", "base_content_sha256"): "base",
    ("undo", "agent"): "of",
    ("agent_status", "agent"): "of",
    ("stats", "agent"): "of",
    ("log", "agent"): "by",
}


def command_of(method: str, program: click.Group) -> tuple[tuple[str, ...], click.Command] | None:
    """The words naming `method`'s command in `program`, and the command; None when it
    has none."""
    words = _COMMAND_OF.get(method, (method.replace("_", "-"),))  # a generated command's
    command = program.commands.get(words[0])
    for word in words[1:]:
        group = command if isinstance(command, click.Group) else None
        command = group.commands.get(word) if group else None
    return (words, command) if command is not None else None


def command_for(method: str, params: dict[str, Any], program: click.Group) -> list[str] | None:
    """The command line (without the program) that calls `method` with `params`; None
    when no command of `program` takes every param as given."""
    found = command_of(method, program)
    if found is None:
        return None
    words, command = found
    arguments: dict[str, list[str]] = {}
    options: list[str] = []
    for field, value in params.items():
        param = _param(command, _PARAM_OF.get((method, field), field))
        if param is None:
            return None
        if isinstance(param, click.Argument):
            arguments[param.name or field] = _words(value) if param.nargs == -1 else [_word(value)]
            continue
        given = _option_words(param, value)
        if given is None:
            return None
        options += given
    positional = []
    for param in command.params:
        if isinstance(param, click.Argument):
            if param.required and param.name not in arguments:
                return None
            positional += arguments.get(param.name or "", [])
    return [*words, *positional, *options]


def _param(command: click.Command, name: str) -> click.Parameter | None:
    """The command's parameter `name`, never a global option (exposes no value)."""
    return next((p for p in command.params if p.name == name and p.expose_value), None)


def _option_words(param: click.Parameter, value: Any) -> list[str] | None:
    assert isinstance(param, click.Option)
    flag = next((o for o in param.opts if o.startswith("--")), param.opts[0])
    if param.is_flag:
        return [flag] if value is True else ([] if value is False else None)
    if param.multiple:
        return [word for item in _words(value) for word in (flag, item)]
    return [flag, _word(value)]


def _words(value: Any) -> list[str]:
    return [_word(v) for v in value] if isinstance(value, list) else [_word(value)]


def _word(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value) if isinstance(value, int | float) else json.dumps(value)


# --- the CLI's own suggestions --------------------------------------------------------


def _path(error: RequestError, ctx: HintContext) -> str | None:
    """The file the error is about (the command's, else the daemon's), as the user types
    it from where they stand."""
    path = ctx.path or error.details.get("path")
    return ctx.shown(path) if isinstance(path, str) and path else None


def _cmd(ctx: HintContext, *words: str) -> str:
    return f"`{ctx.command(*words)}`"


def _anchor_stale(error: RequestError, ctx: HintContext) -> str | None:
    """The daemon's words; when they hand over a delta, how to see it again; when they
    cannot name the file, the read that gives fresh anchors."""
    delta, path = error.details.get("delta"), _path(error, ctx)
    if path is None:
        return None
    if delta and error.details.get("reason") != "unknown_anchor":
        said = cli_words(error.hint or "", ctx)
        since = _cmd(ctx, "read", path, "--since", str(delta["from_version"]))
        return f"{said} ({since} shows it again)"
    if "path" not in error.details:
        return f"read the file again for fresh anchors: {_cmd(ctx, 'read', path, '--hashes')}"
    return None


def _restart(option: str, value: str) -> Hint:
    def hint(error: RequestError, ctx: HintContext) -> str:
        restart = f"{ctx.command('stop')} && {ctx.command('start', option, value)}"
        return f"restart the daemon with a higher limit: `{restart}`"

    return hint


def _file_too_large(error: RequestError, ctx: HintContext) -> str | None:
    size = error.details.get("size")
    if not isinstance(size, int):
        return None
    return _restart("--max-file-size", limit_that_fits(size))(error, ctx)


def _file_too_many_lines(error: RequestError, ctx: HintContext) -> str | None:
    lines = error.details.get("lines")
    if not isinstance(lines, int):
        return None
    limit = -(-lines * 2 // 100_000) * 100_000  # as the daemon's suggestion: twice the file
    return _restart("--max-file-lines", str(limit))(error, ctx)


def _state_mismatch(error: RequestError, ctx: HintContext) -> str | None:
    path = _path(error, ctx)
    if path is None:
        return None
    read = _cmd(ctx, "read", path, "--json")
    if error.details.get("conflicts"):
        return (
            "the changes since your base are shown above: redo the diff against the file as"
            f" it is now (its sha256 is in {read}); --rebase applies it over them when none"
            " of the lines it relies on changed"
        )
    return f"redo the diff against the file as it is now; {read} shows its content and sha256"


def _no_match(error: RequestError, ctx: HintContext) -> str | None:
    path, field = _path(error, ctx), error.details.get("field")
    if path is None:
        return None
    shown = _cmd(ctx, "read", path, "--hashes")
    if isinstance(field, str):  # a prepare_file_* anchor or block
        return f"check --{field.replace('_', '-')} against the file ({shown}), or --match"
    # the similar lines are named only when something above shows them: apply_patch's
    # in its message, edit_file's under it (render._similar)
    if "hunk" in error.details:  # apply_patch: a hunk's context or - lines
        hint = " (the most similar lines above are a hint)" if error.details.get("nearest") else ""
        return f"copy the hunk's context and - lines exactly from the file{hint}; {shown} shows it"
    hint = " (the closest lines above are a hint)" if error.details.get("similar_lines") else ""
    return f"copy --old-string exactly from the file{hint}; {shown} shows it"


def _multiple_matches(error: RequestError, ctx: HintContext) -> str:
    field = error.details.get("field")
    if isinstance(field, str):  # a prepare_file_* anchor or block
        option = "--" + field.replace("_", "-")
        return f"pass --occurrence (1-based) to choose one, or make {option} more specific"
    return (
        "include more surrounding lines in --old-string, or pass --expected-replacements"
        f" {error.details.get('count', 2)} to change every one"
    )


def _invalid_diff(error: RequestError, ctx: HintContext) -> str | None:
    path = _path(error, ctx)
    if path is None:
        return None
    return (
        "make the diff from the file as it is now (context and removed lines must match it);"
        f" {_cmd(ctx, 'read', path)} shows it"
    )


def _write_displaced(error: RequestError, ctx: HintContext) -> str | None:
    path, seq = _path(error, ctx), error.details.get("seq")
    if path is None or not isinstance(seq, int):
        return None
    since = _cmd(ctx, "read", path, "--since", str(seq))
    return f"{since} shows the outside change; redo the change over it"


def _hard_linked(error: RequestError, ctx: HintContext) -> str | None:
    """The daemon's way out (a copy of its own, put in its place), its shell commands
    naming the file as typed here: `x.new` is no path the daemon's words name."""
    path = _path(error, ctx)
    if path is None:
        return None
    file, new = shlex.quote(path), shlex.quote(path + ".new")
    return (
        f"write a copy without links, outside editjournal (cp {file} {new} && mv {new}"
        f" {file}), or leave it alone"
    )


def _unknown_seq(error: RequestError, ctx: HintContext) -> str:
    """The code's own words from the details (a command may have put its own in)."""
    return cli_words(hint_for(ErrorCode.UNKNOWN_SEQ, error.details), ctx)


def _timeout(error: RequestError, ctx: HintContext) -> str:
    log = ctx.root / STATE_DIR_NAME / LOG_FILE if ctx.root else LOG_FILE
    return f"check {_cmd(ctx, 'status')} and the daemon's log, {log}"


# The daemon's words when the line number given with an anchor named no single twin.
_NUMBER_DID_NOT_PICK = "does not single one out"


def _identical_lines(error: RequestError, ctx: HintContext, otherwise: str) -> str:
    """An anchor several lines share: the line number read with it picks one (`7#2d0680`).
    When the number was given and picked none (lines moved since that read), a fresh
    read gives numbers that do; `otherwise` picks without one."""
    path = _path(error, ctx)
    if _NUMBER_DID_NOT_PICK in error.message:
        read = f"read the file again ({_cmd(ctx, 'read', path, '--hashes')})" if path else ""
        again = f"{read} and copy the anchor with its new line number, or " if read else ""
        return f"{again}{otherwise}, to pick one of the candidates above"
    return (
        "give the anchor with the line number you read it at (LINE#ANCHOR, as read showed it),"
        f" or {otherwise}, to pick one of the candidates above"
    )


HINTS: dict[str, Hint] = {
    "anchor_stale": _anchor_stale,
    "anchor_ambiguous": lambda e, c: _identical_lines(
        e, c, 'add "occurrence" (1-indexed, from the top) and "line" to the operation'
    ),
    "anchor_context_ambiguous": lambda e, c: _identical_lines(
        e,
        c,
        "anchor a range on a distinctive line nearby (widen it); a single-line operation"
        ' can add "occurrence" and "line"',
    ),
    "anchor_low_entropy": lambda e, c: (
        "anchor on one of the neighbour anchors above, or wrap the line in a replace_range"
    ),
    "invalid_range_order": lambda e, c: "for one line, use replace_line or delete_line",
    "overlapping_operations": lambda e, c: "merge the overlapping operations into one",
    "invalid_params": lambda e, c: (
        f"fix the field named in the message; {_cmd(c, 'edit', '--help')} shows the format"
        if e.details.get("method") == "edit"
        else None
    ),
    "unknown_method": lambda e, c: f"{_cmd(c, 'call', '--help')} lists the methods",
    "file_too_large": _file_too_large,
    "file_too_many_lines": _file_too_many_lines,
    "daemon_unavailable": lambda e, c: (
        f"stop it, then start one of this version: {_cmd(c, 'stop')}, {_cmd(c, 'start')}"
        if "daemon_protocol" in e.details  # one serves, speaking another protocol
        else f"start one: {_cmd(c, 'start')} (or {_cmd(c, 'serve')} in a terminal of its own)"
    ),
    "daemon_already_running": lambda e, c: f"use it, or stop it first: {_cmd(c, 'stop')}",
    "timeout": _timeout,
    "no_match": _no_match,
    "multiple_matches": _multiple_matches,
    "section_not_found": lambda e, c: (
        "pass one of the headers the message names as --section-header"
    ),
    "section_ambiguous": lambda e, c: "make the headers unique, or use edit-file for this one",
    "state_mismatch": _state_mismatch,
    "invalid_diff": _invalid_diff,
    "write_displaced": _write_displaced,
    "unknown_seq": _unknown_seq,
    "hard_linked": _hard_linked,
    "hunk_kind_mismatch": lambda e, c: "leave --existing-hunk-id out to prepare a new hunk",
    "content_looks_like_diff": lambda e, c: (
        "to store the text as it is, pass --content-format text; to change part of the file,"
        " prepare the change with a prepare-file-* command and apply it with"
        " apply-file-modification"
    ),
    "workspace_too_broad": lambda e, c: (
        "run the command in a project directory, or name one with --workspace; to serve"
        f" this one anyway, start its daemon with {_cmd(c, 'start', '--allow-broad')}"
    ),
    "journal_corrupt": lambda e, c: (
        f"stop the daemon ({_cmd(c, 'stop')}) and restore .editjournal/journal.db from a backup"
    ),
}
