"""The `editjournal` command: a thin layer over `Client`, built on click.

click (a well-kept library, already installed through sqlite-utils) gives the
per-command help, option parsing with clear usage errors, and shell
completion. The commands live in the room's other modules (`daemons`: serve,
start, stop, list; `tools`: status, read, edit, log, watch, agent-status, call;
...); this module holds the group, `completion`, and `main`, which turns every
outcome into an exit code and every error into text on stderr or, with `--json`,
one JSON object `{code, message, details, suggested_action, hint}` on stdout.

Exit codes:
  0    ok
  1    the daemon answered with an error (a stale anchor, a missing file, ...)
  2    no daemon serves the workspace, the workspace does not exist, the daemon did
       not answer in time, a usage error, or input that cannot be used
  3    `serve`: another daemon already serves the workspace
  130  interrupted (Ctrl-C)
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Iterator, MutableMapping, Sequence
from pathlib import Path

import click
from click.shell_completion import get_completion_class

from editjournal.client.cli.common import (
    EXIT_ALREADY_SERVED,
    EXIT_ERROR,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    BadInput,
    Settings,
    bad_input_object,
    command_line,
    error_object,
    global_options,
    print_json,
)
from editjournal.client.cli.help import verbatim
from editjournal.client.cli.hints import HintContext, cli_words, suggestion
from editjournal.client.cli.standpoint import Standpoint, paths_in
from editjournal.client.library.connection import workspace_root
from editjournal.client.library.errors import DaemonUnavailable, RequestError, RequestTimeout
from editjournal.client.views.render import emit, error_lines

PROG = "editjournal"
COMPLETE_VAR = "_EDITJOURNAL_COMPLETE"
SHELLS = ("bash", "zsh", "fish")

# The room's modules of hand-written commands, by the commands each holds
# (`COMMANDS`); any other name is a command made from the tools' schemas
# (`generated`), so a new tool needs no line here. tests/unit/test_cli_options.py
# checks this table against the modules.
COMMAND_MODULES: dict[str, tuple[str, ...]] = {
    "daemons": ("list", "serve", "start", "stop"),
    "tools": ("agent-status", "call", "edit", "log", "patch", "read", "status", "watch"),
    "mcp": ("mcp", "tools"),
    "audit": ("blame", "export", "history", "replay", "report", "show", "stats", "verify"),
    "undo": ("undo",),
    "checkpoint": ("checkpoint",),
    "apply_patch": ("apply-patch",),
    "hook": ("hook",),
    "hooks": ("hooks",),
    "gitnotes": ("git-notes",),
    "fleet": ("fleet", "ship"),
}
GENERATED = "generated"


class Commands(MutableMapping[str, click.Command]):
    """The group's commands, each module imported when one of its commands is first
    looked up: a command pays for its own module only (every module at once was
    close to half of a command's start), and `--help` or completion, which list
    every command, load them all."""

    def __init__(self) -> None:
        self._loaded: dict[str, click.Command] = {}
        self._modules = {name: m for m, names in COMMAND_MODULES.items() for name in names}
        self._generated: list[str] | None = None

    def _load(self, module: str) -> None:
        found = importlib.import_module(f"editjournal.client.cli.{module}").COMMANDS
        for command in found:
            assert command.name is not None
            self._loaded.setdefault(command.name, command)
        if module == GENERATED:
            self._generated = [c.name for c in found if c.name is not None]

    def __getitem__(self, name: str) -> click.Command:
        if name not in self._loaded:
            module = self._modules.get(name)
            if module is not None:
                self._load(module)
            elif self._generated is None:
                self._load(GENERATED)
        return self._loaded[name]

    def __setitem__(self, name: str, command: click.Command) -> None:
        self._loaded[name] = command

    def __delitem__(self, name: str) -> None:
        del self._loaded[name]

    def __iter__(self) -> Iterator[str]:
        if self._generated is None:
            self._load(GENERATED)
        yield from dict.fromkeys([*self._loaded, *self._modules])

    def __len__(self) -> int:
        return sum(1 for _ in self)


@click.group(
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog=verbatim(
        """Global options work before or after the command:
  editjournal --workspace ~/src/app status
  editjournal status --workspace ~/src/app --json

Examples:
  editjournal start
  editjournal read README.md --hashes --range 1-5
  echo '{"path": "README.md"}' | editjournal call read_file
  editjournal log --by alice --limit 20

Exit codes: 0 ok, 1 the daemon answered with an error, 2 no daemon / usage
error / bad input / workspace not found, 3 serve: another daemon already
serves, 130 interrupted."""
    ),
)
@click.version_option(package_name=PROG, prog_name=PROG, message="%(prog)s %(version)s")
@global_options(group=True)
def cli() -> None:
    """Hash-anchored, journaled file editing for coding agents: one daemon per workspace."""


@cli.command(
    epilog=verbatim(
        """Examples:
  editjournal completion bash > ~/.local/share/bash-completion/completions/editjournal
  editjournal completion zsh > "${fpath[1]}/_editjournal"
  editjournal completion fish > ~/.config/fish/completions/editjournal.fish"""
    )
)
@click.argument("shell", type=click.Choice(SHELLS))
@global_options()
def completion(shell: str) -> int:
    """Print a shell completion script.

    For SHELL: bash, zsh or fish. Completion itself is click's: the script asks
    `editjournal` (with _EDITJOURNAL_COMPLETE set) for the candidates."""
    root = click.get_current_context().find_root().command
    complete = get_completion_class(shell)
    assert complete is not None  # every name of SHELLS is one click knows
    click.echo(complete(root, {}, PROG, COMPLETE_VAR).source())
    return EXIT_OK


def _lazy(defined_here: MutableMapping[str, click.Command]) -> Commands:
    commands = Commands()
    commands.update(defined_here)  # `completion`
    return commands


cli.commands = _lazy(cli.commands)


# --- main: outcomes -> exit codes -----------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    settings = Settings()
    try:
        return _run(args, settings)
    except KeyboardInterrupt:  # between click's handlers, or while reporting
        return EXIT_INTERRUPTED


def _run(args: list[str], settings: Settings) -> int:
    json_wanted = "--json" in args  # a usage error may come before the option is parsed
    try:
        code = cli.main(
            args, prog_name=PROG, complete_var=COMPLETE_VAR, standalone_mode=False, obj=settings
        )
    except click.Abort as e:
        return EXIT_INTERRUPTED if isinstance(e.__cause__, KeyboardInterrupt) else EXIT_ERROR
    except BadInput as e:
        _report_bad_input(e, settings.json or json_wanted)
        return e.exit_code
    except click.ClickException as e:
        if settings.json or json_wanted:
            print_json(bad_input_object(e))
        else:
            e.show()
        return e.exit_code
    except RequestError as e:
        _report(e, settings)
        return exit_code(e)
    return code if isinstance(code, int) else EXIT_OK


def exit_code(error: RequestError) -> int:
    if error.code == "daemon_already_running":
        return EXIT_ALREADY_SERVED
    if isinstance(error, DaemonUnavailable | RequestTimeout) or error.code == "timeout":
        return EXIT_USAGE
    return EXIT_ERROR


def _report(error: RequestError, settings: Settings) -> None:
    root = workspace_root(error.details.get("workspace") or settings.workspace)
    context = HintContext(
        command=lambda *words: command_line(root, *words),
        root=root,
        path=settings.path,
        program=cli,
        where=Standpoint.at(root, Path(os.path.realpath(os.getcwd()))),
        known=frozenset(paths_in(error.details)),
    )
    hint = suggestion(error, context)  # its commands run as printed from here (--json too)
    if settings.json:
        print_json(error_object(error.code, error.message, error.details, error.token, hint))
    else:
        emit(error_lines(error, hint, lambda text: cli_words(text, context, "below")), err=True)


def _report_bad_input(error: BadInput, as_json: bool) -> None:
    if as_json:
        print_json(bad_input_object(error))
    else:
        emit(f"editjournal: {error.format_message()}", err=True)
