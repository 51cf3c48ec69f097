"""The lifecycle commands: `serve`, `start`, `stop`, `list`.

`serve` and `start` take the daemon's options from the one table the daemon's
own parser is built from (`schemas.daemonoptions.DAEMON_OPTIONS`), turned into
its argv by `daemon_argv`, so an
option a limit error tells the user to raise (`--max-file-size`) works with
both. Every command checks the workspace exists before anything else: a typo
creates nothing and leaves no daemon behind; nor does / or the home directory
itself without `--allow-broad` (`workspace_too_broad`). `serve` replaces this process by
the daemon (`os.execv`), started from "/" like every daemon (see
`editjournal.client.library.connection`).
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import click
import msgspec

from editjournal.client.cli.common import (
    EXIT_ERROR,
    EXIT_OK,
    command_line,
    global_options,
    print_json,
    settings,
)
from editjournal.client.cli.help import verbatim
from editjournal.client.library.blocking import Client
from editjournal.client.library.connection import (
    DAEMON_CWD,
    daemon_command,
    live_endpoint,
    refuse_too_broad,
    require_workspace,
    running_daemons,
    start_daemon,
    state_dir,
)
from editjournal.client.library.errors import RequestError
from editjournal.client.library.trust import Untrusted, is_our_daemon
from editjournal.client.views.render import daemon_rows, emit
from editjournal.schemas.daemonoptions import DAEMON_OPTIONS, DaemonOption
from editjournal.schemas.endpoint import ENDPOINT_FILE, PID_FILE, Endpoint
from editjournal.schemas.errors import ErrorCode
from editjournal.schemas.units import UnitError, parse_size

F = TypeVar("F", bound=Callable[..., Any])
LIST_STATUS_TIMEOUT = 5.0


class SizeType(click.ParamType):
    """Bytes, or a number with a unit: 16MiB, 20MB (schemas.units.parse_size)."""

    name = "size"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int):
            return value
        try:
            return parse_size(str(value))
        except UnitError as e:
            self.fail(str(e), param, ctx)


SECONDS = click.FloatRange(min=0, min_open=True)


def _click_terms(option: DaemonOption) -> dict[str, Any]:
    """One row of the daemon's options table (`schemas.daemonoptions`) in click's terms.
    No default: an option not given is not passed, and the daemon's own applies."""
    if option.kind == "flag":
        return {"is_flag": True}
    if option.kind == "pattern":
        return {"multiple": True, "metavar": option.metavar}
    if option.kind == "choice":
        return {"type": click.Choice(list(option.choices))}
    types = {"size": SizeType(), "count": click.IntRange(min=1), "seconds": SECONDS}
    return {"type": types[option.kind], "metavar": option.metavar}


def daemon_options(f: F) -> F:
    for option in reversed(DAEMON_OPTIONS):
        f = click.option(option.flag, help=option.full_help, **_click_terms(option))(f)
    return f


def daemon_argv(values: Mapping[str, Any]) -> list[str]:
    """The daemon's command-line options for the values of `DAEMON_OPTIONS`."""
    return [arg for option in DAEMON_OPTIONS for arg in option.argv(values.get(option.name))]


def already_serving(root: Path, endpoint: Endpoint) -> RequestError:
    return RequestError.local(
        ErrorCode.DAEMON_ALREADY_RUNNING,
        f"pid {endpoint.pid} already serves {root} on {endpoint.socket}",
        workspace=str(root),
        pid=endpoint.pid,
    )


# --- serve, start --------------------------------------------------------------------------


@click.command(
    epilog=verbatim(
        """Examples:
  editjournal serve
  editjournal serve --workspace "a dir with spaces" --max-file-size 16MiB"""
    )
)
@daemon_options
@global_options()
def serve(**options: Any) -> int:
    """Run the daemon in this terminal.

    Event lines go to stderr; Ctrl-C stops it (exit 130). Exits 3 when another
    daemon already serves the workspace. Refuses / and the home directory itself
    unless --allow-broad is given."""
    choice = settings().choice
    root = require_workspace(choice.root)
    running = live_endpoint(root)
    if running is not None:
        raise already_serving(root, running)
    argv = daemon_argv(options)
    refuse_too_broad(root, argv)
    emit(_serve_banner(root, choice.why), err=True)
    os.chdir(DAEMON_CWD)  # never run the daemon from inside the workspace
    command = daemon_command(root, "--log-stderr", *argv)
    os.execv(command[0], command)


def _serve_banner(root: Path, why: str) -> list[str]:
    """What to type in another terminal, with this workspace filled in, as printed: the
    README's Quick start list, command for command (tests/e2e/test_make_run.py holds
    the two together), so what `make run` prints is what the README promised."""
    readme = next((n for n in ("README.md", "README") if (root / n).is_file()), None)
    reads = []
    if readme:
        params = shlex.quote(json.dumps({"path": readme, "hashes": True}))
        reads = [
            command_line(root, "read", readme, "--hashes", "--range", "1-5"),
            f"echo {params} | {command_line(root, 'call', 'read_file')}",
        ]
    commands = [command_line(root, "status"), *reads, command_line(root, "log")]
    return [
        f"editjournal: serving {root} ({why}) in the foreground (Ctrl-C stops it)",
        "  talk to it from another terminal:",
        *(f"    {command}" for command in commands),
        f"    {command_line(root, 'stop')}    # or Ctrl-C here",
    ]


@click.command(
    epilog=verbatim(
        """Examples:
  editjournal start
  editjournal start --workspace ~/src/app --max-file-size 16MiB --ignore '*.log'"""
    )
)
@daemon_options
@global_options()
def start(**options: Any) -> int:
    """Start a background daemon.

    Takes the same daemon options as `serve`. Does nothing when a daemon already
    serves the workspace (which keeps its own options)."""
    s = settings()
    choice = s.choice
    root = require_workspace(choice.root)
    argv = daemon_argv(options)
    running = live_endpoint(root)
    endpoint = running or start_daemon(root, s.timeout, argv)
    if s.json:
        print_json({"started": running is None, **msgspec.to_builtins(endpoint)})
        return EXIT_OK
    if running is None:
        emit(f"started: pid {endpoint.pid} serves {root} ({choice.why}) on {endpoint.socket}")
        return EXIT_OK
    emit(f"already running: pid {running.pid} serves {root} on {running.socket}")
    if argv:
        emit(
            f"editjournal: options not applied ({' '.join(argv)}); to apply them:"
            f" {command_line(root, 'stop')} first",
            err=True,
        )
    return EXIT_OK


# --- stop, list ----------------------------------------------------------------------------


def stop_daemon(endpoint: Endpoint, timeout: float) -> bool:
    """SIGTERM the daemon and wait until it has journaled its stop and left. A pid that
    /proc does not show as this user's daemon of that workspace is never signalled."""
    root = Path(endpoint.workspace)
    if not is_our_daemon(endpoint.pid, endpoint.workspace):
        raise Untrusted(
            state_dir(root) / ENDPOINT_FILE,
            f"names pid {endpoint.pid}, which is not your editjournal daemon of {root}",
        )
    try:
        os.kill(endpoint.pid, signal.SIGTERM)
    except ProcessLookupError:
        return True
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not (state_dir(root) / PID_FILE).exists() and live_endpoint(root) is None:
            return True
        time.sleep(0.05)
    return False


@click.command(
    epilog=verbatim(
        """Examples:
  editjournal stop
  editjournal stop --all"""
    )
)
@click.option("--all", "all_", is_flag=True, help="Stop every daemon this user runs.")
@global_options()
def stop(all_: bool) -> int:
    """Stop the workspace's daemon (--all: every daemon).

    Sends SIGTERM and waits until the daemon has journaled its stop and left;
    --all stops every daemon `editjournal list` shows."""
    s = settings()
    refused: list[Untrusted] = []
    if all_:
        targets = running_daemons(refused)
        for skipped in refused:
            emit(f"skipped: {skipped.message}", err=True)
    else:
        endpoint = live_endpoint(s.root)
        targets = [endpoint] if endpoint else []
    results = [(e, _stopped(e, s.timeout)) for e in targets]
    if s.json:
        print_json([{"pid": e.pid, "workspace": e.workspace, "stopped": ok} for e, ok in results])
    elif not targets:
        emit("not running: no daemon runs" if all_ else f"not running: no daemon serves {s.root}")
    for endpoint, ok in results:
        if not ok and is_our_daemon(endpoint.pid, endpoint.workspace):
            emit(f"pid {endpoint.pid} did not stop within {s.timeout:g} s", err=True)
        elif not s.json:
            emit(f"stopped: pid {endpoint.pid}" + (f" ({endpoint.workspace})" if all_ else ""))
    return EXIT_OK if all(ok for _, ok in results) else EXIT_ERROR


def _stopped(endpoint: Endpoint, timeout: float) -> bool:
    """`stop_daemon`, a refusal to signal a pid that is not ours said on stderr."""
    try:
        return stop_daemon(endpoint, timeout)
    except Untrusted as e:
        emit(f"refused: {e.message}; nothing was signalled", err=True)
        return False


def event_count(endpoint: Endpoint, timeout: float) -> int | None:
    """What the daemon says its event count is; None when it does not answer."""
    try:
        with Client(endpoint.workspace, autostart=False, timeout=timeout) as client:
            return client.status().event_count
    except RequestError:
        return None


@click.command(
    "list",
    epilog=verbatim(
        """Examples:
  editjournal list
  editjournal list --json"""
    ),
)
@global_options()
def list_daemons() -> int:
    """The daemons this user runs: workspace, pid, uptime, events."""
    s = settings()
    timeout = min(s.timeout, LIST_STATUS_TIMEOUT)
    refused: list[Untrusted] = []
    found = [(e, event_count(e, timeout)) for e in running_daemons(refused)]
    for skipped in refused:
        emit(f"skipped: {skipped.message}", err=True)
    now_ms = int(time.time() * 1000)
    if s.json:
        print_json(
            [
                {
                    "workspace": e.workspace,
                    "pid": e.pid,
                    "uptime_s": (now_ms - e.started_at_ms) / 1000 if e.started_at_ms else None,
                    "events": events,
                    "socket": e.socket,
                    "version": e.version,
                }
                for e, events in found
            ]
        )
    elif found:
        emit(daemon_rows(found, now_ms))
    else:
        emit("no daemons running")
    return EXIT_OK


COMMANDS = (serve, start, stop, list_daemons)
