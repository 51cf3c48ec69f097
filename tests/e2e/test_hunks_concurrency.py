"""Hunks and other agents: applies arriving together land in plan order, a plan is
carried over changes to other lines and refused when its own lines changed."""

from __future__ import annotations

import signal
from pathlib import Path

import msgspec
import zmq

from editjournal.client import Client
from editjournal.client.library.connection import live_endpoint
from editjournal.schemas.wire import REQUEST_ENCODER, RESPONSE_DECODER, Request
from tests.conftest import RunningDaemon
from tests.e2e.hunk_support import events, refused

TEXT = "".join(f"line {n}\n" for n in range(1, 21))


def _apply_frame(rid: int, client: Client, hunk_id: str) -> bytes:
    params = msgspec.Raw(msgspec.msgpack.encode({"hunk_id": hunk_id}))
    request = Request(
        id=rid, method="apply_file_modification", agent=client.agent, params=params,
        credential=client.credential,
    )  # fmt: skip
    return REQUEST_ENCODER.encode(request)


def test_applies_arriving_together_land_in_the_order_they_were_planned(
    daemon: RunningDaemon, workspace: Path
):
    (workspace / "log.md").write_text(TEXT)
    a, b = daemon.client("agent-a"), daemon.client("agent-b")
    first = a.prepare_file_append("log.md", "from a\n")
    second = b.prepare_file_append("log.md", "from b\n")
    assert (first.created_at_ms, first.hunk_id) < (second.created_at_ms, second.hunk_id)
    endpoint = live_endpoint(workspace)
    assert endpoint is not None
    context = zmq.Context()
    sock = context.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.RCVTIMEO, 10_000)
    sock.connect(endpoint.socket)
    try:
        # Held back while both are sent, so they wait together: the later plan is sent first.
        daemon.proc.send_signal(signal.SIGSTOP)
        try:
            sock.send(_apply_frame(1, b, second.hunk_id))
            sock.send(_apply_frame(2, a, first.hunk_id))
        finally:
            daemon.proc.send_signal(signal.SIGCONT)
        replies = [RESPONSE_DECODER.decode(sock.recv()) for _ in range(2)]
    finally:
        sock.close()
        context.term()
    assert all(r.ok for r in replies), [r.error for r in replies]
    assert (workspace / "log.md").read_text() == TEXT + "from a\nfrom b\n"
    applied = [r.event.hunk_id for r in events(workspace, "hunk_applied")]
    assert applied == [first.hunk_id, second.hunk_id]


def test_a_plan_whose_lines_are_untouched_is_rebased(
    daemon: RunningDaemon, client: Client, workspace: Path
):
    path = workspace / "f.txt"
    path.write_text(TEXT)
    plan = client.prepare_file_range_edit("f.txt", "LINE 15\n", range="15-15")
    other = daemon.client("agent-b")
    other.prepare_file_insert("f.txt", "line 2", "inserted by b\n", match="exact")
    other.apply_file_modification(other.list_hunks().hunks[0].hunk_id)
    applied = client.apply_file_modification(plan.hunk_id)
    assert applied.apply_evidence.rebased and applied.rebased_from_version == plan.evidence.version
    assert applied.apply_evidence.rebased_over[0]["agent"] == "agent-b"
    lines = path.read_text().splitlines()
    assert lines[2] == "inserted by b" and lines[15] == "LINE 15" and "line 15" not in lines


def test_a_plan_whose_lines_another_agent_changed_is_refused(
    daemon: RunningDaemon, client: Client, workspace: Path
):
    path = workspace / "f.txt"
    path.write_text(TEXT)
    plan = client.prepare_file_block_replace("f.txt", "line 7\nline 8\n", "seven-eight\n")
    other = daemon.client("agent-b")
    changed = other.edit_file("f.txt", "line 8\n", "line eight\n")
    before = path.read_bytes()
    error = refused(lambda: client.apply_file_modification(plan.hunk_id))
    assert error.code == "apply_rejected"
    assert error.details["conflicts"][0]["agent"] == "agent-b"
    assert error.details["conflicts"][0]["seq"] == changed.version
    assert "agent-b" in error.message and "line eight" in error.details["delta"]["diff"]
    assert path.read_bytes() == before
    rejected = events(workspace, "edit_rejected")[-1].event
    assert (rejected.writer, rejected.code) == ("apply_file_modification", "apply_rejected")


def test_an_outside_change_to_the_planned_lines_is_a_conflict(client: Client, workspace: Path):
    path = workspace / "f.txt"
    path.write_text(TEXT)
    client.read_file("f.txt")  # tracked: the journal keeps its contents
    plan = client.prepare_file_insert("f.txt", "line 3", "after three\n", match="exact")
    path.write_text(TEXT.replace("line 3\n", "line three\n"))
    error = refused(lambda: client.apply_file_modification(plan.hunk_id))
    assert error.code == "apply_rejected"
    assert error.details["conflicts"][0]["kind"] == "outside_change"
