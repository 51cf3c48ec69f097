"""Landing one write without losing what an outside writer did meanwhile.

The journal has committed the write; now its content must take the target's
place. Someone may have changed the file since the batch last looked: an editor's
save (temp file + rename), an append. A plain rename would silently drop that.
Instead, one write lands like this (daemon/files/renames.py):

1. look at the target: if it holds something else than what the write was
   planned against, that outside change is met here, before anything is swapped;
2. otherwise exchange the temp file with the target: the displaced file stays
   readable; if it still holds what was planned against, it goes (held open a
   moment for late writes, daemon/files/latewrites.py): done — the common case, judged
   by stat alone when it is the daemon's own last write (daemon/files/ownwrites.py);
3. if an outside change slipped in between the look and the exchange, the
   displaced file is put back at once (a second exchange: the same inode);
4. a change met is carried over: lines the outside writer only appended are
   appended to the temp file (cheap, so a busy logger cannot outpace it); any
   other change is merged three ways (daemon/text/merge.py) into a new temp file;
   either lands by the same steps, planned against the content just met. Where
   the two conflict, the outside content stays and the write is refused.

Comparisons are by bytes and SHA-256s are computed after the race, never in it.
Every content met is reported (`Observed`) for the server to journal; the carried
content is journaled as a carry by the writing agent. The old inode is then held
for as long as anyone has it open for writing (daemon/files/latewrites.py), so a
writer descheduled between its open and its write loses nothing either.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
from dataclasses import dataclass, field

from editjournal.daemon.files.fileio import translate
from editjournal.daemon.files.preparedwrite import PreparedWrite, Swap
from editjournal.daemon.files.workspace import Workspace
from editjournal.daemon.landing.pendingwrites import ABSENT
from editjournal.daemon.text.merge import carry_over
from editjournal.schemas.errors import ToolError

MAX_LANDINGS = 16  # attempts of one write to land over outside changes, before it gives way
_UNREADABLE = "unreadable:"
_ENDS_LINE = (b"\n", b"\r")
log = logging.getLogger("editjournal")


class Observed:
    """One content: bytes (None: no file, over the size limit, or known by stat alone)
    and a SHA-256 computed when first asked, never inside the race."""

    __slots__ = ("_sha256", "data", "size")

    def __init__(self, data: bytes | None, size: int, sha256: str | None = None) -> None:
        self.data = data
        self.size = size
        self._sha256 = sha256 or None

    @classmethod
    def absent(cls) -> Observed:
        return cls(None, 0, ABSENT)

    @property
    def sha256(self) -> str:
        if self._sha256 is None:
            self._sha256 = hashlib.sha256(self.data or b"").hexdigest()
        return self._sha256

    @property
    def known_sha256(self) -> str | None:
        """The SHA-256 if it is already known (nothing is hashed to answer)."""
        return None if self.is_absent else self._sha256

    @property
    def is_absent(self) -> bool:
        return self._sha256 == ABSENT

    @property
    def unreadable(self) -> bool:
        return self._sha256 is not None and self._sha256.startswith(_UNREADABLE)

    def same_as(self, other: Observed) -> bool:
        """The same content: by bytes where both are known, else by SHA-256."""
        if self.is_absent or other.is_absent:
            return self.is_absent and other.is_absent
        if self.data is not None and other.data is not None:
            return self.data == other.data
        known = (self._sha256 or self.data is not None, other._sha256 or other.data is not None)
        return all(known) and self.sha256 == other.sha256


@dataclass
class Landed:
    """How a write landed: the outside contents it met, in order, and what it left."""

    observed: list[Observed] = field(default_factory=list)
    carried: PreparedWrite | None = None  # the carried content now in place
    refused: bool = False  # the outside content stays; the write's change is not in the file
    kept_changing: bool = False  # refused because every attempt met yet another change
    checked: bool = True  # False: no exchange here, a plain rename (nothing compared)


@dataclass
class _Attempt:
    """The write being landed, its content, and the content it expects to displace."""

    write: PreparedWrite
    expected: Observed

    @property
    def ours(self) -> Observed:
        snapshot = self.write.snapshot
        if self.write.temp is None:
            return Observed.absent()
        return Observed(snapshot.data, snapshot.size, snapshot.sha256)

    def as_planned(self, found: Observed) -> bool:
        """The target holds what the write planned against, or the write's own content."""
        return found.same_as(self.expected) or found.same_as(self.ours)


@dataclass(frozen=True)
class _Where:
    """The workspace, the write's real path (the key of daemon/files/ownwrites.py), limits."""

    workspace: Workspace
    key: str
    max_lines: int
    seq: int  # the event that journaled the write
    aside: str | None = None  # a removal: the name its row recorded for the file moved aside

    def retire(
        self, write: PreparedWrite, name: str | None, held: bytes | None, changed: bool = False
    ) -> None:
        """A displaced file that held `held` goes, held open while anyone may write
        into it (daemon/files/latewrites.py): a write that reaches it later is not lost.
        `changed`: it holds more already, to be carried at once."""
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
    aside: str | None = None,
) -> Landed:
    """Put `write` (journaled by event `limits[1]`) in place over a target expected to
    hold `expected` (its SHA-256 or ABSENT, and its bytes; None: unchecked), carrying it
    over outside changes of at most `limits[0]` lines. `aside`: for a removal, the name
    its `pending_writes` row recorded for the file it moves away. ToolError when the
    first swap fails (nothing was changed then)."""
    landed = Landed()
    where = _Where(workspace, key, *limits, aside)
    if expected[0] is None:
        _drop(write, _swap_in(where, write).displaced)
        return landed
    planned = Observed.absent() if expected[0] == ABSENT else Observed(expected[1], 0, expected[0])
    attempt = _Attempt(write, planned)
    for _ in range(MAX_LANDINGS):
        following = _land_once(where, attempt, landed)
        if following is None:
            _settle(landed)
            return landed
        attempt = following
    log.warning("%s: kept changing as the write landed; it gives way", where.key)
    if attempt.write.temp is not None:
        attempt.write.drop_displaced(attempt.write.temp.name)
    landed.refused, landed.kept_changing, landed.carried = True, True, None
    return landed


def _settle(landed: Landed) -> None:
    """The carried content, once in place: its SHA-256 (left out of the race), fsynced."""
    carried = landed.carried
    if carried is None or landed.refused:
        landed.carried = None
        return
    if not carried.snapshot.sha256:
        digest = hashlib.sha256(carried.snapshot.data).hexdigest()
        snapshot = dataclasses.replace(carried.snapshot, sha256=digest)
        carried = landed.carried = dataclasses.replace(carried, snapshot=snapshot)
    carried.sync_target()  # prepared unsynced, to keep each attempt short


def _land_once(where: _Where, attempt: _Attempt, landed: Landed) -> _Attempt | None:
    """One landing; the next attempt when an outside change was met and carried over.

    The target is looked at first, so an outside change made since the batch looked
    is met before anything is swapped and no reader sees the write without it. Only
    one made in the instant between this look and the swap is met after it, and is
    then put back at once."""
    write = attempt.write
    now = _displaced(where, write, write.target.name, attempt.expected)
    if not attempt.as_planned(now) and not now.unreadable:
        return _met(where, attempt, now, landed, swapped=False)
    swap = _swap_in(where, write)
    if not swap.checked:
        landed.checked = False
        return None
    found = _displaced(where, write, swap.displaced, attempt.expected)
    if attempt.as_planned(found):
        where.retire(write, swap.displaced, _known(attempt, found))
        return None
    _put_back(where, attempt, swap.displaced)
    return _met(where, attempt, found, landed, swapped=True)


def _swap_in(where: _Where, write: PreparedWrite) -> Swap:
    """`write.swap_in()`, except that a removal with a recorded name moves its file aside
    under that name (pendingwrites.py finds it there after a kill -9), never a new one."""
    if write.temp is not None or where.aside is None:
        return write.swap_in()
    try:
        return write.move_away(where.aside)
    except OSError as exc:
        write.discard()
        raise translate(exc, write.snapshot.path) from exc


def _met(
    where: _Where, attempt: _Attempt, found: Observed, landed: Landed, swapped: bool
) -> _Attempt | None:
    """An outside change met: recorded, and the write carried over it (the next attempt)
    or, when they conflict, refused (the outside content stays in place)."""
    log.info("%s: an outside change met a write as it landed", where.key)
    landed.observed.append(found)
    write = attempt.write
    appended = None if swapped else _appended(attempt, found)
    extended = write.extended(appended) if appended is not None else None
    if extended is not None:  # only lines added at the end: the same temp file, extended
        landed.carried = extended
        return _Attempt(extended, found)
    if write.temp is not None:
        write.drop_displaced(write.temp.name)  # never in place (or put back): it goes
    merged = _merged(where, attempt, found)
    if merged is None:
        log.warning("%s: the write conflicts with an outside change: it gives way", where.key)
    if merged is None or (found.data is not None and merged == found.data):
        landed.refused, landed.carried = merged is None, None
        return None
    landed.carried = _prepared(where, merged)
    if landed.carried is None:
        landed.refused = True
        return None
    return _Attempt(landed.carried, found)


def _appended(attempt: _Attempt, found: Observed) -> bytes | None:
    """The whole lines `found` adds at the end of what was expected, when that is all
    it changed and the write's own content can take them after its last line."""
    expected, ours, now = attempt.expected.data, attempt.ours.data, found.data
    if expected is None or ours is None or now is None or attempt.write.temp is None:
        return None
    if len(now) <= len(expected) or not now.startswith(expected):
        return None
    if (expected and not expected.endswith(_ENDS_LINE)) or (ours and not ours.endswith(_ENDS_LINE)):
        return None
    return now[len(expected) :]


def _displaced(
    where: _Where, write: PreparedWrite, name: str | None, expected: Observed
) -> Observed:
    """What is under `name` in the write's directory: the daemon's own last write of the
    path, untouched since, is known by its stat alone."""
    if name is None:
        return Observed.absent()
    workspace = where.workspace
    try:
        try:
            info = write.stat_displaced(name)
        except FileNotFoundError:
            return Observed.absent()
        known = expected.known_sha256
        if known is not None and workspace.own_writes.displaced_is_own(where.key, known, info):
            return Observed(None, info.st_size, known)
        read = write.read_displaced(name, workspace.max_file_size)
    except OSError as e:  # unreadable: judged changed, and put back as it is
        log.error("%s: the file a write displaced could not be read: %s", where.key, e)
        return Observed(None, 0, f"{_UNREADABLE}{e.errno}")
    return Observed(read.data, read.info.st_size, read.sha256)


def _put_back(where: _Where, attempt: _Attempt, name: str | None) -> None:
    """Put the displaced file (or the absence of one) back. The write's own content,
    displaced in turn, is retired like any displaced file: what someone appended to it
    in that instant is carried into the file as a late write."""
    write = attempt.write
    back = write.restore(name)
    if back is None:
        return
    found = _displaced(where, write, back, attempt.ours)
    where.retire(write, back, write.snapshot.data, changed=not found.same_as(attempt.ours))


def _merged(where: _Where, attempt: _Attempt, found: Observed) -> bytes | None:
    """The write's change carried over `found`; None on a conflict."""
    if found.data is None and not found.is_absent:
        return None  # over the size limit, or unreadable: it stays as it is
    if not attempt.expected.is_absent and attempt.expected.data is None:
        return None  # the base is unknown: no merge can be trusted
    carried = carry_over(attempt.expected.data, attempt.ours.data, found.data)
    if carried is None or carried.data.count(b"\n") > where.max_lines:
        return None
    return carried.data


def _prepared(where: _Where, data: bytes) -> PreparedWrite | None:
    """The merged content in a temp file beside the target (hashed and fsynced once it
    has landed: each attempt must be short, or a busy writer outpaces it)."""
    try:
        return where.workspace.prepare_write(where.key, data, durable=False, sha256="")
    except ToolError as e:
        log.error("%s: the carried content could not be prepared: %s", where.key, e)
        return None


def _known(attempt: _Attempt, found: Observed) -> bytes | None:
    """The bytes of a displaced file judged as planned (known by stat alone, or read)."""
    if found.data is not None:
        return found.data
    if found.same_as(attempt.expected):
        return attempt.expected.data
    return attempt.ours.data


def _drop(write: PreparedWrite, name: str | None) -> None:
    if name is not None:
        write.drop_displaced(name)
