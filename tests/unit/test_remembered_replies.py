"""Remembered replies (daemon/model/idempotency.py): the outcome kept, not the bulk; the
newest answer of a key is the one a retry gets; old journals' answers still fold."""

from __future__ import annotations

from typing import Any

import msgspec

from editjournal.daemon.model.idempotency import (
    REMEMBER_WHOLE,
    RETRY_NOTE,
    amended,
    answered,
    compact,
    request_digest,
)
from editjournal.daemon.model.state import State
from editjournal.schemas.errors import ErrorCode, ToolError
from editjournal.schemas.events import EVENT_DECODER, EditApplied, Record, RequestAnswered
from editjournal.schemas.tools import AtomicResult
from editjournal.schemas.wire import Request, Response

PARAMS = msgspec.msgpack.encode({"path": "big.txt", "content": "x\n"})
REQUEST = Request(
    id=1, method="write_file", agent="a", params=msgspec.Raw(PARAMS), idempotency_key="k"
)


def written_result(lines: int) -> dict[str, Any]:
    """A write_file result as the daemon sends it, with `lines` changed lines."""
    rows = [
        {"line": i, "hash": "abc123", "quality": "high", "text": f"line {i}"}
        for i in range(1, lines + 1)
    ]
    details = {
        "writer_type": "atomic",
        "baseline_continuity": "clean",
        "anchors_valid_through": lines,
        "must_refresh_from_line": 0,
    }
    return {
        "message": "created big.txt",
        "file_path": "big.txt",
        "version": 7,
        "sha256": "ab" * 32,
        "lines_before": 0,
        "lines_after": lines,
        "net_change": lines,
        "anchors_valid_through": lines,
        "must_refresh_from_line": 0,
        "diff": "".join(f"+{i}#abc123:line {i}\n" for i in range(1, lines + 1)),
        "changed_lines": rows,
        "auto_corrections": [],
        "safety_check": "clean",
        "details": details,
        "created": True,
    }


def reply(lines: int) -> Response:
    return Response(id=1, ok=True, result=written_result(lines), seq=7)


def record(seq: int, event: Any, agent: str = "a") -> Record:
    return Record(seq=seq, ts=0, agent=agent, event=event, prev_hash="", hash="")


def applied_record(seq: int) -> Record:
    event = EditApplied(
        path="big.txt",
        writer="atomic",
        before_sha256="",
        after_sha256="ab" * 32,
        size=2,
        lines_before=0,
        line_count=1,
    )
    return record(seq, event)


def test_a_small_reply_is_remembered_whole() -> None:
    small = reply(3)
    assert compact(small) is small
    event = answered(REQUEST, small, [applied_record(7)])
    assert event is not None and len(event.reply) <= REMEMBER_WHOLE
    assert msgspec.msgpack.decode(event.reply, type=Response) == small


def test_a_large_reply_keeps_its_outcome_and_types_not_its_bulk() -> None:
    large = reply(5_000)
    event = answered(REQUEST, large, [applied_record(7)])
    assert event is not None and len(event.reply) < REMEMBER_WHOLE
    kept = msgspec.msgpack.decode(event.reply, type=Response)
    assert kept.ok and kept.seq == 7
    result = msgspec.convert(kept.result, AtomicResult)  # as the client reads it
    assert (result.version, result.sha256, result.lines_after) == (7, "ab" * 32, 5_000)
    assert result.diff == "" and result.changed_lines == [] and result.created
    [note] = kept.warnings
    assert "changed_lines, diff left out" in note and "`editjournal show 7`" in note


def test_a_retry_is_told_the_newest_answer_of_its_key() -> None:
    state = State()
    state.apply(applied_record(1))
    first = answered(REQUEST, reply(2), [applied_record(1)])
    assert first is not None
    state.apply(record(2, first))
    error = ToolError(ErrorCode.WRITE_DISPLACED, "not in the file", {"seq": 1})
    refusal = Response(id=1, ok=False, error=error.to_wire(), seq=1)
    state.apply(record(3, amended(first, 2, refusal)))
    again = state.answers.replay(msgspec.structs.replace(REQUEST, id=2))
    assert again is not None and again.id == 2
    assert not again.ok and again.error is not None and again.error.code == "write_displaced"
    assert again.warnings[-1].startswith(RETRY_NOTE) and "(seq 1)" in again.warnings[-1]


def test_an_old_journals_whole_reply_still_decodes_and_folds_to_its_outcome() -> None:
    """A `request_answered` an older daemon journaled: no `amends`, the whole reply."""
    whole = msgspec.msgpack.encode(reply(5_000))
    body = msgspec.msgpack.encode(
        {
            "kind": "request_answered",
            "key": "k",
            "method": "write_file",
            "request_sha256": request_digest(REQUEST),
            "reply": whole,
        }
    )
    event = EVENT_DECODER.decode(body)
    assert isinstance(event, RequestAnswered) and event.amends is None
    state = State()
    state.apply(applied_record(1))
    state.apply(record(2, event))
    [kept] = state.answers.by_key.values()
    assert len(kept.reply) < REMEMBER_WHOLE < len(whole)  # the fold holds no bulk
    again = state.answers.replay(REQUEST)
    assert again is not None and again.ok and again.seq == 7
    assert again.result["sha256"] == "ab" * 32 and again.result["diff"] == ""
