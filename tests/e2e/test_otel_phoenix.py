"""OpenTelemetry export against a real receiver of the field (issue 38): Arize Phoenix,
installed from PyPI into a venv of its own (tests/e2e/phoenix_support.py) and started
on loopback ports. A real daemon exports a write, a carried write, a stale refusal, an
outside change, a checkpoint and a restore to Phoenix's OTLP/HTTP endpoint; the test
reads them back through Phoenix's own REST API and holds each span to the journal
record it was built from (seq, chain hash, commit time).

Stress only (`make stress`): Phoenix takes about 30 s of CPU and 500 MB to start, and
its first install downloads ~140 packages. The suite's own receiver
(tests/e2e/test_otel.py) covers the export in `make test`.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from editjournal.client import RequestError
from tests.conftest import start
from tests.e2e.otel_support import configure
from tests.e2e.phoenix_support import VERSION, Phoenix, phoenix_python
from tests.polling import wait_until

pytestmark = pytest.mark.stress

FILE = "".join(f"def step_{n}(state):\n    return state + {n}\n\n" for n in range(1, 21))
KINDS = {"edit_applied", "edit_rejected", "outside_change", "checkpoint_created"}
KINDS |= {"checkpoint_restored"}


@pytest.fixture(scope="session")
def phoenix_venv_python(request: pytest.FixtureRequest) -> Path:
    """Phoenix's interpreter, installed once into pytest's cache (kept between runs)."""
    return phoenix_python(Path(request.config.cache.mkdir(f"phoenix-{VERSION}")))


@pytest.fixture
def phoenix(phoenix_venv_python: Path, tmp_path: Path) -> Iterator[Phoenix]:
    running = Phoenix(phoenix_venv_python, tmp_path / "phoenix")
    try:
        running.wait_serving()
        yield running
    finally:
        running.stop()


def _by_kind(spans: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    kinds: dict[str, list[dict[str, Any]]] = {}
    for span in spans:
        kinds.setdefault(span["attributes"].get("editjournal.event.kind", "?"), []).append(span)
    return kinds


def _all_of(phoenix: Phoenix, count: int) -> list[dict[str, Any]]:
    """Phoenix's spans once it has stored `count` (it inserts what it receives in
    batches, a moment after answering the export), else none."""
    spans = phoenix.spans()
    return spans if len(spans) >= count else []


def _millis(iso: str) -> int:
    return round(datetime.fromisoformat(iso).timestamp() * 1000)


def test_phoenix_stores_every_kind_of_span_with_the_journals_attributes(
    workspace: Path, phoenix: Phoenix
):
    configure(workspace, endpoint=phoenix.url, metrics_interval_seconds=3600)
    (workspace / "steps.py").write_text(FILE)
    running = start(workspace)
    try:
        a, b = running.client("agent-a"), running.client("agent-b")
        a.read_file("steps.py")
        b.read_file("steps.py")
        a.checkpoint_create("before")
        b.edit_file("steps.py", "    return state + 6\n", "    return state - 6\n")
        a.edit_file("steps.py", "    return state + 9\n", "    return 9\n")  # carried
        old = "def step_6(state):\n    return state + 6\n"
        with pytest.raises(RequestError) as refusal:
            a.edit_file("steps.py", old, "x\n")
        assert refusal.value.code == "anchor_stale"
        (workspace / "steps.py").write_text(FILE + "# by hand\n")
        a.read_file("steps.py")  # the outside change is noticed here at the latest
        a.checkpoint_restore("before")
        journal = {r.seq: r for r in running.journal().records()}
        exported = [r for r in journal.values() if r.kind in KINDS]
        spans = wait_until(lambda: _all_of(phoenix, len(exported)), 60, "Phoenix's spans")
        workspace_id = a.status().workspace_id
        otel = a.status().group_commit["otel"]
    finally:
        running.stop()

    assert len(spans) == len(exported), (spans, exported)  # each once, nothing else
    assert {r.kind for r in exported} == KINDS
    assert (otel["state"], otel["dropped"]) == ("on", 0)
    assert otel["endpoint"] == f"{phoenix.url}/v1/traces"
    for span in spans:
        attributes = span["attributes"]
        record = journal[attributes["editjournal.seq"]]
        assert attributes["editjournal.event.kind"] == record.kind
        assert attributes["editjournal.event.hash"] == record.hash
        assert attributes["editjournal.workspace.id"] == workspace_id
        assert _millis(span["start_time"]) == _millis(span["end_time"]) == record.ts
        assert span["parent_id"] is None  # each span its own trace
    kinds = _by_kind(spans)
    edits = [s for s in kinds["edit_applied"] if s["attributes"]["gen_ai.tool.name"] == "edit_file"]
    applied = {s["attributes"]["gen_ai.conversation.id"]: s for s in edits}
    assert len(applied) == len(edits) == 2
    edit = applied["agent-b"]
    assert edit["name"] == "execute_tool edit_file"
    assert edit["span_kind"] == "TOOL"  # Phoenix reads gen_ai.operation.name
    assert edit["status_code"] == "UNSET"
    assert edit["attributes"]["gen_ai.operation.name"] == "execute_tool"
    assert edit["attributes"]["gen_ai.tool.name"] == "edit_file"
    assert edit["attributes"]["gen_ai.tool.type"] == "function"
    assert edit["attributes"]["editjournal.path"] == "steps.py"
    lines = ("editjournal.lines.added", "editjournal.lines.removed")
    assert tuple(edit["attributes"][key] for key in lines) == (1, 1)
    assert applied["agent-a"]["attributes"]["editjournal.carried"] is True
    assert not edit["attributes"].get("editjournal.carried")
    restores = [s for s in kinds["edit_applied"] if s not in edits]  # the restore's write
    assert {s["attributes"]["gen_ai.tool.name"] for s in restores} == {"restore"}
    [refused] = kinds["edit_rejected"]
    assert refused["status_code"] == "ERROR"
    assert refused["attributes"]["gen_ai.conversation.id"] == "agent-a"
    assert refused["attributes"]["error.type"] == "anchor_stale"
    assert refused["attributes"]["editjournal.error.code"] == "anchor_stale"
    [outside] = kinds["outside_change"]
    assert outside["name"] == "editjournal.outside_change"
    assert not any(key.startswith("gen_ai.") for key in outside["attributes"])
    assert outside["attributes"]["editjournal.change"] == "modified"
    assert outside["attributes"]["editjournal.path"] == "steps.py"
    [created] = kinds["checkpoint_created"]
    assert created["attributes"]["gen_ai.tool.name"] == "checkpoint_create"
    assert created["attributes"]["editjournal.checkpoint.name"] == "before"
    [restored] = kinds["checkpoint_restored"]
    assert restored["name"] == "execute_tool checkpoint_restore"
    assert restored["attributes"]["editjournal.checkpoint.name"] == "before"
