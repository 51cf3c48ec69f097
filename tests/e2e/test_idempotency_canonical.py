"""A keyed retry is the same request when its params decode the same, whatever bytes
carried them (daemon/model/idempotency.py `request_digest`).

The daemon used to compare the params' msgpack bytes: a retry from another client
library — its map in another key order, a default spelt out — was refused
`idempotency_key_reused`, and the client could not know whether its write was done.
Now the decoded params are compared; other values are still another request. A key
remembered by an older daemon (a hash of the bytes) still matches a retry of the same
bytes. Raw zmq frames: our own client always encodes a map the same way.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import msgspec
import pytest
import zmq

from editjournal.client import Client
from editjournal.daemon.model.idempotency import RETRY_NOTE, bytes_digest
from editjournal.daemon.model.state import State
from editjournal.schemas.errors import ToolError
from editjournal.schemas.events import Record, RequestAnswered
from editjournal.schemas.wire import Request, Response
from tests.conftest import RunningDaemon


def keyed(rid: int, method: str, params: dict[str, Any], key: str = "k1") -> Request:
    """A keyed request whose params map is encoded in `params`' own key order."""
    body = msgspec.Raw(msgspec.msgpack.encode(params))
    return Request(id=rid, method=method, agent="raw", params=body, idempotency_key=key)


@pytest.fixture
def send(client: Client) -> Iterator[Any]:
    sock: zmq.Socket[bytes] = zmq.Context.instance().socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.connect(client.address)

    def exchange(request: Request) -> Response:
        sock.send(msgspec.msgpack.encode(request))
        assert sock.poll(10_000), "no reply"
        return msgspec.msgpack.decode(sock.recv(), type=Response)

    yield exchange
    sock.close()


def writes_of(daemon: RunningDaemon, path: str) -> int:
    return sum(1 for r in daemon.journal().records(path=path) if r.kind == "edit_applied")


def test_a_retry_with_its_params_in_another_key_order_is_a_replay(
    daemon: RunningDaemon, send: Any
) -> None:
    first = send(keyed(1, "write_file", {"path": "a.txt", "content": "one\n"}))
    again = send(keyed(2, "write_file", {"content": "one\n", "path": "a.txt"}))
    assert first.ok and again.ok, (first.error, again.error)
    assert again.seq == first.seq and again.id == 2
    assert again.warnings[-1].startswith(RETRY_NOTE)
    other = send(keyed(3, "write_file", {"content": "two\n", "path": "a.txt"}))
    assert other.error is not None and other.error.code == "idempotency_key_reused"
    assert (daemon.root / "a.txt").read_text() == "one\n"
    assert writes_of(daemon, "a.txt") == 1


def test_a_retry_that_spells_out_a_default_is_a_replay(daemon: RunningDaemon, send: Any) -> None:
    """An append applied twice would show twice: the retry must not apply."""
    (daemon.root / "log.txt").write_text("start\n")
    params = {"path": "log.txt", "content": "once\n"}
    first = send(keyed(1, "append_to_file", params, key="append"))
    spelt = {"skip_safety_check": False, "content": "once\n", "path": "log.txt"}
    again = send(keyed(2, "append_to_file", spelt, key="append"))
    assert first.ok and again.ok and again.seq == first.seq
    assert (daemon.root / "log.txt").read_text() == "start\nonce\n"


def test_a_key_an_older_daemon_remembered_matches_a_retry_of_the_same_bytes() -> None:
    """Its fingerprint hashed the bytes: the same bytes are still its retry; the same
    params in other bytes are taken as another request (`idempotency_key_reused`), as
    the older daemon would have (unless the old bytes were already in the fixed order:
    then every order matches). Folded, as the daemon folds its journal at start-up."""
    sent = keyed(1, "write_file", {"content": "one\n", "path": "a.txt"})
    reply = Response(id=1, ok=True, result={"created": True}, seq=1)
    old = RequestAnswered(
        key="k1",
        method="write_file",
        request_sha256=bytes_digest(sent),
        reply=msgspec.msgpack.encode(reply),
    )
    state = State()
    state.apply(Record(seq=1, ts=0, agent="raw", event=old, prev_hash="", hash=""))
    again = state.answers.replay(msgspec.structs.replace(sent, id=2))
    assert again is not None and again.ok and again.seq == 1 and again.id == 2
    reordered = keyed(3, "write_file", {"path": "a.txt", "content": "one\n"})
    with pytest.raises(ToolError) as refused:
        state.answers.replay(reordered)
    assert refused.value.code.value == "idempotency_key_reused"
