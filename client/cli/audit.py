"""The audit commands: show, history, blame, stats (through the daemon) and
replay, verify, export, report (offline: straight on the journal file).

The offline commands need no daemon and change nothing: they open the
journal read-only (`mode=ro`), so they work on a journal copied off another
machine (`--journal FILE`) and beside a running daemon. They run the daemon's
own journal code (`editjournal.daemon.audit`), imported only when one of them
runs: the rest of the client never loads the daemon.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from editjournal.client.cli.common import (
    EXIT_ERROR,
    EXIT_OK,
    BadInput,
    check_workspace,
    global_options,
    in_workspace,
    open_client,
    print_json,
    print_result,
    settings,
)
from editjournal.client.cli.help import verbatim
from editjournal.client.library.errors import RequestError
from editjournal.client.views.audit_render import (
    blame_lines,
    history_lines,
    plural,
    show_lines,
    stats_lines,
)
from editjournal.client.views.render import emit
from editjournal.schemas.endpoint import JOURNAL_FILE, STATE_DIR_NAME

if TYPE_CHECKING:
    from editjournal.daemon.store.journal import Journal

F = TypeVar("F", bound=Callable[..., Any])


@click.command(
    epilog=verbatim(
        """Examples:
  editjournal show 42
  editjournal show 42 --json"""
    )
)
@click.argument("seq", type=click.IntRange(min=1))
@global_options()
def show(seq: int) -> int:
    """One event, every field, with its diff.

    For a write or an outside change, the unified diff of what it changed
    (coloured at a terminal)."""
    with open_client() as client:
        try:
            result = client.show(seq)
        except RequestError as e:
            if e.code == "unknown_seq":  # the catalogue's action names details.last_seq
                e.suggested_action = _newest(e.details.get("last_seq"))
            raise
    print_result(result, show_lines)
    return EXIT_OK


def _newest(last_seq: Any) -> str:
    if not last_seq:
        return "the journal has no events yet"
    return f"the newest event is seq {last_seq}: `editjournal log` lists them"


@click.command(
    epilog=verbatim(
        """Examples:
  editjournal history src/app.py
  editjournal read src/app.py --at-version 17"""
    )
)
@click.argument("path", type=click.Path())
@global_options()
def history(path: str) -> int:
    """Every version of a file: seq, time, author, kind, lines, +/-."""
    with open_client() as client:
        result = client.history(in_workspace(path))
    print_result(result, history_lines)
    return EXIT_OK


@click.command(
    epilog=verbatim(
        """Examples:
  editjournal blame src/app.py
  editjournal blame src/app.py --at-version 17 --json"""
    )
)
@click.argument("path", type=click.Path())
@click.option("--at-version", type=click.IntRange(min=0), metavar="SEQ", help="As it was then.")
@global_options()
def blame(path: str, at_version: int | None) -> int:
    """Which event last wrote each line.

    Per line: seq, agent ("outside" for changes made outside the daemon and for
    lines already there when the journal first saw the file), kind, time, text."""
    with open_client() as client:
        result = client.blame(in_workspace(path), at_version=at_version)
    print_result(result, blame_lines)
    return EXIT_OK


@click.command(
    epilog=verbatim(
        """Examples:
  editjournal stats
  editjournal stats alice --json"""
    )
)
@click.argument("of", metavar="[AGENT]", required=False)
@global_options()
def stats(of: str | None) -> int:
    """Per agent: reads, writes, rejections by code, rebased edits, recovery.

    A recovery runs from an agent's first rejected write to a file to its next
    applied write to that file; the means are in events, ms and attempts."""
    with open_client() as client:
        result = client.stats(of)
    if settings().json:
        print_json(result)
    else:
        emit(stats_lines(result.agents))
    return EXIT_OK


# --- offline: straight on the journal file ------------------------------------------------


def journal_option(f: F) -> F:
    return click.option(
        "--journal",
        "journal_file",
        type=click.Path(dir_okay=False),
        metavar="FILE",
        help="A journal file (default: the workspace's .editjournal/journal.db).",
    )(f)


@contextmanager
def opened(journal_file: str | None) -> Iterator[Journal]:
    """The journal, read-only; its errors become exit-2 messages."""
    from editjournal.daemon.audit import open_readonly
    from editjournal.daemon.store.journal import JournalError

    path = Path(journal_file) if journal_file else check_workspace() / STATE_DIR_NAME / JOURNAL_FILE
    if not path.is_file():
        raise BadInput(f"no journal at {path}")
    try:
        journal = open_readonly(path)
    except JournalError as e:
        raise BadInput(str(e)) from e
    try:
        yield journal
    finally:
        journal.close()


@contextmanager
def tool_errors() -> Iterator[None]:
    from editjournal.schemas.errors import ToolError

    try:
        yield
    except ToolError as e:
        raise BadInput(f"{e.code.value}: {e.message}") from e


@click.command(
    epilog=verbatim(
        """Examples:
  editjournal replay --until 120 --to /tmp/at-120
  editjournal replay --to /tmp/now --journal copy-of-journal.db"""
    )
)
@click.option("--until", "until_seq", type=click.IntRange(min=0), metavar="SEQ",
              help="After this event (default: the last).")  # fmt: skip
@click.option("--to", "target", required=True, type=click.Path(file_okay=False), metavar="DIR",
              help="An empty (or new) directory to write the files into.")  # fmt: skip
@journal_option
@global_options()
def replay(until_seq: int | None, target: str, journal_file: str | None) -> int:
    """Every known file as it was after event SEQ, written into DIR.

    No daemon needed; the journal is only read. Files removed by then are not
    written; files whose content was not stored (outside changes to files no
    agent had read keep only a hash) are listed."""
    from editjournal.daemon.audit.replay import ReplayRefused
    from editjournal.daemon.audit.replay import replay as run

    with opened(journal_file) as journal, tool_errors():
        try:
            report = run(journal, until_seq, Path(target))
        except ReplayRefused as e:
            raise BadInput(str(e)) from e
    if settings().json:
        print_json(report.__dict__)
        return EXIT_OK
    files = plural(len(report.written), "file")
    lines = [f"replayed {files} as of seq {report.until_seq} into {target}"]
    for label, paths in (
        ("removed by then", report.absent),
        ("content not stored", report.not_stored),
        ("refused (would leave DIR)", report.refused),
    ):
        lines += [f"  {label}: {p}" for p in paths]
    emit(lines)
    return EXIT_OK


@click.command(
    epilog=verbatim(
        """Examples:
  editjournal verify
  editjournal verify --journal copy-of-journal.db   (the workspace is not compared)
  editjournal verify --journal copy.db --workspace ~/src/app"""
    )
)
@click.option("--strict", is_flag=True, help="Exit 1 also when the workspace changed.")
@journal_option
@global_options()
def verify(journal_file: str | None, strict: bool) -> int:
    """Check the journal and the workspace against it; exit 1 when the journal fails.

    The hash chain holds and every needed blob is intact (and the chain anchor,
    when there is one, agrees); folding every event succeeds and reproduces
    the state snapshot's digest. Every known file holds the content its last
    event says: a difference (naming that event) is reported as a change made
    while no daemon recorded it, not a failure (exit 0; --strict: exit 1). With
    --journal, the workspace is compared only when --workspace is given."""
    from editjournal.daemon.audit.verify import verify as run

    workspace = None
    if journal_file is None or settings().workspace is not None:
        workspace = check_workspace()
    with opened(journal_file) as journal:
        outcome = run(journal, workspace)
    if settings().json:
        print_json(outcome.as_json(strict))
    else:
        emit(_verify_lines(outcome))
    return EXIT_OK if outcome.passes(strict) else EXIT_ERROR


def _verify_lines(outcome: Any) -> list[str]:
    colour = {"ok": "green", "failed": "red", "skipped": "yellow", "changed": "yellow"}
    lines = [f"{plural(outcome.events, 'event')} checked"]
    for check, verdict in outcome.checks.items():
        lines.append(f"{check:<10} {click.style(verdict, fg=colour[verdict])}")
    if outcome.state_digest:
        lines.append(f"state digest {outcome.state_digest}")
    for p in outcome.problems:
        where = f"seq {p.seq}: " if p.seq is not None else ""
        lines.append(click.style(f"FAILED {p.check}: {where}{p.message}", fg="red"))
    for p in outcome.changes:
        lines.append(click.style(f"CHANGED {p.check}: seq {p.seq}: {p.message}", fg="yellow"))
    return lines + ([outcome.summary()] if outcome.changes else [])


@click.command(
    epilog=verbatim(
        """Examples:
  editjournal export > events.jsonl
  editjournal export --blobs -o events.jsonl --journal copy.db"""
    )
)
@click.option(
    "--jsonl",
    is_flag=True,
    default=True,
    help="One JSON object a line (the only format: the default).",
)
@click.option("--blobs", is_flag=True, help="Carry each needed content inline (else by sha256).")
@click.option("-o", "--output", type=click.Path(dir_okay=False), metavar="FILE",
              help="Write here (default: stdout).")  # fmt: skip
@journal_option
@global_options()
def export(jsonl: bool, blobs: bool, output: str | None, journal_file: str | None) -> int:
    """Every event, in order, for other tools, as JSON Lines.

    Each line: seq, ts, agent, kind, path, prev_hash, hash, event (every field);
    with --blobs, `blobs` maps each content's sha256 to its text (or base64)."""
    from editjournal.daemon.audit.export import export_lines

    with opened(journal_file) as journal:
        if output is None:
            for line in export_lines(journal, blobs=blobs):
                sys.stdout.buffer.write(line)
            sys.stdout.buffer.flush()
        else:
            with open(output, "wb") as f:
                f.writelines(export_lines(journal, blobs=blobs))
    return EXIT_OK


@click.command(
    epilog=verbatim(
        """Examples:
  editjournal report --html run.html
  editjournal report --html run.html --journal copy.db"""
    )
)
@click.option("--html", "out", required=True, type=click.Path(dir_okay=False), metavar="OUT",
              help="The HTML file to write (one self-contained page).")  # fmt: skip
@journal_option
@global_options()
def report(out: str, journal_file: str | None) -> int:
    """One self-contained HTML page: per-agent stats, a timeline per file, the events.

    No scripts, no network: colours by agent, rejections marked, each diff
    behind a click (<details>). Big journals are summarised (see README)."""
    from editjournal.daemon.audit.report import render

    with opened(journal_file) as journal, open(out, "w", encoding="utf-8") as f:
        f.writelines(render(journal, f"editjournal report: {journal.path}"))
    if settings().json:
        print_json({"report": out})
    else:
        emit(f"wrote {out}")
    return EXIT_OK


COMMANDS = [show, history, blame, stats, replay, verify, export, report]
