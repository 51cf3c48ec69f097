"""What a workspace file held at one moment: the values the file layer hands out.

A `FileSnapshot` is served text (what reads, edits and the journal work on); a
`Fingerprint` is whatever a regular file holds, text or not (what the watcher
compares). Plain values: this module reads nothing and decides nothing.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()  # an empty (or absent) file's content


@dataclass(frozen=True, slots=True)
class FileSnapshot:
    """One file's exact content at one moment, as read from or written to disk."""

    path: str
    data: bytes
    text: str
    sha256: str
    size: int
    mtime_ns: int
    # the file had no write bit when read: a writer refuses it before planning (one
    # check of the mode the read already took; the landing's own check still decides)
    read_only: bool = False


@dataclass(frozen=True, slots=True)
class Fingerprint:
    """What a file is now, whatever it holds (see `Workspace.fingerprint`)."""

    path: str
    size: int
    mtime_ns: int
    sha256: str
    data: bytes
    text: str | None  # None: binary, not UTF-8, or over the size limit
