"""Group commit: requests that arrive together share one journal commit and one
fsync round, writes included; a later request of a batch plans against what an
earlier one wrote; and a batch that only observed is not fsynced at all.

Real client processes (tests/e2e/commit_worker.py) race one real daemon; the
daemon's `status` counts its commits (`group_commit`), and the journal is read
back to check every acknowledged write.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import msgspec
import zmq

from editjournal.client import Client
from editjournal.client.library.connection import live_endpoint
from editjournal.daemon.model.state import fold
from editjournal.schemas.wire import REQUEST_ENCODER, RESPONSE_DECODER, Request, Response
from tests.conftest import RunningDaemon

CLIENTS, APPENDS = 8, 40


def run_clients(daemon: RunningDaemon, tmp_path: Path, paths: list[str]) -> list[dict[str, Any]]:
    """One worker process per path, all at once; their reports."""
    workers = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tests.e2e.commit_worker",
                str(daemon.root),
                f"agent-{i}",
                path,
                str(APPENDS),
                str(tmp_path / f"report-{i}.json"),
            ],
            stderr=subprocess.PIPE,
        )
        for i, path in enumerate(paths)
    ]
    for worker in workers:
        assert worker.wait(timeout=600) == 0, worker.stderr.read().decode()  # type: ignore[union-attr]
    return [json.loads((tmp_path / f"report-{i}.json").read_text()) for i in range(len(paths))]


def counters(client: Client) -> dict[str, int]:
    stats = client.status().group_commit
    return {k: v for k, v in stats.items() if isinstance(v, int)}


def delta(before: dict[str, int], after: dict[str, int]) -> dict[str, int]:
    """What happened in between; `largest` (a maximum) as it is after."""
    return {k: after[k] - (0 if k == "largest" else before.get(k, 0)) for k in after}


def check_journal(daemon: RunningDaemon, acked: list[dict[str, Any]], paths: set[str]) -> None:
    """Every acknowledged write is an `edit_applied` of the journal (and nothing else is),
    the chain verifies, and the fold of the journal is what the disk holds."""
    journal = daemon.journal()
    applied = [r.seq for r in journal.records(kind="edit_applied")]
    assert sorted(a["seq"] for a in acked) == applied
    assert journal.verify().ok
    state = fold(journal.records())
    for path in paths:
        assert journal.blob(state.files[path].sha256) == (daemon.root / path).read_bytes()
    assert [r.event.change for r in journal.records(kind="outside_change")] == []


def test_clients_writing_their_own_files_share_commits(daemon: RunningDaemon, tmp_path: Path):
    client = daemon.client()
    paths = [f"own/f{i}.txt" for i in range(CLIENTS)]
    before = counters(client)

    reports = run_clients(daemon, tmp_path, paths)

    stats = delta(before, counters(client))
    acked = [a for r in reports for a in r["acked"]]
    assert [f for r in reports for f in r["failed"]] == []
    assert len(acked) == CLIENTS * APPENDS
    for i, report in enumerate(reports):  # each file holds its agent's lines, in order
        lines = [a["line"] for a in report["acked"]]
        assert (daemon.root / paths[i]).read_text().splitlines() == lines
    check_journal(daemon, acked, set(paths))
    # writes shared commits: fewer commits than edits, and some carried several
    assert stats["largest"] >= 2, stats
    assert stats["batches_with_writes"] < len(acked), stats
    assert stats["commits"] < stats["events"], stats


def test_clients_appending_to_one_file_lose_no_update(daemon: RunningDaemon, tmp_path: Path):
    """Appends carry no anchors: a later append of a batch that planned against the disk
    instead of the batch's earlier writes would silently drop their lines."""
    client = daemon.client()
    before = counters(client)

    reports = run_clients(daemon, tmp_path, ["shared.txt"] * CLIENTS)

    stats = delta(before, counters(client))
    acked = [a for r in reports for a in r["acked"]]
    assert [f for r in reports for f in r["failed"]] == []
    final = (daemon.root / "shared.txt").read_text().splitlines()
    assert sorted(final) == sorted(a["line"] for a in acked)  # every line, exactly once
    assert len(final) == CLIENTS * APPENDS
    for report in reports:  # each agent's lines in its own order
        mine = [line for line in final if line.startswith(report["acked"][0]["line"][:8])]
        assert mine == [a["line"] for a in report["acked"]]
    check_journal(daemon, acked, {"shared.txt"})
    # several edits of the one file went out in one commit and one rename
    assert stats["largest"] >= 2, stats
    assert stats["writes"] < len(acked), stats


def test_requests_of_one_batch_see_its_earlier_writes(daemon: RunningDaemon):
    """Held back while they are sent, an append, a second append, a read and an edit
    arrive together (one batch): each plans against the batch's earlier writes,
    though none is on disk yet; one commit carries them all."""
    (daemon.root / "a.txt").write_text("one\n")
    client = daemon.client()
    anchor = client.read_file("a.txt", hashes=True).lines[0].hash  # type: ignore[index]
    before = counters(client)
    replies = send_together(
        daemon,
        ("append_to_file", {"path": "a.txt", "content": "two\n"}),
        ("append_to_file", {"path": "a.txt", "content": "three\n"}),
        ("read_file", {"path": "a.txt"}),
        ("edit", {"path": "a.txt", "operations": [
            {"op": "replace_line", "hash": anchor, "content": "ONE"}]}),
    )  # fmt: skip
    assert all(r.ok for r in replies), [r.error for r in replies]
    assert replies[2].result["content"] == "one\ntwo\nthree\n"
    assert (daemon.root / "a.txt").read_text() == "ONE\ntwo\nthree\n"
    stats = delta(before, counters(client))
    assert stats["commits"] == 1 and stats["writes"] == 1, stats  # one commit, one rename
    check_journal(daemon, [{"seq": r.seq} for r in (replies[0], replies[1], replies[3])], {"a.txt"})


def test_a_removal_in_a_batch_goes_alone_after_the_writes_before_it(daemon: RunningDaemon):
    """A restore that removes a file created earlier in the same batch: the writes
    before it are published first (the overlay holds no absences), then the removal."""
    (daemon.root / "a.txt").write_text("one\n")
    client = daemon.client()
    client.read_file("a.txt")
    client.checkpoint_create("start")
    replies = send_together(
        daemon,
        ("write_file", {"path": "new.txt", "content": "fresh\n"}),
        ("append_to_file", {"path": "a.txt", "content": "two\n"}),
        ("checkpoint_restore", {"id_or_name": "start", "remove_new": True}),
        ("read_file", {"path": "a.txt"}),
    )  # fmt: skip
    assert all(r.ok for r in replies), [r.error for r in replies]
    assert replies[3].result["content"] == "one\n", replies[2].result
    assert not (daemon.root / "new.txt").exists(), replies[2].result
    assert (daemon.root / "a.txt").read_text() == "one\n"
    journal = daemon.journal()
    assert journal.verify().ok
    assert [r.event.path for r in journal.records(kind="outside_change")] == []


def send_together(daemon: RunningDaemon, *requests: tuple[str, dict[str, Any]]) -> list[Response]:
    """Send `requests` while the daemon is stopped, so they wait together; the replies."""
    endpoint = live_endpoint(daemon.root)
    assert endpoint is not None
    context = zmq.Context()
    sock = context.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.RCVTIMEO, 10_000)
    sock.connect(endpoint.socket)
    try:
        daemon.proc.send_signal(signal.SIGSTOP)
        try:
            for rid, (method, params) in enumerate(requests):
                raw = msgspec.Raw(msgspec.msgpack.encode(params))
                request = Request(id=rid, method=method, agent="agent-a", params=raw)
                sock.send(REQUEST_ENCODER.encode(request))
        finally:
            daemon.proc.send_signal(signal.SIGCONT)
        replies = [RESPONSE_DECODER.decode(sock.recv()) for _ in requests]
    finally:
        sock.close()
        context.term()
    return sorted(replies, key=lambda r: r.id)


def test_batches_that_only_read_are_not_fsynced(daemon: RunningDaemon):
    (daemon.root / "a.txt").write_text("one\n")
    client = daemon.client()
    client.read_file("a.txt")
    before = counters(client)

    for _ in range(5):
        client.read_file("a.txt")
    client.append_to_file("a.txt", "two\n")

    stats = delta(before, counters(client))
    assert stats["commits"] == 6 and stats["durable"] == 1, stats
