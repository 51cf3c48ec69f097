"""`python -E -P -m editjournal.daemon --workspace DIR`: run one workspace's daemon.

Clients start it with those isolation flags and "/" as working directory (see
`editjournal.client.library.connection`); once running, the daemon also moves to "/"
itself, so nothing it does later resolves a relative path inside the workspace.
It refuses, before creating anything there, a workspace that does not exist and
one that is `/` or the home directory itself unless `--allow-broad` is given (a
daemon there would watch and journal everything under it).

In the foreground by default. With `--detach` the process forks: the child
becomes the daemon (in its own session, so the starting client's Ctrl-C does
not reach it, and re-parented so no client is left with a zombie), and the
parent exits only once the child is serving — with the child's verdict as its
exit code. Exit codes: 0 serving (or, in the foreground, a clean stop), 3
another daemon already serves the workspace (its pid is printed), 1 any other
failure to start, 130 (in the foreground) a clean stop asked for by SIGINT.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import sys
from collections.abc import Callable
from typing import Any

from editjournal.daemon.files.latewrites import refuse_leases
from editjournal.daemon.files.workspace import Workspace
from editjournal.daemon.runtime.faults import Faults
from editjournal.daemon.runtime.gcsettings import settle_after_start_up
from editjournal.daemon.runtime.logs import LogSettings, configure_logging
from editjournal.daemon.runtime.runfiles import AlreadyServed, NotPrivate, ensure_state_dir
from editjournal.daemon.runtime.server import Server
from editjournal.daemon.settings.limits import Limits
from editjournal.daemon.store.dbfaults import startup_refusal
from editjournal.daemon.store.journal import JournalError
from editjournal.daemon.watch.intake import WatchSettings
from editjournal.schemas.daemonoptions import (
    DAEMON_OPTIONS,
    DaemonOption,
    too_broad,
    too_broad_message,
)
from editjournal.schemas.endpoint import JOURNAL_FILE
from editjournal.schemas.errors import CATALOGUE, ErrorCode
from editjournal.schemas.units import UnitError, parse_size

EXIT_FAILED, EXIT_ALREADY_SERVED, EXIT_INTERRUPTED = 1, 3, 130


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m editjournal.daemon", description=__doc__)
    parser.add_argument("--workspace", default=os.environ.get("EDITJOURNAL_WORKSPACE", "."))
    for option in DAEMON_OPTIONS:  # the table `editjournal serve` / `start` are built from
        parser.add_argument(option.flag, **_argparse_terms(option))
    # tests only: a request of this method ends the loop as a crash would
    parser.add_argument("--crash-on-method", metavar="METHOD", help=argparse.SUPPRESS)
    # tests only: a request of this method fails (an exception) once its writes are prepared
    parser.add_argument("--fail-after-prepare", metavar="METHOD", help=argparse.SUPPRESS)
    # tests only: SIGKILL itself between a write's commit and its rename (crash recovery)
    parser.add_argument("--kill-after-commit", action="store_true", help=argparse.SUPPRESS)
    # tests only: a power cut before any landed write is flushed, and the boot it sees
    parser.add_argument("--no-flush", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--boot-id", help=argparse.SUPPRESS)
    # tests only: wait between a write's commit and its landing while this file exists
    parser.add_argument("--hold-after-commit", metavar="FILE", help=argparse.SUPPRESS)
    # tests only: every read lease "unavailable", so late writers are found through /proc
    parser.add_argument("--no-leases", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--log-stderr", action="store_true", help="also log to the terminal")
    parser.add_argument("--detach", action="store_true", help="fork; exit once serving")
    return parser.parse_args(argv)


def _argparse_terms(option: DaemonOption) -> dict[str, Any]:
    """One row of the options table in argparse's terms."""
    terms: dict[str, Any] = {"help": option.full_help, "metavar": option.metavar}
    if option.kind == "flag":
        return {"action": "store_true", "help": option.full_help}
    if option.kind == "pattern":
        return {**terms, "action": "append", "default": []}
    if option.kind == "choice":
        return {"choices": option.choices, "default": option.default, "help": option.full_help}
    types = {"size": _size, "count": _positive, "seconds": _seconds}
    return {**terms, "type": types[option.kind], "default": option.default}


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not value > 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive number of seconds")
    return value


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive whole number")
    return int(text)


def _size(text: str) -> int:
    try:
        return parse_size(text)
    except UnitError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def home_dir() -> str | None:
    """The user's home directory, resolved (None when it cannot be told)."""
    home = os.path.expanduser("~")
    return os.path.realpath(home) if home != "~" else None


def watch_settings(args: argparse.Namespace) -> WatchSettings:
    return WatchSettings(ignore=args.ignore, poll_s=args.poll_interval, retry_s=args.watch_retry)


def log_settings(args: argparse.Namespace) -> LogSettings:
    return LogSettings(
        level=args.log_level, max_bytes=args.log_max_bytes, to_terminal=args.log_stderr
    )


def refusal(root: str, allow_broad: bool) -> str | None:
    """Why `root` (resolved) is not to be served at all, as printed, or None."""
    if not os.path.isdir(root):
        what = "is not a directory" if os.path.exists(root) else "does not exist"
        return f"workspace_not_found: workspace {root} {what}"
    broad = too_broad(root, home_dir())
    if broad and not allow_broad:
        fix = CATALOGUE[ErrorCode.WORKSPACE_TOO_BROAD].hint
        return f"workspace_too_broad: {too_broad_message(root, broad)}\n  to fix: {fix}"
    return None


def run(args: argparse.Namespace, report: Callable[[int], None]) -> int:
    """Start serving; `report(code)` is called once: 0 when serving, else the failure."""
    root = os.path.realpath(args.workspace)
    refused = refusal(root, args.allow_broad)
    if refused is not None:  # before anything is created or watched there
        print(f"editjournal: {refused}", file=sys.stderr)
        report(EXIT_FAILED)
        return EXIT_FAILED
    os.chdir("/")  # never work inside the workspace (see the module docstring)
    if args.no_leases:
        refuse_leases()
    workspace = Workspace(root, max_file_size=args.max_file_size)
    try:
        state_dir = ensure_state_dir(workspace.state_dir)
    except NotPrivate as e:
        print(f"editjournal: {e}\n  to fix: {e.hint}", file=sys.stderr)
        report(EXIT_FAILED)
        return EXIT_FAILED
    configure_logging(state_dir, log_settings(args))
    try:
        server = Server(
            workspace,
            watch=None if args.no_watch else watch_settings(args),
            limits=Limits.for_file_size(args.max_file_size, file_lines=args.max_file_lines),
            faults=Faults(
                args.crash_on_method,
                args.fail_after_prepare,
                args.kill_after_commit,
                args.no_flush,
                args.boot_id,
                args.hold_after_commit,
            ),
        )
    except (AlreadyServed, JournalError, NotPrivate) as e:
        print(f"editjournal: {e}", file=sys.stderr)
        code = EXIT_ALREADY_SERVED if isinstance(e, AlreadyServed) else EXIT_FAILED
        report(code)
        return code
    except sqlite3.Error as e:  # a damaged page read past the open: one line, no traceback
        print(f"editjournal: {startup_refusal(e, state_dir / JOURNAL_FILE)}", file=sys.stderr)
        report(EXIT_FAILED)
        return EXIT_FAILED

    def ready() -> None:
        settle_after_start_up()  # start-up's objects are never scanned again
        report(0)

    server.serve_forever(on_ready=ready)
    # Stopped by Ctrl-C (`editjournal serve`): cleanly, but say "interrupted" as a shell
    # expects of a program SIGINT ended, so a script running it stops too.
    return EXIT_INTERRUPTED if server.stop_reason == "SIGINT" else 0


def detach(args: argparse.Namespace) -> int:
    """Fork; the parent relays the child's start-up verdict through a pipe."""
    read_end, write_end = os.pipe()
    if os.fork() > 0:
        os.close(write_end)
        verdict = os.read(read_end, 1)
        return verdict[0] if verdict else EXIT_FAILED
    os.close(read_end)
    os.setsid()

    def report(code: int) -> None:
        os.write(write_end, bytes([code]))
        os.close(write_end)

    return run(args, report)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.detach:
        return detach(args)
    return run(args, lambda code: None)


if __name__ == "__main__":
    sys.exit(main())
