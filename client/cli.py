"""The `editjournal` command: a thin layer over `Client`, one call per command.

Exit codes: 0 ok; 1 the daemon answered with an error; 2 no daemon, a usage
error or unreadable input; 3 (`serve`) another daemon already serves the
workspace.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import msgspec

from editjournal.client import Client, default_agent
from editjournal.client.connection import (
    DAEMON_CWD,
    daemon_command,
    live_endpoint,
    start_daemon,
    state_dir,
    workspace_root,
)
from editjournal.client.errors import DaemonUnavailable, RequestError
from editjournal.schemas.endpoint import PID_FILE

EXIT_OK, EXIT_ERROR, EXIT_UNAVAILABLE = 0, 1, 2
_JSON = msgspec.json.Encoder()


class UsageError(Exception):
    """Bad command-line input: exit 2 with the message."""


def _print_json(value: Any) -> None:
    sys.stdout.write(msgspec.json.format(_JSON.encode(value), indent=2).decode() + "\n")


def _client(args: argparse.Namespace, autostart: bool = True) -> Client:
    return Client(args.workspace, args.agent, autostart=autostart, timeout=args.timeout)


# --- daemon lifecycle -----------------------------------------------------------------


def _this_command() -> str:
    """How to run this command again: `editjournal` when the shell finds this very
    script (say, an activated venv), else its full path (`make run` does not activate)."""
    me = os.path.abspath(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    found = shutil.which("editjournal")
    if not me.endswith("editjournal") or (found and os.path.samefile(found, me)):
        return "editjournal"
    return me


def cmd_serve(args: argparse.Namespace) -> int:
    """Run the daemon in this terminal (replaces this process)."""
    root = workspace_root(args.workspace)
    print(f"editjournal: serving {root} in the foreground (Ctrl-C stops it)", file=sys.stderr)
    me = _this_command()
    print(
        "  talk to it from another terminal:\n"
        f"    {me} --workspace {root} status\n"
        f'    echo \'{{"path": "README.md", "hashes": true}}\' |'
        f" {me} --workspace {root} call read_file",
        file=sys.stderr,
    )
    daemon_args = ["--log-stderr"]
    if args.max_file_size:
        daemon_args += ["--max-file-size", str(args.max_file_size)]
    if args.no_watch:
        daemon_args.append("--no-watch")
    for pattern in args.ignore:
        daemon_args += ["--ignore", pattern]
    for option in ("poll_interval", "watch_retry"):
        if getattr(args, option) is not None:
            daemon_args += ["--" + option.replace("_", "-"), str(getattr(args, option))]
    os.chdir(DAEMON_CWD)  # never run the daemon from inside the workspace
    command = daemon_command(root, *daemon_args)
    os.execv(command[0], command)
    return EXIT_ERROR  # not reached


def cmd_start(args: argparse.Namespace) -> int:
    root = workspace_root(args.workspace)
    running = live_endpoint(root)
    if running:
        print(f"already running: pid {running.pid} serves {root} on {running.socket}")
        return EXIT_OK
    endpoint = start_daemon(root)
    print(f"started: pid {endpoint.pid} serves {root} on {endpoint.socket}")
    return EXIT_OK


def cmd_stop(args: argparse.Namespace) -> int:
    """SIGTERM the daemon and wait until it has journaled its stop and left."""
    root = workspace_root(args.workspace)
    endpoint = live_endpoint(root)
    if endpoint is None:
        print(f"not running: no daemon serves {root}")
        return EXIT_OK
    os.kill(endpoint.pid, signal.SIGTERM)
    deadline = time.monotonic() + args.timeout
    while time.monotonic() < deadline:
        if not (state_dir(root) / PID_FILE).exists() and live_endpoint(root) is None:
            print(f"stopped: pid {endpoint.pid}")
            return EXIT_OK
        time.sleep(0.05)
    print(f"pid {endpoint.pid} did not stop within {args.timeout:g} s", file=sys.stderr)
    return EXIT_ERROR


def cmd_status(args: argparse.Namespace) -> int:
    with _client(args, autostart=False) as client:
        result = client.status()
    if args.json:
        _print_json(result)
    else:
        for field in result.__struct_fields__:
            print(f"{field:>14}: {getattr(result, field)}")
    return EXIT_OK


# --- tools --------------------------------------------------------------------------------


def cmd_read(args: argparse.Namespace) -> int:
    with _client(args) as client:
        result = client.read_file(
            args.path, hashes=args.hashes, range=args.range, since_version=args.since
        )
    if args.json:
        _print_json(result)
        return EXIT_OK
    if result.since_version is not None:
        body = "(unchanged)" if result.unchanged else (result.delta or result.content)
    else:
        body = (result.rendered or "") if args.hashes else result.content.rstrip("\r\n")
    print(body)
    shown = f"lines {result.start_line}-{result.end_line} of {result.line_count}"
    more = ", truncated" if result.truncated else ""
    print(
        f"-- {result.file_path} version {result.version} sha256 {result.sha256[:12]}"
        f" ({shown}{more}, eol {result.eol})",
        file=sys.stderr,
    )
    return EXIT_OK


def cmd_edit(args: argparse.Namespace) -> int:
    """Operations as JSON (a list, or {"operations": [...]}) from --ops-file or stdin."""
    operations = _read_operations(args.ops_file)
    with _client(args) as client:
        result = client.edit(args.path, operations, skip_safety_check=args.skip_safety_check)
        warnings = client.last_response.warnings if client.last_response else []
    if args.json:
        _print_json(result)
        return EXIT_OK
    print(f"{result.message}: {result.file_path} version {result.version}")
    print(f"lines {result.lines_before} -> {result.lines_after} ({result.net_change:+d})")
    for correction in result.auto_corrections:
        print(f"auto-corrected: {correction.detail}")
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    print(result.diff)
    return EXIT_OK


def _read_operations(source: str) -> list[Any]:
    try:
        text = sys.stdin.read() if source == "-" else Path(source).read_text(encoding="utf-8")
        loaded = json.loads(text)
    except OSError as e:
        raise UsageError(f"cannot read {source}: {e.strerror}") from e
    except json.JSONDecodeError as e:
        raise UsageError(f"operations in {source} are not JSON: {e}") from e
    operations = loaded.get("operations") if isinstance(loaded, dict) else loaded
    if not isinstance(operations, list):
        raise UsageError('operations must be a JSON list, or {"operations": [...]}')
    return operations


def cmd_log(args: argparse.Namespace) -> int:
    with _client(args) as client:
        result = client.log(path=args.path, agent=args.agent_filter, limit=args.limit)
    if args.json:
        _print_json(result)
        return EXIT_OK
    for entry in result.events:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(entry.ts / 1000))
        print(f"{entry.seq:>6}  {when}  {entry.agent or '-':<16} {entry.kind:<16} {entry.summary}")
    return EXIT_OK


def cmd_watch(args: argparse.Namespace) -> int:
    """Print committed events as they happen, until Ctrl-C (or --count / --timeout)."""
    with _client(args) as client, client.subscribe(args.paths or None) as subscription:
        for n, event in enumerate(subscription.events(args.idle_timeout), start=1):
            if args.json:
                sys.stdout.write(_JSON.encode(event).decode() + "\n")
            else:
                print(f"{event.seq:>6}  {event.agent or '-':<16} {event.kind:<16} {event.summary}")
            sys.stdout.flush()
            if args.count and n >= args.count:
                break
    return EXIT_OK


def cmd_agent_status(args: argparse.Namespace) -> int:
    with _client(args) as client:
        result = client.agent_status(args.of)
    if args.json:
        _print_json(result)
        return EXIT_OK
    print(f"{result.agent}: {len(result.files)} files seen, {result.stale_files} stale")
    for seen in result.files:
        state = "current" if seen.current else f"STALE ({len(seen.changed_since)} changes since)"
        print(f"  {seen.path}  saw version {seen.version_seen}  {state}")
        for change in seen.changed_since:
            print(f"      seq {change['seq']} {change['kind']} by {change['agent'] or 'outside'}")
    return EXIT_OK


def cmd_call(args: argparse.Namespace) -> int:
    """Params as JSON on stdin, the response envelope as JSON on stdout."""
    raw = "" if sys.stdin is None or sys.stdin.isatty() else sys.stdin.read()
    try:
        params = json.loads(raw) if raw.strip() else {}
    except json.JSONDecodeError as e:
        raise UsageError(f"params on stdin are not JSON: {e}") from e
    if not isinstance(params, dict):
        raise UsageError("params on stdin must be a JSON object")
    with _client(args) as client:
        response = client.call(args.method, params)
    _print_json(response)
    return EXIT_OK if response.ok else EXIT_ERROR


# --- parsing ---------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="editjournal",
        description="Hash-anchored, journaled file editing for coding agents.",
    )
    parser.add_argument(
        "--workspace",
        default=os.environ.get("EDITJOURNAL_WORKSPACE", "."),
        help="workspace root (env EDITJOURNAL_WORKSPACE; default: .)",
    )
    parser.add_argument(
        "--agent", default=default_agent(), help="agent name (env EDITJOURNAL_AGENT)"
    )
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds to wait for replies")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _add_lifecycle(sub)
    _add_tools(sub)
    return parser


def _add_lifecycle(sub: Any) -> None:
    serve = sub.add_parser("serve", help="run the daemon in the foreground")
    serve.add_argument("--max-file-size", type=int, default=None, help="bytes (default 8 MiB)")
    serve.add_argument("--no-watch", action="store_true", help="do not watch for outside changes")
    serve.add_argument(
        "--ignore", action="append", default=[], metavar="PATTERN", help="extra ignore pattern"
    )
    serve.add_argument(
        "--poll-interval", type=float, metavar="SECONDS", help="rescan interval while unwatched"
    )
    serve.add_argument(
        "--watch-retry", type=float, metavar="SECONDS", help="retry watching this often"
    )
    serve.set_defaults(run=cmd_serve)
    sub.add_parser("start", help="start a background daemon").set_defaults(run=cmd_start)
    sub.add_parser("stop", help="stop the workspace's daemon").set_defaults(run=cmd_stop)
    status = sub.add_parser("status", help="what the daemon knows")
    status.add_argument("--json", action="store_true")
    status.set_defaults(run=cmd_status)


def _add_tools(sub: Any) -> None:
    read = sub.add_parser("read", help="read a file (journaled)")
    read.add_argument("path")
    read.add_argument("--hashes", action="store_true", help="show LINE#ANCHOR rows")
    read.add_argument("--range", help="START-END, 1-based, inclusive")
    read.add_argument("--since", type=int, help="only what changed since this version")
    read.add_argument("--json", action="store_true")
    read.set_defaults(run=cmd_read)
    edit = sub.add_parser("edit", help="apply anchored operations (JSON) to a file")
    edit.add_argument("path")
    edit.add_argument("--ops-file", default="-", help="JSON operations file (default: stdin)")
    edit.add_argument("--skip-safety-check", action="store_true")
    edit.add_argument("--json", action="store_true")
    edit.set_defaults(run=cmd_edit)
    log = sub.add_parser("log", help="the journal, newest last")
    log.add_argument("--path")
    log.add_argument("--agent", dest="agent_filter", help="only this agent's events")
    log.add_argument("--limit", type=int, default=50)
    log.add_argument("--json", action="store_true")
    log.set_defaults(run=cmd_log)
    watch = sub.add_parser("watch", help="print committed events live (all, or for PATHs)")
    watch.add_argument("paths", nargs="*", metavar="PATH")
    watch.add_argument("--count", type=int, default=0, help="exit after N events")
    watch.add_argument(
        "--idle-timeout", type=float, default=None, help="exit after S seconds without events"
    )
    watch.add_argument("--json", action="store_true", help="one JSON object per line")
    watch.set_defaults(run=cmd_watch)
    agent = sub.add_parser("agent-status", help="files an agent has seen, and which are stale")
    agent.add_argument("of", nargs="?", metavar="AGENT", help="default: --agent")
    agent.add_argument("--json", action="store_true")
    agent.set_defaults(run=cmd_agent_status)
    call = sub.add_parser("call", help="any method: params JSON on stdin, envelope JSON out")
    call.add_argument("method")
    call.set_defaults(run=cmd_call)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    run: Callable[[argparse.Namespace], int] = args.run
    try:
        return run(args)
    except DaemonUnavailable as e:
        print(f"editjournal: {e.message}", file=sys.stderr)
        return EXIT_UNAVAILABLE
    except RequestError as e:
        _report(e, args)
        return EXIT_ERROR if e.code != "timeout" else EXIT_UNAVAILABLE
    except UsageError as e:
        print(f"editjournal: {e}", file=sys.stderr)
        return EXIT_UNAVAILABLE


def _report(error: RequestError, args: argparse.Namespace) -> None:
    if getattr(args, "json", False):
        _print_json({"code": error.code, "message": error.message, "details": error.details})
        return
    print(f"editjournal: {error.code}: {error.message}", file=sys.stderr)
    if error.suggested_action:
        print(f"  suggested action: {error.suggested_action}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
