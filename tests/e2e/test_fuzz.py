"""Fuzzing the daemon over a raw DEALER socket: no frame stops it, every frame is answered.

Hypothesis sends random bytes, random envelopes and mutated real requests to one real
daemon; after each frame exactly one reply must come back that decodes as a `Response`
envelope, and the daemon must still be running. The classes of frames that once ended
the daemon are pinned as `@example`s. `make test` runs a bounded number of examples;
`make stress` many more.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
import zmq
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from editjournal.client.library.connection import live_endpoint
from editjournal.schemas.tools import TOOL_PARAMS
from editjournal.schemas.wire import RESPONSE_DECODER, Response
from tests.conftest import RunningDaemon, start

REPLY_TIMEOUT_MS = 20_000
ENC = msgspec.msgpack.Encoder()
FIELDS = sorted({f for p in TOOL_PARAMS.values() for f in p.__struct_fields__})
METHODS = sorted(TOOL_PARAMS)


def envelope(method: str, params: Any, **extra: Any) -> bytes:
    body = msgspec.Raw(ENC.encode(params))
    return ENC.encode({"id": 7, "agent": "fuzz", "method": method, "params": body, **extra})


def raw_params(method: bytes, params: bytes) -> bytes:
    """An envelope whose method and params are given as raw msgpack bytes."""
    return b"\x84\xa2id\x07\xa5agent\xa4fuzz\xa6method" + method + b"\xa6params" + params


BAD_UTF8 = b"\xa3\xff\xfe\xfd"  # a msgpack str of 3 bytes that are not UTF-8
PINNED = [
    raw_params(b"\xa9read_file", b"\x81\xa4path" + BAD_UTF8),  # invalid UTF-8 in params
    raw_params(BAD_UTF8, b"\x80"),  # ... in the method
    b"\x84\xa2id\x07" + BAD_UTF8 + b"\xa4fuzz\xa6method\xa4ping\xa6params\x80",  # ... in a key
    b"\x84\xa2id\x07\xa5agent" + BAD_UTF8 + b"\xa6method\xa4ping\xa6params\x80",  # agent
    raw_params(b"\xa4ping", b"\x91" * 1200 + b"\xc0"),  # nesting 1,200 deep
    b"\x91" * 5000 + b"\xc0",
    raw_params(b"\xa4ping", b"\x81\xa1a" * 1200 + b"\xc0"),
    envelope("read_file", {"path": "a.txt", "range": "1" + "0" * 19 + "-2"}),  # 20 digits
    envelope("read_file", {"path": "a.txt", "range": "9" * 4400}),  # 4,400 digits
    envelope("read_file", {"path": "a.txt", "since_version": 2**64 - 1}),
    envelope("read_file", {"path": "a.txt", "offset": 2**63, "limit": 2**64 - 1}),
    envelope("log", {"after_seq": 2**64 - 1}),
    envelope(
        "edit",
        {"path": "a.txt", "operations": [{"op": "delete_line", "hash": "ab12", "line": 2**64 - 1}]},
    ),
    ENC.encode({"id": 2**64 - 1, "agent": "fuzz", "method": "ping"}),
    ENC.encode({"id": -(2**63), "agent": "fuzz", "method": "nope"}),
    b"",
    b"\xc1",  # a byte msgpack never uses
]

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats()
    | st.text(max_size=30)
    | st.binary(max_size=30)
    | st.sampled_from(["a.txt", "../x", "/etc/passwd", "1-2", "0", "-", "ab12cd"])
)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.sampled_from(FIELDS) | st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
params = st.dictionaries(st.sampled_from(FIELDS), values, max_size=5)
envelopes = st.builds(
    lambda rid, agent, method, p, drop: ENC.encode(
        {
            k: v
            for k, v in {
                "id": rid,
                "agent": agent,
                "method": method,
                "params": msgspec.Raw(ENC.encode(p)),
            }.items()
            if k != drop
        }
    ),
    values,
    st.text(max_size=10) | values,
    st.sampled_from(METHODS) | st.text(max_size=12),
    params,
    st.sampled_from([None, "id", "agent", "method", "params"]),
)


@st.composite
def mutated(draw: st.DrawFn) -> bytes:
    """A real request with a few bytes overwritten, inserted or cut."""
    frame = bytearray(draw(envelopes))
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(frame)))
        how = draw(st.sampled_from(["set", "insert", "cut"]))
        byte = draw(st.integers(0, 255))
        if how == "set" and at < len(frame):
            frame[at] = byte
        elif how == "insert":
            frame[at:at] = bytes([byte])
        else:
            del frame[at:]
    return bytes(frame)


frames = st.binary(max_size=64) | envelopes | mutated()


@pytest.fixture(scope="module")
def target(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[RunningDaemon, Any]]:
    root: Path = tmp_path_factory.mktemp("fuzz") / "ws"
    root.mkdir()
    (root / "a.txt").write_text("alpha = 1\nbeta = 2\ngamma = 3\n")
    running = start(root, "--no-watch")
    endpoint = live_endpoint(root)
    assert endpoint is not None
    ctx = zmq.Context()
    sock = ctx.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.connect(endpoint.socket)
    yield running, sock
    sock.close()
    ctx.term()
    if running.proc.poll() is None:
        running.stop()


def exchange(target: tuple[RunningDaemon, Any], frame: bytes) -> Response:
    """Send one frame; exactly one envelope comes back and the daemon still runs."""
    running, sock = target
    sock.send(frame)
    assert sock.poll(REPLY_TIMEOUT_MS), (
        f"no reply to {frame[:80]!r}; daemon exit code {running.proc.poll()}"
    )
    response = RESPONSE_DECODER.decode(sock.recv())
    assert response.ok or (response.error is not None and response.error.code)
    assert running.proc.poll() is None
    return response


def check_frame(target: tuple[RunningDaemon, Any], frame: bytes) -> None:
    response = exchange(target, frame)
    if not response.ok:
        assert response.error is not None
        assert response.error.code != "internal_error", response.error.message


@pytest.mark.parametrize("frame", PINNED, ids=range(len(PINNED)))
def test_frames_that_once_killed_the_daemon_get_a_clean_reply(
    target: tuple[RunningDaemon, Any], frame: bytes
) -> None:
    """A clean error (or, for an unknown key msgspec skips unread, an answer)."""
    response = exchange(target, frame)
    clean = {"bad_request", "invalid_params", "invalid_range", "unknown_method"}
    assert response.ok or (response.error is not None and response.error.code in clean), (
        response.error
    )


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(frame=frames)
@example(frame=PINNED[0])
@example(frame=PINNED[7])
def test_no_frame_stops_the_daemon(target: tuple[RunningDaemon, Any], frame: bytes) -> None:
    check_frame(target, frame)


@pytest.mark.stress
@settings(max_examples=5000, deadline=None, suppress_health_check=list(HealthCheck))
@given(frame=frames)
def test_no_frame_stops_the_daemon_at_length(
    target: tuple[RunningDaemon, Any], frame: bytes
) -> None:
    check_frame(target, frame)


def test_after_fuzzing_an_edit_still_works(target: tuple[RunningDaemon, Any]) -> None:
    running, _ = target
    client = running.client("after-fuzz")
    (running.root / "b.txt").write_text("one\ntwo\n")
    read = client.read_file("b.txt", hashes=True)
    assert read.lines is not None
    client.edit("b.txt", [{"op": "replace_line", "hash": read.lines[1].hash, "content": "2"}])
    assert (running.root / "b.txt").read_text() == "one\n2\n"
