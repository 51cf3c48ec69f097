"""The commands that talk to a daemon: status, read, edit, patch, log, watch, agent-status, call.

Each parses its options, makes one client call and renders the result (as
JSON with `--json`); errors travel up as `RequestError` to `cli.main`, which
shows them and picks the exit code. Every command but `status` starts a
daemon when none serves the workspace (and says so on stderr).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
import time
import typing
from pathlib import Path
from typing import Any

import click
import msgspec

from editjournal.client.cli.common import (
    EXIT_ERROR,
    EXIT_OK,
    BadInput,
    check_workspace,
    for_person,
    global_options,
    in_workspace,
    in_workspace_all,
    json_line,
    open_client,
    print_json,
    print_result,
    print_warnings,
    settings,
    shown_path,
)
from editjournal.client.cli.help import CALL_EPILOG, EDIT_EPILOG, verbatim
from editjournal.client.library.blocking import Client
from editjournal.client.library.errors import RequestError, StateMismatch
from editjournal.client.views.audit_render import diff_lines, log_lines, plural
from editjournal.client.views.printable import printable
from editjournal.client.views.render import (
    agent_status_lines,
    edit_lines,
    emit,
    event_line,
    patch_lines,
    status_lines,
)
from editjournal.schemas.errors import ErrorCode
from editjournal.schemas.events import AnyEvent
from editjournal.schemas.tools import (
    TOOL_PARAMS,
    AgentStatusResult,
    ReadFileResult,
    ReadManyFilesResult,
)
from editjournal.schemas.units import UnitError, parse_duration

EVENT_KINDS = [kind.__struct_config__.tag for kind in typing.get_args(AnyEvent)]
MAX_LOG_LIMIT = 100_000
SHORT_SHA = 7  # the fewest hex digits `patch --base` takes for a sha256, as git takes
_HEX = re.compile(r"[0-9a-fA-F]+")


@click.command(
    epilog=verbatim(
        """Examples:
  editjournal status
  editjournal status --workspace ~/src/app --json"""
    )
)
@global_options()
def status() -> int:
    """What the daemon knows.

    Events, files, agents, journal size, watcher state. Never starts a daemon:
    exits 2 when none serves the workspace."""
    with open_client(autostart=False) as client:
        result = client.status()
    print_result(result, status_lines)
    return EXIT_OK


@click.command(
    epilog=verbatim(
        """Examples:
  editjournal read src/app.py --hashes --range 10-40
  editjournal read src/app.py --since 42
  editjournal read src/app.py --at-version 17"""
    )
)
@click.argument("path", type=click.Path())  # as typed: from where you stand (in_workspace)
@click.option("--hashes", is_flag=True, help="Show LINE#ANCHOR|text rows, the anchors to edit by.")
@click.option("--range", "range_", metavar="START-END", help="Lines, 1-based, inclusive.")
@click.option(
    "--since",
    type=click.IntRange(min=0),
    metavar="VERSION",
    help="Only what changed since this version, with fresh anchors.",
)
@click.option(
    "--at-version",
    type=click.IntRange(min=0),
    metavar="VERSION",
    help="The file as it was at this version (from the journal; not journaled).",
)
@global_options()
def read(
    path: str, hashes: bool, range_: str | None, since: int | None, at_version: int | None
) -> int:
    """Read a file (journaled).

    The read becomes your snapshot of the file: what your anchors refer to. The
    content goes to stdout, its version and sha256 to stderr."""
    s = settings()
    s.path = path = in_workspace(path)
    with open_client() as client:
        result = client.read_file(
            path, hashes=hashes, range=range_, since_version=since, at_version=at_version
        )
    if s.json:
        print_json(result.expanded())
        return EXIT_OK
    if result.since_version is not None:
        body = "(unchanged)" if result.unchanged else (result.delta or result.content)
    else:
        body = (result.rendered or "") if hashes else result.content.rstrip("\r\n")
    emit(body)
    shown = f"lines {result.start_line}-{result.end_line} of {result.line_count}"
    more = ", truncated" if result.truncated else ""
    emit(
        f"-- {shown_path(result.file_path)} version {result.version} sha256 {result.sha256[:12]}"
        f" ({shown}{more}, eol {result.eol})",
        err=True,
    )
    return EXIT_OK


@click.command(epilog=EDIT_EPILOG)
@click.argument("path", type=click.Path())  # as typed: from where you stand (in_workspace)
@click.option(
    "--ops-file",
    default="-",
    metavar="FILE",
    type=click.Path(dir_okay=False, allow_dash=True),
    help="The operations as JSON (default -: stdin).",
)
@click.option(
    "--skip-safety-check",
    is_flag=True,
    help="Write even when the edit looks like a mistake (an unbalanced bracket, say).",
)
@global_options()
def edit(path: str, ops_file: str, skip_safety_check: bool) -> int:
    """Apply anchored operations to a file, all or nothing."""
    s = settings()
    s.path = path = in_workspace(path)  # also: a mistyped workspace fails before anyone
    check_workspace()  # types operations
    operations = read_operations(ops_file)
    with open_client() as client:
        result = client.edit(path, operations, skip_safety_check=skip_safety_check)
        warnings = client.last_response.warnings if client.last_response else []
    if s.json:
        print_json(result)
        return EXIT_OK
    print_warnings(warnings, result)
    emit(edit_lines(for_person(result)))
    return EXIT_OK


@click.command(
    epilog=verbatim(
        """Examples:
  editjournal patch src/app.py fix.diff --base 3a7b0c94e21f
  editjournal patch src/app.py fix.diff --base "$(sha256sum < src/app.py | cut -d' ' -f1)"
  git diff -- src/app.py | editjournal patch src/app.py - --base 3a7b0c9 --rebase"""
    )
)
@click.argument("path", type=click.Path())  # as typed: from where you stand (in_workspace)
@click.argument(
    "diff_file", default="-", type=click.Path(dir_okay=False, allow_dash=True), metavar="DIFF"
)
@click.option(
    "--base",
    required=True,
    metavar="SHA256",
    help="SHA-256 of the content the diff was made from, or a unique prefix of it (7 or more"
    " hex digits, as `read` prints it).",
)
@click.option(
    "--rebase",
    is_flag=True,
    help="Apply over newer content when none of the lines the diff relies on changed since.",
)
@click.option(
    "--skip-safety-check",
    is_flag=True,
    help="Write even when the result looks like a mistake (an unbalanced bracket, say).",
)
@global_options()
def patch(path: str, diff_file: str, base: str, rebase: bool, skip_safety_check: bool) -> int:
    """Apply a unified diff to a file, guarded by its content hash (safe_patch).

    DIFF is a file or - for stdin (the default). The diff applies only to the
    content whose SHA-256 is --base; hunks are found by their context, whatever
    their line numbers say, and land all or nothing. --base may be a prefix of
    the sha256 (7 or more hex digits, such as the 12 `read` prints), as git takes
    one: it must name exactly one version of the file, among those the journal knows
    and the file as it is now."""
    s = settings()
    s.path = path = in_workspace(path)
    check_workspace()
    _check_base(base)
    where = "on stdin" if diff_file == "-" else f"in {diff_file}"
    diff = read_source(diff_file, "a unified diff")
    if not diff.strip():
        raise BadInput(f"no diff {where}")
    with open_client() as client:
        result = client.safe_patch(
            path, diff, full_base(client, path, base), rebase=rebase, include_content=False,
            skip_safety_check=skip_safety_check,
        )  # fmt: skip
    if s.json:
        print_json(result)
        return EXIT_OK
    emit(patch_lines(for_person(result)))
    return EXIT_OK


def _check_base(base: str) -> None:
    if not (_HEX.fullmatch(base) and SHORT_SHA <= len(base) <= 64):
        raise BadInput(
            f"--base {base!r} is not a SHA-256: give its 64 hex digits, or {SHORT_SHA} or more"
            " of its first ones (`editjournal read PATH` prints 12)"
        )


def full_base(client: Client, path: str, base: str) -> str:
    """The sha256 --base names: itself when whole, else the one version of `path` the
    journal knows (`history`, which records nothing) whose sha256 starts with it.

    Only a spelling: the daemon still checks the result against the file as it is, so
    a prefix of an older version is refused `state_mismatch` (or, with --rebase,
    carried over what changed since) exactly as its full sha256 would be."""
    if len(base) == 64:
        return base
    prefix = base.lower()
    try:
        versions = client.history(path).versions
    except RequestError as e:
        if e.code != ErrorCode.FILE_NOT_IN_JOURNAL.value:
            raise
        versions = []
    known = {v.sha256 for v in versions if v.sha256}
    current = _current_sha256(path)
    if current is not None:
        known.add(current)
    found = sorted(sha for sha in known if sha.startswith(prefix))
    if len(found) > 1:
        raise BadInput(
            f"--base {base} is ambiguous: {len(found)} versions of {shown_path(path)} have a"
            " sha256 starting"
            " with it; give more digits"
        )
    if not found:
        raise StateMismatch.local(
            ErrorCode.STATE_MISMATCH,
            f"--base {base} is the start of no sha256 of {path} the journal knows: the diff was"
            " not made from the file as it is (nothing was written)",
            path=path,
            base=base,
        )
    return found[0]


def _current_sha256(path: str) -> str | None:
    """The SHA-256 of the file's bytes as they are now (the daemon's sha256 is of the
    same bytes), or None when it cannot be read. A file written a moment ago may not
    be journaled yet (the watcher settles first), and a diff made from it names this
    content: the prefix must find it. Only a spelling: the daemon checks it again."""
    if os.path.isabs(path):  # outside the workspace: the daemon refuses it, and says why
        return None
    try:
        data = (settings().root / path).read_bytes()
    except (OSError, ValueError):
        return None
    return hashlib.sha256(data).hexdigest()


def read_operations(source: str) -> list[Any]:
    """The operations from a file or stdin: a JSON list, or {"operations": [...]}."""
    where = "on stdin" if source == "-" else f"in {source}"
    text = read_source(source, "operations as JSON")
    if not text.strip():
        raise BadInput(f"no operations {where}; `editjournal edit --help` shows the format")
    try:
        loaded = json.loads(text)
    except json.JSONDecodeError as e:
        raise BadInput(f"operations {where} are not JSON: {e}") from e
    operations = loaded.get("operations") if isinstance(loaded, dict) else loaded
    if not isinstance(operations, list):
        raise BadInput(f'operations {where} must be a JSON list, or {{"operations": [...]}}')
    return operations


def read_source(source: str, what: str) -> str:
    """The text of a file, or of stdin for `-` (saying so when stdin is a terminal)."""
    return _read_stdin(what) if source == "-" else _read_file(source)


def _read_stdin(what: str) -> str:
    if sys.stdin is None:
        return ""
    if sys.stdin.isatty():
        click.echo(f"editjournal: reading {what} from stdin; end with Ctrl-D", err=True)
    return sys.stdin.read()


def _read_file(source: str) -> str:
    try:
        return Path(source).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        why = e.strerror if isinstance(e, OSError) else "not UTF-8"
        raise BadInput(f"cannot read {source}: {why}") from e


@click.command(
    epilog=verbatim(
        """Examples:
  editjournal log --limit 20
  editjournal log --path src/app.py --by alice --kind edit_rejected
  editjournal log --after-seq 120 --json
  editjournal log --since 10m -p
  editjournal log --after-seq 100 --until-seq 140 --kind edit_applied"""
    )
)
@click.option("--path", metavar="PATH", help="Only events about this file.")
@click.option("--by", metavar="AGENT", help="Only this agent's events.")
@click.option("--kind", type=click.Choice(EVENT_KINDS), help="Only events of this kind.")
@click.option(
    "--after-seq", type=click.IntRange(min=0), default=0, metavar="SEQ", help="Only after SEQ."
)
@click.option(
    "--until-seq", type=click.IntRange(min=0), metavar="SEQ", help="Only up to SEQ (inclusive)."
)
@click.option("--since", metavar="DURATION", help="Only the last DURATION: 90s, 10m, 2h, 1d.")
@click.option("-p", "--patch", is_flag=True, help="Show each content change's diff.")
@click.option(
    "--limit",
    type=click.IntRange(min=1, max=MAX_LOG_LIMIT),
    default=50,
    show_default=True,
    help="At most this many events: the newest that match.",
)
@global_options()
def log(
    path: str | None,
    by: str | None,
    kind: str | None,
    after_seq: int,
    limit: int,
    until_seq: int | None,
    since: str | None,
    patch: bool,
) -> int:
    """The journal, oldest first.

    One line per event: seq, time, agent, kind, what happened; with -p, each
    write's and outside change's diff below it. The newest --limit events that
    match; when older ones match too, stderr says how to see them."""
    since_ts = _since_ts(since)
    with open_client() as client:
        result = client.log(
            path=in_workspace(path) if path is not None else None,
            agent=by,
            kind=kind,
            after_seq=after_seq,
            until_seq=until_seq,
            since_ts=since_ts,
            patch=patch,
            limit=min(limit + 1, MAX_LOG_LIMIT),  # one more: are there older ones?
        )
    older = len(result.events) > limit
    result.events = result.events[-limit:]
    if settings().json:
        print_json(result)
        return EXIT_OK
    result = for_person(result)
    for entry, line in zip(result.events, log_lines(result.events), strict=True):
        emit(line)
        if entry.diff:
            emit(diff_lines(entry.diff))
    if older:
        first = result.events[0].seq
        emit(
            f"-- the newest {plural(limit, 'event')} that match; older ones too:"
            f" --limit {min(limit * 4, MAX_LOG_LIMIT)} shows more,"
            f" --until-seq {first - 1} the ones before these",
            err=True,
        )
    return EXIT_OK


def _since_ts(since: str | None) -> int | None:
    """`--since 10m` as a time (ms since the epoch): now minus the duration."""
    if since is None:
        return None
    try:
        seconds = parse_duration(since)
    except UnitError as e:
        raise BadInput(f"--since: {e}") from e
    return max(0, int((time.time() - seconds) * 1000))


@click.command(
    epilog=verbatim(
        """Examples:
  editjournal watch
  editjournal watch src/app.py --count 1 --json"""
    )
)
@click.argument("paths", nargs=-1, metavar="[PATH]...")
@click.option("--count", type=click.IntRange(min=0), default=0, help="Exit after N events.")
@click.option(
    "--idle-timeout",
    type=click.FloatRange(min=0, min_open=True),
    metavar="SECONDS",
    help="Exit after this long without an event.",
)
@global_options()
def watch(paths: tuple[str, ...], count: int, idle_timeout: float | None) -> int:
    """Print committed events live.

    All events, or those about PATHs, until Ctrl-C (or --count, --idle-timeout).
    With --json, one JSON object per line."""
    as_json = settings().json
    about = in_workspace_all(paths) or None
    with open_client() as client, client.subscribe(about) as subscription:
        for n, event in enumerate(subscription.events(idle_timeout), start=1):
            emit(json_line(event) if as_json else event_line(for_person(event)))
            sys.stdout.flush()
            if count and n >= count:
                break
    return EXIT_OK


@click.command(
    "agent-status",
    epilog=verbatim(
        """Examples:
  editjournal agent-status alice
  editjournal agent-status --agent alice --json"""
    ),
)
@click.argument("of", metavar="[AGENT]", required=False)
@global_options()
def agent_status(of: str | None) -> int:
    """Files an agent has seen, and which are stale.

    AGENT defaults to the caller (--agent)."""
    with open_client() as client:
        result = client.agent_status(of)
    print_result(result, _agent_status_lines)
    return EXIT_OK


def _agent_status_lines(result: AgentStatusResult) -> list[str]:
    """The shared rendering, its head line in words: `1 file seen`, not `1 files`."""
    files = plural(len(result.files), "file")
    head = f"{printable(result.agent)}: {files} seen, {result.stale_files} stale"
    return [head, *agent_status_lines(result)[1:]]


def _complete_method(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[str]:
    return [m for m in TOOL_PARAMS if m.startswith(incomplete)]


@click.command(epilog=CALL_EPILOG)
@click.argument("method", shell_complete=_complete_method)
@click.option(
    "--idempotency-key",
    metavar="KEY",
    help="Send with this key: a retry (same key, method and params) gets the first reply"
    " back instead of applying again.",
)
@global_options()
def call(method: str, idempotency_key: str | None) -> int:
    """Send any method; params and reply as JSON.

    Params as a JSON object on stdin, the response envelope as JSON on stdout."""
    if idempotency_key is not None and not 1 <= len(idempotency_key) <= 200:
        raise BadInput("--idempotency-key must be 1 to 200 characters")
    raw = "" if sys.stdin is None or sys.stdin.isatty() else sys.stdin.read()
    try:
        params = json.loads(raw) if raw.strip() else {}
    except json.JSONDecodeError as e:
        raise BadInput(f"params on stdin are not JSON: {e}") from e
    if not isinstance(params, dict):
        raise BadInput("params on stdin must be a JSON object")
    with open_client() as client:
        response = client.call(method, params, idempotency_key=idempotency_key)
    if response.ok and method in _EXPANDED:  # reads travel lean: show their rows in full
        response.result = msgspec.convert(response.result, _EXPANDED[method]).expanded()
    print_json(response)
    return EXIT_OK if response.ok else EXIT_ERROR


_EXPANDED: dict[str, type[ReadFileResult | ReadManyFilesResult]] = {
    "read_file": ReadFileResult,
    "read_many_files": ReadManyFilesResult,
}

COMMANDS = (status, read, edit, patch, log, watch, agent_status, call)
