"""Many agents, one file, no lost update: real client processes against one daemon."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from editjournal.daemon.model.state import fold
from editjournal.daemon.store.journal import Journal
from tests.conftest import RunningDaemon

pytestmark = pytest.mark.slow  # started first on its worker (tests/conftest.py)

AGENTS, EDITS, LINES = 8, 100, 2000  # 800 racing edits; `make stress` runs 16 x 250


def test_concurrency_storm_loses_no_acknowledged_edit(daemon: RunningDaemon, tmp_path: Path):
    storm(daemon, tmp_path, AGENTS, EDITS, LINES)


@pytest.mark.stress
def test_heavy_storm_loses_no_acknowledged_edit(daemon: RunningDaemon, tmp_path: Path):
    storm(daemon, tmp_path, agents=16, edits=250, lines=5_000)


def storm(daemon: RunningDaemon, tmp_path: Path, agents: int, edits: int, lines: int) -> None:
    """`agents` processes race `edits` anchored edits each on one `lines`-line file."""
    target = daemon.root / "shared.txt"
    target.write_text("".join(f"orig {n} of the shared file\n" for n in range(1, lines + 1)))
    workers = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tests.e2e.storm_worker",
                str(daemon.root),
                f"agent-{i}",
                str(edits),
                str(i),
                str(tmp_path / f"report-{i}.json"),
            ],
            stderr=subprocess.PIPE,
        )
        for i in range(agents)
    ]
    for worker in workers:
        assert worker.wait(timeout=3600) == 0, worker.stderr.read().decode()
    reports = [json.loads((tmp_path / f"report-{i}.json").read_text()) for i in range(agents)]
    final = target.read_text().splitlines()
    final_set = set(final)

    acked = [a for r in reports for a in r["acked"]]
    refused = [x for r in reports for x in r["refused"]]
    assert len(acked) + len(refused) == agents * edits
    assert acked, "no edit was acknowledged"
    # every acknowledged edit is in the final file, in place of the line it targeted
    assert all(a["new"] in final_set for a in acked)
    assert all(a["target"] not in final_set for a in acked)
    assert len(final) == lines
    # the agents really raced: edits were carried over others' edits
    assert any(a["rebased"] for a in acked), "no edit was rebased: the agents never overlapped"
    journal = daemon.journal()
    # every rejection was a real conflict: an earlier edit it names replaced the line
    assert {x["code"] for x in refused} <= {"anchor_stale"}
    for x in refused:
        assert x["target"] not in final_set
        assert x["details"]["conflicts"], x
        assert any(replaced(journal, c["seq"], x["target"]) for c in x["details"]["conflicts"]), x
        assert all(c["seq"] < x["seq"] for c in x["details"]["conflicts"]), x
    # the journal: gap-free, chain intact, and its fold reproduces the file byte for byte
    report = journal.verify()
    assert report.ok, report
    state = fold(journal.records())
    assert journal.blob(state.files["shared.txt"].sha256) == target.read_bytes()
    outside = [r.event.change for r in journal.records(kind="outside_change")]
    assert outside in ([], ["created"])  # the test's own creation of the file, nothing else
    applied = list(journal.records(kind="edit_applied"))
    assert sorted(a["seq"] for a in acked) == [r.seq for r in applied]


def replaced(journal: Journal, seq: int, line: str) -> bool:
    """The edit recorded at `seq` took `line` out of the file."""
    [record] = journal.records(after_seq=seq - 1, until_seq=seq, kind="edit_applied")
    before = journal.blob(record.event.before_sha256)
    after = journal.blob(record.event.after_sha256)
    assert before is not None and after is not None
    return line in before.decode().splitlines() and line not in after.decode().splitlines()
