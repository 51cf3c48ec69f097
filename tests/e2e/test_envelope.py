"""The frames of a request message: what the wire allows, and what is refused.

The daemon's ROUTER sees the sender's identity, then what the client sent. Our clients
send the request as one frame from a DEALER (the Python client, the CLI, the MCP server,
the hook and its HTTP relay's worker); a REQ socket puts an empty delimiter frame before
it. Anything else used to be echoed: whatever frames came before the request went back
ahead of the reply. Now it is refused (`bad_request`, "extra envelope frames"), the
reply goes back on the identity (and the delimiter, when there was one) with no other
frame, nothing of the message is handled, and the connection's later requests are
served as usual (daemon/runtime/boundary.py `split_route`). Raw zmq sockets: no client
of ours can send such frames.
"""

from __future__ import annotations

from collections.abc import Iterator

import msgspec
import pytest
import zmq

from editjournal.client import Client
from editjournal.schemas.wire import Request, Response
from tests.conftest import RunningDaemon


def frame(rid: int, method: str, params: dict[str, str] | None = None) -> bytes:
    body = msgspec.Raw(msgspec.msgpack.encode(params or {}))
    return msgspec.msgpack.encode(Request(id=rid, method=method, agent="raw", params=body))


@pytest.fixture
def dealer(client: Client) -> Iterator[zmq.Socket[bytes]]:
    sock: zmq.Socket[bytes] = zmq.Context.instance().socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.connect(client.address)
    yield sock
    sock.close()


def exchange(sock: zmq.Socket[bytes], *frames: bytes) -> list[bytes]:
    """Send one message of `frames`; the reply's frames, as the socket receives them."""
    sock.send_multipart(list(frames))
    assert sock.poll(10_000), "no reply"
    return sock.recv_multipart()


def reply_of(data: bytes) -> Response:
    return msgspec.msgpack.decode(data, type=Response)


def test_extra_frames_are_refused_by_name_and_never_echoed(
    daemon: RunningDaemon, dealer: zmq.Socket[bytes]
) -> None:
    write = frame(1, "write_file", {"path": "a.txt", "content": "x\n"})
    [only] = exchange(dealer, b"route-me-back", write)  # no frame echoed ahead of it
    refused = reply_of(only)
    assert not refused.ok and refused.error is not None and refused.id == 1
    assert refused.error.code == "bad_request"
    assert refused.error.message.startswith("extra envelope frames")
    assert refused.error.details["frames"] == 2
    assert not (daemon.root / "a.txt").exists()  # nothing of the message was handled


def test_after_an_empty_delimiter_only_the_delimiter_comes_back(
    dealer: zmq.Socket[bytes],
) -> None:
    delimiter, data = exchange(dealer, b"", b"junk", b"more", frame(2, "ping"))
    assert delimiter == b""
    refused = reply_of(data)
    assert refused.error is not None and refused.error.code == "bad_request"
    assert refused.id == 2 and refused.error.details["frames"] == 4


def test_the_connection_is_served_after_a_refused_message(dealer: zmq.Socket[bytes]) -> None:
    [first] = exchange(dealer, b"a", b"b", frame(3, "ping"))
    assert reply_of(first).error is not None
    [second] = exchange(dealer, frame(4, "ping"))
    answered = reply_of(second)
    assert answered.ok and answered.id == 4


def test_a_dealer_and_a_req_socket_get_their_replies(
    client: Client, dealer: zmq.Socket[bytes]
) -> None:
    """The two shapes the wire allows: a DEALER's request alone, or after an empty
    delimiter (as a REQ socket sends it, or a DEALER that speaks to REQ's peers)."""
    [alone] = exchange(dealer, frame(5, "ping"))
    assert reply_of(alone).ok
    delimiter, data = exchange(dealer, b"", frame(6, "ping"))
    assert delimiter == b"" and reply_of(data).ok and reply_of(data).id == 6
    req: zmq.Socket[bytes] = zmq.Context.instance().socket(zmq.REQ)
    req.setsockopt(zmq.LINGER, 0)
    req.connect(client.address)
    try:
        req.send(frame(7, "ping"))
        assert req.poll(10_000), "no reply"
        assert reply_of(req.recv()).id == 7
    finally:
        req.close()
