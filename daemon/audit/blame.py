"""Blame: for each line of a file, the event that last wrote it.

Folds the file's versions in order, carrying each line's owner through every
change: a write's exact `line_changes` when it recorded them against the
content before it (unless they say "every line", as whole-file writers do),
else a diff of the two stored contents. Lines already there
when the journal first saw the file, and lines an outside change brought, are
"outside"'s. A content that was never stored (an outside change to a file no
agent had read) is diffed across: the next stored content's changes are
attributed to the event that brought it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from editjournal.daemon.audit.diffs import LineChange, changes, lines_of
from editjournal.daemon.audit.timeline import JournalReader, Version, versions
from editjournal.schemas.errors import ErrorCode, ToolError
from editjournal.schemas.tools import BlameLine, BlameResult


@dataclass(frozen=True)
class Owner:
    seq: int
    agent: str
    kind: str
    ts: int


def blame(journal: JournalReader, path: str, until_seq: int | None = None) -> BlameResult:
    """Every line of `path` as of `until_seq` (default: now) with the event that wrote it."""
    history = versions(journal, path, until_seq)
    if not history:
        raise ToolError(
            ErrorCode.FILE_NOT_IN_JOURNAL,
            f"the journal has no record of {path}",
            {"path": path, "until_seq": until_seq},
        )
    last = history[-1]
    if last.sha256 is None:
        raise ToolError(
            ErrorCode.VERSION_NOT_STORED,
            f"{path} did not exist after event {last.seq} ({last.kind})",
            {"path": path, "seq": last.seq},
        )
    lines, owners, sha = _fold(journal, history)
    if sha != last.sha256:
        raise ToolError(
            ErrorCode.VERSION_NOT_STORED,
            f"the content {path} got at event {last.seq} was not stored: it cannot be blamed",
            {"path": path, "seq": last.seq},
        )
    return BlameResult(
        path=path,
        version=last.seq,
        sha256=last.sha256,
        lines=[
            BlameLine(line=n, text=text, seq=o.seq, agent=o.agent, kind=o.kind, ts=o.ts)
            for n, (text, o) in enumerate(zip(lines, owners, strict=True), start=1)
        ],
    )


def _fold(
    journal: JournalReader, history: Sequence[Version]
) -> tuple[tuple[str, ...], list[Owner], str | None]:
    """(lines, their owners, the sha256 they are) after the last stored version."""
    lines: tuple[str, ...] = ()
    owners: list[Owner] = []
    sha: str | None = None
    for version in history:
        if version.sha256 is None:  # removed: a re-creation starts afresh
            lines, owners, sha = (), [], None
            continue
        data = journal.blob(version.sha256)
        if data is None or version.sha256 == sha:
            continue
        new = lines_of(data)
        exact = _exact(version, sha, len(lines))
        owner = Owner(version.seq, version.author, version.kind, version.ts)
        fitted = carry(owners, exact, owner, len(new)) if exact else None
        if fitted is None:  # no exact changes (or ones that do not fit): the diff
            fitted = carry(owners, changes(lines, new), owner, len(new)) or []
        owners = fitted
        lines, sha = new, version.sha256
    return lines, owners, sha


def _exact(version: Version, before: str | None, old_count: int) -> Sequence[LineChange]:
    """The write's own line changes, when they are against `before` and say more than
    "everything" (a whole-file writer's do not: the diff keeps unchanged lines' owners)."""
    found = version.line_changes if version.before_sha256 == before else ()
    if len(found) == 1 and found[0][:2] == (0, old_count):
        return ()
    return found


def carry(
    owners: Sequence[Owner], steps: Sequence[LineChange], owner: Owner, new_count: int
) -> list[Owner] | None:
    """Owners of the new lines: unchanged lines keep theirs, changed ones get `owner`
    (None when `steps` do not give `new_count` lines)."""
    out: list[Owner] = []
    done = 0
    for start, end, inserted in sorted(steps):
        out.extend(owners[done:start])
        out.extend([owner] * inserted)
        done = end
    out.extend(owners[done:])
    return out if len(out) == new_count else None
