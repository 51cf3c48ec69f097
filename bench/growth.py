"""Journal growth per small edit: bytes of journal.db + its WAL (after a checkpoint)
added by N one-line edits through the daemon, against the bytes a shadow git
repository grows by for the same N commits after `git gc`. On the 1,000-line
synthetic file, and on a real ~2,500-line file (the standard library's argparse.py)."""

from __future__ import annotations

import argparse
import shutil
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

from bench.daemons import anchor_of, serving
from bench.files import ShadowGit, python_source, value_line
from bench.rows import Figure, Row
from bench.sizes import Sizes
from editjournal.client import Client
from editjournal.schemas.endpoint import JOURNAL_FILE, STATE_DIR_NAME

GOAL_BYTES = 1000


def rows(tmp: Path, sizes: Sizes) -> Iterator[Row]:
    real = Path(argparse.__file__).read_text()
    cases = [
        (
            f"{sizes.file_lines:,}-line file",
            python_source(sizes.file_lines),
            value_line(sizes.file_lines // 2),
        ),
        (f"real {len(real.splitlines()):,}-line file (argparse.py)", real, _real_line(real)),
    ]
    for i, (label, text, line) in enumerate(cases):
        case = tmp / f"growth{i}"
        case.mkdir()
        yield _row(case, label, text, line, sizes.growth_edits)


def _real_line(text: str) -> int:
    """A long, unique line in the middle of `text`: a good anchor target."""
    lines = text.splitlines()
    middle = len(lines) // 2
    for number in range(middle, len(lines)):
        line = lines[number]
        if (
            len(line.strip()) > 30
            and lines.count(line) == 1
            and not line.rstrip().endswith(("\\", ",", "("))
        ):
            return number + 1
    raise RuntimeError("no editable line found")


def _row(case: Path, label: str, text: str, line: int, n: int) -> Row:
    ours = _journal_growth(case / "ws", text, line, n)
    notes = [f"{n} one-line edits"]
    baselines = []
    if shutil.which("git"):
        baselines.append(Figure("shadow git after gc", _git_growth(case, text, line, n), "B/edit"))
    else:
        notes.append("git is not installed: the shadow-git contender was skipped")
    return Row(
        f"journal growth per small edit, {label}",
        Figure("editjournal", ours, "B/edit"),
        baselines,
        goal="< 1 KB per small edit",
        met=ours < GOAL_BYTES,
        notes=notes,
    )


def _journal_growth(ws: Path, text: str, line: int, n: int) -> float:
    ws.mkdir()
    (ws / "file.py").write_text(text)
    journal = ws / STATE_DIR_NAME / JOURNAL_FILE
    original = text.splitlines()[line - 1]
    with serving(ws), Client(ws, "bench-growth", autostart=False) as client:
        anchor = anchor_of(client, "file.py", line)
        for k in range(n + 1):
            if k == 1:  # the first edit pays for the file's first full copy
                before = checkpointed_size(journal)
            op = {"op": "replace_line", "hash": anchor, "content": f"{original}  # edit {k}"}
            anchor = client.edit("file.py", [op]).changed_lines[0].hash
        after = checkpointed_size(journal)
    return (after - before) / n


def checkpointed_size(journal: Path) -> int:
    """Bytes of the database and its WAL once the WAL is checkpointed into it (bounded
    retries: the daemon may be mid-commit)."""
    deadline = time.monotonic() + 30
    with sqlite3.connect(journal) as db:
        while db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0] != 0:
            if time.monotonic() > deadline:
                raise RuntimeError(f"could not checkpoint {journal}")
            time.sleep(0.01)
    files = (journal, journal.with_name(journal.name + "-wal"))
    return sum(f.stat().st_size for f in files if f.exists())


def _git_growth(case: Path, text: str, line: int, n: int) -> float:
    work = case / "gitwork"
    work.mkdir()
    (work / "file.py").write_text(text)
    git = ShadowGit(work, case / "git")
    original = text.splitlines()[line - 1]
    edit = git.edits("file.py", line, lambda k: f"{original}  # edit {k}")
    edit()
    git.gc()
    before = _tree_size(case / "git")
    for _ in range(n):
        edit()
    git.gc()
    return (_tree_size(case / "git") - before) / n


def _tree_size(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())
