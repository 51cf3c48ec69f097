"""`write_all`, the writing path for several files at once (a restore): all or nothing.

Real parts: a journal on disk, a workspace of real files, the state; the planners are
small test writers plugged into the path as every tool plugs in its own."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from editjournal.daemon.contract.context import Context, DaemonInfo
from editjournal.daemon.files.textcache import TextCache
from editjournal.daemon.files.workspace import Workspace
from editjournal.daemon.model.state import State
from editjournal.daemon.store.journal import Journal
from editjournal.daemon.text.revert import diff_plan
from editjournal.daemon.writing.path import ANCHOR_STALE, Planned, Stale, Written, write_all
from editjournal.daemon.writing.target import Target, open_target
from editjournal.schemas.errors import ErrorCode, ToolError
from editjournal.schemas.events import EditApplied, EditRejected


@dataclass
class _Fill:
    """Writes `lines` (or refuses, when `refuse`)."""

    lines: tuple[str, ...]
    refuse: bool = False
    name: str = "test_fill"
    skip_safety_check: bool = True
    stale: Stale = ANCHOR_STALE

    @property
    def operations(self) -> list[dict[str, Any]]:
        return [{"op": self.name}]

    def plan(self, target: Target) -> Planned:
        if self.refuse:
            raise ToolError(ErrorCode.INVALID_PARAMS, f"refused {target.path}")
        return Planned(diff_plan(target.doc.lines, self.lines, self.name))

    def explain(self, target: Target, error: ToolError) -> ToolError:
        return error

    def result(self, written: Written) -> str:
        return written.target.path


def _context(tmp_path: Path) -> Context:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text("a\n")
    (root / "b.txt").write_text("b\n")
    (root / ".editjournal").mkdir()
    journal = Journal(tmp_path / "journal.db")
    info = DaemonInfo(1, "test", "ipc://x", "ipc://y", "log", 0.0)
    return Context("agent-a", State(), Workspace(root), journal, info, TextCache())


def test_every_file_written_when_none_is_refused(tmp_path: Path):
    ctx = _context(tmp_path)
    jobs = [(open_target(ctx, p), _Fill((p.upper(),))) for p in ("a.txt", "b.txt")]
    outcome = write_all(jobs, [])
    assert outcome.error is None and outcome.result == ["a.txt", "b.txt"]
    assert [w.path for w in outcome.writes] == ["a.txt", "b.txt"]
    assert [type(e) for e in outcome.events] == [EditApplied, EditApplied]


def test_one_refused_file_means_nothing_is_written(tmp_path: Path):
    ctx = _context(tmp_path)
    jobs = [
        (open_target(ctx, "a.txt"), _Fill(("A",))),
        (open_target(ctx, "b.txt"), _Fill(("B",), refuse=True)),
    ]
    outcome = write_all(jobs, [])
    assert outcome.writes == [] and outcome.result is None
    assert outcome.error is not None and outcome.error.code is ErrorCode.INVALID_PARAMS
    assert "nothing was written" in outcome.error.message
    assert [r["message"] for r in outcome.error.details["refused"]] == ["refused b.txt"]
    assert [type(e) for e in outcome.events] == [EditRejected]  # the refusal, journaled
