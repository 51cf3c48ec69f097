"""Whether the daemon may replace or remove a file: what `open(path, "w")` could do.

The daemon writes by renaming a new file over the old one, which the kernel allows
wherever the directory is writable: it would replace a read-only file, one the
daemon's user may not write, a file another user owns (changing its owner), or one
of several hard links (splitting them). An editor or `rm` would refuse or ask first,
so the daemon refuses each of these, before anything is written, with the reason
and (where there is one) the fix.
"""

from __future__ import annotations

import os
import stat as stat_mod

from editjournal.daemon.files.confined import Located
from editjournal.daemon.files.fileio import require_regular, translate
from editjournal.schemas.errors import ErrorCode, ToolError


class Swapped(Exception):
    """The final name became a symlink between the walk and the stat: walk again."""


def replaceable(located: Located, rel: str) -> os.stat_result | None:
    """Refuse to replace what `open(path, "w")` could not write, or a hard-linked file."""
    try:
        info = os.stat(located.name, dir_fd=located.parent.fd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise translate(exc, rel) from exc
    if stat_mod.S_ISLNK(info.st_mode):
        raise Swapped
    require_regular(info, rel)
    if info.st_nlink > 1:
        raise ToolError(
            ErrorCode.HARD_LINKED,
            f"{rel} has {info.st_nlink} hard links; the daemon does not replace a linked file",
            {"path": rel, "links": info.st_nlink},
        )
    check_may_change(located, info, rel)
    return info


def check_may_change(located: Located, info: os.stat_result, rel: str) -> None:
    """Refuse to replace or remove what `open(path, "w")` could not write: a file without
    a write bit (for root too, as editors and `rm` ask first), one the daemon's user may
    not write, and one whose owner a replacement would change."""
    if not info.st_mode & 0o222:
        raise ToolError(
            ErrorCode.READ_ONLY_FILE,
            f"{rel} is read-only (mode {stat_mod.filemode(info.st_mode)}); nothing was changed",
            {"path": rel, "mode": oct(stat_mod.S_IMODE(info.st_mode))},
            f"make it writable first (chmod u+w {rel}) if it is meant to change",
        )
    writable = os.access(
        located.name,
        os.W_OK,
        dir_fd=located.parent.fd,
        effective_ids=os.access in os.supports_effective_ids,
        follow_symlinks=False,
    )
    if not writable:
        raise ToolError(
            ErrorCode.PERMISSION_DENIED,
            f"{rel} is not writable by the daemon (mode {stat_mod.filemode(info.st_mode)},"
            f" owner uid {info.st_uid}, daemon uid {os.geteuid()}); nothing was written",
            {"path": rel, "mode": oct(stat_mod.S_IMODE(info.st_mode)), "uid": info.st_uid},
        )
    if not _keeps_owner(info):
        raise ToolError(
            ErrorCode.PERMISSION_DENIED,
            f"{rel} belongs to uid {info.st_uid} gid {info.st_gid}; replacing it as uid"
            f" {os.geteuid()} would change its owner, so nothing was written",
            {"path": rel, "uid": info.st_uid, "gid": info.st_gid},
        )


def _keeps_owner(info: os.stat_result) -> bool:
    """Whether the replacement can carry the old owner: root may give files away; anyone
    else only keeps their own, with one of their own groups."""
    if not hasattr(os, "geteuid") or os.geteuid() == 0:
        return True
    groups = {os.getegid(), *os.getgroups()}
    return info.st_uid == os.geteuid() and info.st_gid in groups
