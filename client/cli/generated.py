"""CLI commands made from the tools' schemas: no per-tool glue.

Every agent tool in `schemas.tools.TOOL_PARAMS` that has no hand-written
command (those render their results specially: `read`, `edit`, `patch`,
`agent-status`) becomes `editjournal TOOL-NAME`, built from its msgspec Params
Struct and its `tools.guidance` description — as `editjournal mcp` builds its
tools. A field `path` becomes the PATH argument; every other field an option:
a bool a flag, a number or text a value, a list of text a repeatable option,
anything else JSON. A text value of `-` is read from stdin, so long content
need not be quoted on the command line. The reply is shown by its result type's
view (`client.views.render`, as the MCP server shows it: the message, where the
file stands, the diff), as its message and diff where none says more, or as a
table where it is a list (`list-hunks`); its warnings on stderr; with `--json`,
as JSON.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from typing import Any

import click
import msgspec
from msgspec import inspect as mi

from editjournal.client.cli.common import (
    EXIT_OK,
    BadInput,
    check_workspace,
    global_options,
    in_workspace,
    in_workspace_all,
    open_client,
    print_result,
    settings,
)
from editjournal.client.cli.help import first_sentence, verbatim
from editjournal.client.tools.guidance import DESCRIPTIONS
from editjournal.client.tools.tooldefs import DEPRECATED_ALIASES, agent_methods
from editjournal.client.views.audit_render import hunk_lines
from editjournal.client.views.render import (
    applied_hunk_lines,
    atomic_lines,
    checkpoint_create_lines,
    checkpoint_diff_lines,
    checkpoint_restore_lines,
    overwrite_lines,
)
from editjournal.schemas.tools import (
    TOOL_PARAMS,
    TOOL_RESULTS,
    ApplyResult,
    AtomicResult,
    CheckpointCreateResult,
    CheckpointDiffResult,
    CheckpointRestoreResult,
    ListHunksResult,
    OverwriteResult,
)

HAND_WRITTEN = frozenset(
    {"read_file", "edit", "safe_patch", "agent_status", "show", "history", "blame", "stats"}
    | {"undo"}  # its `agent` field would clash with the global --agent: cli.undo
    | {"apply_patch"}  # the patch from a file or stdin, its paths from where you stand
)
STDIN = "-"
_TEXT_TYPES = (mi.StrType,)
_NUMBER_TYPES = (mi.IntType, mi.FloatType)


def generated_methods() -> list[str]:
    return [m for m in agent_methods() if m not in HAND_WRITTEN]


def command_name(method: str) -> str:
    return method.replace("_", "-")


def _plain(t: mi.Type) -> mi.Type:
    """`X | None` -> X: an option left out is None anyway."""
    if isinstance(t, mi.UnionType):
        rest = [u for u in t.types if not isinstance(u, mi.NoneType)]
        if len(rest) == 1:
            return rest[0]
    return t


def _option(field: mi.Field) -> click.Option:
    kind = _plain(field.type)
    flag = "--" + field.name.replace("_", "-")
    required = field.required
    if isinstance(kind, mi.BoolType):
        return click.Option([flag], is_flag=True, default=None, help="A flag.")
    if isinstance(kind, mi.ListType) and isinstance(kind.item_type, _TEXT_TYPES):
        return click.Option([flag], multiple=True, required=required, help="Repeatable.")
    if isinstance(kind, _NUMBER_TYPES):
        number = click.INT if isinstance(kind, mi.IntType) else click.FLOAT
        return click.Option([flag], type=number, required=required, help="A number.")
    if _is_choice(kind):
        assert isinstance(kind, mi.LiteralType)
        choices = click.Choice([v for v in kind.values if v])  # "" is "not given": omit it
        return click.Option([flag], type=choices, required=required, help="One of these.")
    if isinstance(kind, _TEXT_TYPES):
        return click.Option([flag], required=required, metavar="TEXT", help="Text; - reads stdin.")
    return click.Option([flag], required=required, metavar="JSON", help="A JSON value.")


def _is_choice(kind: mi.Type) -> bool:
    """A text field that takes only some words (`match`: contains, exact, regex)."""
    return isinstance(kind, mi.LiteralType) and all(isinstance(v, str) for v in kind.values)


def _value(field: mi.Field, raw: Any) -> Any:
    """The option's value as the tool takes it; None: not given."""
    if raw is None or raw == ():
        return None
    kind = _plain(field.type)
    if isinstance(kind, mi.ListType) and isinstance(kind.item_type, _TEXT_TYPES):
        return list(raw)
    if isinstance(kind, (mi.BoolType, *_NUMBER_TYPES)) or _is_choice(kind):
        return raw
    if isinstance(kind, _TEXT_TYPES):
        return _stdin_text(field.name) if raw == STDIN else raw
    try:
        return json.loads(raw)
    except json.JSONDecodeError as e:
        raise BadInput(f"--{field.name.replace('_', '-')} is not JSON: {e}") from e


def _stdin_text(name: str) -> str:
    if sys.stdin is None:
        return ""
    if sys.stdin.isatty():
        click.echo(f"editjournal: reading {name} from stdin; end with Ctrl-D", err=True)
    return sys.stdin.read()


def _fields(method: str) -> list[mi.Field]:
    info = mi.type_info(TOOL_PARAMS[method])
    assert isinstance(info, mi.StructType)
    return [f for f in info.fields if f.name not in DEPRECATED_ALIASES]


def _example(method: str, fields: list[mi.Field]) -> str:
    words = [f"editjournal {command_name(method)}"]
    for field in fields:
        if field.name == "path":
            words.insert(1, "notes.md")
        elif field.required:
            words.append(f"--{field.name.replace('_', '-')} ...")
    return verbatim(f"Example:\n  {' '.join(words)}\n\n{DESCRIPTIONS.get(method, '').strip()}")


def make_command(method: str) -> click.Command:
    """`editjournal METHOD-NAME`: the tool's params as arguments and options."""
    fields = _fields(method)
    by_name = {f.name: f for f in fields}
    params: list[click.Parameter] = [
        click.Argument(["path"], required=f.required) if f.name == "path" else _option(f)
        for f in fields
    ]

    def run(**given: Any) -> int:
        if given.get("path") is not None:
            given["path"] = in_workspace(given["path"])
        if given.get("paths"):  # (none given: an empty tuple, left for `_value`)
            given["paths"] = in_workspace_all(given["paths"])
        settings().path = given.get("path")
        check_workspace()
        values = {name: _value(by_name[name], given.get(name)) for name in by_name}
        request = {name: value for name, value in values.items() if value is not None}
        with open_client() as client:
            result = client.request(method, request)
            warnings = client.last_response.warnings if client.last_response else []
        print_result(result, VIEWS.get(method, result_lines), warnings)
        return EXIT_OK

    summary = first_sentence(DESCRIPTIONS.get(method, "") or TOOL_PARAMS[method].__doc__ or "")
    command = click.Command(
        command_name(method),
        callback=run,
        params=params,
        help=f"{summary} Tool: {method}.",
        epilog=_example(method, fields),
    )
    return global_options()(command)  # type: ignore[no-any-return]


def result_lines(result: Any) -> list[str]:
    """A reply as text: its message, where it left the file, and its diff."""
    reply = result if isinstance(result, dict) else msgspec.to_builtins(result)
    lines = [str(reply["message"])] if "message" in reply else []  # put by `print_result`
    if "file_path" in reply and "version" in reply:
        lines.append(f"{reply['file_path']} version {reply['version']}")
    if reply.get("summary"):  # a prepared hunk: the plan at a glance
        lines.append(str(reply["summary"]).rstrip("\n"))
    if reply.get("diff"):
        lines.append(str(reply["diff"]))
    return lines or [json.dumps(reply, indent=2)]


def list_hunks_lines(result: ListHunksResult) -> list[str]:
    return hunk_lines(result.hunks, result.expired, int(time.time() * 1000))


def typed_view(kind: type[Any], view: Callable[[Any], list[str]]) -> Callable[[Any], list[str]]:
    """`view` over the reply as its result type; a reply that does not decode (a daemon
    of another release) reads as `result_lines` reads any reply."""

    def lines(result: Any) -> list[str]:
        try:
            return view(msgspec.convert(result, kind))
        except msgspec.ValidationError:
            return result_lines(result)

    return lines


# The views the MCP server's text is made of too (`client.views.render`), for the result
# types whose view says all `result_lines` says and more: where the file stands (lines
# before -> after), what was carried over or overwritten unseen, a restore's diffs. A
# hunk plan keeps `result_lines`, whose YAML summary its view leaves out (the MCP text
# has it in the structured content), and so does a list of checkpoints.
_BY_RESULT: dict[type[Any], Callable[[Any], list[str]]] = {
    AtomicResult: atomic_lines,
    OverwriteResult: overwrite_lines,
    ApplyResult: applied_hunk_lines,
    CheckpointCreateResult: checkpoint_create_lines,
    CheckpointDiffResult: checkpoint_diff_lines,
    CheckpointRestoreResult: checkpoint_restore_lines,
    ListHunksResult: list_hunks_lines,  # no message to show: a table instead
}
#: How each tool's reply reads, where not as `result_lines`.
VIEWS: dict[str, Callable[[Any], list[str]]] = {
    method: typed_view(kind, _BY_RESULT[kind])
    for method, kind in TOOL_RESULTS.items()
    if kind in _BY_RESULT
}


COMMANDS: tuple[click.Command, ...] = tuple(make_command(m) for m in generated_methods())
