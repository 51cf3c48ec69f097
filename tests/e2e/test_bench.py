"""`python -m bench --quick` runs every benchmark once at tiny sizes, so none can rot (its
daemons forked from a zygote: tests/e2e/bench_forked.py).

It checks that every row of the performance table is produced, with numbers, a
same-run baseline and a goal verdict, and that the JSON report (with the machine's
description) is written where `--out` says. It asserts no timing: the figures of a
quick run on a busy machine mean nothing.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # started first on its worker (tests/conftest.py)

REPO = Path(__file__).resolve().parents[2]

# Every measure of issue 11's table, by words its row's name contains.
MEASURES = [
    "`read_file(hashes)`, ",
    "durable anchored `edit`",
    "`edit` on a 1,000-line file",
    "`edit` on a 2,000-line file",
    "client processes, durable edits, each on its own file",
    "client processes, durable edits, all on one shared file",
    "journal growth per small edit, 200-line file",
    "journal growth per small edit, real",
    "start-up with 2,000 events",
    "`read_file(hashes)` reply size",
    "first checkpoint of 400 files",
    "`ping` while that checkpoint is taken",
    "second checkpoint, one file changed",
    "journal growth of the first checkpoint",
    "`safe_patch` of ",
    "`ping` while that patch",
    "`ping` while that edit",
    "`ping` while a restore of",
    "`ping` while whole-file anchored `read_file`",
    "`ping` while three anchored `read_many_files`",
    "edit with old anchors after an outside change",
    "`write_file` rewriting every line of a",
    "`update_section` of a",
    "`apply_patch` of 70 `Delete File` operations",
    "`history` of a file on a journal of",
]


def run_quick(tmp_path: Path) -> tuple[dict, str]:
    out = tmp_path / "results" / "latest.json"
    older = tmp_path / "older.json"
    ping = {"name": "editjournal", "value": 250.0, "unit": "us", "p99": 400.0, "extra": ""}
    older.write_text(json.dumps({"rows": [{"measure": "`ping` round trip", "ours": ping}]}))
    argv = ["--quick", "--out", str(out), "--cache", str(tmp_path), "--compare", str(older)]
    done = subprocess.run(
        [sys.executable, "-m", "tests.e2e.bench_forked", *argv],  # its daemons forked
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(out.read_text()), done.stdout


def test_quick_bench_produces_every_row_with_numbers(tmp_path: Path):
    report, printed = run_quick(tmp_path)
    rows = {row["measure"]: row for row in report["rows"]}
    for words in MEASURES:
        found = [row for name, row in rows.items() if words in name]
        assert found, f"no row for {words!r}; rows: {list(rows)}"
        for row in found:
            assert _number(row["ours"]["value"]), row
            assert row["baselines"] and all(_number(b["value"]) for b in row["baselines"]), row
            assert _number(row["ratio"]) and row["goal"] != "—" and row["met"] in (True, False)
            assert f"| {row['measure']} |" in printed
    assert (
        "| measure | editjournal p50 / p99 | same-run baseline | ratio | goal | met? |" in printed
    )
    assert "| `ping` round trip | 250 µs / 400 µs | " in printed  # beside the older run
    detection = report["detection"]
    assert _number(detection["editjournal"][0]) and _number(detection["editjournal"][1])
    machine = report["machine"]
    for key in ("cpu", "cores", "memory_gib", "os", "python", "pyzmq", "libzmq", "sqlite"):
        assert machine[key], key
    assert report["mode"] == "quick"


def _number(value: object) -> bool:
    return isinstance(value, (int, float)) and math.isfinite(value) and value > 0
