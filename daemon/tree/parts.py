"""A set of paths cut into parts of at most `cap` files, by directory.

A restore writes at most `MAX_RESTORE_FILES` files in one request (its one commit
holds the daemon's thread for the lot): a bigger one is refused with the parts it
can be done in, each a `paths` list for one restore. A part names directories where
it can (`src/`, `tests/unit`), so the calls stay short, and single files only where
one directory alone holds more than `cap` of them. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence


def parts(paths: Sequence[str], cap: int) -> list[list[str]]:
    """`paths` (workspace-relative, "/"-separated) grouped into parts of at most `cap`
    of them, each part a list of directories and files covering exactly its paths'
    share of `paths`, in path order."""
    groups = _groups(sorted(paths), 0, cap)
    found: list[list[str]] = []
    size = cap  # a new part at the first group
    for top, count in groups:
        if size + count > cap:
            found.append([])
            size = 0
        found[-1].append(top)
        size += count
    return found


def _groups(paths: list[str], depth: int, cap: int) -> list[tuple[str, int]]:
    """(top, how many of `paths` are under it), each at most `cap`: the paths grouped
    by their component at `depth`, a group too big split one level deeper."""
    groups: list[tuple[str, int]] = []
    by_name: dict[str, list[str]] = {}
    for path in paths:
        names = path.split("/")
        if len(names) <= depth + 1:  # a file at this level: a group of its own
            groups.append((path, 1))
        else:
            by_name.setdefault("/".join(names[: depth + 1]), []).append(path)
    for top, inside in by_name.items():
        if len(inside) <= cap:
            groups.append((top, len(inside)))
        else:
            groups.extend(_groups(inside, depth + 1, cap))
    return sorted(groups)
