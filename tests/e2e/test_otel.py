"""OpenTelemetry export (issue 38): a real daemon sends its journal events over OTLP/HTTP to
a real receiver the test starts (tests/e2e/otel_support.py: an HTTP server on 127.0.0.1
that decodes the protobuf requests with opentelemetry-proto, as a collector does), and
so does `ship --follow --otel` with the events it ships. A dead collector (a closed
port) or one that never answers never delays a reply, and what it loses is counted in
`status`."""

from __future__ import annotations

import signal
import socket
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from editjournal.client import Client, RequestError
from editjournal.client.views.render import status_lines
from tests.conftest import RunningDaemon, start
from tests.e2e.otel_support import (
    Receiver,
    SilentCollector,
    configure,
    in_background,
    listening_silently,
    receiving,
)
from tests.pg_support import PostgresServer
from tests.polling import wait_until

FILE = "".join(f"def step_{n}(state):\n    return state + {n}\n\n" for n in range(1, 21))


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    yield from receiving()


@pytest.fixture
def silent_collector() -> Iterator[SilentCollector]:
    yield from listening_silently()


@pytest.fixture
def started(workspace: Path) -> Iterator[Callable[[], RunningDaemon]]:
    """Start the daemon once the test has written its config; stopped afterwards."""
    daemons: list[RunningDaemon] = []

    def start_one() -> RunningDaemon:
        daemons.append(start(workspace))
        return daemons[-1]

    yield start_one
    for running in daemons:
        if running.proc.poll() is None:
            running.stop()


def _refused(call: Any) -> RequestError:
    try:
        call()
    except RequestError as e:
        return e
    raise AssertionError("the write was applied")


def _otel(client: Client) -> dict[str, Any]:
    otel: dict[str, Any] = client.status().group_commit["otel"]
    return otel


def test_writes_refusals_outside_changes_and_checkpoints_arrive_as_spans(
    workspace: Path, receiver: Receiver, started: Callable[[], RunningDaemon]
):
    configure(workspace, endpoint=receiver.url, metrics_interval_seconds=3600)
    (workspace / "steps.py").write_text(FILE)
    running = started()
    a, b = running.client("agent-a"), running.client("agent-b")
    a.read_file("steps.py")
    b.read_file("steps.py")
    a.checkpoint_create("before")
    b.edit_file("steps.py", "    return state + 6\n", "    return state - 6\n")
    a.edit_file("steps.py", "    return state + 9\n", "    return 9\n    # nine\n")  # carried
    old = "def step_6(state):\n    return state + 6\n"
    assert _refused(lambda: a.edit_file("steps.py", old, "x\n")).code == "anchor_stale"
    (workspace / "steps.py").write_text(FILE + "# by hand\n")
    a.read_file("steps.py")  # the outside change is noticed here at the latest
    a.checkpoint_restore("before")
    wanted = {"edit_applied", "edit_rejected", "outside_change", "checkpoint_created"}
    wanted |= {"checkpoint_restored"}
    wait_until(lambda: wanted <= receiver.kinds(), what="every kind of span")

    journal = {r.seq: r for r in running.journal().records()}
    workspace_id = a.status().workspace_id
    for span in receiver.spans:
        record = journal[span["editjournal.seq"]]
        assert span["editjournal.event.hash"] == record.hash
        assert span["editjournal.workspace.id"] == workspace_id
        assert span["start"] == record.ts * 1_000_000
    by_kind = {span["editjournal.event.kind"]: span for span in receiver.spans}
    applied = next(s for s in receiver.spans if s.get("gen_ai.conversation.id") == "agent-b")
    assert applied["name"] == "execute_tool edit_file"
    assert applied["gen_ai.operation.name"] == "execute_tool"
    assert applied["gen_ai.tool.name"] == "edit_file"
    assert applied["editjournal.path"] == "steps.py"
    assert (applied["editjournal.lines.added"], applied["editjournal.lines.removed"]) == (1, 1)
    refused = by_kind["edit_rejected"]
    assert refused["gen_ai.conversation.id"] == "agent-a"
    assert refused["error.type"] == refused["editjournal.error.code"] == "anchor_stale"
    assert refused["status"] == 2  # STATUS_CODE_ERROR
    carried = [s for s in receiver.spans if s.get("editjournal.carried")]
    assert [s["gen_ai.conversation.id"] for s in carried] == ["agent-a"]
    assert carried[0]["editjournal.lines.added"] == 2
    outside = by_kind["outside_change"]
    assert outside["name"] == "editjournal.outside_change" and "gen_ai.tool.name" not in outside
    assert outside["editjournal.change"] == "modified"
    assert by_kind["checkpoint_created"]["gen_ai.tool.name"] == "checkpoint_create"
    assert by_kind["checkpoint_created"]["editjournal.checkpoint.name"] == "before"
    assert by_kind["checkpoint_restored"]["gen_ai.tool.name"] == "checkpoint_restore"
    assert {r["service.name"] for r in receiver.resources} == {"editjournal"}
    exported = _otel(a)
    assert exported["state"] == "on" and exported["dropped"] == 0
    assert exported["endpoint"] == f"{receiver.url}/v1/traces"
    row = next(line for line in status_lines(a.status()) if line.startswith("\x1b[1motel"))
    assert f"to {receiver.url}/v1/traces: " in row and " exported, " in row  # the text status

    running.stop()  # the counters are sent once more as the daemon stops
    applied_count = sum(1 for s in receiver.spans if s["editjournal.event.kind"] == "edit_applied")
    assert receiver.metrics["editjournal.edits"] == applied_count + 1  # and one refusal
    assert receiver.metrics["editjournal.stale_refusals"] == 1
    assert receiver.metrics["editjournal.carried_edits"] == 1
    count, seconds = receiver.histograms["editjournal.recovery.duration"]
    assert count == 1 and 0 < seconds < 10  # this daemon's start-up recovery, once


@pytest.mark.parametrize("collector", ["refusing", "silent"])
def test_a_dead_or_silent_collector_never_delays_a_reply_and_its_losses_show_in_status(
    workspace: Path, started: Callable[[], RunningDaemon], collector: str,
    request: pytest.FixtureRequest,
):  # fmt: skip
    """A refusing collector (a closed port) or one that accepts the connection and never
    answers: the replies stay fast, the drops are counted, the daemon stops in time."""
    if collector == "silent":
        url = request.getfixturevalue("silent_collector").url
    else:
        with socket.socket() as probe:  # a port nobody listens on once this is closed
            probe.bind(("127.0.0.1", 0))
            url = f"http://127.0.0.1:{probe.getsockname()[1]}"
    configure(workspace, endpoint=url, timeout_seconds=5, queue_size=4)
    (workspace / "steps.py").write_text(FILE)
    running = started()
    a = running.client("agent-a")
    a.read_file("steps.py")
    slowest = 0.0
    for n in range(1, 13):
        began = time.monotonic()
        a.edit_file("steps.py", f"    return state + {n}\n", f"    return state * {n}\n")
        slowest = max(slowest, time.monotonic() - began)
    # the exporter retries a refused connection for about 3 s of its 5 s timeout, and
    # waits the whole 5 s for a silent one, on the export thread: no reply waits for it
    # (the bound is loose for a busy machine)
    assert slowest < 2.5
    otel = wait_until(lambda: (o := _otel(a))["dropped"] > 0 and o, what="a count of drops")
    assert (otel["state"], otel["exported"]) == ("on", 0)
    assert otel["endpoint"] == f"{url}/v1/traces"
    began = time.monotonic()
    assert running.stop() == 0
    assert time.monotonic() - began < 4.0  # the batch still waiting is left behind


def test_a_receiver_that_refuses_the_counters_is_counted_and_named_in_status(
    workspace: Path, receiver: Receiver, started: Callable[[], RunningDaemon]
):
    """A receiver of traces only answers `/v1/metrics` 405 (Arize Phoenix): the counters'
    exports were refused in silence while `status` said all was well. Now each is counted,
    `metrics_failing` says it is so now, and the spans go on being taken."""
    receiver.metrics_status = 405
    configure(workspace, endpoint=receiver.url, metrics_interval_seconds=0.2)
    (workspace / "steps.py").write_text(FILE)
    a = started().client("agent-a")
    a.read_file("steps.py")
    a.edit_file("steps.py", "    return state + 1\n", "    return state * 1\n")
    refused = wait_until(lambda: (o := _otel(a))["metrics_failing"] and o, what="a refusal")
    assert refused["metrics_failed"] >= 1 and receiver.metrics == {}
    wait_until(lambda: _otel(a)["exported"] > 0, what="the spans taken meanwhile")
    receiver.metrics_status = 200
    taken = wait_until(lambda: not (o := _otel(a))["metrics_failing"] and o, what="taken again")
    assert taken["metrics_exported"] >= 1 and receiver.metrics["editjournal.edits"] == 1


def test_export_turns_on_in_a_running_daemon_and_a_bad_section_is_named(
    workspace: Path, receiver: Receiver, started: Callable[[], RunningDaemon]
):
    running = started()
    a = running.client("agent-a")
    assert _otel(a)["state"] == "off"
    a.write_file("one.txt", "one\n")
    configure(workspace, endpoint=receiver.url, queue_size=0)  # refused: it names the key
    wait_until(lambda: _otel(a)["problem"], what="the bad section named")
    assert "otel.queue_size" in _otel(a)["problem"] and _otel(a)["state"] == "unavailable"
    configure(workspace, endpoint=receiver.url)
    wait_until(lambda: _otel(a)["state"] == "on", what="export turned on")
    a.write_file("two.txt", "two\n")
    wait_until(lambda: receiver.kinds() == {"edit_applied"}, what="the write after")
    assert [s["editjournal.path"] for s in receiver.spans] == ["two.txt"]


def test_ship_follow_otel_exports_the_events_it_ships(
    workspace: Path, receiver: Receiver, started: Callable[[], RunningDaemon],
    postgres: PostgresServer,
):  # fmt: skip
    """`ship --follow --otel`: the events shipped (the catch-up, then each as it commits)
    arrive as the daemon's own spans would, though the daemon exports nothing."""
    configure(workspace, enabled=False, endpoint=receiver.url, metrics_interval_seconds=3600)
    (workspace / "steps.py").write_text(FILE)
    running = started()
    a = running.client("agent-a")
    a.read_file("steps.py")
    a.edit_file("steps.py", "    return state + 1\n", "    return state * 1\n")
    proc, stderr = in_background(
        workspace, "ship", "--to", postgres.new_database(), "--follow", "--otel"
    )
    try:
        wait_until(lambda: len(receiver.spans) == 1, what="the catch-up's span")
        a.edit_file("steps.py", "    return state + 2\n", "    return state * 2\n")
        wait_until(lambda: len(receiver.spans) == 2, what="the span of the write shipped next")
    finally:
        proc.send_signal(signal.SIGTERM)
    assert proc.wait(10) == 0
    said = stderr.read().decode()
    assert "OpenTelemetry: 2 span(s) exported to" in said and ", 0 dropped" in said, said
    journal = {r.seq: r for r in running.journal().records()}
    for span in receiver.spans:
        record = journal[span["editjournal.seq"]]
        assert (span["editjournal.event.kind"], span["gen_ai.tool.name"]) == (
            "edit_applied", "edit_file",
        )  # fmt: skip
        assert span["editjournal.event.hash"] == record.hash
        assert span["gen_ai.conversation.id"] == "agent-a"
    assert _otel(a)["state"] == "off"  # the daemon itself exported nothing
