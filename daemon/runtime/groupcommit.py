"""Group commit: the durable side of the daemon's loop.

Requests that arrive together are staged one after another (their events folded
into the state at once, so the next request sees them) and made durable together:
at the batch's end every event is committed once (with each write's new content,
fsynced), the files are renamed, and only then do the replies go — a reply never
outruns its commit, and an acknowledged write is in place and durable in the
journal; the files' own fsyncs follow off the owner thread
(`daemon.landing.flusher`). What a write met
as it landed is journaled before any reply (`daemon.landing.displacement`). When
the journal refuses, the staged events are dropped and the state is folded again
from what the journal really holds: nothing is half-recorded. Before a commit and
before its replies the journal's own files are checked (daemon.store.journalfiles):
nothing is acknowledged into a database file replaced, removed or cut short.

A batch of many writes (more than `SLICED_WRITES`: a restore, an undo --by) lands a
slice at a time after its commit (`land_slice`, each turn of the loop, at most
`LANDING_SLICE_S` of the thread): its replies wait until every file is in place,
while other requests are served; what its writes meet is journaled slice by slice.
A later batch writing one of its paths lands that path first (writeround.py).
Subscribers hear of each event at its commit, but of a write's `edit_applied` once
its file has landed (a subscriber reading the file on it finds the new content).

It owns the state, the journal's staging and the write round; the server's loop
decides what to stage and when a batch ends.
"""

from __future__ import annotations

import hashlib
import logging
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import msgspec

from editjournal.daemon.contract.outcome import ABSENT, Link, Outcome, linked
from editjournal.daemon.files.latewrites import Late
from editjournal.daemon.files.workspace import Workspace
from editjournal.daemon.landing.displacement import (
    Carries,
    Reply,
    carry_event,
    kept_path,
    late_appended,
    late_event,
    outside_events,
)
from editjournal.daemon.landing.flusher import MAX_ATTEMPTS, RETRY_S, Flusher, FlushNotice
from editjournal.daemon.landing.pendingwrites import Recovered, boot_id
from editjournal.daemon.landing.writeround import (
    CommitStats,
    Landings,
    Met,
    Prepared,
    WriteRound,
    disk_full,
)
from editjournal.daemon.model import idempotency
from editjournal.daemon.model.idempotency import Remembered
from editjournal.daemon.model.state import State, fold
from editjournal.daemon.runtime.boundary import encode_reply
from editjournal.daemon.runtime.faults import Faults
from editjournal.daemon.runtime.logs import EVENTS
from editjournal.daemon.runtime.publisher import Publisher
from editjournal.daemon.settings.limits import Limits
from editjournal.daemon.store.dbfaults import advice, journal_code
from editjournal.daemon.store.journal import Journal, JournalError, JournalFilesChanged
from editjournal.daemon.store.statesnap import Snapshotter
from editjournal.daemon.watch.outside import Observation
from editjournal.schemas.errors import ErrorCode, ToolError
from editjournal.schemas.events import AnyEvent, DaemonStopped, Record, RequestAnswered
from editjournal.schemas.wire import Error, PublishedEvent, Response, event_topic

log = logging.getLogger("editjournal")
events_log = logging.getLogger(EVENTS)
# events whose loss in a power cut takes back nothing a reply promised was changed: a
# batch of only these is committed with synchronous=NORMAL (it still survives kill -9)
OBSERVATIONS = frozenset({"file_read", "edit_rejected", "outside_change", "hunk_rejected"})
Send = Callable[[list[bytes], bytes], None]  # a reply's route and encoded frame
# a batch writing more files than this lands in slices after its commit (a write lands
# in ~0.1-0.5 ms: a few dozen stay well within a slice)
SLICED_WRITES = 64
LANDING_SLICE_S = 0.05  # the longest one slice of a landing holds the thread
_NOTICE_ENCODER = msgspec.msgpack.Encoder()


class Answer(NamedTuple):
    """A keyed request's reply as staged with its commit (daemon/model/idempotency.py)."""

    agent: str
    event: RequestAnswered
    seq: int  # where it was staged: what an amended answer names


@dataclass
class Batch:
    """Replies waiting for their events to be committed."""

    replies: list[tuple[list[bytes], Response]] = field(default_factory=list)
    durable: bool = False  # a request changed something: commit with synchronous=FULL
    bytes: int = 0  # of the requests and replies: a large batch gives memory back after
    answers: dict[int, Answer] = field(default_factory=dict)  # by reply index: keyed writes


@dataclass
class _Landing:
    """A committed batch whose writes are landing: its replies wait for the last one."""

    replies: list[tuple[list[bytes], Response]]
    answers: dict[int, Answer]
    results: Landings = field(default_factory=Landings)
    carries: Carries = field(default_factory=Carries)


class GroupCommit:
    """The state, the journal's staged events and the write round, made durable together."""

    def __init__(
        self,
        journal: Journal,
        state: State,
        workspace: Workspace,
        limits: Limits,
        faults: Faults,
        send: Send,
        snapshots: Snapshotter,
    ) -> None:
        self.journal = journal
        self.state = state
        self.workspace = workspace
        self.limits = limits
        self.faults = faults
        self.send = send
        self.flusher = Flusher(enabled=not faults.no_flush)
        workspace.late_writes.release_with(self.flusher.release)
        self.round = WriteRound(workspace, self.flusher, faults.boot_id or boot_id())
        self.batch = Batch()
        self.stats = CommitStats()
        self.snapshots = snapshots  # the state's snapshots, taken after commits
        self.publisher: Publisher | None = None  # once the server has bound its sockets
        self.landing: _Landing | None = None  # a big batch landing in slices (land_slice)
        # the committed events about a file its batch writes, by path, in seq order, each
        # with its commit's last seq: published once the file has landed (`_publish_landed`)
        self._unpublished: dict[str, list[tuple[int, Record]]] = {}
        # set when a refused commit left a journal that cannot even be read back (a
        # damaged file): the state can no longer be folded to match it, so nothing more
        # is staged and every request that must record is refused (docs/guarantees.md)
        self.sealed: JournalError | None = None

    # --- staging -----------------------------------------------------------------------

    def check_unsealed(self) -> None:
        """Raise the failure that sealed the journal, if one did: nothing more is staged."""
        if self.sealed is not None:
            raise self.sealed

    def stage(self, agent: str | None, event: Any, blobs: dict[str, bytes] | None = None) -> int:
        self.check_unsealed()
        record = self.journal.stage(agent, event, blobs or {})
        self.state.apply(record)
        return record.seq

    def record(self, agent: str, outcome: Outcome, identity: str | None = None) -> list[Record]:
        """Stage the outcome's events and fold them into state, in one order; an event
        naming a sibling (`Outcome.links`) gets the sibling's seq as it is staged. An
        event the request caused that has an `identity` field is stamped with the
        request's (`schemas.wire.identity_of`): what only its maker may act on."""
        if outcome.events:  # a request that records nothing (ping) is served even so
            self.check_unsealed()
        records: list[Record] = []
        if any(event.kind not in OBSERVATIONS for event in outcome.events):
            self.batch.durable = True
        by_source: dict[int, list[Link]] = {}  # once: a scan per event was quadratic
        for link in outcome.links:  # (a 5,000-file restore: 25 M comparisons, 8 s profiled)
            by_source.setdefault(link.source, []).append(link)
        for i, event in enumerate(outcome.events):
            who = agent if event.caused_by_agent else None
            links = by_source.get(i)
            if links:
                event = linked(event, links, [r.seq for r in records])
            if who is not None:
                event = stamped(event, identity)
            # the blobs once, with the first event: the journal keeps them for the commit,
            # and handing them with each event copied them per event (a 5,000-file
            # restore: 5,000 x 10,000 entries, 4.7 s profiled)
            blobs = outcome.blobs if not records else None
            record = self.journal.stage(who, event, blobs)
            self.state.apply(record)
            records.append(record)
        return records

    def record_now(self, agent: str | None, event: AnyEvent) -> None:
        self.stage(agent, event)
        self.commit()

    def record_outside(self, observation: Observation) -> None:
        """Stage and apply at once: the next path is compared with the state this left."""
        for event in observation.events:
            self.stage(None, event, observation.blobs)

    def record_stop(self, pid: int, reason: str) -> None:
        """`daemon_stopped`, if the journal takes it: a stop must not fail on it.
        A batch the loop never flushed (it crashed) is dropped first: its writes never
        reached the disk and its requests got no reply, so the journal must not say them."""
        if self.round:
            self.round.discard()
            self.journal.discard_staged()
        if not self.flusher.settle():  # so the last commit lets go of every flushed write
            log.error("landed writes were still being fsynced at the stop")
        self._publish_held()
        try:
            self.record_now(None, DaemonStopped(pid=pid, reason=reason))
        except JournalError:
            log.error("daemon_stopped could not be journaled")
        self.flusher.close()

    def unstage_after(self, seq: int) -> None:
        """Forget what a failed request staged: its writes were discarded, so its events
        must not be committed with the batch (no phantom `edit_applied`)."""
        if self.journal.last_seq > seq:
            self.journal.drop_staged_after(seq)
            self._rebuild_if_readable()

    def rebuild_state(self) -> None:
        """The state as the journal really holds it, after staged events were dropped."""
        self.state = fold(self.journal.records())

    def _rebuild_if_readable(self) -> None:
        """Fold the state again after a refused commit, unless the journal cannot even be
        read back (a damaged file): then the state is kept, as nothing can be committed
        onto that journal anyway, and every request that must record is refused."""
        try:
            self.rebuild_state()
        except (sqlite3.Error, JournalError) as e:
            log.error("the journal cannot be read back, so it is sealed: %s", e)
            self.sealed = JournalError(f"the journal cannot be read back: {e}")
            self.sealed.__cause__ = e

    # --- committing ----------------------------------------------------------------------

    def commit(self, durable: bool = True) -> None:
        """Make staged events durable, then tell the terminal, the log and subscribers.

        The write round's pending-writes rows go in the same transaction (and the rows
        of writes it has since published go away). `durable` False: synchronous=NORMAL,
        for batches that only observed (see `OBSERVATIONS` and docs/guarantees.md).

        When the journal refuses (another process holds a write lock past the busy
        timeout, the disk is full, ...), the staged events are dropped, the state is
        folded again from what the journal really holds, and JournalError is raised
        for the caller to answer with `journal_unavailable`: nothing is half-recorded,
        and the daemon keeps serving.

        Before the commit and again before any reply, the journal's own files are
        checked (daemon.store.journalfiles): a WAL unlinked is taken back with nothing
        lost; a database file replaced, removed or cut short seals the journal like a
        damaged one (`sealed`), and the batch it was found in is refused.
        """
        if self.sealed is not None:  # no event was staged (`stage` refuses): nothing to say
            return
        try:
            self.journal.check_files()  # nothing is committed into a file no longer the journal
            records = self.journal.commit(durable, also=self.round.statements())
            self.journal.check_files()  # nor acknowledged: the files may have gone meanwhile
        except JournalFilesChanged as e:  # sealed, as a damaged journal is: refused from now on
            log.error("%s; the state is rebuilt from the journal", e)
            self.journal.discard_staged()  # found before the commit: these were never journaled
            self._rebuild_if_readable()
            self.sealed = e
            raise
        except JournalError as e:
            log.error("%s; the state is rebuilt from the journal", e)
            self._rebuild_if_readable()
            raise
        self.round.committed()
        self.stats.count(len(records), durable)
        if events_log.isEnabledFor(logging.DEBUG):  # no summary() built for nothing
            for record in records:
                events_log.debug(
                    "%d %s %s", record.seq, record.agent or "-", record.event.summary()
                )
        if self.publisher is not None:
            self.publisher.publish(self._hold_writes(records))
        self.report_flushes()
        self.snapshots.after_commit(self.journal, self.state)

    def _hold_writes(self, records: list[Record]) -> list[Record]:
        """The committed records to publish now. The events about a file the batch
        writes (its `edit_applied`, a `hunk_applied`, a read in the same batch) wait for
        that file to land (`_publish_landed`): published at the commit, before the rename,
        an `edit_applied` sent a subscriber that read the file on it to the old content.
        Held by path, so each path's events still come in seq order. The rest go now."""
        if not self.round or not records:
            return records
        tip, now = records[-1].seq, []
        for record in records:
            path = record.path
            if path is not None and self.round.writes(path):
                self._unpublished.setdefault(path, []).append((tip, record))
            else:
                now.append(record)
        return now

    def _publish_landed(self) -> None:
        """Publish the held events of the files that landed since the last call: a path's
        events of the commit its landed write was in, and of those before (a later
        batch's write of the same path, committed already, waits for its own landing)."""
        for key, seq in self.round.take_landed():
            held = self._unpublished.get(key)
            if not held:
                continue
            # the landed write's commit: the first of the held whose last seq reaches it
            tip = next((t for t, _ in held if t >= seq), held[-1][0]) if seq else held[-1][0]
            ready = [record for t, record in held if t <= tip]
            if len(ready) == len(held):
                del self._unpublished[key]
            else:
                self._unpublished[key] = held[len(ready) :]
            if self.publisher is not None:
                self.publisher.publish(ready)

    def _publish_held(self) -> None:
        """Every held event, landed or not (a stop: nothing more will land)."""
        held = sorted((r for rs in self._unpublished.values() for _, r in rs), key=lambda r: r.seq)
        self._unpublished.clear()
        if held and self.publisher is not None:
            self.publisher.publish(held)

    def report_flushes(self) -> None:
        """Landed writes whose fsync failed (retried by the flusher) or that a retry made
        durable, on the PUB feed: not journal events (seq 0), a disk's trouble told as it
        happens; `status` counts them (`group_commit.flush`)."""
        notices = self.flusher.notices()
        if not notices or self.publisher is None:
            return
        for notice in notices:
            event = PublishedEvent(
                seq=0,
                ts=int(time.time() * 1000),
                kind=notice.kind,
                agent=None,
                path=notice.path,
                summary=_flush_summary(notice),
            )
            frame = [event_topic(notice.path), _NOTICE_ENCODER.encode(event)]
            self.publisher.socket.send_multipart(frame)

    def flush(self, batch: Batch) -> None:
        """End the batch: commit every event once, rename, hand the files to the
        flusher, then reply. The batch is emptied in place. A batch of more than
        `SLICED_WRITES` writes is left landing (`land_slice`), its replies waiting."""
        replies, durable, answers = batch.replies, batch.durable or bool(self.round), batch.answers
        batch.replies, batch.durable, batch.answers = [], False, {}
        self.round.drop_superseded()
        try:
            self.commit(durable)
        except JournalError as e:
            self.round.discard()
            replies = [(route, _unrecorded(response, e)) for route, response in replies]
        else:
            if len(self.round) > SLICED_WRITES:
                self._begin_sliced(_Landing(replies, answers))
                return
            replies = self._land(replies, answers)
        batch.bytes += self._reply(replies)

    def _reply(self, replies: list[Reply]) -> int:
        """Send the replies; their bytes."""
        sent = 0
        for route, response in replies:
            reply = encode_reply(response)
            sent += len(reply)
            self.send(route, reply)
        return sent

    def _land(self, replies: list[Reply], answers: dict[int, Answer]) -> list[Reply]:
        """After the commit: rename the round's files into place, journal what they met,
        and turn the replies into what really happened (a rename that failed, a write
        refused over an outside change, one carried over it). A keyed write's remembered
        reply is amended to match, in the same commit, before any reply goes."""
        landing = _Landing(replies, answers)
        keys = self._begin(landing)
        self.round.land_keys(keys, self.limits.file_lines)
        self._publish_landed()
        return self._landed(landing)

    def _begin(self, landing: _Landing) -> list[str]:
        """The batch's writes queued to land (a write still landing from a big batch
        on one of their paths first: this batch planned over it)."""
        self.faults.on_commit(len(self.round))
        self.stats.batches_with_writes += bool(self.round)
        self.stats.writes += len(self.round)
        if self.landing is not None and self.round:
            self.round.land_keys(self.round.keys(), self.limits.file_lines)
            self._publish_landed()
            self._journal_slice(self.landing)
        return self.round.begin(landing.results)

    def _begin_sliced(self, landing: _Landing) -> None:
        """A big batch: its writes land a slice a turn from the next turn on, this one
        having had its commit, removals as the rest (the overlay serves their tombstones
        until they land: 1,000 removals landed in the commit's turn held it ~0.2 s). One
        big landing at a time: an earlier one still under way is finished first."""
        if self.landing is not None:
            self.finish_landing()
        self._begin(landing)
        self.landing = landing

    def land_slice(self, at_least_one: bool = True, slice_s: float = LANDING_SLICE_S) -> None:
        """One slice of the big batch landing; when its last write is in place, its
        replies go."""
        landing = self.landing
        if landing is None:
            return
        deadline = time.monotonic() + slice_s
        done = self.round.land(deadline, self.limits.file_lines, at_least_one)
        self._publish_landed()
        self._journal_slice(landing)
        if done:
            self.landing = None
            self._reply(self._landed(landing))

    def finish_landing(self) -> None:
        """Land what is left of a big batch now and answer it (a stop, or another big
        batch must land)."""
        while self.landing is not None:
            self.land_slice()

    def _journal_slice(self, landing: _Landing) -> None:
        """What the slice's writes met, journaled and committed at once: no request in
        between may find an outside change the journal does not say yet."""
        met = landing.results.take_met()
        if not met:
            return
        staged = self.journal.last_seq
        self._journal_met(met, landing.carries)
        if self.journal.last_seq > staged:
            self._commit_landing([])

    def _landed(self, landing: _Landing) -> list[Reply]:
        """Every write of the batch is in place (or failed): its replies as they now are."""
        staged = self.journal.last_seq
        carried = self._journal_met(landing.results.take_met(), landing.carries)
        failures, replies = landing.results.failures, landing.replies
        landed = [
            (route, _unwritten(response, failures[i]) if i in failures else response)
            for i, (route, response) in enumerate(replies)
        ]
        landed = carried.amend(landed)
        amended = self._amend_answers(landing.answers, replies, landed)
        if self.journal.last_seq > staged:
            self._commit_landing(amended)
        return landed

    def _journal_met(self, met: list[Met], carries: Carries) -> Carries:
        """Stage what the round's writes met as they landed: the outside contents, each
        stored, then the carry or the refusal (daemon/landing/displacement.py). Committed
        before any reply goes: a reply never outruns what the journal says of its write."""
        for found in met:
            outside_seq = 0
            for event, blobs in outside_events(found):
                outside_seq = self.stage(None, event, blobs)
            carry = carry_event(found)
            if carry is not None:
                carries.carried(found, outside_seq, self.stage(found.agent, *carry))
            elif found.landed.refused:
                carries.refused(found, outside_seq)
        return carries

    def _amend_answers(
        self, answers: dict[int, Answer], planned: list[Reply], landed: list[Reply]
    ) -> list[tuple[str, RequestAnswered]]:
        """Stage, for each keyed write whose reply the landing changed, the reply it
        really got: a retry is then told that, never the planned `ok`."""
        amended: list[tuple[str, RequestAnswered]] = []
        for i, answer in answers.items():
            response = landed[i][1]
            if response is planned[i][1]:
                continue
            event = idempotency.amended(answer.event, answer.seq, response)
            self.stage(answer.agent, event)
            amended.append((answer.agent, event))
        return amended

    def _commit_landing(self, amended: list[tuple[str, RequestAnswered]]) -> None:
        try:
            self.commit(durable=True)
        except JournalError:  # the contents are on disk: the watcher journals them later
            log.error("outside changes met by writes could not be journaled")
            for agent, event in amended:  # this run's retries are told the truth still
                self.state.answers.remember(agent, event)

    def answer_recovered(self, recovered: Recovered) -> None:
        """At start-up, make keyed writes' remembered replies say what recovery left
        (daemon/landing/pendingwrites.py), in one commit."""
        staged = self.journal.last_seq
        unfinished = dict(recovered.unfinished_writes)
        answering = self.state.answers.answering([*unfinished, *recovered.finished_writes])
        for seq, path in unfinished.items():
            self._amend_unfinished(answering.get(seq, []), seq, path)
        for seq in recovered.finished_writes:
            self._restore_finished(answering.get(seq, []))
        for seq, path in recovered.kept_writes:
            self._journal_kept(seq, path)
        if self.journal.last_seq > staged:
            self.commit(durable=True)

    def _journal_kept(self, seq: int, path: str) -> None:
        """A file recovery kept beside a write's target (someone's change the write
        displaced): journaled as created with its content, `displaced_by` the write, as a
        late change is. The start-up scan would not: it looks at known files only."""
        try:
            snapshot = self.workspace.read(path)
        except ToolError as e:
            log.error("recovery kept %s but could not journal it: %s", path, e)
            return
        data, sha = snapshot.data, snapshot.sha256
        self.stage(None, late_event(path, data, sha, seq), {sha: data})

    def _amend_unfinished(self, answering: list[Remembered], seq: int, path: str) -> None:
        """A write recovery could not roll forward (its file changed while the daemon was
        down) is not in its file: a remembered `ok` becomes `write_displaced`."""
        for agent, answer, reply in answering:
            if reply.ok:
                refusal = idempotency.refused(reply, _unlanded(seq, path))
                first = answer.amends or self._answer_seq(agent, answer, seq)
                self.stage(agent, idempotency.amended(answer, first, refusal))

    def _restore_finished(self, answering: list[Remembered]) -> None:
        """A write recovery finished is in its file: a refusal amended at its landing (a
        rename that failed) gives way to the `ok` staged with its commit again."""
        for agent, answer, reply in answering:
            planned = self._planned(answer) if not reply.ok else None
            if planned is not None and planned.ok and answer.amends is not None:
                self.stage(agent, idempotency.amended(answer, answer.amends, planned))

    def _answer_seq(self, agent: str, answer: RequestAnswered, seq: int) -> int:
        """Where the answer of the write at `seq` was journaled: staged right after it."""
        found = self.journal.records(after_seq=seq, kind="request_answered", agent=agent)
        for record in found:
            event = record.event
            if (
                isinstance(event, RequestAnswered)
                and event.key == answer.key
                and event.identity == answer.identity  # a key is per (agent, identity)
            ):
                return record.seq
        return seq

    def _planned(self, answer: RequestAnswered) -> Response | None:
        """The reply staged with the write's commit, which `answer` amended."""
        if answer.amends is None:
            return None
        for record in self.journal.records(after_seq=answer.amends - 1, until_seq=answer.amends):
            if isinstance(record.event, RequestAnswered):
                return idempotency.reply_of(record.event)
        return None

    # --- bytes written into displaced files ------------------------------------------------

    def carry_late(self, found: list[Late]) -> None:
        """Bytes written into displaced files after they were judged
        (daemon/files/latewrites.py). Appended lines are appended to the file, as the
        writer's `O_APPEND` would have done (the watcher journals them like any outside
        change); any other late change is kept beside the file, journaled with its
        content, never merged blind."""
        for late in found:
            appended = late_appended(late)
            if appended is not None:
                try:
                    self.workspace.append_bytes(late.key, appended)
                    log.info("%s: lines written late into a displaced file appended", late.key)
                    continue
                except ToolError as e:
                    log.error("%s: lines written late could not be appended: %s", late.key, e)
            self._keep_beside(late)
        if self.round:
            self.flush(Batch())

    def _keep_beside(self, late: Late) -> None:
        path = kept_path(late)
        sha = hashlib.sha256(late.data).hexdigest()
        try:
            ready = self.workspace.prepare_write(path, late.data, durable=False, sha256=sha)
        except ToolError as e:
            log.error("%s: bytes written late could not be kept: %s", late.key, e)
            return
        log.warning("%s: a late change to a displaced file is kept as %s", late.key, path)
        seq = self.stage(None, late_event(path, late.data, sha, late.seq), {sha: late.data})
        self.round.add([Prepared(ready, ABSENT, None)], seq, [], None)


def _flush_summary(notice: FlushNotice) -> str:
    if notice.kind == "flush_retried":
        return f"{notice.path}: fsynced on attempt {notice.attempts + 1}, after failures"
    return (
        f"{notice.path}: the landed write could not be fsynced ({notice.error}); attempt"
        f" {notice.attempts} of {MAX_ATTEMPTS}: retried every {RETRY_S:g} s, and after the last"
        " it is left to start-up recovery (the journal holds its content)"
    )


def error_response(rid: int | str | None, error: Error) -> Response:
    return Response(id=rid, ok=False, error=error)


def _unwritten(response: Response, cause: ToolError) -> Response:
    """The reply to a write journaled (committed) whose rename then failed."""
    error = ToolError(
        ErrorCode.INTERNAL_ERROR,
        f"the change was journaled (seq {response.seq}) but not written: {cause.message}",
        {"seq": response.seq, **cause.details},
    )
    return Response(id=response.id, ok=False, error=error.to_wire(), seq=response.seq)


def _unlanded(seq: int, path: str) -> ToolError:
    """Why a write recovery did not roll forward is not in its file."""
    return ToolError(
        ErrorCode.WRITE_DISPLACED,
        f"{path}: the daemon stopped before this write (seq {seq}) reached the file, and the"
        " file was changed while it was down; that change was kept and this write is not in"
        " the file",
        {"path": path, "seq": seq},
        f"read_file {path} with since_version {seq} shows the change; redo this one over it",
    )


def _unrecorded(response: Response, cause: JournalError) -> Response:
    """The reply to a request whose batch could not be made durable: nothing recorded.
    A full disk is `disk_full`, the rest `journal_unavailable`."""
    details = {"seq": response.seq} if response.seq is not None else {}
    if disk_full(cause):
        code, message = ErrorCode.DISK_FULL, f"the disk holding the journal is full: {cause}"
    elif journal_code(cause) is ErrorCode.JOURNAL_CORRUPT:
        code, message = ErrorCode.JOURNAL_CORRUPT, f"the journal file is damaged: {cause}"
    else:
        code, message = ErrorCode.JOURNAL_UNAVAILABLE, str(cause)
    message = f"the journal could not record this request, so nothing was changed: {message}"
    return error_response(response.id, ToolError(code, message, details, advice(cause)).to_wire())


def stamped(event: AnyEvent, identity: str | None) -> AnyEvent:
    """`event` with the request's identity, when it is an event that keeps one (a write,
    a prepared hunk, a keyed answer): the request's always, even over one a handler
    copied from an earlier event, so what it records is journaled as who asked."""
    if "identity" not in event.__struct_fields__ or getattr(event, "identity", None) == identity:
        return event
    return msgspec.structs.replace(event, identity=identity)
