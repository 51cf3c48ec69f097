"""The chain anchor: the journal's tip (seq, hash), appended to a file outside the database.

Why: the hash chain proves that no event was changed *unless* whoever changed
one also recomputed every later hash, or simply cut the log's tail off. Both
leave a consistent database. So after every commit the tip is appended to
`.editjournal/chain-anchor`; at start the daemon compares the database with
the last anchored tip: a journal that ends before it (truncation) or whose
hash at the anchored seq differs (a rewrite) is refused.

With a key in `$XDG_CONFIG_HOME/editjournal/anchor.key` (outside the workspace;
create it with `editjournal.daemon.store.chainanchor.create_key()`), every record carries a
keyed BLAKE2b MAC, so someone who can write the workspace but not the user's
config cannot forge a new anchor to match a rewrite.

With a key the anchor is also kept twice: a second copy outside the workspace, in
`$XDG_STATE_HOME/editjournal/anchors/` (default `~/.local/state`), named by the
workspace's real path. Whoever can write the workspace can delete or cut the
first copy together with the journal's tail, not the second: the later of the
two counts, and a missing workspace copy (the journal having events) is
`journal_corrupt`; a missing second copy (an older journal, a moved workspace) is
made again from the first.
Someone with the user's own rights can still rewrite all of them (the key, both
copies and the journal): only a copy shipped off the machine witnesses that.

Durability: a record is appended only after a durable (fsynced) commit, and is
not fsynced itself: the anchor must never be on disk ahead of the database, and a
record lost to a power cut only makes the check a little older. Records have a
fixed size (56 bytes); a torn last record is ignored.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import struct
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

ANCHOR_FILE = "chain-anchor"
KEY_FILE = "anchor.key"
_RECORD = struct.Struct(">Q32s16s")  # seq, chain hash, MAC (zeros without a key)
_NO_MAC = bytes(16)


class Rewrite(NamedTuple):
    """The first anchored seq whose hash changed, and the last one before it that held."""

    first_changed: int
    last_agreeing: int


class AnchorRecord(NamedTuple):
    seq: int
    hash: str
    mac_ok: bool  # the MAC matches the key (or there is no key and no MAC)


def key_path() -> Path:
    config = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(config) / "editjournal" / KEY_FILE


def copy_path(journal: Path) -> Path:
    """Where the keyed second copy of `journal`'s anchor lives, outside its workspace."""
    state = os.environ.get("XDG_STATE_HOME") or os.path.join(
        os.path.expanduser("~"), ".local", "state"
    )
    real = os.path.realpath(journal)
    digest = hashlib.blake2b(real.encode(), digest_size=12).hexdigest()
    return Path(state) / "editjournal" / "anchors" / f"{digest}.anchor"


def load_key() -> bytes | None:
    """The user's anchor key, if they made one (a file only they can read)."""
    try:
        return key_path().read_bytes() or None
    except OSError:
        return None


def create_key() -> Path:
    """Make the user's anchor key (0600) unless there is one; return its path."""
    path = key_path()
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:
        return path
    with os.fdopen(fd, "wb") as f:
        f.write(os.urandom(32))
    return path


class Anchor:
    """The append-only anchor file of one journal (with a key: and its second copy)."""

    def __init__(self, path: Path, key: bytes | None = None, copy: Path | None = None) -> None:
        self.path = path
        self._key = key
        self.copy = copy if key is not None else None
        self._fds: list[int] = []

    @property
    def keyed(self) -> bool:
        return self._key is not None

    def append(self, seq: int, chain_hash: str) -> None:
        """Record the tip just committed (one write(2) of one fixed-size record per copy)."""
        if not self._fds:
            self._fds = [_open_for_append(p) for p in (self.path, self.copy) if p is not None]
        digest = bytes.fromhex(chain_hash)
        record = _RECORD.pack(seq, digest, self._mac(seq, digest))
        for fd in self._fds:
            os.write(fd, record)

    def missing(self) -> Path | None:
        """With a key, the workspace's anchor when it does not exist (deleted): the caller
        decides whether the journal had anything to anchor. The second copy, when missing
        beside a workspace anchor (a journal from before it, a workspace moved or renamed:
        the copy is named by the real path), is made from it first, never reported: only
        someone with the user's own rights could have removed it, and they could rewrite
        it as well."""
        if not self.keyed:
            return None
        if not self.path.exists():
            return self.path
        if self.copy is not None and not self.copy.exists():
            self._seed_copy(self.copy)
        return None

    def _seed_copy(self, copy: Path) -> None:
        data = self.path.read_bytes()
        fd = _open_for_append(copy)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)

    def last(self) -> AnchorRecord | None:
        """The later last whole record of the copies, None if none holds one: a copy cut
        short along with the journal's tail is outlived by the other."""
        found = [r for r in map(self._last_of, (self.path, self.copy)) if r is not None]
        return max(found, key=lambda r: r.seq) if found else None

    def _last_of(self, path: Path | None) -> AnchorRecord | None:
        if path is None:
            return None
        try:
            with open(path, "rb") as f:
                size = f.seek(0, os.SEEK_END)
                whole = size - size % _RECORD.size
                if whole == 0:
                    return None
                f.seek(whole - _RECORD.size)
                seq, digest, mac = _RECORD.unpack(f.read(_RECORD.size))
        except FileNotFoundError:
            return None
        return AnchorRecord(seq, digest.hex(), hmac.compare_digest(mac, self._mac(seq, digest)))

    def first_disagreement(self, hash_at: Callable[[int], str | None]) -> Rewrite | None:
        """Where the journal stopped agreeing with the anchor. A rewrite from event k on
        changes every later hash, so a binary search over the records finds the first
        anchored tip at or after k, and the last one before it that still agrees."""
        found, agreed = None, 0
        try:
            with open(self.path, "rb") as f:
                lo, hi = 0, f.seek(0, os.SEEK_END) // _RECORD.size
                while lo < hi:
                    mid = (lo + hi) // 2
                    f.seek(mid * _RECORD.size)
                    seq, digest, _ = _RECORD.unpack(f.read(_RECORD.size))
                    if hash_at(seq) == digest.hex():
                        lo, agreed = mid + 1, seq
                    else:
                        found, hi = seq, mid
        except FileNotFoundError:
            return None
        return Rewrite(found, agreed) if found is not None else None

    def _mac(self, seq: int, digest: bytes) -> bytes:
        if self._key is None:
            return _NO_MAC
        return hashlib.blake2b(
            seq.to_bytes(8, "big") + digest, key=self._key[:64], digest_size=16
        ).digest()

    def close(self) -> None:
        for fd in self._fds:
            os.close(fd)
        self._fds = []


def _open_for_append(path: Path) -> int:
    """Never through a symlink; the second copy's directory made private."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
    return os.open(path, flags, 0o600)


def anchor_problem(
    record: AnchorRecord,
    tip_seq: int,
    hash_at_seq: str | None,
    rewrite: Rewrite | None = None,
) -> tuple[int, str] | None:
    """(seq, why) when the journal disagrees with its last anchored tip, else None."""
    if not record.mac_ok:
        return record.seq, (
            f"the chain anchor's record for seq {record.seq} does not carry a valid MAC"
            f" for the key in {key_path()}: the anchor file was forged or altered"
        )
    if tip_seq < record.seq:
        return tip_seq + 1, (
            f"the journal ends at seq {tip_seq} but its chain anchor recorded seq"
            f" {record.seq}: events {tip_seq + 1}..{record.seq} were removed"
        )
    if hash_at_seq != record.hash:
        first, held = rewrite if rewrite is not None else (record.seq, 0)
        return first, (
            f"the hash of event {first} differs from the one anchored when it was"
            " committed: the journal was rewritten (its chain recomputed) from an event"
            f" in {held + 1}..{first} on"
        )
    return None
