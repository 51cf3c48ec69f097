"""The audit views a daemon method serves: one event with its diff, a file's
versions, a file's content as of a version.

Each is one read of the journal turned into a schema Struct; nothing here
records an event (looking at history changes no agent's snapshot).
"""

from __future__ import annotations

from typing import Any

import msgspec

from editjournal.daemon.audit.blame import no_record, steps_of
from editjournal.daemon.audit.diffs import lines_of, unified
from editjournal.daemon.audit.timeline import Version, commands_of, versions
from editjournal.daemon.store.journal import Journal
from editjournal.schemas.errors import ErrorCode, ToolError
from editjournal.schemas.events import AnyEvent, EditApplied, OutsideChangeRecorded, Record
from editjournal.schemas.tools import FileVersion, HistoryResult, LogEntry, ShowResult


def body_of(event: AnyEvent) -> dict[str, Any]:
    """Every field, defaults included (the journal omits them to stay small)."""
    return {"kind": event.kind, **msgspec.to_builtins(msgspec.structs.asdict(event))}


def entry(journal: Journal, record: Record, *, patch: bool = False) -> LogEntry:
    """A record as `log` and `show` return it; with `patch`, its diff."""
    return LogEntry(
        seq=record.seq,
        ts=record.ts,
        agent=record.agent,
        kind=record.kind,
        path=record.path,
        summary=record.event.summary(),
        hash=record.hash,
        body=body_of(record.event),
        diff=event_diff(journal, record) if patch else None,
        commands=commands_of(record.event),
    )


def sides(event: AnyEvent) -> tuple[str | None, str | None] | None:
    """(before, after) sha256 of a content change (None: absent); None: not one."""
    if isinstance(event, EditApplied):
        return event.before_sha256, event.content_sha256
    if isinstance(event, OutsideChangeRecorded):
        return event.old_sha256, event.new_sha256
    return None


def event_diff(journal: Journal, record: Record) -> str | None:
    """The unified diff of the content `record` changed (None: not a content change,
    or a side that existed was not stored)."""
    found = sides(record.event)
    if found is None or record.path is None:
        return None
    before, after = (_stored(journal, sha) for sha in found)
    if (found[0] and before is None) or (found[1] and after is None):
        return None
    return unified(before, after, record.path)


def _stored(journal: Journal, sha: str | None) -> bytes | None:
    return journal.blob(sha) if sha else None


def show(journal: Journal, seq: int) -> ShowResult:
    """Event `seq`, every field, with its diff."""
    found = list(journal.records(after_seq=seq - 1, until_seq=seq))
    if not found:
        last = next(journal.records(newest_first=True, limit=1), None)
        raise ToolError(
            ErrorCode.UNKNOWN_SEQ,
            f"no event has seq {seq}",
            {"seq": seq, "last_seq": last.seq if last else 0},
        )
    record = found[0]
    before, after = sides(record.event) or (None, None)
    return ShowResult(
        event=entry(journal, record, patch=True), before_sha256=before, after_sha256=after
    )


def history(journal: Journal, path: str) -> HistoryResult:
    """Every version of `path`, oldest first, with lines +/- against the one before."""
    found = versions(journal, path)
    if not found:
        raise ToolError(
            ErrorCode.FILE_NOT_IN_JOURNAL, f"the journal has no record of {path}", {"path": path}
        )
    rows: list[FileVersion] = []
    previous: tuple[str, ...] | None = ()
    previous_sha: str | None = None
    for version in found:
        data = journal.blob(version.sha256) if version.sha256 else b""
        rows.append(_row(version, data, (previous, previous_sha), path))
        previous = None if data is None else lines_of(data)
        previous_sha = version.sha256
    return HistoryResult(path=path, versions=rows)


def _row(
    version: Version,
    data: bytes | None,
    before: tuple[tuple[str, ...] | None, str | None],
    path: str,
) -> FileVersion:
    """One version, its +/- the lines blame credits it with (`blame.steps_of`)."""
    lines = None if data is None else lines_of(data)
    added, removed = (None, None)
    previous, previous_sha = before
    if lines is not None and previous is not None:
        steps = steps_of(version, previous, previous_sha, lines)
        added, removed = sum(n for _, _, n in steps), sum(e - s for s, e, _ in steps)
    return FileVersion(
        seq=version.seq,
        ts=version.ts,
        agent=version.agent,
        author=version.author,
        kind=version.kind,
        writer=version.writer,
        sha256=version.sha256,
        stored=data is not None and version.sha256 is not None,
        line_count=None if lines is None else len(lines),
        added=added,
        removed=removed,
        path=version.path if version.path != path else None,
        moved_from=version.moved_from,
        commands=list(version.commands),
    )


def content_at(journal: Journal, path: str, seq: int) -> tuple[Version, bytes]:
    """`path`'s version as of event `seq` and its bytes, or the error that says why not."""
    last = next(journal.records(newest_first=True, limit=1), None)
    if last is None or seq > last.seq:
        raise ToolError(
            ErrorCode.UNKNOWN_SEQ,
            f"version {seq} is past the journal's last event ({last.seq if last else 0})",
            {"at_version": seq, "last_seq": last.seq if last else 0},
        )
    found = versions(journal, path, until_seq=seq)
    if not found:  # blame's words: never recorded, first recorded later, or moved here
        error = no_record(journal, path, seq)
        error.details["at_version"] = seq
        raise error
    version = found[-1]
    data = journal.blob(version.sha256) if version.sha256 else None
    if data is None:
        why = "did not exist" if version.sha256 is None else "was not stored"
        raise ToolError(
            ErrorCode.VERSION_NOT_STORED,
            f"{path} {why} at version {seq} (event {version.seq}, {version.kind})",
            {"path": path, "at_version": seq, "seq": version.seq},
        )
    return version, data
