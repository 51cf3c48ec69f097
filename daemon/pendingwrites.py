"""Writes the journal has committed but the disk may not have yet; finishing them at start.

The group commit (daemon/writeround.py) commits a batch's events together with
one `pending_writes` row per fsynced temp file, and renames the temp files only
after that commit. A kill -9 (or a power loss) between the two would leave the
journal saying `edit_applied` for content the disk never got, and the next start
would record a fake outside change "reverting" it. Instead, `recover` rolls
forward: for each path, the last row's temp file is checked against the
journaled SHA-256 and renamed into place, provided the file still holds what the
batch started from (a change made while the daemon was down is never clobbered;
the start-up scan then records it). Removals are finished the same way.

After a run that did not stop cleanly, leftover `.editjournal-tmp-*` files (a
crash before the commit) are removed: nothing journaled names them.

These rows are bookkeeping, outside the hash chain: they never say what happened,
only what is left to do. This module must not touch anything else in the journal.
"""

from __future__ import annotations

import hashlib
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from editjournal.daemon.journal import Journal
from editjournal.daemon.workspace import STATE_DIR_NAME, TEMP_PREFIX, fsync_dir

ABSENT = "absent"  # the sha256 column of a removal: the file must not exist
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
_SKIPPED_DIRS = frozenset({".git", STATE_DIR_NAME})

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


def recover(root: Path, journal: Journal, unclean: bool) -> Recovered:
    """Finish every write committed but not renamed; after an unclean stop, remove
    leftover temp files. Then forget the rows: each has been finished or judged."""
    prepare(journal)
    rows = [_Row(*r) for r in journal.db.execute("SELECT * FROM pending_writes ORDER BY seq")]
    latest = {row.path: row for row in rows}  # the last write of each path is what counts
    done = Recovered()
    for row in latest.values():
        _finish(root, row, done)
    if rows:
        with journal.db.conn:
            journal.db.conn.execute("DELETE FROM pending_writes")
    if unclean or rows:
        done.temps_removed = remove_temps(root)
    return done


def _finish(root: Path, row: _Row, done: Recovered) -> None:
    target = root / row.path
    if not _inside(root, target):
        done.unfinished.append(row.path)
        log.error("recovery: %s (seq %d) is outside the workspace now", row.path, row.seq)
        return
    current = _content_sha(target)
    if current == row.sha256:
        done.already_done += 1
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
        target.unlink(missing_ok=True)
    else:
        temp = root / row.temp
        if _content_sha(temp) != row.sha256:
            done.unfinished.append(row.path)
            log.error("recovery: %s (seq %d): its temp file is gone or damaged", row.path, row.seq)
            return
        os.replace(temp, target)
    fsync_dir(target.parent)
    done.rolled_forward.append(row.path)
    log.info("recovery: finished the write of %s (seq %d)", row.path, row.seq)


def _inside(root: Path, target: Path) -> bool:
    real = os.path.realpath(target.parent)
    return os.path.commonpath([real, str(root)]) == str(root)


def _content_sha(path: Path) -> str:
    """SHA-256 of a regular file's bytes; ABSENT when there is none."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return ABSENT


def remove_temps(root: Path) -> int:
    """Remove every `.editjournal-tmp-*` file in the workspace (not in .git/ or our state)."""
    removed = 0
    for directory, subdirs, files in os.walk(root):
        subdirs[:] = [d for d in subdirs if d not in _SKIPPED_DIRS]
        for name in files:
            if name.startswith(TEMP_PREFIX):
                try:
                    os.unlink(os.path.join(directory, name))
                except OSError as e:
                    log.warning("could not remove leftover temp file %s: %s", name, e)
                    continue
                removed += 1
    if removed:
        log.info("removed %d leftover temp file(s) of a crashed run", removed)
    return removed
