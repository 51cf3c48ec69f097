"""Blame: for each line of a file, the event that last wrote it.

Folds the file's versions in order, carrying each line's owner through every
change: a write's exact `line_changes` when it recorded them against the
content before it (unless they say "every line", as whole-file writers do),
else a diff of the two stored contents. Lines already there
when the journal first saw the file, and lines an outside change brought, are
"outside"'s: a write over a content the journal had not recorded is preceded by
that content, by `outside` (`timeline.found_by`), so the write is credited with
the lines it changed only. A moved file's versions under its earlier path come
first (`timeline.versions`), so its lines keep their owners across the move. A
content that was never stored (an outside change to a file no agent had read,
never written over) is diffed across: the next stored content's changes are
attributed to the event that brought it.

The fold is `owners_of(versions, blob)`: any sequence of `Version`s (the local
journal's, or a shipped copy's: daemon/fleet) and a content lookup by sha256.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from editjournal.daemon.audit.diffs import LineChange, changes, lines_of
from editjournal.daemon.audit.timeline import FOUND, JournalReader, Version, versions
from editjournal.schemas.errors import ErrorCode, ToolError
from editjournal.schemas.tools import BlameLine, BlameResult


@dataclass(frozen=True)
class Owner:
    seq: int
    agent: str
    kind: str
    ts: int
    commands: tuple[str, ...] = ()  # a shell window's edit: the command(s) that made it


def blame(journal: JournalReader, path: str, until_seq: int | None = None) -> BlameResult:
    """Every line of `path` as of `until_seq` (default: now) with the event that wrote it."""
    history = versions(journal, path, until_seq)
    if not history:
        raise no_record(journal, path, until_seq)
    last = history[-1]
    if last.sha256 is None:
        raise _removed(last)
    lines, owners, sha = owners_of(history, journal.blob)
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
            BlameLine(
                line=n,
                text=text,
                seq=o.seq,
                agent=o.agent,
                kind=o.kind,
                ts=o.ts,
                commands=list(o.commands),
            )
            for n, (text, o) in enumerate(zip(lines, owners, strict=True), start=1)
        ],
    )


def no_record(journal: JournalReader, path: str, until_seq: int | None) -> ToolError:
    """Why `path` has no version as of `until_seq`, as truly as the journal can say it:
    never recorded, first recorded later, or under another name then (moved since)."""
    details: dict[str, object] = {"path": path, "until_seq": until_seq}
    known = [v for v in versions(journal, path) if v.kind != FOUND]
    if until_seq is None or not known:
        at = "" if until_seq is None else f" at version {until_seq}"
        message = f"the journal has no record of {path}{at}"
        return ToolError(ErrorCode.FILE_NOT_IN_JOURNAL, message, details)
    first = known[0]
    if first.seq <= until_seq:  # only under its earlier name then: a move brought it here
        moved = next(v for v in known if v.path == path)
        message = (
            f"{path} did not exist at version {until_seq}: the file was {first.path} then"
            f" (moved to {path} at event {moved.seq})"
        )
        details |= {"first_seq": moved.seq, "moved_from": first.path}
        return ToolError(ErrorCode.FILE_NOT_IN_JOURNAL, message, details)
    named = f", as {first.path}" if first.path != path else ""
    named += f", moved from {first.moved_from}" if first.moved_from else ""
    message = (
        f"the journal has no record of {path} at version {until_seq}: its first record is"
        f" event {first.seq} ({first.kind} by {first.author}{named})"
    )
    return ToolError(ErrorCode.FILE_NOT_IN_JOURNAL, message, details | {"first_seq": first.seq})


def _removed(last: Version) -> ToolError:
    """The file was gone after `last`: deleted, or moved (then blame follows its new path)."""
    how = f"was moved to {last.moved_to} by" if last.moved_to else "did not exist after"
    details = {"path": last.path, "seq": last.seq}
    if last.moved_to:
        details["moved_to"] = last.moved_to
    message = f"{last.path} {how} event {last.seq} ({last.kind})"
    return ToolError(ErrorCode.VERSION_NOT_STORED, message, details)


def owners_of(
    history: Sequence[Version], blob: Callable[[str], bytes | None]
) -> tuple[tuple[str, ...], list[Owner], str | None]:
    """(lines, their owners, the sha256 they are) after the last stored version of
    `history` (oldest first, as `timeline.versions` gives it), contents by `blob`."""
    lines: tuple[str, ...] = ()
    owners: list[Owner] = []
    sha: str | None = None
    for version in history:
        if version.sha256 is None:  # removed: a re-creation starts afresh
            lines, owners, sha = (), [], None
            continue
        data = blob(version.sha256)
        if data is None or version.sha256 == sha:
            continue
        new = lines_of(data)
        owner = Owner(version.seq, version.author, version.kind, version.ts, version.commands)
        owners = carry(owners, steps_of(version, lines, sha, new), owner, len(new)) or []
        lines, sha = new, version.sha256
    return lines, owners, sha


def steps_of(
    version: Version, before: Sequence[str], before_sha: str | None, new: Sequence[str]
) -> Sequence[LineChange]:
    """What `version` changed of the content before it (`before`, whose sha256 is
    `before_sha`): the write's own exact line changes when they are against that content
    and fit it, else a diff of the two. Blame and history's +/- both count these."""
    exact = _exact(version, before_sha, len(before))
    if exact and _fits(exact, len(before), len(new)):
        return exact
    return changes(before, new)


def _fits(steps: Sequence[LineChange], old_count: int, new_count: int) -> bool:
    """Whether `steps` are in order, within the old content, and make `new_count` lines."""
    done = 0
    for start, end, _ in steps:
        if start < done or end < start or end > old_count:
            return False
        done = end
    return old_count + sum(n - (end - start) for start, end, n in steps) == new_count


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
