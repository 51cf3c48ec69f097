"""The checkpoint tools' long part: taking the tree, as a `Job` the server runs in slices.

A checkpoint (and a restore or a diff of one) must look at every file of the
workspace, which in a 100,000-file repository is seconds of work. A request first
tries to finish within `INLINE_S` (every small workspace does, and answers at
once); otherwise its handler returns this job, the server parks the request and
gives the job a slice per turn of the loop (daemon/runtime/jobs.py), and the
handler runs again, for good, with the job done.

Files the journal saw change while the tree was being taken (agents' writes, outside
changes it noticed) are taken again at the end, so the result is the tree as it is
at that one moment, in the journal's order. For a checkpoint, the manifest's chunks
are built and handed to the journal in slices too: the final step commits only
what is new.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterator, Sequence

from editjournal.daemon.contract.context import Context, Job, Progress
from editjournal.daemon.model.checkpointbook import Checkpoint
from editjournal.daemon.store.manifest import ManifestEntry, chunks_of_sorted
from editjournal.daemon.tree.compare import (
    Comparison,
    Verdict,
    chunk_entries,
    covered,
    verdict,
    within,
)
from editjournal.daemon.tree.take import Kept, TreeTaker

INLINE_S = 0.03  # a request that takes its tree within this answers without parking


def run_inline(job: Job, ctx: Context) -> bool:
    """Step `job` for up to INLINE_S; whether it is done (then the request answers at
    once, without being parked)."""
    deadline = time.monotonic() + INLINE_S
    while not job.done and time.monotonic() < deadline:
        job.step(ctx, deadline)
    return job.done


CHUNK_BYTES_PER_SLICE = 1 << 20  # manifest chunks handed to the journal per slice
JUDGED_PER_LOOK = 512  # files compared between looks at the clock


def by_path(entries: dict[str, ManifestEntry]) -> list[ManifestEntry]:
    """The entries in path order: the paths sorted (strings compare in C; the entries
    themselves, as tuples, a fifth slower on 100,000 files)."""
    return [entries[path] for path in sorted(entries)]


class TreeJob:
    """Take the files under `tops`; with `store`, keep their contents and build the
    manifest (a checkpoint), else only look (a restore, a diff).

    Phases, each a slice at a time: take the tree; sort its entries; cut the
    manifest's chunks; hand the new chunks to the journal."""

    def __init__(self, ctx: Context, tops: Sequence[str], *, store: bool) -> None:
        self.taker = TreeTaker(
            ctx.workspace, ctx.ignore_patterns, tops, store=store, has_blob=ctx.journal.has_blob
        )
        self.store = store
        if store:
            ctx.journal.index_blobs()  # a has_blob per file must not be a query each
        self.started_after = ctx.journal.last_seq  # changes after this are taken again
        self.sorted: list[ManifestEntry] | None = None  # the entries, by path, once taken
        self.manifest: list[tuple[str, bytes]] = []  # (sha256, chunk), as cut so far
        self._cutting: Iterator[bytes] | None = None
        self._cut = False
        self._unkept = Kept()  # contents taken inline, not yet handed back
        self._chunks_to_keep: list[tuple[str, bytes]] = []

    @property
    def done(self) -> bool:
        if not self.taker.done:
            return False
        return not self.store or (self._cut and not self._chunks_to_keep)

    def try_inline(self, ctx: Context) -> bool:
        """Work for up to INLINE_S; whether the job is done."""
        deadline = time.monotonic() + INLINE_S
        while not self.done and time.monotonic() < deadline:
            kept = self._slice(ctx, deadline)
            self._unkept.blobs.update(kept.blobs)
            self._unkept.paths.update(kept.paths)
        return self.done

    def step(self, ctx: Context, deadline: float) -> Progress:
        kept = self._slice(ctx, deadline)
        kept.blobs.update(self._unkept.blobs)
        kept.paths.update(self._unkept.paths)
        self._unkept = Kept()
        # a line delta needs a version the journal holds: only files it knows have one
        # (asking for every other file's latest version would be a query each, for nothing)
        known = {d: p for d, p in kept.paths.items() if p in ctx.state.files}
        return Progress(kept.blobs, known)

    def _slice(self, ctx: Context, deadline: float) -> Kept:
        if not self.taker.done:
            return self.taker.step(deadline)
        if self.sorted is None:
            self.sorted = by_path(self.taker.entries)
            return Kept()
        if not self._cut:
            self._cut_chunks(ctx, deadline)
            return Kept()
        kept, size = Kept(), 0
        while self._chunks_to_keep and size < CHUNK_BYTES_PER_SLICE:
            digest, chunk = self._chunks_to_keep.pop()
            kept.blobs[digest] = chunk
            size += len(chunk)
        return kept

    def _cut_chunks(self, ctx: Context, deadline: float) -> None:
        assert self.sorted is not None
        if self._cutting is None:
            self._cutting = chunks_of_sorted(self.sorted)
        for chunk in self._cutting:
            digest = hashlib.sha256(chunk).hexdigest()
            self.manifest.append((digest, chunk))
            if not ctx.journal.has_blob(digest):
                self._chunks_to_keep.append((digest, chunk))
            if time.monotonic() >= deadline:
                return
        self._cut = True

    def changed_meanwhile(self, ctx: Context) -> set[str]:
        """The files the journal saw change since the take began, and those written
        earlier in this batch (in the workspace's overlay, not yet on disk)."""
        return {
            path
            for record in ctx.journal.records(after_seq=self.started_after)
            if record.event.changes_content
            for path in (record.event.path, getattr(record.event, "moved_to", None))
            if path is not None
        } | set(ctx.workspace.overlay)

    def finish(self, ctx: Context) -> dict[str, bytes]:
        """At the end, in the final handler run: the files changed meanwhile, taken
        again; the contents (and chunks) still to keep."""
        changed = self.changed_meanwhile(ctx)
        taken = {path: self.taker.entries.get(path) for path in changed}
        kept = self.taker.retake(sorted(changed)) if changed else Kept()
        blobs = {**self._unkept.blobs, **kept.blobs}
        self._unkept = Kept()
        # the usual change meanwhile is the watcher journaling a file the take had already
        # found changed: taken again, the same; only a real difference sorts and cuts again
        moved = any(self.taker.entries.get(path) != was for path, was in taken.items())
        if moved or self.sorted is None:
            self.sorted = by_path(self.taker.entries)
            if self.store:
                cut = [(hashlib.sha256(c).hexdigest(), c) for c in chunks_of_sorted(self.sorted)]
                self.manifest = cut
                blobs.update(c for c in cut if not ctx.journal.has_blob(c[0]))
        return blobs

    @property
    def entries(self) -> dict[str, ManifestEntry]:
        return self.taker.entries


class LookJob:
    """A restore's or a diff's long part: the tree taken (without keeping anything),
    the checkpoint's manifest read a chunk per slice, and the two compared in slices,
    so that the final handler run only judges again the few files changed meanwhile."""

    def __init__(self, ctx: Context, checkpoint: Checkpoint, tops: Sequence[str]) -> None:
        self.tree = TreeJob(ctx, tops, store=False)
        self.checkpoint = checkpoint
        self.inside = within(tops)
        self.before: dict[str, ManifestEntry] = (
            covered(checkpoint, ctx.journal.blob) if checkpoint.inline else {}
        )
        self._chunks = [] if checkpoint.inline else list(checkpoint.manifest)
        # an old journal's checkpoint knew only the files it named: only those are "new"
        self._new_possible = set(checkpoint.absent) if checkpoint.inline else None
        self._looked_missing = False
        self._keys: list[str] | None = None
        self._at = 0
        self.comparison = Comparison()

    @property
    def done(self) -> bool:
        return self._keys is not None and self._at >= len(self._keys)

    def try_inline(self, ctx: Context) -> bool:
        return run_inline(self, ctx)

    def step(self, ctx: Context, deadline: float) -> Progress:
        self._slice(ctx, deadline)
        return Progress()

    def _slice(self, ctx: Context, deadline: float) -> None:
        now = self.tree.entries
        if not self.tree.taker.done:
            self.tree.taker.step(deadline)
        elif self._chunks:
            while self._chunks and time.monotonic() < deadline:
                digest = self._chunks.pop()
                self.before.update(
                    (e.path, e) for e in chunk_entries(self.checkpoint, digest, ctx.journal.blob)
                )
        elif not self._looked_missing:  # listed by the checkpoint, not by the walk: ignored now?
            self.tree.taker.retake([p for p in self.before if self.inside(p) and p not in now])
            self._looked_missing = True
        elif self._keys is None:
            self._keys = sorted(p for p in self.before.keys() | now.keys() if self.inside(p))
        else:
            self._judge(now, deadline)

    def _judge(self, now: dict[str, ManifestEntry], deadline: float) -> None:
        assert self._keys is not None
        while self._at < len(self._keys):
            for path in self._keys[self._at : self._at + JUDGED_PER_LOOK]:
                self.comparison.add(path, self._verdict(path, now))
            self._at += JUDGED_PER_LOOK
            if time.monotonic() >= deadline:
                return

    def _verdict(self, path: str, now: dict[str, ManifestEntry]) -> Verdict | None:
        return verdict(self.before.get(path), now.get(path), path, self._new_possible)

    def finish(self, ctx: Context) -> Comparison:
        """The comparison, with the files changed meanwhile judged again as they are."""
        changed = {p for p in self.tree.changed_meanwhile(ctx) if self.inside(p)}
        if changed:
            self.tree.taker.retake(sorted(changed))
            self.comparison.drop(changed)
            for path in changed:
                self.comparison.add(path, self._verdict(path, self.tree.entries))
        return self.comparison.sort()
