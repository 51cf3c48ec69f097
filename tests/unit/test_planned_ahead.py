"""A big file's write planned ahead in a job (daemon/handlers/aheadjob.py), run as the
server runs a parked request: each job stepped slice by slice, the handler run again
with the finished job, until it answers.

Real parts: a journal on disk, a workspace of real files, the state, the real
handlers; the server's loop is the only thing played here (`_served`), so each test
can change the file at the exact point it is about: after the plan, before the final
run."""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import msgspec

from editjournal.daemon.contract.context import Context, DaemonInfo, Job, Progress
from editjournal.daemon.contract.outcome import Outcome
from editjournal.daemon.files.textcache import TextCache
from editjournal.daemon.files.workspace import Workspace
from editjournal.daemon.handlers.aheadjob import AheadJob
from editjournal.daemon.handlers.apply_patch import apply_patch
from editjournal.daemon.handlers.edit import STEPPED_FROM, edit
from editjournal.daemon.handlers.indexjob import SLICED_FROM
from editjournal.daemon.handlers.patch import safe_patch
from editjournal.daemon.model.state import State
from editjournal.daemon.store.journal import Journal
from editjournal.daemon.writing.target import open_target
from editjournal.schemas.events import EditApplied, EditRejected, FileRead
from editjournal.schemas.tools import ApplyPatchParams, EditParams, SafePatchParams

LINES = SLICED_FROM + 5_000  # planned ahead from SLICED_FROM lines
CHANGES = 200
STEP = LINES // CHANGES
SLICE_S = 0.05


def _context(tmp_path: Path) -> Context:
    root = tmp_path / "ws"
    (root / ".editjournal").mkdir(parents=True)
    (root / "big.txt").write_text("".join(f"line {i}\n" for i in range(LINES)))
    info = DaemonInfo(1, "test", "ipc://x", "ipc://y", "log", 0.0)
    journal = Journal(tmp_path / "journal.db")
    return Context("agent-a", State(), Workspace(root), journal, info, TextCache())


@dataclass
class Served:
    """A request as the server served it: its answer, its jobs, what their slices handed."""

    outcome: Outcome
    jobs: list[Job] = field(default_factory=list)
    handed: list[Progress] = field(default_factory=list)


def _served(ctx: Context, handler: Any, params: Any, finished: Job | None = None) -> Served:
    """Run the handler, step each job it hands back to its end, run it again with the
    finished job; until it answers."""
    served = Served(Outcome())
    while True:
        outcome = handler(replace(ctx, finished=finished), params)
        if outcome.job is None:
            served.outcome = outcome
            return served
        served.jobs.append(outcome.job)
        while not outcome.job.done:
            progress = outcome.job.step(ctx, time.monotonic() + SLICE_S)
            if progress.blobs or progress.writes:
                served.handed.append(progress)
        finished = outcome.job


def _patch(ctx: Context) -> SafePatchParams:
    data = (ctx.workspace.root / "big.txt").read_bytes()
    hunks = "".join(
        f"@@ -{STEP * i + 1},1 +{STEP * i + 1},1 @@\n-line {STEP * i}\n+LINE {STEP * i}\n"
        for i in range(CHANGES)
    )
    sha = hashlib.sha256(data).hexdigest()
    given = {"path": "big.txt", "unified_diff": "--- a\n+++ b\n" + hunks,
             "base_content_sha256": sha, "include_content": False}  # fmt: skip
    return msgspec.convert(given, SafePatchParams)


def _edits(ctx: Context, count: int = CHANGES) -> EditParams:
    anchors, step = open_target(ctx, "big.txt").anchors, LINES // count
    ops = [
        {"op": "replace_line", "hash": anchors[step * i].anchor, "line": step * i + 1,
         "content": f"LINE {step * i}"}
        for i in range(count)
    ]  # fmt: skip
    return msgspec.convert({"path": "big.txt", "operations": ops}, EditParams)


def test_a_big_patch_is_planned_in_a_job_and_the_final_run_takes_the_plan(tmp_path: Path):
    """The plan is made in the job's slices; a slice hands over the new content and its
    write before the final run, which writes exactly the plan's bytes."""
    ctx = _context(tmp_path)
    served = _served(ctx, safe_patch, _patch(ctx))
    outcome = served.outcome
    assert outcome.error is None
    ahead = [job for job in served.jobs if isinstance(job, AheadJob)]
    assert len(ahead) == 1
    kept = ahead[0].asking.plans["big.txt"].written
    assert kept is not None and outcome.writes[0].data is kept.data  # taken, not made again
    [handed] = served.handed
    assert handed.writes == outcome.writes and kept.sha256 in handed.blobs
    assert kept.data.decode().count("LINE") == CHANGES
    assert outcome.result.latest_file_state.version == ctx.next_seq  # the reply's own seq
    assert [type(e) for e in outcome.events] == [EditApplied]


def test_a_big_diff_refused_while_parsed_in_steps_is_refused_with_the_file_state(
    tmp_path: Path,
):
    """A diff of many hunks is parsed a step at a time in the job; one that refuses it
    gets the seed's refusal, worded by the final run (success false, the latest state)."""
    ctx = _context(tmp_path)
    params = _patch(ctx)
    bad = params.unified_diff.replace(f"+LINE {STEP * 7}\n", f"+LINE\x00 {STEP * 7}\n")
    served = _served(ctx, safe_patch, msgspec.structs.replace(params, unified_diff=bad))
    error = served.outcome.error
    assert error is not None and error.code.value == "invalid_diff"
    assert "NUL" in error.message and error.details["success"] is False
    assert error.details["latest_file_state"]["file_path"] == "big.txt"
    assert served.outcome.writes == []


def test_a_big_edit_with_a_stale_anchor_resolved_in_steps_is_refused_and_journaled(
    tmp_path: Path,
):
    """A batch of many operations is resolved a few hundred a step in the job; an
    anchor no line has refuses it all, as at once: nothing written, the refusal
    journaled."""
    ctx = _context(tmp_path)
    params = _edits(ctx, STEPPED_FROM + 50)
    ops = list(params.operations)
    ops[7] = msgspec.structs.replace(ops[7], hash="abcdef", line=None)
    served = _served(ctx, edit, msgspec.structs.replace(params, operations=ops))
    error = served.outcome.error
    assert error is not None and error.code.value == "anchor_stale"
    assert served.outcome.writes == [] and served.handed == []
    assert [type(e) for e in served.outcome.events] == [EditRejected]


def test_a_big_apply_patch_update_is_planned_ahead_too(tmp_path: Path):
    """An Update File of many chunks on a big file: planned in a job like safe_patch."""
    ctx = _context(tmp_path)
    chunks = "".join(f"@@\n-line {STEP * i + 1}\n+LINE {STEP * i + 1}\n" for i in range(CHANGES))
    envelope = f"*** Begin Patch\n*** Update File: big.txt\n{chunks}*** End Patch\n"
    served = _served(ctx, apply_patch, ApplyPatchParams(patch=envelope))
    assert served.outcome.error is None
    assert AheadJob in [type(job) for job in served.jobs]
    [write] = served.outcome.writes
    assert write.data is not None and write.data.decode().count("LINE") == CHANGES


def test_a_file_changed_after_the_plan_is_planned_again_not_written_blind(tmp_path: Path):
    """Changed from outside once the job kept its plan (a file the journal never saw: no
    outside change to record): the final run finds other content than the plan was made
    on and plans the edit again, ahead, on the content found, which keeps the change."""
    ctx = _context(tmp_path)
    params = _edits(ctx)
    outcome = edit(ctx, params)
    while outcome.job is not None and not isinstance(outcome.job, AheadJob):
        job = _finish(ctx, outcome.job)
        outcome = edit(replace(ctx, finished=job), params)
    ahead = outcome.job
    assert isinstance(ahead, AheadJob)
    job = _finish(ctx, ahead)
    kept = ahead.asking.plans["big.txt"].written
    path = ctx.workspace.root / "big.txt"
    path.write_text(path.read_text().replace("line 3\n", "changed from outside\n"))
    again = _served(ctx, edit, params, finished=job)
    assert again.outcome.error is None
    written = again.outcome.writes[0].data
    assert kept is not None and written != kept.data
    assert written is not None and b"changed from outside\n" in written
    assert written.decode().count("LINE") == CHANGES
    assert AheadJob in [type(j) for j in again.jobs]  # after the new content's index
    assert [type(e) for e in again.outcome.events] == [EditApplied]


def test_a_record_of_the_path_since_the_plan_makes_it_planned_again(tmp_path: Path):
    """The same content, but the journal recorded the path since the plan began (a read
    may move the agent's snapshot, which a plan reads): the plan is made again."""
    ctx = _context(tmp_path)
    params = _patch(ctx)
    first = _served(ctx, safe_patch, params)
    job = first.jobs[-1]
    assert isinstance(job, AheadJob)
    kept = job.asking.plans["big.txt"].written
    data = (ctx.workspace.root / "big.txt").read_bytes()
    sha = hashlib.sha256(data).hexdigest()
    ctx.journal.stage("agent-b", FileRead(path="big.txt", sha256=sha, size=len(data),
                                          line_count=LINES))  # fmt: skip
    ctx.journal.commit(durable=False)
    again = _served(ctx, safe_patch, params, finished=job)
    assert [type(j) for j in again.jobs] == [AheadJob]
    assert again.outcome.error is None
    assert kept is not None and again.outcome.writes[0].data == kept.data
    assert again.outcome.writes[0].data is not kept.data  # made again


def _finish(ctx: Context, job: Job) -> Job:
    while not job.done:
        job.step(ctx, time.monotonic() + SLICE_S)
    return job
