"""`read_file` and `read_many_files`: versioned, optionally anchored reads.

Every read is journaled as `file_read` (which lines of which content the
agent saw) and its content stored as a blob, so the read becomes the agent's
snapshot: later tools can tell exactly which of its anchors went stale.

A big read (`readjob.SLICED_BYTES` or more, anchored; `PLAIN_SLICED_BYTES` without)
is prepared by a `ReadJob` a slice at a time, and journaled by the request's final run
against the files as they are then (daemon/handlers/readjob.py).
"""

from __future__ import annotations

import contextlib
import operator
import re
from collections.abc import Container, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from editjournal.daemon.audit.views import content_at as stored_at
from editjournal.daemon.contract.context import Context
from editjournal.daemon.contract.outcome import Outcome
from editjournal.daemon.files.filesnapshot import FileSnapshot
from editjournal.daemon.files.textcache import Parsed
from editjournal.daemon.handlers import handles
from editjournal.daemon.handlers.indexjob import indexed_in_slices
from editjournal.daemon.handlers.readjob import (
    PLAIN_SLICED_BYTES,
    SLICED_BYTES,
    ReadJob,
    Rendered,
    Unprepared,
    started,
)
from editjournal.daemon.text.anchors import anchored
from editjournal.daemon.text.diff import MAX_CHANGED_LINES, anchored_diff
from editjournal.daemon.text.lines import Document
from editjournal.daemon.watch.onaccess import outside_change
from editjournal.daemon.writing.history import content_at, document
from editjournal.daemon.writing.seen import after_showing, unseen_now
from editjournal.schemas.errors import ErrorCode, ToolError
from editjournal.schemas.events import AnyEvent, FileRead
from editjournal.schemas.tools import (
    MAX_READ_BYTES,
    ReadFileParams,
    ReadFileResult,
    ReadManyFilesParams,
    ReadManyFilesResult,
    ReadManyItem,
)
from editjournal.schemas.units import format_binary_size, format_size

# at most 10 digits a number: a line number fits 31 bits (schemas.tools.MAX_LINE_NUMBER)
_RANGE = re.compile(r"^\s*(\d{1,10})\s*(?:-\s*(\d{0,10})\s*)?$")


@dataclass(frozen=True)
class LineWindow:
    """Which lines to serve: 1-based, inclusive; `end < start` only for an empty file."""

    start: int
    end: int | None  # None = to the end of the file
    max_lines: int


@dataclass(frozen=True)
class ServedRead:
    """One file's read: the reply, the events that record it, and its blob."""

    result: ReadFileResult
    events: list[AnyEvent]  # an outside change noticed on the way, then the read
    blob: tuple[str, bytes]


def chosen_path(path: str | None, file_path: str | None) -> tuple[str, list[str]]:
    """`path` wins; `file_path` is a deprecated alias that earns a warning."""
    if path is None and file_path is None:
        raise ToolError(
            ErrorCode.INVALID_PARAMS, "Object missing required field `path` - at `$.params`"
        )
    if file_path is None:
        return str(path), []
    if path is None:
        return file_path, ["file_path is deprecated; use path instead"]
    return path, ["file_path is deprecated and was ignored: path takes precedence"]


def window_of(params: ReadFileParams) -> LineWindow:
    """`range` ("A-B", "A-" or "A") or `offset`/`limit`, never both."""
    if params.range is not None and (params.offset is not None or params.limit is not None):
        raise ToolError(
            ErrorCode.INVALID_PARAMS,
            "Use either range or offset/limit, not both - at `$.params.range`",
        )
    if params.range is not None:
        return _parse_range(params.range, params.max_lines)
    start = params.offset or 1
    end = start + params.limit - 1 if params.limit is not None else None
    return LineWindow(start, end, params.max_lines)


def _parse_range(text: str, max_lines: int) -> LineWindow:
    match = _RANGE.match(text)
    if not match:
        raise ToolError(
            ErrorCode.INVALID_RANGE,
            f"range {text!r} is not 'START-END' (1-based, inclusive)",
            {"range": text},
        )
    start = int(match.group(1))
    end_text = match.group(2)
    end = start if end_text is None else (int(end_text) if end_text else None)
    if start < 1 or (end is not None and end < start):
        raise ToolError(
            ErrorCode.INVALID_RANGE,
            f"range {text!r} must satisfy 1 <= START <= END",
            {"range": text},
        )
    return LineWindow(start, end, max_lines)


def _clamp(window: LineWindow, line_count: int) -> tuple[int, int, bool]:
    """The served (start, end, truncated); a start past the end is an error."""
    if window.start > max(line_count, 1):
        raise ToolError(
            ErrorCode.INVALID_RANGE,
            f"line {window.start} is past the end of the file ({line_count} lines)",
            {"start": window.start, "line_count": line_count},
        )
    end = line_count if window.end is None else min(window.end, line_count)
    truncated = end - window.start + 1 > window.max_lines
    if truncated:
        end = window.start + window.max_lines - 1
    return window.start, end, truncated


def serve_read(
    ctx: Context,
    path: str,
    window: LineWindow,
    hashes: bool,
    first_seq: int,
    job: ReadJob | None = None,
    rel: str | None = None,
    snap: FileSnapshot | None = None,
) -> ServedRead:
    """Read one file and build its reply and events; the first event gets `first_seq`.
    With `job`, from what it prepared (`Unprepared` when the file changed since);
    `rel`: the path, workspace-relative, when the caller has judged it already; `snap`:
    the file as the caller has just read it."""
    snap, source = _read(ctx, path, job, rel, snap)
    doc = source.doc
    start, end, truncated = _clamp(window, doc.line_count)
    noticed: list[AnyEvent] = list(outside_change(ctx.state, snap, doc.line_count))
    version = first_seq + len(noticed)  # the read's own event comes last
    whole = start == 1 and end == doc.line_count
    unseen = [] if whole else _unseen(ctx, snap, noticed, doc, range(start, end + 1))
    event = FileRead(
        path=snap.path,
        sha256=snap.sha256,
        size=snap.size,
        line_count=doc.line_count,
        lines=None if whole else (start, end),
        hashes=hashes,
        unseen=unseen,
    )
    eol = source.eol if isinstance(source, Rendered) else None
    result = _result(snap, doc, start, end, truncated, version, snap.text, eol)
    if hashes:
        _add_anchors(result, source, start, end)
    return ServedRead(result, [*noticed, event], (snap.sha256, snap.data))


def _read(
    ctx: Context, path: str, job: ReadJob | None, rel: str | None, snap: FileSnapshot | None
) -> tuple[FileSnapshot, Parsed | Rendered]:
    """The file as it is now, and its parse. A file the job read is read again and
    compared with the bytes it read (no decode, no hash: 100 files would not fit the
    snapshot cache); a content the job did not prepare is `Unprepared`."""
    known = None
    if job is not None:
        rel = ctx.workspace.file_relative(path) if rel is None else rel
        known = job.snaps.get(rel)
    if known is None:
        if snap is None:
            snap = ctx.cache.files.read(ctx.workspace, path)  # an unchanged file: no re-read
    else:
        snap = ctx.workspace.read(known.path, known=known)
    rendered = job.rendered(snap.sha256) if job is not None else None
    if rendered is not None:
        return snap, rendered
    if job is not None and job.strict:
        raise Unprepared(snap.path)
    return snap, ctx.cache.parsed(snap.sha256, snap.text, snap.path)


def _result(
    snap: FileSnapshot,
    doc: Document,
    start: int,
    end: int,
    truncated: bool,
    version: int,
    text: str | None = None,
    eol: str | None = None,
) -> ReadFileResult:
    """The reply; `text`, when given, is the text `doc` was parsed from; `eol`, when
    given, its `eol_style` (a pass over the endings: a job's, computed in a slice)."""
    return ReadFileResult(
        file_path=snap.path,
        version=version,
        sha256=snap.sha256,
        line_count=doc.line_count,
        content=_served(doc, start, end, text),
        start_line=start,
        end_line=end,
        truncated=truncated,
        eol=doc.eol_style if eol is None else eol,
        bom=doc.bom,
        final_newline=doc.final_newline,
        size=snap.size,
    )


def _served(doc: Document, start: int, end: int, text: str | None) -> str:
    """Lines `start`..`end` with their endings, without the BOM: the whole file's is its
    text as read (no per-line join on every read of an unchanged file)."""
    if text is not None and start == 1 and end == doc.line_count:
        return text[1:] if doc.bom else text
    return "".join(map(operator.add, doc.lines[start - 1 : end], doc.endings[start - 1 : end]))


def _add_anchors(result: ReadFileResult, parsed: Parsed | Rendered, start: int, end: int) -> None:
    """Anchors are computed over the whole file (uniqueness is file-wide), then cut; one
    anchor and one mark per line travel (schemas.anchorrows), the text only in `content`.
    A job's `Rendered` has them for the lines it serves, built a chunk at a time."""
    if isinstance(parsed, Rendered):
        assert parsed.anchors is not None  # an anchored read's job anchors
        result.anchors = parsed.anchors[start - 1 : end]
        result.marks = parsed.marks[(start, end)]
        return
    result.anchors = parsed.index.anchor_strings[start - 1 : end]
    whole = start == 1 and end == parsed.doc.line_count
    if whole or "marks" in parsed.__dict__:  # kept for the next whole read
        result.marks = parsed.marks[start - 1 : end]
    else:  # a window's marks cost the window, not the file
        result.marks = parsed.index.marks(start - 1, end)


@handles("read_file")
@indexed_in_slices
def read_file(ctx: Context, params: ReadFileParams) -> Outcome:
    path, warnings = chosen_path(params.path, params.file_path)
    if params.at_version is not None:
        return Outcome(serve_at_version(ctx, path, params), warnings=warnings)
    if params.since_version is not None:
        window_of(params)  # still refuses range together with offset/limit
        if params.range is not None or params.offset is not None or params.limit is not None:
            raise ToolError(
                ErrorCode.INVALID_PARAMS,
                "since_version reads the whole file's changes; drop range/offset/limit"
                " - at `$.params.since_version`",
            )
        _refuse_future_version(ctx, params.since_version)
        served = serve_delta(ctx, path, params.since_version, warnings)
    else:
        window = window_of(params)
        snap = None  # what a read at once reads anyway: its size says whether to slice
        if not isinstance(ctx.finished, ReadJob):
            snap = ctx.cache.files.read(ctx.workspace, path)
        job = _prepared(ctx, [path], snap.size if snap else 0, params.hashes, window)
        if isinstance(job, Outcome):
            return job
        fresh = snap if job is None else None  # with a job: read again, at its final run
        try:
            served = serve_read(ctx, path, window, params.hashes, ctx.next_seq, job, snap=fresh)
        except Unprepared:
            return Outcome(job=_again(job))
    return Outcome(
        served.result,
        events=served.events,
        blobs=_new_blobs(ctx, [served]),
        warnings=warnings,
    )


def serve_at_version(ctx: Context, path: str, params: ReadFileParams) -> ReadFileResult:
    """The file as the journal stored it at `at_version`: an audit read, so it records
    no event and moves no snapshot (anchors shown are that old content's)."""
    if params.since_version is not None:
        raise ToolError(
            ErrorCode.INVALID_PARAMS,
            "Use either at_version or since_version, not both - at `$.params.at_version`",
        )
    rel = ctx.workspace.file_relative(path)
    version, data = stored_at(ctx.journal, rel, int(params.at_version or 0))
    parsed = document(ctx, version.sha256, {str(version.sha256): data})
    assert parsed is not None  # content_at found the bytes
    snap = FileSnapshot(rel, data, "", str(version.sha256), len(data), 0)
    start, end, truncated = _clamp(window_of(params), parsed.doc.line_count)
    result = _result(snap, parsed.doc, start, end, truncated, version.seq)
    if params.hashes:
        _add_anchors(result, parsed, start, end)
    return result


def _refuse_future_version(ctx: Context, since: int) -> None:
    """A version past the journal's last event never existed: "(unchanged)" would
    claim the agent holds a content no one ever had (a typo, or another workspace's
    version), and its next edit would be judged against it."""
    last = ctx.next_seq - 1
    if since > last:
        raise ToolError(
            ErrorCode.UNKNOWN_SEQ,
            f"no version {since} exists: the journal's last event is seq {last}",
            {"seq": since, "last_seq": last, "field": "since_version"},
        )


def serve_delta(ctx: Context, path: str, since: int, warnings: list[str]) -> ServedRead:
    """Only what changed since version `since`, with fresh anchors; the agent's
    snapshot then advances to the current content, minus the lines it was not shown
    (its unseen lines the delta does not cover)."""
    snap = ctx.cache.files.read(ctx.workspace, path)  # an unchanged file is not re-read
    parsed = ctx.cache.parsed(snap.sha256, snap.text, snap.path)
    doc = parsed.doc
    noticed: list[AnyEvent] = list(outside_change(ctx.state, snap, doc.line_count))
    version = ctx.next_seq + len(noticed)
    result = _result(snap, doc, 1, doc.line_count, False, version, text=snap.text)
    result.since_version, result.content = since, ""  # (the text as read: no join made)
    old_sha = content_at(ctx, snap.path, since)
    old = document(ctx, old_sha, {snap.sha256: snap.data})
    shown: list[int] = []
    if old_sha == snap.sha256:
        result.unchanged = True
    elif old is None:
        warnings.append(f"no content of {snap.path} was recorded at version {since}: whole file")
        result.content = _served(doc, 1, doc.line_count, snap.text)
        _add_anchors(result, parsed, 1, doc.line_count)
        shown = list(range(1, doc.line_count + 1))
    else:
        anchors = parsed.anchors
        result.unchanged = False
        result.delta, shown = anchored_diff(old.doc.lines, doc.lines, anchors)
        if len(shown) > MAX_CHANGED_LINES:  # the rest stays unseen: a read shows it
            warnings.append(
                f"{len(shown):,} lines of {snap.path} changed since version {since}: the"
                f" delta lists the first {MAX_CHANGED_LINES:,}; read the file for the rest"
            )
            del shown[MAX_CHANGED_LINES:]
        result.lines = [anchored(anchors[n - 1], doc.lines[n - 1]) for n in shown]
    event = FileRead(
        path=snap.path,
        sha256=snap.sha256,
        size=snap.size,
        line_count=doc.line_count,
        hashes=True,
        since_version=since,
        unseen=_unseen(ctx, snap, noticed, doc, shown),
    )
    return ServedRead(result, [*noticed, event], (snap.sha256, snap.data))


def _unseen(
    ctx: Context,
    snap: FileSnapshot,
    noticed: list[AnyEvent],
    doc: Document,
    shown: Iterable[int],
) -> list[tuple[int, int]]:
    """What the agent has still not been shown of this content once `shown` was."""
    return after_showing(unseen_now(ctx, snap, noticed, doc), shown, doc.line_count)


@handles("read_many_files")
@indexed_in_slices
def read_many_files(ctx: Context, params: ReadManyFilesParams) -> Outcome:
    """One item per requested path, in order; a file's error is reported in its place.

    Spellings of one file ("f.txt", "./f.txt") are read once and share that read's
    item: a second read would journal the same outside change again, judged against
    the state from before the request, which the first read already moved on.
    """
    window = LineWindow(1, None, params.max_lines)
    job: ReadJob | Outcome | None = ctx.finished if isinstance(ctx.finished, ReadJob) else None
    if job is None:
        paths, sizes = _within_budget(ctx, params.paths)
        job = _prepared(ctx, paths, sum(sizes.values()), params.hashes, window)
    if isinstance(job, Outcome):
        return job
    if job is not None:  # a reply served from the job is of the very contents it read
        sizes = {rel: snap.size for rel, snap in job.snaps.items()}
    served = _Served()
    budget = _Budget(MAX_READ_BYTES, sizes)
    try:
        items = [
            _read_once(ctx, path, window, params.hashes, served, job)
            if budget.allows(ctx, path, served)
            else budget.refusal(path)
            for path in params.paths
        ]
    except Unprepared:
        return Outcome(job=_again(job))
    reads = list(served.reads.values())
    return Outcome(
        ReadManyFilesResult(files=items),
        events=[e for r in reads for e in r.events],
        blobs=_new_blobs(ctx, reads),
    )


class _Budget:
    """The bytes one `read_many_files` may read: every agent waits while it runs (100
    files of 8 MB held them 7.4 s). A file that would go past it is not read."""

    def __init__(self, limit: int, sizes: Mapping[str, int] | None = None) -> None:
        self.limit = limit
        self.spent = 0
        # sizes by workspace-relative path known already this turn (a stat each: the
        # pass that decided whether to slice, or the files a job read), not asked again
        self.sizes = sizes or {}

    def allows(self, ctx: Context, path: str, served: Container[str]) -> bool:
        try:
            rel = ctx.workspace.relative(path)
            if rel in served:
                return True  # another spelling of a file already read: free
            size = self.sizes.get(rel)
            if size is None:
                info = ctx.workspace.stat(path)
                size = info.st_size if info is not None else 0
        except ToolError:
            return True  # its error is reported by the read itself
        if self.spent and self.spent + size > self.limit:
            return False
        self.spent += size
        return True

    def refusal(self, path: str) -> ReadManyItem:
        error = ToolError(
            ErrorCode.READ_BUDGET_EXCEEDED,
            f"{path} was not read: this request had read {format_size(self.spent)} already,"
            f" and one request reads at most {format_binary_size(self.limit)}",
            {"path": path, "budget": self.limit, "read": self.spent},
        )
        return ReadManyItem(file_path=path, ok=False, error=error.to_wire(), truncated=True)


@dataclass
class _Served:
    """A `read_many_files`' reads so far, by workspace-relative path, and how many
    events they record (the next read's first seq comes after them)."""

    reads: dict[str, ServedRead] = field(default_factory=dict)
    events: int = 0

    def __contains__(self, rel: object) -> bool:
        return rel in self.reads


def _read_once(
    ctx: Context,
    path: str,
    window: LineWindow,
    hashes: bool,
    served: _Served,
    job: ReadJob | None,
) -> ReadManyItem:
    """`path`'s item, reusing the read of an earlier spelling of the same file."""
    try:
        rel = ctx.workspace.file_relative(path)  # before an earlier spelling may answer
        read = served.reads.get(rel)
        if read is None:
            first_seq = ctx.next_seq + served.events
            read = serve_read(ctx, path, window, hashes, first_seq, job, rel)
            served.reads[rel] = read
            served.events += len(read.events)
    except ToolError as e:
        return ReadManyItem(file_path=path, ok=False, error=e.to_wire())
    return ReadManyItem(file_path=read.result.file_path, ok=True, result=read.result)


def _new_blobs(ctx: Context, reads: list[ServedRead]) -> dict[str, bytes]:
    """Contents the journal has not stored yet (most re-reads store nothing)."""
    blobs: dict[str, bytes] = {}
    for read in reads:
        digest, data = read.blob
        if digest not in blobs and not ctx.journal.has_blob(digest):
            blobs[digest] = data
    return blobs


# --- big reads: prepared by a job a slice at a time (daemon/handlers/readjob.py) ------------


def _prepared(
    ctx: Context, paths: Sequence[str], size: int, hashes: bool, window: LineWindow
) -> ReadJob | Outcome | None:
    """What the request's job prepared (it is done: serve from it); else, for reads of
    `size` `SLICED_BYTES` or more (`PLAIN_SLICED_BYTES` without anchors), a new job:
    done inline when what it needs is built
    already, else the request parks on it (an `Outcome` with the job). None: small
    reads, done at once."""
    if isinstance(ctx.finished, ReadJob):
        return ctx.finished
    if size < (SLICED_BYTES if hashes else PLAIN_SLICED_BYTES):
        return None
    job = ReadJob(paths, hashes, lambda count: _clamp(window, count)[:2])
    parked = started(ctx, job)
    return job if parked is None else Outcome(job=parked)


def _again(job: ReadJob | None) -> ReadJob:
    """The next round of a job whose files changed before its final run."""
    assert job is not None  # only a job's reads are `Unprepared`
    return job.again()


def _within_budget(ctx: Context, paths: Sequence[str]) -> tuple[list[str], dict[str, int]]:
    """The paths `read_many_files` will read (`_Budget`, by stat), and the size of each
    file, by workspace-relative path: their sum says whether to slice the read."""
    budget = _Budget(MAX_READ_BYTES)
    sizes: dict[str, int] = {}
    chosen: list[str] = []
    for path in paths:
        spent = budget.spent
        if budget.allows(ctx, path, sizes):
            chosen.append(path)
            with contextlib.suppress(ToolError):  # its read reports it
                sizes.setdefault(ctx.workspace.relative(path), budget.spent - spent)
    return chosen, sizes
