"""A journal record as an OpenTelemetry span (daemon.telemetry.spans), the `[otel]`
section (daemon.settings.otel), and the tap without the SDK installed
(daemon.telemetry.tap): the cases the end-to-end test (tests/e2e/test_otel.py) does
not reach through a daemon."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from editjournal.daemon.settings import otel
from editjournal.daemon.telemetry.spans import describe
from editjournal.daemon.telemetry.tap import Tap
from editjournal.schemas.errors import ToolError
from editjournal.schemas.events import AnyEvent, EditApplied, FileRead, HunkRejected, Record
from tests.polling import wait_until

SHA = "0" * 64


def record(event: AnyEvent, agent: str | None = "agent-a") -> Record:
    return Record(
        seq=7, ts=1_700_000_000_000, agent=agent, event=event, prev_hash=SHA, hash="f" * 64
    )


def applied(**fields: object) -> EditApplied:
    base: dict[str, object] = {
        "path": "a.py",
        "writer": "apply_patch",
        "before_sha256": SHA,
        "after_sha256": SHA,
        "size": 0,
        "lines_before": 12,
        "line_count": 0,
    }
    return EditApplied(**{**base, **fields})  # type: ignore[arg-type]


def test_a_deletion_removes_every_line_and_a_move_names_both_paths():
    deleted = describe(record(applied(deleted=True, moved_to="b.py")), "ws-1")
    assert deleted is not None
    attributes = deleted.attributes
    assert (attributes["editjournal.lines.added"], attributes["editjournal.lines.removed"]) == (
        0,
        12,
    )
    assert (
        attributes["editjournal.deleted"] is True and attributes["editjournal.moved_to"] == "b.py"
    )
    assert deleted.name == "execute_tool apply_patch" and deleted.edit_outcome == "applied"


def test_a_writer_without_line_changes_sends_no_guessed_counts():
    facts = describe(record(applied(line_count=14)), "ws-1")
    assert facts is not None and "editjournal.lines.added" not in facts.attributes


def test_a_stale_hunk_refusal_is_an_error_span_and_a_stale_count_not_an_edit():
    event = HunkRejected(
        path="a.py", hunk_id="h1", tool="apply_file_modification", code="anchor_stale", message="m"
    )
    facts = describe(record(event), "ws-1")
    assert facts is not None and facts.error == "anchor_stale" and facts.stale
    assert facts.edit_outcome is None and facts.attributes["error.type"] == "anchor_stale"


def test_reads_are_not_exported_and_an_agentless_write_has_no_conversation():
    read = FileRead(path="a.py", sha256=SHA, size=0, line_count=0)
    assert describe(record(read), "ws-1") is None
    facts = describe(record(applied(), agent=None), "ws-1")
    assert facts is not None and "gen_ai.conversation.id" not in facts.attributes


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("enabled = 1", "otel.enabled must be true or false"),
        ('endpoint = "collector:4318"', "otel.endpoint must be an http(s) URL"),
        ("timeout_seconds = 0", "otel.timeout_seconds must be a positive number"),
        ("headers = 'x'", "[otel] has unknown key(s): headers"),
    ],
    ids=["enabled", "endpoint", "timeout", "headers"],
)
def test_a_wrong_otel_key_is_config_invalid_naming_it(tmp_path: Path, line: str, problem: str):
    (tmp_path / "config.toml").write_text(f"[otel]\n{line}\n")
    with pytest.raises(ToolError) as raised:
        otel.load(tmp_path)
    assert problem in raised.value.message


def test_without_the_otel_extra_export_stays_off_and_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    (tmp_path / "config.toml").write_text(
        '[otel]\nenabled = true\nendpoint = "http://127.0.0.1:9"\n'
    )
    # the extra missing: its exporter cannot be imported (None in sys.modules refuses it)
    monkeypatch.delitem(sys.modules, "editjournal.daemon.telemetry.otlp", raising=False)
    monkeypatch.setitem(sys.modules, "opentelemetry.exporter.otlp.proto.http.trace_exporter", None)
    tap = Tap(tmp_path, "ws-1")
    try:
        tap.offer([record(applied())])
        stats = wait_until(lambda: (s := tap.stats())["dropped"] and s, what="the event dropped")
        assert stats["state"] == "unavailable" and "otel extra is not installed" in stats["problem"]
        tap.offer([record(applied())])  # off now: nothing queued, nothing raised
        assert tap.stats()["queued"] == 0
    finally:
        tap.close()
