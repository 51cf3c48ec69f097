"""A workspace's identity: generated once, kept in its state directory.

A journal shipped off the machine (daemon/fleet) must say which workspace it is
even after the directory is moved or copied, and two checkouts of one repository
must not be taken for one: the path cannot be the name. The identity is a random
UUID written once to `.editjournal/workspace-id` (created exclusively, so two
processes starting at once agree on one), shown by `status` and sent by `ship`
with the host and path as mere metadata. A copied workspace copies its identity
too; `editjournal ship` refuses to mix two journals under one id (their chains
differ), so a copy that ships needs `--new-identity` (say so where it is refused).
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path

IDENTITY_FILE = "workspace-id"


def workspace_id(state_dir: Path) -> str:
    """The workspace's id, generated on first use (the state directory must exist)."""
    path = state_dir / IDENTITY_FILE
    try:
        return _read(path)
    except FileNotFoundError:
        pass
    new = str(uuid.uuid4())
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:  # another process made it first: its id is the one
        return _read(path)
    with os.fdopen(fd, "w") as out:
        out.write(new + "\n")
        out.flush()
        os.fsync(out.fileno())
    return new


def _read(path: Path) -> str:
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd) as found:
        text = found.read().strip()
    return str(uuid.UUID(text))  # a damaged file is an error, never a silent new id


def new_workspace_id(state_dir: Path) -> str:
    """A new id for this workspace (a copy of another must not ship under the
    original's); the old one is gone."""
    (state_dir / IDENTITY_FILE).unlink(missing_ok=True)
    return workspace_id(state_dir)
