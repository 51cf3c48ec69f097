"""Landing one write without losing what an outside writer did meanwhile.

The journal has committed the write; now its content must take the target's
place. Someone may have changed the file since the batch last looked: an editor's
save (temp file + rename), an append. A plain rename would silently drop that.
Instead, one write lands like this (daemon/renames.py):

1. exchange the temp file with the target: the displaced file stays readable;
2. if it holds what the write was planned against (or this very content), drop it:
   done — the common case, judged by stat alone when it is the daemon's own
   last write (daemon/ownwrites.py);
3. otherwise put it back at once (a second exchange: the same inode, so what it
   holds goes back in place) — the target showed the write's content for the
   time of one read and compare — and carry the write's change over it by a
   three-way merge (daemon/text/merge.py). Where they touch different lines the
   merged content is prepared, fsynced and lands by the same steps, planned
   against the content just put back; where they conflict the outside content
   stays and the write is refused.

Every displaced content is reported (`Observed`) so the server journals it; the
merged content is journaled as a carry by the writing agent. A displaced file is
not unlinked blind: it is held open for a grace check (daemon/latewrites.py), so
bytes a writer puts into it a moment later are carried in too. What is left: a
writer that keeps an fd open on the old inode past that grace (README
"Guarantees").
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass, field

from editjournal.daemon.encoding import utf8_text
from editjournal.daemon.limits import count_lines
from editjournal.daemon.pendingwrites import ABSENT
from editjournal.daemon.text.merge import carry_over
from editjournal.daemon.workspace import PreparedWrite, Workspace
from editjournal.schemas.errors import ToolError

MAX_LANDINGS = 4  # merges of one write over outside changes, before it gives way to them
_UNREADABLE = "unreadable:"
log = logging.getLogger("editjournal")


@dataclass(frozen=True, slots=True)
class Observed:
    """A content found at the target that the write had not planned against."""

    data: bytes | None  # None: no file, or not readable as one (over the size limit)
    sha256: str  # ABSENT: no file
    size: int


@dataclass
class Landed:
    """How a write landed: the outside contents it met, in order, and what it left."""

    observed: list[Observed] = field(default_factory=list)
    carried: PreparedWrite | None = None  # the merged content now in place
    refused: bool = False  # the outside content stays; the write's change is not in the file
    checked: bool = True  # False: no exchange here, a plain rename (nothing compared)


@dataclass
class _Attempt:
    """The write being landed and the content it expects to displace."""

    write: PreparedWrite
    expected: str
    expected_data: bytes | None


@dataclass(frozen=True)
class _Where:
    """The workspace, the write's real path (the key of daemon/ownwrites.py), the limit."""

    workspace: Workspace
    key: str
    max_lines: int
    seq: int  # the event that journaled the write

    def retire(
        self, write: PreparedWrite, name: str | None, held: bytes | None, changed: bool = False
    ) -> None:
        """A displaced file that held `held` goes, held open for its grace check
        (daemon/latewrites.py): a write that reaches it later is not lost. `changed`: it
        holds more already, to be carried at once."""
        if name is None:
            return
        if held is None:
            write.drop_displaced(name)
            return
        late = self.workspace.late_writes
        late.hold(write.directory.fd, name, (self.key, self.seq), held, changed)


def land(
    workspace: Workspace,
    key: str,
    write: PreparedWrite,
    expected: tuple[str | None, bytes | None],
    limits: tuple[int, int],
) -> Landed:
    """Put `write` (journaled by event `limits[1]`) in place over a target expected to
    hold `expected` (its SHA-256 or ABSENT, and its bytes; None: unchecked), carrying it
    over outside changes of at most `limits[0]` lines. ToolError when the first swap
    fails (nothing was changed then)."""
    landed = Landed()
    if expected[0] is None:
        _drop(write, write.swap_in().displaced)
        return landed
    where = _Where(workspace, key, *limits)
    attempt = _Attempt(write, expected[0], expected[1])
    for _ in range(MAX_LANDINGS):
        following = _land_once(where, attempt, landed)
        if following is None:
            return landed
        attempt = following
    landed.refused, landed.carried = True, None
    return landed


def _land_once(where: _Where, attempt: _Attempt, landed: Landed) -> _Attempt | None:
    """One landing; the next attempt when an outside change was met and carried over.

    The target is looked at first: an outside change made since the batch looked is
    met here, before anything is swapped, so no reader ever sees the write's content
    without it. Only one made in the instant between this look and the swap is met
    after it, and then put back at once."""
    write = attempt.write
    now = _displaced(where, write, write.target.name, attempt.expected)
    if not _as_planned(now, attempt) and not now.sha256.startswith(_UNREADABLE):
        if write.temp is not None:
            write.drop_displaced(write.temp.name)  # never swapped in: its temp file goes
        return _met(where, attempt, now, landed)
    swap = write.swap_in()
    if not swap.checked:
        landed.checked = False
        return None
    found = _displaced(where, write, swap.displaced, attempt.expected)
    if _as_planned(found, attempt):
        known = found.data if found.data is not None else _known(attempt, write, found)
        where.retire(write, swap.displaced, known)
        return None
    _put_back(where, write, swap.displaced)
    return _met(where, attempt, found, landed)


def _as_planned(found: Observed, attempt: _Attempt) -> bool:
    """The target holds what the write planned against, or the write's own content."""
    return found.sha256 in (attempt.expected, _sha(attempt.write))


def _met(where: _Where, attempt: _Attempt, found: Observed, landed: Landed) -> _Attempt | None:
    """An outside change met: recorded, and the write carried over it (the next attempt)
    or, when they conflict, refused (the outside content stays in place)."""
    log.warning("%s: an outside change met a write as it landed", where.key)
    landed.observed.append(found)
    merged = _merged(where, attempt, found)
    if merged is None or merged == found.data:  # a conflict, or theirs holds ours already
        landed.refused, landed.carried = merged is None, None
        return None
    landed.carried = _prepared(where, merged)
    if landed.carried is None:
        landed.refused = True
        return None
    return _Attempt(landed.carried, found.sha256, found.data)


def _displaced(where: _Where, write: PreparedWrite, name: str | None, expected: str) -> Observed:
    """What the swap displaced; the daemon's own last write of the path, untouched since,
    is known by its stat alone."""
    if name is None:
        return Observed(None, ABSENT, 0)
    workspace = where.workspace
    try:
        try:
            info = write.stat_displaced(name)
        except FileNotFoundError:
            return Observed(None, ABSENT, 0)
        if workspace.own_writes.displaced_is_own(where.key, expected, info):
            return Observed(None, expected, info.st_size)
        read = write.read_displaced(name, workspace.max_file_size)
    except OSError as e:  # unreadable: judged changed, and put back as it is
        log.error("%s: the file a write displaced could not be read: %s", where.key, e)
        return Observed(None, f"{_UNREADABLE}{e.errno}", 0)
    return Observed(read.data, read.sha256, read.info.st_size)


def _put_back(where: _Where, write: PreparedWrite, name: str | None) -> None:
    """Put the displaced file (or the absence of one) back. The write's own content,
    displaced in turn, is retired like any displaced file: what someone appended to it
    in that instant is carried into the file as a late write."""
    back = write.restore(name)
    if back is None:
        return
    found = _displaced(where, write, back, _sha(write))
    where.retire(write, back, write.snapshot.data, changed=found.sha256 != _sha(write))


def _merged(where: _Where, attempt: _Attempt, found: Observed) -> bytes | None:
    """The write's change carried over `found`; None on a conflict."""
    if found.data is None and found.sha256 != ABSENT:
        return None  # over the size limit, or unreadable: it stays as it is
    if attempt.expected != ABSENT and attempt.expected_data is None:
        return None  # the base is unknown: no merge can be trusted
    write = attempt.write
    ours = None if write.temp is None else write.snapshot.data
    carried = carry_over(attempt.expected_data, ours, found.data)
    if carried is None:
        return None
    text = utf8_text(carried.data)
    if text is None or count_lines(text) > where.max_lines:
        return None
    return carried.data


def _prepared(where: _Where, data: bytes) -> PreparedWrite | None:
    """The merged content in a fsynced temp file beside the target."""
    sha = hashlib.sha256(data).hexdigest()
    try:
        return where.workspace.prepare_write(where.key, data, sha256=sha)
    except ToolError as e:
        log.error("%s: the carried content could not be prepared: %s", where.key, e)
        return None


def _known(attempt: _Attempt, write: PreparedWrite, found: Observed) -> bytes | None:
    """The bytes of a displaced file known by stat alone: the expected or this content."""
    if found.sha256 == attempt.expected:
        return attempt.expected_data
    return write.snapshot.data if write.temp is not None else None


def _drop(write: PreparedWrite, name: str | None) -> None:
    if name is not None:
        write.drop_displaced(name)


def _sha(write: PreparedWrite) -> str:
    return ABSENT if write.temp is None else write.snapshot.sha256
