"""Every error code of the catalogue is raised by the client as exactly one exception
class, of its family, all under `RequestError` and `EditJournalError`."""

from __future__ import annotations

import msgspec

from editjournal.client import (
    BadRequest,
    NoMatch,
    RequestError,
    StaleAnchor,
    StaleWrite,
    StateMismatch,
    WorkspaceNotFound,
)
from editjournal.client.library.errors import _BY_CODE, _families
from editjournal.schemas.errors import (
    CATALOGUE,
    SEED_TOKENS,
    EditJournalError,
    ErrorCode,
    ToolError,
)
from editjournal.schemas.wire import Error


def test_every_code_has_exactly_one_class():
    owners: dict[str, list[str]] = {}
    for cls in _families(RequestError):
        for code in cls.codes:
            owners.setdefault(code, []).append(cls.__name__)
    assert set(owners) == {code.value for code in ErrorCode} == {c.value for c in CATALOGUE}
    assert {code: names for code, names in owners.items() if len(names) > 1} == {}


def test_an_error_reply_is_raised_as_its_familys_class():
    for code in ErrorCode:
        error = RequestError.from_wire(Error(code=code.value, message="m"), seq=3)
        assert type(error) is _BY_CODE[code.value]
        assert isinstance(error, RequestError) and isinstance(error, EditJournalError)
        assert (error.code, error.message, error.seq) == (code.value, "m", 3)
    stale = RequestError.from_wire(Error(code="anchor_stale", message="m"))
    assert isinstance(stale, StaleAnchor) and isinstance(stale, StaleWrite)
    assert isinstance(RequestError.from_wire(Error(code="state_mismatch", message="")), StaleWrite)
    assert isinstance(RequestError.from_wire(Error(code="no_match", message="")), NoMatch)
    assert type(RequestError.from_wire(Error(code="state_mismatch", message=""))) is StateMismatch
    assert isinstance(RequestError.from_wire(Error(code="invalid_params", message="")), BadRequest)


def test_a_code_from_a_newer_daemon_is_a_plain_request_error():
    error = RequestError.from_wire(Error(code="some_future_code", message="m"))
    assert type(error) is RequestError and error.code == "some_future_code"


def test_local_errors_keep_their_class():
    error = WorkspaceNotFound.local(ErrorCode.WORKSPACE_NOT_FOUND, "gone", workspace="/x")
    assert type(error) is WorkspaceNotFound and error.details == {"workspace": "/x"}


def test_the_hint_and_the_token_come_apart_and_an_older_daemons_sentence_is_the_hint():
    sentence = 'read the file again for fresh anchors: read_file({"path": "a.py"})'
    now = Error(code="anchor_stale", message="m", suggested_action="re-read_file", hint=sentence)
    sent = {"code": "anchor_stale", "message": "m", "suggested_action": sentence}
    older = msgspec.msgpack.decode(msgspec.msgpack.encode(sent), type=Error)  # no hint
    for wire in (now, older):
        error = RequestError.from_wire(wire)
        assert error.hint == sentence
    assert RequestError.from_wire(now).token == "re-read_file"
    assert RequestError.from_wire(older).token is None
    # a token alone (a daemon that sent no hint) is no hint
    token_only = Error(code="anchor_stale", message="m", suggested_action="re-read_file")
    bare = RequestError.from_wire(token_only)
    assert bare.hint is None and bare.token == "re-read_file"


def test_the_wire_error_of_every_code_carries_its_hint_and_the_seeds_token_where_named():
    for code in ErrorCode:
        wire = ToolError(code, "m").to_wire()
        spec = CATALOGUE[code]
        assert wire.suggested_action == (spec.token or spec.hint)
        assert wire.hint == (spec.hint if spec.token else None)  # one copy of a sentence
        assert RequestError.from_wire(wire, None).hint == spec.hint
    assert ToolError(ErrorCode.ANCHOR_STALE, "m").to_wire().suggested_action == "re-read_file"
    assert {"re-read_file"} == SEED_TOKENS  # the seeds name no other (docs/protocol.md)
