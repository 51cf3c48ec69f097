"""`editjournal ship` and `editjournal fleet log|stats|blame|verify`: many workspaces.

`ship` copies this workspace's journal into PostgreSQL (daemon/fleet/shipper.py);
`fleet` asks the server about every workspace shipped there (daemon/fleet/queries.py).
The server's URL is `--to` / `--from`, else `url` under `[fleet]` in
`.editjournal/config.toml`. psycopg is the `fleet` extra's: without it these commands
say how to install it; nothing else of the CLI needs it (imported here on use).

`ship --follow --otel` also exports the events it ships as OpenTelemetry spans, through
the daemon's own tap and span builder (daemon/telemetry), configured by the `[otel]`
section and the OTEL_EXPORTER_OTLP_* variables; `otel` is the extra it needs.
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any

import click
import tomllib

from editjournal.client.cli.common import (
    EXIT_ERROR,
    EXIT_OK,
    BadInput,
    check_workspace,
    global_options,
    print_json,
    settings,
)
from editjournal.client.cli.help import verbatim
from editjournal.client.library.errors import RequestError, WorkspaceNotFound
from editjournal.client.views.audit_render import (
    blame_lines,
    legend,
    short_command,
    short_names,
    stats_lines,
    when,
)
from editjournal.client.views.printable import printable
from editjournal.client.views.render import emit
from editjournal.schemas.endpoint import STATE_DIR_NAME
from editjournal.schemas.units import UnitError, parse_duration

CONFIG = "config.toml"
URL_HELP = "postgresql://... (default: url under [fleet] in .editjournal/config.toml)."


def _url(given: str | None, root: Path | None) -> str:
    if given:
        return given
    if root is not None:
        path = root / STATE_DIR_NAME / CONFIG
        try:
            found = tomllib.loads(path.read_text()).get("fleet", {}).get("url")
        except FileNotFoundError:
            found = None
        except (OSError, tomllib.TOMLDecodeError) as e:
            raise BadInput(f"cannot read {path}: {e}") from e
        if isinstance(found, str) and found:
            return found
    raise BadInput(
        "no PostgreSQL URL: give --to/--from postgresql://..., or set url under [fleet] in"
        " .editjournal/config.toml"
    )


@contextmanager
def _as_request_errors() -> Iterator[None]:
    """The fleet's refusals (`ToolError`s: it runs in this process) as the CLI shows
    every error: code, message, details, what to do; exit 1."""
    from editjournal.schemas.errors import ToolError

    try:
        yield
    except ToolError as e:
        raise RequestError.from_wire(e.to_wire()) from None


def _fleet() -> Any:
    """The fleet modules, or how to install what they need."""
    try:
        from editjournal.daemon.fleet import queries, shipper
    except ImportError as e:
        raise BadInput(f"the fleet needs psycopg ({e}): pip install 'editjournal[fleet]'") from None
    return shipper, queries


# --- ship --------------------------------------------------------------------------------------


@click.command(
    epilog=verbatim(
        """Examples:
  editjournal ship --to postgresql://ship@db.example/fleet
  editjournal ship --to "$FLEET_URL" --blobs --follow     # as events commit; Ctrl-C stops
  editjournal ship --to "$FLEET_URL" --follow --otel      # and as OpenTelemetry spans
  editjournal ship --new-identity --to "$FLEET_URL"       # a copied workspace, its own id"""
    )
)
@click.option("--to", "url", metavar="URL", help=URL_HELP)
@click.option("--follow", is_flag=True, help="Keep shipping as events commit, until stopped.")
@click.option("--blobs", is_flag=True, help="Ship the contents too (fleet blame needs them).")
@click.option(
    "--otel",
    is_flag=True,
    help="With --follow: export the events shipped as OpenTelemetry spans too, where [otel]"
    " in config.toml or the OTEL_EXPORTER_OTLP_* variables say (its `enabled` aside).",
)
@click.option(
    "--new-identity",
    is_flag=True,
    help="Give this workspace a new id first (a copy of another workspace must not ship"
    " under the original's).",
)
@global_options()
def ship(url: str | None, follow: bool, blobs: bool, otel: bool, new_identity: bool) -> int:
    """Copy this workspace's journal into PostgreSQL: resumable, never twice, refused
    when the local journal no longer continues the copy already shipped."""
    root = check_workspace()
    target = _url(url, root)
    if otel and not follow:
        raise BadInput("--otel exports what --follow ships: give both")
    shipper_module, _ = _fleet()
    if new_identity:
        from editjournal.daemon.store.identity import new_workspace_id

        emit(f"workspace id is now {new_workspace_id(root / STATE_DIR_NAME)}", err=True)
    with _as_request_errors():
        shipper = shipper_module.Shipper(root, target, blobs=blobs)
        try:
            if follow:
                return _follow(shipper, _exporter(root, shipper) if otel else None)
            done = shipper.ship()
        finally:
            shipper.close()
    _report(done, shipper_module.redacted(target))
    return EXIT_OK


def _exporter(root: Path, shipper: Any) -> Any:
    """The OpenTelemetry tap `--otel` feeds: the daemon's, forced on; a broken `[otel]`
    section is refused now (`config_invalid`), the missing extra said."""
    from editjournal.daemon.settings import otel
    from editjournal.daemon.telemetry.tap import Tap

    try:
        import editjournal.daemon.telemetry.otlp  # noqa: F401  (the SDK, here rather than later)
    except ImportError as e:
        raise BadInput(
            f"--otel needs the otel extra ({e}): pip install 'editjournal[otel]'"
        ) from None
    otel.load(root / STATE_DIR_NAME)
    return Tap(root / STATE_DIR_NAME, shipper.workspace_id, forced=True)


def _follow(shipper: Any, tap: Any = None) -> int:
    """Until SIGINT or SIGTERM: a round's report per batch shipped; with a `tap`, each
    batch's events exported too, and what became of them said at the end."""
    stop = threading.Event()

    def stopped(signum: int, frame: FrameType | None) -> None:
        stop.set()

    previous = {s: signal.signal(s, stopped) for s in (signal.SIGINT, signal.SIGTERM)}
    target = shipper.url
    try:
        shipper.follow(
            stop, report=lambda done: _report(done, target), shipped=_exporting(tap, stop)
        )
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        if tap is not None:
            tap.close()
            _said_exported(tap.stats())
    return EXIT_OK


def _exporting(tap: Any, stop: threading.Event) -> Callable[[Any], None] | None:
    if tap is None:
        return None
    from editjournal.daemon.fleet.shipper import records_of
    from editjournal.daemon.telemetry.spans import EXPORTED_KINDS

    return lambda rows: tap.offer_paced(records_of(rows, EXPORTED_KINDS), stop)


def _said_exported(otel: dict[str, Any]) -> None:
    emit(
        f"OpenTelemetry: {otel['exported']} span(s) exported to {otel['endpoint']},"
        f" {otel['dropped']} dropped, {otel['queued']} left queued"
        + (f" ({otel['problem']})" if otel.get("problem") else ""),
        err=True,
    )


def _report(done: Any, url: str) -> None:
    if settings().json:
        print_json(done)
        return
    span = f" (seq {done.first_seq}-{done.last_seq})" if done.events else ""
    blobs = f", {done.blobs} content(s)" if done.blobs else ""
    if done.backfilled:
        blobs += f", {done.backfilled} content(s) of events shipped earlier without --blobs"
    emit(
        f"shipped {done.events} event(s){span}{blobs} of workspace {done.workspace_id} to"
        f" {url}; the server holds up to seq {done.last_seq}"
    )
    sys.stdout.flush()


# --- fleet -------------------------------------------------------------------------------------


@click.group(
    epilog=verbatim(
        """Examples:
  editjournal fleet log --from "$FLEET_URL" --by claude-code:3fa2 --since 1d
  editjournal fleet log --from "$FLEET_URL" --path '.github/**'
  editjournal fleet stats --from "$FLEET_URL"
  editjournal fleet blame src/app.py --workspace 3f2c --from "$FLEET_URL"
  editjournal fleet verify --from "$FLEET_URL" --workspace .   # and the witness check"""
    )
)
@global_options()
def fleet() -> None:
    """Ask a PostgreSQL server about every workspace shipped to it."""


def _connected(url: str | None, use: Callable[[Any, Any], int]) -> int:
    try:
        root: Path | None = settings().root
    except WorkspaceNotFound:
        root = None  # no workspace here: only --from can name the server
    target = _url(url, root)
    shipper_module, queries = _fleet()
    with _as_request_errors():
        conn = shipper_module.connect(target)
        try:
            return use(queries, conn)
        except shipper_module.psycopg.Error as e:  # the server went away, or is not ours
            raise shipper_module.unavailable(target, e) from None
        finally:
            conn.close()


def _since(value: str | None, option: str = "--since") -> int | None:
    """The time (ms since the epoch) that long ago."""
    if value is None:
        return None
    import time

    try:
        return int((time.time() - parse_duration(value)) * 1000)
    except UnitError as e:
        raise BadInput(f"{option} {value!r}: {e}") from e


@fleet.command(name="log")
@click.option("--from", "url", metavar="URL", help=URL_HELP)
@click.option("--by", "agent", metavar="AGENT", help="Only this agent's events (as `log --by`).")
@click.option("--kind", metavar="KIND", help="edit_applied, edit_rejected, file_read, ...")
@click.option("--path", "glob", metavar="GLOB", help="Files: src/*.py, '**/test_*.py'.")
@click.option("--since", metavar="DURATION", help="Newer than this: 30m, 2h, 1d.")
@click.option("--until", metavar="DURATION", help="Older than this (ago): 1h.")
@click.option("--limit", type=click.IntRange(1, 100_000), default=100, show_default=True)
@global_options()
def fleet_log(
    url: str | None,
    agent: str | None,
    kind: str | None,
    glob: str | None,
    since: str | None,
    until: str | None,
    limit: int,
) -> int:
    """Events across workspaces, oldest first (the newest LIMIT that match); --workspace
    keeps one (its directory, its id or a prefix of it, or the path it shipped from)."""

    def use(queries: Any, conn: Any) -> int:
        workspace = _named_workspace()
        filters = queries.Filters(
            workspace, agent, kind, glob, _since(since), _since(until, "--until"), limit
        )
        found = queries.log(conn, filters)
        if settings().json:
            print_json(found)
            return EXIT_OK
        emit(_log_rows(found) or ["no matching events"])
        return EXIT_OK

    return _connected(url, use)


def _log_rows(found: list[Any]) -> list[str]:
    """`fleet log`'s rows: the agent column as wide as its longest name shown (a name
    past NAME_CAP shortened, a legend after the rows), every journal string escaped; a
    shell command's change ends with its command, as in the local `log`."""
    names = short_names(e.agent for e in found if e.agent)
    agents = [names[e.agent] if e.agent else "-" for e in found]
    width = max(map(len, agents), default=0)
    return [
        f"{e.workspace_id[:8]} {e.seq:>7}  {when(e.ts_ms)}  {agent:<{width}}"
        f"  {printable(e.summary)}" + _command_column(e)
        for e, agent in zip(found, agents, strict=True)
    ] + legend(names)


def _command_column(event: Any) -> str:
    """`  $ command` after a shell command's change (a row built before FleetEvent had
    `commands` has none)."""
    commands = getattr(event, "commands", ())
    return f"  {short_command(commands)}" if commands else ""


@fleet.command(name="stats")
@click.option("--from", "url", metavar="URL", help=URL_HELP)
@click.option("--by", "agent", metavar="AGENT", help="Only this agent (as `stats AGENT`).")
@click.option("--since", metavar="DURATION", help="Only events newer than this: 30m, 2h, 1d.")
@global_options()
def fleet_stats(url: str | None, agent: str | None, since: str | None) -> int:
    """Per workspace, what `editjournal stats` says there, over the events shipped: per
    agent reads, writes, rejections by code, rebased edits, recoveries (--workspace: one
    workspace's)."""

    def use(queries: Any, conn: Any) -> int:
        found = queries.stats(conn, _named_workspace(), _since(since), agent)
        if settings().json:
            print_json(found)
            return EXIT_OK
        lines: list[str] = []
        for ws in found:
            where = printable(f"{ws.host}:{ws.path}")
            head = f"workspace {ws.workspace_id[:8]}  {where}  (up to seq {ws.last_seq})"
            lines += [click.style(head, fg="yellow"), *(stats_lines(ws.agents) or ["  no agent"])]
        emit(lines or ["no workspace shipped"])
        return EXIT_OK

    return _connected(url, use)


@fleet.command(name="blame")
@click.argument("path")
@click.option("--from", "url", metavar="URL", help=URL_HELP)
@click.option("--at-version", type=click.IntRange(min=0), metavar="SEQ", help="As it was then.")
@global_options()
def fleet_blame(path: str, url: str | None, at_version: int | None) -> int:
    """Each line of PATH in one shipped workspace (--workspace: its directory, its id or a
    prefix of it), with the event that last wrote it: what `blame` says there (the
    contents must have been shipped: `ship --blobs`)."""

    def use(queries: Any, conn: Any) -> int:
        workspace = _named_workspace()
        if workspace is None:
            raise BadInput("name the workspace: --workspace DIR|ID")
        result = queries.blame(conn, workspace, path, at_version)
        if settings().json:
            print_json(result)
        else:
            emit(blame_lines(result))
        return EXIT_OK

    return _connected(url, use)


@fleet.command(name="verify")
@click.option("--from", "url", metavar="URL", help=URL_HELP)
@global_options()
def fleet_verify(url: str | None) -> int:
    """Recompute every shipped chain; with --workspace DIR (`.`: this one), only that
    workspace's, and its local journal compared with its shipped copy (the witness
    check). Exit 1 when anything disagrees."""

    def use(queries: Any, conn: Any) -> int:
        checks, witness = _verified(queries, conn)
        if settings().json:
            print_json({"chains": checks, "witness": witness})
        else:
            emit([_chain_line(c) for c in checks] or ["no workspace shipped"])
            if witness is not None:
                emit(_witness_line(witness))
        bad = any(not c.ok for c in checks) or (witness is not None and not witness.agree)
        return EXIT_ERROR if bad else EXIT_OK

    return _connected(url, use)


def _named_workspace() -> str | None:
    """The workspace --workspace names: a local workspace's directory (its id), or
    as given (an id, a prefix of one, the path it was shipped from)."""
    given = settings().workspace
    if given is None:
        return None
    local = _local_root(given)
    if local is None:
        return given
    from editjournal.daemon.store.identity import workspace_id

    return workspace_id(local / STATE_DIR_NAME)


def _local_root(given: str) -> Path | None:
    root = Path(given).expanduser()
    return root.resolve() if (root / STATE_DIR_NAME / "journal.db").is_file() else None


def _verified(queries: Any, conn: Any) -> tuple[list[Any], Any]:
    given = settings().workspace
    local_root = _local_root(given) if given is not None else None
    if local_root is None:
        return queries.verify(conn, given), None
    from editjournal.daemon.fleet.source import LocalJournal
    from editjournal.daemon.store.identity import workspace_id

    local = LocalJournal(local_root)
    try:
        ident = workspace_id(local.state_dir)
        return queries.verify(conn, ident), queries.witness(conn, local, ident)
    finally:
        local.close()


def _chain_line(check: Any) -> str:
    head = f"{check.workspace_id}  {check.path}: {check.events} event(s)"
    if check.ok:
        return f"{head}, chain intact"
    return click.style(f"{head}, BROKEN at seq {check.first_bad_seq}: {check.reason}", fg="red")


def _witness_line(w: Any) -> str:
    if w.agree:
        return f"the local journal ({w.local} events) agrees with its shipped copy ({w.shipped})"
    return click.style(
        f"the local journal DIFFERS from its shipped copy at seq {w.first_difference}:"
        f" {w.reason} (local {w.local} events, shipped {w.shipped})",
        fg="red",
    )


COMMANDS: tuple[click.Command, ...] = (ship, fleet)
