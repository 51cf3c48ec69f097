"""Resource limits: each cap answers with its own code, and one agent cannot stall the rest.

Paths per `read_many_files`, the frame size, lines per file, and the journal cost of a
rejected request's payload.
"""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest
import zmq

from editjournal.client import Client, RequestError
from editjournal.client.library.connection import live_endpoint
from editjournal.schemas.events import EditRejected
from editjournal.schemas.tools import MAX_OPERATIONS, MAX_PATHS_PER_READ, MAX_READ_BYTES
from editjournal.schemas.wire import RESPONSE_DECODER, Response
from tests.conftest import RunningDaemon, start, wait_until
from tests.e2e.test_memory import rss_mb

ENC = msgspec.msgpack.Encoder()


def code_of(call: object) -> str:
    assert isinstance(call, Response) and call.error is not None, call
    return call.error.code


def test_read_many_files_takes_a_bounded_number_of_paths(client: Client) -> None:
    response = client.call("read_many_files", {"paths": ["a.txt"] * (MAX_PATHS_PER_READ + 1)})
    assert code_of(response) == "invalid_params"
    assert response.error is not None and "$.params.paths" in response.error.message


def test_a_frame_over_the_limit_is_request_too_large(workspace: Path) -> None:
    """The daemon's check (any client's frame up to twice the limit is read and
    answered), and our clients' own: they know the limit from the run file and refuse
    a bigger request before sending it, where past twice the limit libzmq dropped the
    frame unread and the call waited out its timeout."""
    running = start(workspace, "--no-watch", "--max-file-size", "64KiB")  # frame ~1.1 MiB
    endpoint = live_endpoint(workspace)
    assert endpoint is not None and endpoint.max_frame == 2 * 64 * 1024 + 1024 * 1024
    ctx = zmq.Context()
    raw = ctx.socket(zmq.DEALER)
    raw.setsockopt(zmq.LINGER, 0)
    raw.connect(endpoint.socket)
    params = msgspec.Raw(ENC.encode({"path": "big.txt", "content": "x" * 1_500_000}))
    raw.send(ENC.encode({"id": 1, "agent": "raw", "method": "write_file", "params": params}))
    wait_until(lambda: raw.poll(0), 30, "the oversize request to be answered")
    response = RESPONSE_DECODER.decode(raw.recv())
    assert code_of(response) == "request_too_large"
    assert response.error is not None and response.error.details["size"] > 1_500_000
    raw.close()
    ctx.term()
    client = Client(workspace, "agent-a", autostart=False, timeout=60)
    before = client.status().event_count
    for size in (1_500_000, 3_000_000):  # within twice the limit, and past it
        with pytest.raises(RequestError) as refused:
            client.write_file("big.txt", "x" * size)
        assert refused.value.code == "request_too_large", refused.value
        assert refused.value.details["limit"] == endpoint.max_frame
        assert "nothing was sent" in refused.value.message
    assert not (workspace / "big.txt").exists()
    assert client.status().event_count == before  # the daemon saw none of them
    assert client.ping().pong
    client.close()
    running.stop()


@pytest.fixture
def few_lines(workspace: Path) -> RunningDaemon:
    return start(workspace, "--no-watch", "--max-file-lines", "1000")


def test_a_file_with_too_many_lines_is_refused_by_its_own_code(few_lines: RunningDaemon) -> None:
    (few_lines.root / "long.txt").write_text("line\n" * 1001)
    (few_lines.root / "ok.txt").write_text("line\n" * 1000)
    client = few_lines.client()
    with pytest.raises(RequestError) as refused:
        client.read_file("long.txt", hashes=True)
    assert refused.value.code == "file_too_many_lines"
    assert refused.value.details == {"path": "long.txt", "lines": 1001, "limit": 1000}
    assert client.read_file("ok.txt").line_count == 1000
    few_lines.stop()


def test_an_edit_that_would_pass_the_line_limit_is_refused(few_lines: RunningDaemon) -> None:
    (few_lines.root / "a.txt").write_text("start\n" + "".join(f"l{i}\n" for i in range(900)))
    client = few_lines.client()
    with pytest.raises(RequestError) as refused:
        client.append_to_file("a.txt", "".join(f"n{i}\n" for i in range(200)))
    assert refused.value.code == "file_too_many_lines"
    assert (few_lines.root / "a.txt").read_text().count("\n") == 901
    few_lines.stop()


def test_an_outside_change_past_the_line_limit_is_recorded_without_parsing_it(
    workspace: Path,
) -> None:
    """Like a file over the size limit: no line count, no stored content (the watcher
    must not parse a huge file on the daemon's one thread)."""
    (workspace / "a.txt").write_text("short\n")
    running = start(workspace, "--max-file-lines", "1000")
    try:
        client = running.client()
        client.read_file("a.txt")  # tracked: its outside changes would store content
        (workspace / "a.txt").write_text("line\n" * 1001)
        [event] = wait_until(
            lambda: list(client.log(path="a.txt", kind="outside_change").events),
            20,
            "the outside change",
        )
        assert event.body["line_count"] is None and event.body["content_stored"] is False
        assert event.body["size"] == 5005
        (workspace / "a.txt").write_text("line\n" * 1000)  # within the limit: counted
        wait_until(lambda: len(client.log(path="a.txt", kind="outside_change").events) == 2)
        [_, within] = client.log(path="a.txt", kind="outside_change").events
        assert within.body["line_count"] == 1000 and within.body["content_stored"] is True
    finally:
        running.stop()


def test_a_rejected_payload_is_journaled_clipped(daemon: RunningDaemon, client: Client) -> None:
    (daemon.root / "a.txt").write_text("alpha\nbeta\n")
    huge = "z" * 1_000_000
    with pytest.raises(RequestError):
        client.edit("a.txt", [{"op": "replace_line", "hash": "abcdef", "content": huge}])
    rejected = [r.event for r in daemon.journal().records() if isinstance(r.event, EditRejected)]
    assert len(rejected) == 1
    stored = rejected[0].operations[0]["content"]
    assert len(stored) < 5000 and "clipped: 1000000 chars, sha256" in stored
    assert daemon.journal().size_bytes() < 500_000


def test_a_huge_read_many_files_does_not_starve_another_agents_ping(
    daemon: RunningDaemon,
) -> None:
    """200,000 paths once held a ping for 23 s; now the request is refused unread."""
    endpoint = live_endpoint(daemon.root)
    assert endpoint is not None
    ctx = zmq.Context()
    greedy, other = ctx.socket(zmq.DEALER), ctx.socket(zmq.DEALER)
    for sock in (greedy, other):
        sock.setsockopt(zmq.LINGER, 0)
        sock.connect(endpoint.socket)
    params = msgspec.Raw(ENC.encode({"paths": [f"f{i}.txt" for i in range(200_000)]}))
    greedy.send(
        ENC.encode({"id": 1, "agent": "greedy", "method": "read_many_files", "params": params})
    )
    other.send(ENC.encode({"id": 2, "agent": "other", "method": "ping"}))
    wait_until(lambda: other.poll(0), 10, "the other agent's ping to be answered")
    assert RESPONSE_DECODER.decode(other.recv()).ok
    wait_until(lambda: greedy.poll(0), 10, "the greedy request to be answered")
    assert code_of(RESPONSE_DECODER.decode(greedy.recv())) == "invalid_params"
    greedy.close()
    other.close()
    ctx.term()


def _spread_inserts(client: Client, path: str, count: int) -> list[dict[str, str]]:
    anchors = client.read_file(path, hashes=True, max_lines=100_000).anchors
    step = len(anchors) // count
    return [
        {"op": "insert_after", "hash": anchors[i * step], "content": f"# note {i}"}
        for i in range(count)
    ]


def test_an_edit_takes_a_bounded_number_of_operations(daemon: RunningDaemon, client: Client):
    lines = [f"value_{i} = {i * 7}" for i in range(20_000)]
    (daemon.root / "big.py").write_text("\n".join(lines) + "\n")
    ops = _spread_inserts(client, "big.py", MAX_OPERATIONS)
    response = client.call("edit", {"path": "big.py", "operations": [*ops, ops[0]]})
    assert code_of(response) == "invalid_params"
    assert response.error is not None and f"at most {MAX_OPERATIONS}" in response.error.message
    # the largest allowed batch is applied whole, each insert after its own line
    client.edit("big.py", ops)
    written = (daemon.root / "big.py").read_text().splitlines()
    assert len(written) == 20_000 + MAX_OPERATIONS
    step = 20_000 // MAX_OPERATIONS
    for i in (0, 1, MAX_OPERATIONS // 2, MAX_OPERATIONS - 1):
        assert written[i * (step + 1) + 1] == f"# note {i}"
        assert written[i * (step + 1)] == lines[i * step]


def test_read_many_files_reads_a_bounded_number_of_bytes_and_gives_them_back(
    daemon: RunningDaemon, client: Client
) -> None:
    line = "x" * 7_499 + "\n"
    for n in range(6):  # 7.5 MB each, of few long lines (cheap to parse)
        (daemon.root / f"big{n}.txt").write_text(line * 1000)
    before = rss_mb(daemon.proc.pid)
    paths = [f"big{n}.txt" for n in range(6)]
    items = client.read_many_files(paths).files
    read = [item for item in items if item.ok]
    assert len(read) == MAX_READ_BYTES // 7_500_000  # 2 files, 15 MB
    for item in items[len(read) :]:
        assert item.truncated and item.error is not None
        assert item.error.code == "read_budget_exceeded"
        assert f"at most {MAX_READ_BYTES // 2**20} MiB" in item.error.message
    client.ping()
    assert rss_mb(daemon.proc.pid) - before < 100  # the 15 MB read are given back
