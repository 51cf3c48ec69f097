"""Writes the journal has committed but the disk may not have yet; finishing them at start.

The group commit (daemon/landing/writeround.py) commits a batch's events together with
one `pending_writes` row per fsynced temp file, and renames the temp files only
after that commit. A kill -9 (or a power loss) between the two would leave the
journal saying `edit_applied` for content the disk never got, and the next start
would record a fake outside change "reverting" it. Instead, `recover` rolls
forward: for each path, the last row's temp file is checked against the
journaled SHA-256 and renamed into place, provided the file still holds what the
batch started from (a change made while the daemon was down is never clobbered;
the start-up scan then records it). Removals are finished the same way. All of it
happens relative to the target's directory as the workspace's confined walk holds it
(`Workspace.locate_real`), never through a full path: a directory swapped for a link
while the daemon was down leaves the write unfinished, never redirected.

After a run that did not stop cleanly, leftover `.editjournal-tmp-*` files (a
crash before the commit) are removed: nothing journaled names them.

These rows are bookkeeping, outside the hash chain: they never say what happened,
only what is left to do. This module must not touch anything else in the journal.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import NamedTuple

from editjournal.daemon.files import held
from editjournal.daemon.files.held import ABSENT, NOT_REGULAR
from editjournal.daemon.files.workspace import Workspace
from editjournal.daemon.store.journal import Journal

REMOVAL = "removal:"  # the temp column of a removal (it has no temp file)
SCHEMA = (
    "CREATE TABLE IF NOT EXISTS pending_writes ("
    " temp TEXT PRIMARY KEY, seq INTEGER NOT NULL, path TEXT NOT NULL,"
    " sha256 TEXT NOT NULL, before_sha256 TEXT)"
)
INSERT = (
    "INSERT OR REPLACE INTO pending_writes (temp, seq, path, sha256, before_sha256)"
    " VALUES (?, ?, ?, ?, ?)"
)
DELETE = "DELETE FROM pending_writes WHERE temp = ?"
log = logging.getLogger("editjournal")


def removal_key(path: str) -> str:
    return REMOVAL + path


class _Row(NamedTuple):
    temp: str
    seq: int
    path: str
    sha256: str
    before_sha256: str | None


@dataclass
class Recovered:
    """What start-up recovery did (logged, and reported by `status`)."""

    rolled_forward: list[str] = field(default_factory=list)
    already_done: int = 0
    unfinished: list[str] = field(default_factory=list)
    temps_removed: int = 0


def prepare(journal: Journal) -> None:
    """Create the table if this journal predates it."""
    with journal.db.conn:
        journal.db.conn.execute(SCHEMA)


def recover(workspace: Workspace, journal: Journal, unclean: bool) -> Recovered:
    """Finish every write committed but not renamed; after an unclean stop, remove
    leftover temp files. Then forget the rows: each has been finished or judged."""
    prepare(journal)
    rows = [_Row(*r) for r in journal.db.execute("SELECT * FROM pending_writes ORDER BY seq")]
    latest = {row.path: row for row in rows}  # the last write of each path is what counts
    done = Recovered()
    for row in latest.values():
        _finish(workspace, row, done)
    if rows:
        with journal.db.conn:
            journal.db.conn.execute("DELETE FROM pending_writes")
    if unclean or rows:
        done.temps_removed = held.remove_temps(workspace.root)
    return done


def _finish(workspace: Workspace, row: _Row, done: Recovered) -> None:
    """Walk to the target's directory through the workspace's confined walk and rename
    relative to that held directory: a directory swapped for a link while the daemon
    was down cannot redirect the rename (nor the reads that judge it)."""
    located = workspace.locate_real(row.path)
    if located is None or not _beside(row):
        done.unfinished.append(row.path)
        log.error(
            "recovery: %s (seq %d) is no longer where it was written (a directory on its"
            " path is gone, moved or replaced by a link); not rolled forward",
            row.path,
            row.seq,
        )
        return
    try:
        current = _current_sha(workspace, located.parent.fd, located.name, row)
        _finish_in(located.parent.fd, located.name, current, row, done)
    except OSError as e:
        done.unfinished.append(row.path)
        log.error("recovery: %s (seq %d) could not be finished: %s", row.path, row.seq, e)
    finally:
        located.parent.close()


def _current_sha(workspace: Workspace, directory: int, name: str, row: _Row) -> str:
    """What the target holds now. A removal may be of a link (removed like `rm` does),
    whose content the batch judged through the link: read it the confined way."""
    current = held.content_sha(directory, name)
    if current == NOT_REGULAR and row.sha256 == ABSENT:
        found = workspace.fingerprint(row.path)
        return found.sha256 if found is not None else NOT_REGULAR
    return current


def _finish_in(directory: int, name: str, current: str, row: _Row, done: Recovered) -> None:
    if current == row.sha256:
        done.already_done += 1
        _keep_displaced(directory, name, row)
        return
    if row.before_sha256 is not None and current != row.before_sha256:
        done.unfinished.append(row.path)
        log.warning(
            "recovery: %s changed while the daemon was down; seq %d is not rolled forward",
            row.path,
            row.seq,
        )
        return
    if row.sha256 == ABSENT:
        held.remove(directory, name)
        held.sync(directory)
    else:
        temp = PurePosixPath(row.temp).name
        if held.content_sha(directory, temp) != row.sha256:
            done.unfinished.append(row.path)
            log.error("recovery: %s (seq %d): its temp file is gone or damaged", row.path, row.seq)
            return
        held.replace(directory, temp, name)
    done.rolled_forward.append(row.path)
    log.info("recovery: finished the write of %s (seq %d)", row.path, row.seq)


def _keep_displaced(directory: int, name: str, row: _Row) -> None:
    """A write swapped in but killed before it judged what it displaced: that file lies
    under the temp file's name (daemon/landing/exchange.py). When it is not the content the batch
    planned against, an outside writer's change is in it: kept beside the target as
    `NAME.editjournal-displaced-SEQ` (the start-up scan records it), never removed."""
    if row.sha256 == ABSENT:
        return
    temp = PurePosixPath(row.temp).name
    found = held.content_sha(directory, temp)
    if found in (ABSENT, NOT_REGULAR, row.before_sha256, row.sha256):
        return  # nothing there, or nothing of anyone else's: the temp cleanup removes it
    kept = f"{name}.editjournal-displaced-{row.seq}"
    try:
        held.rename(directory, temp, kept)
    except OSError as e:
        log.error("recovery: could not keep the file displaced by seq %d: %s", row.seq, e)
        return
    log.warning(
        "recovery: %s held an outside change when seq %d landed: kept as %s",
        row.path,
        row.seq,
        kept,
    )


def _beside(row: _Row) -> bool:
    """A write's temp file is in its target's directory (a removal has none)."""
    if row.sha256 == ABSENT:
        return True
    return PurePosixPath(row.temp).parent == PurePosixPath(row.path).parent
