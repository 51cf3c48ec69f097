"""What every `editjournal` command shares: the global options, the client, JSON output.

The global options (`--workspace`, `--agent`, `--timeout`, `--json`) are
declared on the group *and* on every command, so they work before or after the
command name (`editjournal --json status`, `editjournal status --workspace X`).
Their callbacks write into one `Settings` object (the click context's `obj`):
the group's values first (command line, else environment), then whatever the
command itself was given. This module holds no command; the command modules
import it, never `app` (which imports them).
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import click
import msgspec
from click.core import ParameterSource

from editjournal.client.cli.hints import cli_text
from editjournal.client.cli.standpoint import Standpoint, paths_in
from editjournal.client.library.blocking import Client
from editjournal.client.library.connection import (
    WORKSPACE_ENV,
    WorkspaceChoice,
    choose_workspace,
    require_workspace,
)
from editjournal.client.views.render import emit
from editjournal.schemas.errors import CATALOGUE, ErrorCode
from editjournal.schemas.wire import agent_problem

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_ALREADY_SERVED, EXIT_INTERRUPTED = 0, 1, 2, 3, 130
DEFAULT_TIMEOUT = 30.0

F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")
_JSON = msgspec.json.Encoder()


@dataclass
class Settings:
    """The global options as finally given; `path` is the file a command is about."""

    workspace: str | None = None
    workspace_given_by: str = "given by --workspace"  # or by EDITJOURNAL_WORKSPACE
    agent: str | None = None
    timeout: float = DEFAULT_TIMEOUT
    json: bool = False
    path: str | None = None

    @property
    def choice(self) -> WorkspaceChoice:
        """The workspace named, else found from the current directory, and why."""
        return choose_workspace(self.workspace, self.workspace_given_by)

    @property
    def root(self) -> Path:
        """The workspace, resolved; `WorkspaceNotFound` when it does not exist."""
        return require_workspace(self.choice.root)


class BadInput(click.ClickException):
    """Input the command cannot use (operations that are not JSON, say): exit 2."""

    exit_code = EXIT_USAGE

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.ctx = click.get_current_context(silent=True)  # the command, for its --help


def settings() -> Settings:
    return click.get_current_context().ensure_object(Settings)


def standpoint() -> Standpoint:
    """Where the person stands in the workspace: what their relative paths start from,
    and what every path the CLI prints is relative to (`client.standpoint`)."""
    return Standpoint.at(settings().root, Path(os.path.realpath(os.getcwd())))


def in_workspace(path: str) -> str:
    """A path as the user typed it, as the daemon takes it (relative to the root).

    One rule, as git reads paths: a relative path is relative to where the user stands
    (`cd ws/src && editjournal read app.py` reads ws/src/app.py), whether the workspace
    was found from there or named; standing outside the workspace, relative to its
    root. A path that leaves the workspace goes on absolute: the daemon refuses it, and
    says why."""
    return standpoint().to_wire(path)


def shown_path(path: str) -> str:
    """A workspace path (the wire's) as the user would type it from where they stand."""
    return standpoint().shown(path)


def in_workspace_all(paths: Sequence[str]) -> list[str]:
    return [in_workspace(p) for p in paths]


def check_workspace() -> Path:
    """The workspace, or `WorkspaceNotFound` (exit 2) before anything else happens."""
    return settings().root


def _check_agent(agent: str, ctx: click.Context, param: click.Parameter) -> None:
    """The daemon's rule for a name, checked before any call: a usage error (exit 2)
    naming where the name came from, not a `bad_request` after connecting."""
    problem = agent_problem(agent)
    if problem is not None:
        source = ctx.get_parameter_source(param.name) if param.name else None
        given_by = "EDITJOURNAL_AGENT" if source is ParameterSource.ENVIRONMENT else "--agent"
        raise click.BadParameter(f"{problem} (given by {given_by})", ctx=ctx, param=param)


def _store(name: str) -> Callable[[click.Context, click.Parameter, Any], Any]:
    """A callback that records an option only when it was given (None / False: not)."""

    def callback(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
        if value is not None and value is not False:
            if name == "agent":
                _check_agent(value, ctx, param)
            setattr(ctx.ensure_object(Settings), name, value)
            if name == "workspace" and param.name is not None:
                from_env = ctx.get_parameter_source(param.name) is ParameterSource.ENVIRONMENT
                given_by = f"given by {WORKSPACE_ENV if from_env else '--workspace'}"
                ctx.ensure_object(Settings).workspace_given_by = given_by
        return value

    return callback


_GLOBALS: tuple[tuple[str, str | None, dict[str, Any]], ...] = (
    (
        "--workspace",
        "EDITJOURNAL_WORKSPACE",
        {
            "metavar": "DIR",
            "help": "Workspace root (env EDITJOURNAL_WORKSPACE; default: found from the"
            " current directory: the nearest with .editjournal/, else the git work tree,"
            " else the directory itself).",
        },
    ),
    (
        "--agent",
        "EDITJOURNAL_AGENT",
        {
            "metavar": "NAME",
            "help": "Who is calling, as the journal records it (env EDITJOURNAL_AGENT;"
            " default: anonymous).",
        },
    ),
    (
        "--timeout",
        None,
        {
            "metavar": "SECONDS",
            "type": click.FloatRange(min=0, min_open=True),
            "help": f"How long to wait for the daemon (default {DEFAULT_TIMEOUT:g}).",
        },
    ),
    ("--json", None, {"is_flag": True, "help": "Print JSON on stdout, errors included."}),
)


def global_options(*, group: bool = False) -> Callable[[F], F]:
    """Add the global options; only the group's read the environment (so a command's
    own option beats the group's, which beats the environment)."""

    def decorate(f: F) -> F:
        for flag, envvar, kwargs in reversed(_GLOBALS):
            name = flag.removeprefix("--")
            f = click.option(
                flag,
                name,
                envvar=envvar if group else None,
                expose_value=False,
                callback=_store(name),
                **kwargs,
            )(f)
        return f

    return decorate


def open_client(*, autostart: bool = True, daemon_options: tuple[str, ...] = ()) -> Client:
    """A client of the workspace's daemon; says so on stderr when it had to start one."""
    s = settings()
    choice = s.choice
    client = Client(
        require_workspace(choice.root),
        s.agent,
        autostart=autostart,
        timeout=s.timeout,
        daemon_options=daemon_options,
        keep_identity=True,  # one process per command: the agent's hunks stay its own
    )
    if client.started_daemon is not None:
        click.echo(
            f"editjournal: started daemon pid {client.started_daemon.pid} for {client.root}"
            f" ({choice.why}); `{command_line(client.root, 'stop')}` ends it",
            err=True,
        )
    return client


def print_json(value: Any) -> None:
    """Pretty JSON on stdout (Structs, dicts and lists alike)."""
    click.echo(msgspec.json.format(_JSON.encode(value), indent=2).decode())


def print_result(
    result: T, lines_of: Callable[[T], str | list[str]], warnings: Sequence[str] = ()
) -> None:
    """A command's answer: JSON with --json (the wire's paths; its warnings are in the
    envelope), else its text rendering, the daemon's warnings first on stderr, every
    path in it as typed from where the user stands."""
    if settings().json:
        print_json(result)
        return
    print_warnings(warnings, result)
    emit(lines_of(for_person(result)))


def for_person(result: T) -> T:
    """A reply, a log entry or a list of them as a person reads it: its path fields as
    the user types them from here, its prose (message, summary) in the CLI's words
    (`in_cli_words`: calls as commands, paths as typed here)."""
    return standpoint().localized(result, lambda text, known: in_cli_words(text, known))  # type: ignore[no-any-return]


def print_warnings(warnings: Sequence[str], *about: Any) -> None:
    """The daemon's warnings on stderr, in the CLI's words (`about`: the reply or
    request they came with, whose paths they may name)."""
    if warnings:
        emit([f"warning: {in_cli_words(w, *about)}" for w in warnings], err=True)


def in_cli_words(text: str, *about: Any) -> str:
    """A daemon's message or warning with each call it suggests (`method({...})`) as
    the command that makes it, runnable as printed, and each path it names (a path of
    `about`, any of replies, details, sets of paths, or the command's file) as typed
    from where the user stands."""
    known = {p for value in about for p in _paths_of(value)} | _own_path()

    def command(*words: str) -> str:
        return command_line(settings().root, *words)

    return cli_text(text, command, root_group(), standpoint(), known)


def root_group() -> click.Group:
    """The `editjournal` group the running command belongs to: the commands a call the
    daemon suggests may become (`hints` is given them; it imports no command module)."""
    root = click.get_current_context().find_root().command
    return root if isinstance(root, click.Group) else click.Group(commands=[root])


def _paths_of(value: Any) -> Iterator[str]:
    if isinstance(value, set | frozenset):
        return iter(value)
    return paths_in(value)


def _own_path() -> set[str]:
    path = settings().path
    return {path} if path else set()


def json_line(value: Any) -> str:
    return _JSON.encode(value).decode()


def program() -> str:
    """How to run this command again: `editjournal` when the shell finds this very
    script (say, an activated venv), else its full path (`make run` does not activate)."""
    me = os.path.abspath(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    found = shutil.which("editjournal")
    if not me.endswith("editjournal") or (found and os.path.samefile(found, me)):
        return "editjournal"
    return me


def command_line(root: Path | None, *words: str) -> str:
    """A command as a person can paste it: quoted, naming the workspace unless run
    here the command finds it anyway (`choose_workspace`)."""
    argv = [program(), *words]
    if root is not None and root != choose_workspace().root:
        argv += ["--workspace", str(root)]
    return shlex.join(argv)


def error_object(
    code: str,
    message: str,
    details: dict[str, Any] | None,
    suggested_action: str | None,
    hint: str | None = None,
) -> dict[str, Any]:
    """An error as `--json` prints it: the wire's fields, the hint in the CLI's words, and
    the suggested action the seeds' token where the code has one, else the same words."""
    return {
        "code": code,
        "message": message,
        "details": details or {},
        "suggested_action": suggested_action or hint,
        "hint": hint if hint is not None else suggested_action,
    }


def bad_input_object(error: click.ClickException) -> dict[str, Any]:
    """A usage error or unusable input as `--json` prints it: code invalid_params, or the
    catalogued code a `BadInput` subclass names (`code`, with the catalogue's hint)."""
    ctx = getattr(error, "ctx", None)
    where = ctx.command_path if ctx is not None else program()
    code: ErrorCode | None = getattr(error, "code", None)
    if code is not None:
        return error_object(code.value, error.format_message(), {}, CATALOGUE[code].hint)
    return error_object(
        ErrorCode.INVALID_PARAMS.value,
        error.format_message(),
        {},
        f"`{where} --help` shows what it takes",
    )
