"""Big reads prepared as a job, a slice at a time: no read holds the thread for long.

A read's cost is in its files, not in its reply: reading and hashing the bytes,
parsing the lines, anchoring every line (about 12 us a line: 100 files of 32 MiB in
all held the daemon's thread 7.5 s), the marks of the lines served, and storing the
content as a blob. When a read's files are `SLICED_BYTES` or more in all
(`PLAIN_SLICED_BYTES` without anchors: a twelfth of the work a byte), the handler
hands back a `ReadJob` that does that work a file and a step at a time (the anchor
index through `IndexBuild`, a chunk of lines a step), hands each new content to the
journal as a blob in its own slice, and keeps what the reply needs (`Rendered`: not
the indexes, which the text cache keeps while it has room). The handler then runs
again, for good, with the job as `ctx.finished`: it reads every file once more (a
compare with the bytes the job read, not a decode and a hash), journals what it reads
*then*, and renders the reply from what the job prepared. A file changed between the
slices is not served from the job: its new content is prepared by another round of
the job (at most `MAX_ROUNDS`, then whatever is left is read at once), so a reply
never shows content the journal does not record as seen.

Pure like a handler: it reads through the context and changes nothing but itself and
the text cache (derived data: the parses and indexes it built, as the index job does).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass, field

from editjournal.daemon.contract.context import Context, Progress
from editjournal.daemon.files.filesnapshot import FileSnapshot
from editjournal.daemon.files.textcache import Parsed
from editjournal.daemon.handlers.indexjob import SLICED_FROM
from editjournal.daemon.handlers.treejob import INLINE_S
from editjournal.daemon.text.deferral import Deferred, deferring
from editjournal.daemon.text.indexbuild import CHUNK, IndexBuild
from editjournal.daemon.text.lines import Document
from editjournal.schemas.errors import ToolError

SLICED_BYTES = 256 * 1024  # an anchored read of fewer bytes is done at once (< ~80 ms)
PLAIN_SLICED_BYTES = 2 * 1024 * 1024  # one without anchors (~30 ms a MiB: parse, zlib)
BLOB_BYTES_PER_SLICE = 1024 * 1024  # contents handed to the journal per slice (zlib ~20 ms)
MAX_ROUNDS = 3  # jobs one request may take while its files keep changing
BIG_PARSE_CHARS = 1 << 20  # a parse of a text this long or longer opens a slice (~8 ms/MiB)
PAUSE = 1 << 62  # yielded by a step: end the slice here (more than any slice's contents)

Span = Callable[[int], tuple[int, int]]  # a file's line count -> the lines served, 1-based


@dataclass(frozen=True)
class Rendered:
    """What the final run serves a content from: its lines and `eol_style` and, for an
    anchored read, every line's anchor and the marks of the lines served, by (start,
    end). Not the anchor index itself (its hashes and counts, a few times the lines):
    the text cache keeps that while it has room, a job of 100 files must not hold
    them all."""

    doc: Document
    eol: str
    anchors: list[str] | None = None
    marks: dict[tuple[int, int], str] = field(default_factory=dict)


@dataclass
class Prepared:
    """What the job built, kept across its rounds: each content's `Rendered`, and the
    contents handed to the journal."""

    rendered: dict[str, Rendered] = field(default_factory=dict)
    kept: set[str] = field(default_factory=set)


class Unprepared(Exception):  # a signal to the handler, not an error
    """A file's content at the final run is not one the job prepared: it changed."""


class ReadJob:
    """Prepare the reads of `paths`: each file read, parsed, anchored (with `hashes`)
    and its content kept, a step at a time."""

    def __init__(
        self,
        paths: Sequence[str],
        hashes: bool,
        span: Span,
        rounds: int = 1,
        prepared: Prepared | None = None,
    ) -> None:
        self.paths = list(paths)
        self.hashes = hashes
        self.span = span
        self.rounds = rounds
        self.prepared = prepared or Prepared()
        self.snaps: dict[str, FileSnapshot] = {}  # by workspace-relative path, as read
        self.inline = False  # stepped by the handler (`started`): only what is built already
        self.done = False
        # a content the job did not prepare is met: another round (else read at once)
        self.strict = rounds < MAX_ROUNDS
        self._steps: Iterator[int] | None = None
        self._blobs: dict[str, bytes] = {}
        self._paths: dict[str, str] = {}

    def step(self, ctx: Context, deadline: float) -> Progress:
        """Work until `deadline`, or until a slice's worth of contents is to be kept."""
        if self._steps is None:
            self._steps = self._work(ctx)
        for held in self._steps:
            if held >= BLOB_BYTES_PER_SLICE or time.monotonic() >= deadline:
                return self._progress()
        self.done = True
        return self._progress()

    def again(self) -> ReadJob:
        """Another round over the same files, keeping what was prepared."""
        return ReadJob(self.paths, self.hashes, self.span, self.rounds + 1, self.prepared)

    def rendered(self, sha256: str) -> Rendered | None:
        return self.prepared.rendered.get(sha256)

    def hold(self, progress: Progress) -> None:
        """Contents prepared inline, handed back with the next slice."""
        self._blobs.update(progress.blobs)
        self._paths.update(progress.paths)

    def _progress(self) -> Progress:
        progress = Progress(blobs=self._blobs, paths=self._paths)
        self._blobs, self._paths = {}, {}
        return progress

    def _work(self, ctx: Context) -> Iterator[int]:
        """Each step yields the bytes of content waiting to be kept."""
        rendered = self.prepared.rendered
        for path in self.paths:
            try:
                snap = ctx.cache.files.read(ctx.workspace, path)
                yield self._held()
                if snap.sha256 not in rendered:  # else: an earlier round's, or path's
                    if self._parse_is_long(ctx, snap):
                        yield PAUSE  # a big parse (~60 ms for 8 MiB) opens a slice of its own
                    parsed = ctx.cache.parsed(snap.sha256, snap.text, snap.path)
                    yield self._held()
                    rendered[snap.sha256] = yield from self._rendered(ctx, parsed)
            except ToolError:
                continue  # the handler's final run reports it in its place
            self.snaps[snap.path] = snap
            self._keep(ctx, snap)
            yield self._held()

    def _parse_is_long(self, ctx: Context, snap: FileSnapshot) -> bool:
        """Whether parsing `snap` is to wait for a slice's start: a big text, or any
        text not parsed yet while inline (the handler's turn is not for the work)."""
        found = ctx.cache.get(snap.sha256) is not None
        return not found and (self.inline or len(snap.text) >= BIG_PARSE_CHARS)

    def _held(self) -> int:
        return sum(map(len, self._blobs.values()))

    def _rendered(self, ctx: Context, parsed: Parsed) -> Generator[int, None, Rendered]:
        """What the final run needs of `parsed`: with anchors, its index built (a chunk
        of lines a step) and the marks of the lines served."""
        doc = parsed.doc
        if not self.hashes:
            return Rendered(doc, doc.eol_style)
        yield from self._indexed(parsed)
        if doc.line_count >= SLICED_FROM:  # a big file's index, kept as the index job does
            ctx.cache.keep(parsed)
        marks = yield from self._marks(parsed)
        return Rendered(doc, doc.eol_style, parsed.index.anchor_strings, marks)

    def _indexed(self, parsed: Parsed) -> Iterator[int]:
        """`parsed`'s index with its counts, built a step at a time when missing."""
        for _ in range(2):  # the index, then its counts (gone when a derive took them)
            try:
                with deferring(1):  # the engine names what is missing instead of building it
                    parsed.index.tables  # noqa: B018 - built, derived, or deferred
                return
            except Deferred as asked:
                if self.inline:
                    yield PAUSE  # an index to build: not in the handler's turn
                # where each hash is only for a big file, as the index job builds it (a
                # next derive or lookup wants it); for a small one it is memory for nothing
                asked.positions = asked.positions and parsed.doc.line_count >= SLICED_FROM
                for _ in IndexBuild(asked).steps():
                    yield self._held()

    def _marks(self, parsed: Parsed) -> Generator[int, None, dict[tuple[int, int], str]]:
        """The marks of the lines served, a chunk of lines a step (`AnchorIndex.marks`
        is per line: the chunks joined are the marks computed at once). A whole file's
        go into the parse's own cached slot too, for the next whole read."""
        count = parsed.doc.line_count
        try:
            start, end = self.span(count)
        except ToolError:
            return {}  # a start past the end: refused by the final run
        whole = start == 1 and end == count
        if whole and "marks" in parsed.__dict__:
            return {(start, end): parsed.marks}
        pieces: list[str] = []
        for a in range(start - 1, end, CHUNK):
            pieces.append(parsed.index.marks(a, min(end, a + CHUNK)))
            yield self._held()
        marks = "".join(pieces)
        if whole:
            parsed.__dict__["marks"] = marks  # the cached_property's own slot
        return {(start, end): marks}

    def _keep(self, ctx: Context, snap: FileSnapshot) -> None:
        """The content handed to the journal with this slice, unless it has it."""
        if snap.sha256 in self.prepared.kept:
            return
        self.prepared.kept.add(snap.sha256)
        if not ctx.journal.has_blob(snap.sha256):
            self._blobs[snap.sha256] = snap.data
            self._paths[snap.sha256] = snap.path


def started(ctx: Context, job: ReadJob) -> ReadJob | None:
    """`job`, stepped for up to INLINE_S over what is built already: None when it
    finished (the read answers in this turn: a repeated read of a prepared file is not
    parked); else the job, paused before its first parse or index, to park the request
    on (it gets a slice in this very turn: the handler's own share stays small)."""
    job.inline = True
    try:
        held = job.step(ctx, time.monotonic() + INLINE_S)
    finally:
        job.inline = False
    if job.done:  # the final outcome stores them, as a read done at once does
        job.prepared.kept.difference_update(held.blobs)
        return None
    job.hold(held)  # handed to the journal by its first slice
    return job
