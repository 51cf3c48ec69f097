"""Writes the journal has committed but the disk may not have yet; finishing them at start.

The group commit (daemon/landing/writeround.py) commits a batch's events, each
write's new content stored as a blob, together with one `pending_writes` row per
temp file, and renames the temp files only after that commit; a row goes once the
flusher (daemon/landing/flusher.py) has fsynced its file and directory. A kill -9
between the commit and the rename, or a power cut before the flush, would leave
the journal saying `edit_applied` for content the disk does not hold, and the next
start would record a fake outside change "reverting" it. Instead, `recover` rolls
forward: for each path, the last row's content is put in place (its temp file when
that still holds it, else the journal's blob), provided the file still holds what
the batch started from (a change made while the daemon was down is never
clobbered; the start-up scan then records it). After a reboot (the row's boot id
is not this one's), what the file holds may be what the power cut left of it, so
the write is rolled forward whatever the file holds, and a content that is neither
the old one nor empty is kept beside it as `NAME.editjournal-displaced-SEQ`:
nothing is lost either way. Removals are finished the same way. A removal moves
its file aside under a name chosen before the commit and kept in its row
(`displaced`): a kill -9 between that move and the landing's look at the file leaves
it there, and recovery removes it when it holds what the batch removed, or keeps it
as `NAME.editjournal-displaced-SEQ` when it holds anyone else's change. All of it
happens relative to the target's directory as the workspace's confined walk holds it
(`Workspace.locate_real`), never through a full path: a directory swapped for a link
while the daemon was down leaves the write unfinished, never redirected.

After a run that did not stop cleanly, leftover `.editjournal-tmp-*` files (a
crash before the commit) are removed: nothing journaled names them. A transient
`.editjournal-displaced-<random>` file no row names (an older daemon's removal, or
a write's own content put aside in a race) may hold someone's bytes, so it is not
removed but moved out of the workspace into `.editjournal/displaced/` (its
directory below that), where `git add -A` and the watcher never see it.

These rows are bookkeeping, outside the hash chain: they never say what happened,
only what is left to do. This module must not touch anything else in the journal.
"""

from __future__ import annotations

import logging
import os
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import NamedTuple

from editjournal.daemon.files import held
from editjournal.daemon.files.filesnapshot import EMPTY_SHA256
from editjournal.daemon.files.held import ABSENT, NOT_REGULAR
from editjournal.daemon.files.tempfiles import DISPLACED_PREFIX
from editjournal.daemon.files.workspace import Workspace
from editjournal.daemon.store.journal import Journal
from editjournal.schemas.errors import ToolError

REMOVAL = "removal:"  # the temp column of a removal (it has no temp file)
SCHEMA = (
    "CREATE TABLE IF NOT EXISTS pending_writes ("
    " temp TEXT PRIMARY KEY, seq INTEGER NOT NULL, path TEXT NOT NULL,"
    " sha256 TEXT NOT NULL, before_sha256 TEXT, boot TEXT, displaced TEXT)"
)
# rows of an older daemon have no boot: theirs were fsynced before the commit
BOOT_COLUMN = "ALTER TABLE pending_writes ADD COLUMN boot TEXT"
# rows of an older daemon have no displaced name: its removals' names were random
DISPLACED_COLUMN = "ALTER TABLE pending_writes ADD COLUMN displaced TEXT"
INSERT = (
    "INSERT OR REPLACE INTO pending_writes"
    " (temp, seq, path, sha256, before_sha256, boot, displaced) VALUES (?, ?, ?, ?, ?, ?, ?)"
)
_BOOT_ID = Path("/proc/sys/kernel/random/boot_id")
DELETE = "DELETE FROM pending_writes WHERE temp = ?"
ORPHANS_DIR = "displaced"  # in the state directory: displaced files no row named
_ORPHAN = re.compile(re.escape(DISPLACED_PREFIX) + r"[0-9a-f]{16}")  # tempfiles.displaced_name
log = logging.getLogger("editjournal")


def removal_key(path: str) -> str:
    return REMOVAL + path


class _Row(NamedTuple):
    temp: str
    seq: int
    path: str
    sha256: str
    before_sha256: str | None
    boot: str | None  # the boot it was written in (None: an older daemon's, fsynced)
    displaced: str | None  # a removal: the name its file is moved aside to as it lands


def boot_id() -> str:
    """This boot's id (Linux); "" where there is none, so no start counts as a reboot."""
    try:
        return _BOOT_ID.read_text().strip()
    except OSError:
        return ""


@dataclass
class Recovered:
    """What start-up recovery did (logged, and reported by `status`)."""

    rolled_forward: list[str] = field(default_factory=list)
    already_done: int = 0
    unfinished: list[str] = field(default_factory=list)
    temps_removed: int = 0
    # (seq, path) of each write left unfinished, and the seqs of the writes now in their
    # files: what a keyed write's remembered reply must say (daemon/model/idempotency.py)
    unfinished_writes: list[tuple[int, str]] = field(default_factory=list)
    finished_writes: list[int] = field(default_factory=list)
    # files removals had moved aside when a kill -9 came (removed), and the files kept
    # beside their targets as NAME.editjournal-displaced-SEQ, with the seq that displaced
    # each: journaled at start-up as created (the start-up scan looks at known files only)
    displaced_removed: int = 0
    displaced_kept: list[str] = field(default_factory=list)
    # transient displaced files no row named, moved into .editjournal/displaced/
    displaced_moved: list[str] = field(default_factory=list)
    kept_writes: list[tuple[int, str]] = field(default_factory=list)

    def leave(self, row: _Row) -> None:
        """`row`'s write is not rolled forward: it is not in the file."""
        self.unfinished.append(row.path)
        self.unfinished_writes.append((row.seq, row.path))

    def keep(self, row: _Row, name: str) -> None:
        """A file `row`'s write displaced is kept beside its target as `name`."""
        path = str(PurePosixPath(row.path).with_name(name))
        self.displaced_kept.append(path)
        self.kept_writes.append((row.seq, path))


def prepare(journal: Journal) -> None:
    """Create the table if this journal predates it, or its `boot` and `displaced` columns."""
    conn = journal.db.conn
    with conn:
        conn.execute(SCHEMA)
        columns = {row[1] for row in conn.execute("PRAGMA table_info(pending_writes)")}
        if "boot" not in columns:
            conn.execute(BOOT_COLUMN)
        if "displaced" not in columns:
            conn.execute(DISPLACED_COLUMN)


def recover(workspace: Workspace, journal: Journal, unclean: bool, boot: str) -> Recovered:
    """Finish every write committed but not in place, or not flushed before a reboot;
    after an unclean stop, remove leftover temp files. Then forget the rows: each has
    been finished or judged. `boot`: this boot's id (`boot_id()`)."""
    prepare(journal)
    columns = "temp, seq, path, sha256, before_sha256, boot, displaced"
    found = journal.db.execute(f"SELECT {columns} FROM pending_writes ORDER BY seq")
    rows = [_Row(*r) for r in found]
    latest = {row.path: row for row in rows}  # the last write of each path is what counts
    done = Recovered()
    for row in latest.values():
        rebooted = row.boot is not None and row.boot != boot
        _finish(workspace, journal, _Pending(row, rebooted), done)
    if rows:
        with journal.db.conn:
            journal.db.conn.execute("DELETE FROM pending_writes")
    if unclean or rows:
        done.temps_removed = held.remove_temps(workspace.root)
    if unclean:
        done.displaced_moved = _move_orphans(workspace)
    return done


def _move_orphans(workspace: Workspace) -> list[str]:
    """Move every transient displaced file left in the workspace into the state
    directory's `displaced/` (renamed relative to its held directory, never followed
    through a link); their workspace-relative paths."""
    moved: list[str] = []
    into = workspace.state_dir / ORPHANS_DIR
    for top, subdirs, files, directory in os.fwalk(workspace.root):
        subdirs[:] = [d for d in subdirs if d not in (".git", workspace.state_dir.name)]
        for name in files:
            if _ORPHAN.fullmatch(name) is None:
                continue
            rel = os.path.relpath(os.path.join(top, name), workspace.root)
            try:
                (into / rel).parent.mkdir(parents=True, exist_ok=True)
                os.rename(name, into / rel, src_dir_fd=directory)
            except OSError as e:  # another file system, say: left where it is
                log.error("recovery: could not move %s out of the workspace: %s", rel, e)
                continue
            moved.append(rel)
            log.warning("recovery: %s (named by no row) moved to %s", rel, into / rel)
    return moved


class _Pending(NamedTuple):
    row: _Row
    rebooted: bool  # written before a reboot: the page cache that held it is gone


def _finish(workspace: Workspace, journal: Journal, pending: _Pending, done: Recovered) -> None:
    """Walk to the target's directory through the workspace's confined walk and rename
    relative to that held directory: a directory swapped for a link while the daemon
    was down cannot redirect the rename (nor the reads that judge it)."""
    row = pending.row
    located = workspace.locate_real(row.path)
    if located is None or not _beside(row):
        done.leave(row)
        log.error(
            "recovery: %s (seq %d) is no longer where it was written (a directory on its"
            " path is gone, moved or replaced by a link); not rolled forward",
            row.path,
            row.seq,
        )
        return
    try:
        current = _current_sha(workspace, located.parent.fd, located.name, row)
        _finish_in(_Target(located.parent.fd, located.name, journal), current, pending, done)
    except (OSError, ToolError) as e:
        done.leave(row)
        log.error("recovery: %s (seq %d) could not be finished: %s", row.path, row.seq, e)
    finally:
        located.parent.close()


class _Target(NamedTuple):
    directory: int  # held
    name: str
    journal: Journal  # where the write's content is when its temp file no longer is


def _current_sha(workspace: Workspace, directory: int, name: str, row: _Row) -> str:
    """What the target holds now. A removal may be of a link (removed like `rm` does),
    whose content the batch judged through the link: read it the confined way."""
    current = held.content_sha(directory, name)
    if current == NOT_REGULAR and row.sha256 == ABSENT:
        found = workspace.fingerprint(row.path)
        return found.sha256 if found is not None else NOT_REGULAR
    return current


def _finish_in(target: _Target, current: str, pending: _Pending, done: Recovered) -> None:
    row, directory, name = pending.row, target.directory, target.name
    if current == row.sha256:
        done.already_done += 1
        done.finished_writes.append(row.seq)
        _keep_displaced(directory, name, row, done)
        _clean_removed(directory, name, row, done)
        return
    if row.before_sha256 is not None and current != row.before_sha256:
        if not pending.rebooted or current == NOT_REGULAR:  # a link or a directory: someone's
            done.leave(row)
            log.warning(
                "recovery: %s changed while the daemon was down; seq %d is not rolled forward",
                row.path,
                row.seq,
            )
            return
        _keep_aside(directory, name, current, row, done)
    if row.sha256 == ABSENT:
        held.remove(directory, name)
        held.sync(directory)
    elif not _put_in_place(target, row):
        done.leave(row)
        log.error(
            "recovery: %s (seq %d): its content is in no temp file nor blob", row.path, row.seq
        )
        return
    done.rolled_forward.append(row.path)
    done.finished_writes.append(row.seq)
    log.info("recovery: finished the write of %s (seq %d)", row.path, row.seq)


def _put_in_place(target: _Target, row: _Row) -> bool:
    """The write's content at the target, durably: its temp file when that still holds
    it (a kill before the rename), else rebuilt from the journal's blob (a power cut
    took the unflushed file or temp file). False when neither has it."""
    directory, name = target.directory, target.name
    temp = PurePosixPath(row.temp).name
    if held.content_sha(directory, temp) == row.sha256:
        held.replace(directory, temp, name)
        return True
    try:
        data = target.journal.blob(row.sha256)
    except ToolError as e:  # journal_corrupt: the blob is damaged
        log.error("recovery: the content of %s (seq %d) is damaged: %s", row.path, row.seq, e)
        return False
    if data is None:
        return False
    held.write(directory, name, data, row.path)
    return True


def _keep_aside(directory: int, name: str, current: str, row: _Row, done: Recovered) -> None:
    """Before a write rolls forward over what a reboot left at its target: anything but
    the old content, nothing, or an empty file is kept as `NAME.editjournal-displaced-SEQ`
    (it may be what someone saved while the daemon was down)."""
    if current in (ABSENT, EMPTY_SHA256, row.before_sha256):
        return
    kept = f"{name}.editjournal-displaced-{row.seq}"
    held.rename(directory, name, kept)
    done.keep(row, kept)
    log.warning(
        "recovery: %s held other content after a reboot when seq %d was rolled forward: kept as %s",
        row.path,
        row.seq,
        kept,
    )


def _keep_displaced(directory: int, name: str, row: _Row, done: Recovered) -> None:
    """A write swapped in but killed before it judged what it displaced: that file lies
    under the temp file's name (daemon/landing/exchange.py). When it is not the content the batch
    planned against, an outside writer's change is in it: kept beside the target as
    `NAME.editjournal-displaced-SEQ` (journaled at start-up), never removed."""
    if row.sha256 == ABSENT:
        return
    temp = PurePosixPath(row.temp).name
    found = held.content_sha(directory, temp)
    if found in (ABSENT, NOT_REGULAR, row.before_sha256, row.sha256):
        return  # nothing there, or nothing of anyone else's: the temp cleanup removes it
    kept = _keep_beside(directory, temp, name, row)
    if kept is not None:
        done.keep(row, kept)


def _clean_removed(directory: int, name: str, row: _Row, done: Recovered) -> None:
    """A removal killed after it moved its file aside, before the landing judged it: the
    file lies under the name its row recorded (not journaled, not ignored, and taken by
    `git add -A` if left). Holding what the batch removed (or unchecked), it goes;
    holding anything else (an outside writer's change, a link), it is kept beside the
    target as `NAME.editjournal-displaced-SEQ` (journaled at start-up)."""
    aside = row.displaced
    if row.sha256 != ABSENT or not aside or PurePosixPath(aside).name != aside:
        return  # not a removal, an older daemon's row, or a name that is not ours
    found = held.content_sha(directory, aside)
    if found == ABSENT:
        return
    if row.before_sha256 is None or found == row.before_sha256:
        held.remove(directory, aside)
        held.sync(directory)
        done.displaced_removed += 1
        log.info("recovery: removed the file seq %d moved aside from %s", row.seq, row.path)
        return
    kept = _keep_beside(directory, aside, name, row)
    if kept is not None:
        done.keep(row, kept)


def _keep_beside(directory: int, source: str, name: str, row: _Row) -> str | None:
    """`source` renamed to `NAME.editjournal-displaced-SEQ`; that name, or None."""
    kept = f"{name}.editjournal-displaced-{row.seq}"
    try:
        held.rename(directory, source, kept)
    except OSError as e:
        log.error("recovery: could not keep the file displaced by seq %d: %s", row.seq, e)
        return None
    log.warning(
        "recovery: %s held an outside change when seq %d landed: kept as %s",
        row.path,
        row.seq,
        kept,
    )
    return kept


def _beside(row: _Row) -> bool:
    """A write's temp file is in its target's directory (a removal has none)."""
    if row.sha256 == ABSENT:
        return True
    return PurePosixPath(row.temp).parent == PurePosixPath(row.path).parent
