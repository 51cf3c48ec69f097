"""A checkpoint against the tree as it is now: which files changed, appeared, went.

The checkpoint's side is its manifest (read from the journal's blobs) or, for an
old journal's checkpoint, its inline files; the tree's side is a `TreeTaker`'s
entries. A file counts only within the comparison's scope (the checkpoint's, or
the paths asked for). A file the checkpoint lists but does not hold (binary, not
UTF-8, too large) cannot be put back: when it changed, it is reported as left
alone, with why.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from editjournal.daemon.model.checkpointbook import Checkpoint
from editjournal.daemon.store.manifest import ManifestEntry, ManifestError, entries
from editjournal.schemas.errors import ErrorCode, ToolError

NOT_HELD = (
    "it is binary, not UTF-8 or too large: a checkpoint lists such a file, it does not hold it"
)
NOT_TEXT_NOW = (
    "it is not text now (binary, not UTF-8 or too large): a restore writes text files only"
)


@dataclass
class Comparison:
    """Paths by what happened to them since the checkpoint (each list sorted once
    `sort` is called)."""

    modified: list[str] = field(default_factory=list)
    created: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    left_alone: list[tuple[str, str]] = field(default_factory=list)  # (path, why)
    unchanged: list[str] = field(default_factory=list)

    def add(self, path: str, verdict: Verdict | None) -> None:
        if verdict is None:
            return
        kind, why = verdict
        if kind == "left_alone":
            self.left_alone.append((path, why or ""))
        else:
            getattr(self, kind).append(path)

    def drop(self, paths: set[str]) -> None:
        """Forget these paths' verdicts (to judge them again)."""
        for kind in ("modified", "created", "deleted", "unchanged"):
            setattr(self, kind, [p for p in getattr(self, kind) if p not in paths])
        self.left_alone = [(p, why) for p, why in self.left_alone if p not in paths]

    def sort(self) -> Comparison:
        for kind in ("modified", "created", "deleted", "unchanged"):
            getattr(self, kind).sort()
        self.left_alone.sort()
        return self


Verdict = tuple[str, str | None]  # (modified | created | deleted | unchanged | left_alone, why)


def covered(
    checkpoint: Checkpoint, blob: Callable[[str], bytes | None]
) -> dict[str, ManifestEntry]:
    """Every file the checkpoint covers, by path."""
    if checkpoint.inline:
        return {path: ManifestEntry(path, 0, digest) for path, digest in checkpoint.files}
    found: dict[str, ManifestEntry] = {}
    for digest in checkpoint.manifest:
        found.update((e.path, e) for e in chunk_entries(checkpoint, digest, blob))
    return found


def chunk_entries(
    checkpoint: Checkpoint, digest: str, blob: Callable[[str], bytes | None]
) -> list[ManifestEntry]:
    """One chunk of the checkpoint's manifest (a slice's worth of a big one)."""
    chunk = blob(digest)
    try:
        if chunk is None:
            raise ManifestError(f"the journal lacks blob {digest}")
        return list(entries(chunk))
    except ManifestError as e:
        raise ToolError(
            ErrorCode.JOURNAL_CORRUPT,
            f"checkpoint {checkpoint.name!r}'s manifest cannot be read: {e}",
            {"checkpoint": checkpoint.id, "blob": digest},
        ) from e


def within(tops: Sequence[str]) -> Callable[[str], bool]:
    """Whether a path is one of `tops` or below one ("" is everything)."""
    if "" in tops:
        return lambda path: True
    prefixes = tuple(t.rstrip("/") + "/" for t in tops)
    exact = frozenset(tops)
    return lambda path: path in exact or path.startswith(prefixes)


def compare(
    before: Mapping[str, ManifestEntry],
    now: Mapping[str, ManifestEntry],
    inside: Callable[[str], bool],
    new_possible: Iterable[str] | None = None,
) -> Comparison:
    """`before` (the checkpoint) against `now` (the tree) within `inside`. A file in
    `now` but not `before` is new since; `new_possible`, when given, narrows which
    paths may count as new (an old journal's checkpoint knew only the files it named)."""
    possible = None if new_possible is None else set(new_possible)
    result = Comparison()
    for path in sorted(p for p in before.keys() | now.keys() if inside(p)):
        result.add(path, verdict(before.get(path), now.get(path), path, possible))
    return result


def verdict(
    then: ManifestEntry | None,
    current: ManifestEntry | None,
    path: str,
    new_possible: set[str] | None = None,
) -> Verdict | None:
    """What happened to one file (None: nothing to say: absent both times, or new
    where nothing can be new)."""
    if then is None:
        if current is None or (new_possible is not None and path not in new_possible):
            return None
        return ("created", None)
    if current is None:
        return ("deleted", None) if then.held else ("left_alone", NOT_HELD)
    if _same(then, current):
        return ("unchanged", None)
    if not then.held:
        return ("left_alone", NOT_HELD)
    if not current.held:
        return ("left_alone", NOT_TEXT_NOW)
    return ("modified", None)


def _same(then: ManifestEntry, current: ManifestEntry) -> bool:
    if then.sha256 and current.sha256:
        return then.sha256 == current.sha256
    return then.size == current.size and then.held == current.held  # too large to read
