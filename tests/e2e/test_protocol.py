"""Bad input of every class gets an error reply — never a crash, never silence."""

from __future__ import annotations

import msgspec
import pytest
import zmq

from editjournal.client import Client
from tests.conftest import RunningDaemon


@pytest.fixture
def raw(daemon: RunningDaemon, client: Client):
    """A bare DEALER socket on the daemon's address, for frames the Client would never send."""
    sock = zmq.Context.instance().socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.connect(client.address)

    def send(*frames: bytes) -> dict:
        sock.send_multipart(list(frames))
        assert sock.poll(10_000), "no reply"
        return msgspec.msgpack.decode(sock.recv())

    yield send
    sock.close()


@pytest.mark.parametrize(
    "frame",
    [
        b"\xc1",  # never valid msgpack
        b"not msgpack at all",
        msgspec.msgpack.encode([1, 2, 3]),
        msgspec.msgpack.encode({"id": 1}),  # no method
        msgspec.msgpack.encode({"id": 1.5, "method": "ping"}),
    ],
)
def test_undecodable_frames_get_bad_request(raw, frame: bytes):
    reply = raw(frame)
    assert reply["ok"] is False
    assert reply["error"]["code"] == "bad_request"
    assert reply["error"]["message"]


def test_bad_request_keeps_the_id_when_it_can(raw):
    reply = raw(msgspec.msgpack.encode({"id": 7, "method": 3}))
    assert reply["id"] == 7
    assert reply["error"]["code"] == "bad_request"
    assert "$.method" in reply["error"]["message"]


def test_empty_agent_is_a_bad_request(raw):
    reply = raw(msgspec.msgpack.encode({"id": 1, "method": "ping", "agent": ""}))
    assert reply["error"]["code"] == "bad_request"
    assert "$.agent" in reply["error"]["message"]


def test_req_style_empty_delimiter_frame_is_answered(daemon: RunningDaemon, client: Client):
    sock = zmq.Context.instance().socket(zmq.REQ)
    sock.setsockopt(zmq.LINGER, 0)
    sock.connect(client.address)
    sock.send(msgspec.msgpack.encode({"id": "r1", "method": "ping", "agent": "req"}))
    assert sock.poll(10_000)
    reply = msgspec.msgpack.decode(sock.recv())
    sock.close()
    assert reply["id"] == "r1" and reply["ok"] is True


def test_unknown_method_lists_the_known_ones(client: Client):
    response = client.call("frobnicate", {})
    assert not response.ok
    assert response.error.code == "unknown_method"
    assert "read_file" in response.error.details["known_methods"]


@pytest.mark.parametrize(
    ("params", "fragment"),
    [
        ({"path": 3}, "Expected `str | null`, got `int` - at `$.params.path`"),
        ({"path": "a", "hashes": "yes"}, "at `$.params.hashes`"),
        ({"path": "a", "max_lines": -1}, "at `$.params.max_lines`"),  # 0 is a sentinel
        ({"path": "a", "offset": -1}, "at `$.params.offset`"),
        ({"path": "a", "bogus": 1}, "unknown field `bogus`"),
        ({}, "missing required field `path`"),
    ],
)
def test_invalid_params_name_the_bad_field(client: Client, params: dict, fragment: str):
    response = client.call("read_file", params)
    assert response.error.code == "invalid_params"
    assert fragment in response.error.message


def test_params_that_are_not_a_map_are_invalid(client: Client):
    response = client.call("read_many_files", {"paths": "a.txt"})
    assert response.error.code == "invalid_params"
    assert "$.params.paths" in response.error.message


def test_daemon_keeps_serving_after_every_kind_of_bad_input(raw, client: Client):
    raw(b"\xc1")
    client.call("frobnicate")
    client.call("read_file", {"path": 3})
    assert client.ping().pong
    assert client.status().event_count == 1  # bad input journals nothing
