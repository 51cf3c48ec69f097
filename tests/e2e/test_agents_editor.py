"""The OpenAI Agents SDK's apply_patch editor (`DaemonEditor`) against a real daemon.

No model is called: the editor is driven with operations built from the SDK's own
types (`agents.editor.ApplyPatchOperation`), as the SDK's runner hands them over,
and its results are checked as the SDK reads them (`ApplyPatchResult`, and the
SDK's own normalisation of it).
"""

from __future__ import annotations

import asyncio
import functools
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING

import pytest

from tests.conftest import RunningDaemon

if TYPE_CHECKING:
    from agents.editor import ApplyPatchOperation, ApplyPatchResult


@functools.cache
def sdk() -> SimpleNamespace:
    """The SDK's names, imported when a test runs, not when the module is collected:
    openai-agents costs 2.5 s of CPU to import, and every xdist worker collects every
    module (the editor itself imports it)."""
    pytest.importorskip("agents", reason="the `agents` extra (openai-agents) is not installed")
    from agents import ApplyPatchTool
    from agents.editor import ApplyPatchEditor, ApplyPatchOperation
    from agents.run_internal.tool_execution import normalize_apply_patch_result

    from editjournal.client import AsyncClient
    from editjournal.client.agents_editor import DaemonEditor

    return SimpleNamespace(
        ApplyPatchTool=ApplyPatchTool,
        ApplyPatchEditor=ApplyPatchEditor,
        ApplyPatchOperation=ApplyPatchOperation,
        normalize_apply_patch_result=normalize_apply_patch_result,
        AsyncClient=AsyncClient,
        DaemonEditor=DaemonEditor,
    )


def run_ops(root: Path, agent: str, *ops: ApplyPatchOperation) -> list[ApplyPatchResult]:
    """The operations in order, as the SDK's runner calls the editor, on one loop."""

    async def go() -> list[ApplyPatchResult]:
        editor = sdk().DaemonEditor(client=sdk().AsyncClient(root, agent, autostart=False))
        calls = {
            "create_file": editor.create_file,
            "update_file": editor.update_file,
            "delete_file": editor.delete_file,
        }
        try:
            return [await calls[op.type](op) for op in ops]
        finally:
            await editor.aclose()

    return asyncio.run(go())


def test_the_editor_is_what_the_sdk_takes(workspace: Path):
    editor = sdk().DaemonEditor(workspace, "coder")
    assert isinstance(editor, sdk().ApplyPatchEditor)
    assert sdk().ApplyPatchTool(editor=editor).type == "apply_patch"
    editor.client.close()


def test_create_update_move_delete_land_and_are_journaled_as_the_agent(daemon: RunningDaemon):
    root = daemon.root
    (root / "old.txt").write_text("gone\n")
    daemon.client("coder").read_file("old.txt")
    results = run_ops(
        root,
        "coder",
        sdk().ApplyPatchOperation(
            type="create_file", path="src/app.py", diff="+def f():\n+    return 1\n"
        ),
        sdk().ApplyPatchOperation(
            type="update_file",
            path="src/app.py",
            diff="@@ def f():\n-    return 1\n+    return 2\n",
        ),
        sdk().ApplyPatchOperation(
            type="update_file", path="src/app.py", diff="", move_to="src/main.py"
        ),
        sdk().ApplyPatchOperation(type="delete_file", path="old.txt"),
    )
    assert [r.status for r in results] == ["completed"] * 4
    assert results[0].output is not None and "A src/app.py" in results[0].output
    assert results[2].output is not None and "M src/main.py" in results[2].output
    for result in results:
        normalized = sdk().normalize_apply_patch_result(result)
        assert normalized is not None and normalized.status == "completed"
    assert (root / "src/main.py").read_text() == "def f():\n    return 2\n"
    assert not (root / "src/app.py").exists() and not (root / "old.txt").exists()
    applied = list(daemon.journal().records(kind="edit_applied"))
    assert {r.agent for r in applied} == {"coder"}
    assert [r.event.path for r in applied] == [
        "src/app.py", "src/app.py", "src/app.py", "src/main.py", "old.txt",
    ]  # fmt: skip


def test_a_refusal_is_a_failed_result_the_model_can_act_on(daemon: RunningDaemon):
    root = daemon.root
    (root / "a.py").write_text("x = 1\ny = 2\n")
    [result] = run_ops(
        root,
        "coder",
        sdk().ApplyPatchOperation(type="update_file", path="a.py", diff="@@\n-z = 3\n+z = 4\n"),
    )
    assert result.status == "failed"
    assert result.output is not None
    assert "no_match" in result.output and "z = 3" in result.output
    assert (root / "a.py").read_text() == "x = 1\ny = 2\n"
    [rejected] = daemon.journal().records(kind="edit_rejected")
    assert rejected.agent == "coder" and rejected.event.code == "no_match"


def test_an_edit_over_another_agents_change_is_carried_or_refused(daemon: RunningDaemon):
    root = daemon.root
    lines = [f"line {n}" for n in range(1, 21)]
    (root / "f.txt").write_text("\n".join(lines) + "\n")
    daemon.client("coder").read_file("f.txt")
    other = daemon.client("other")
    other.read_file("f.txt")
    other.edit_file("f.txt", "line 18\n", "line eighteen\n")
    carried, refused = run_ops(
        root,
        "coder",
        sdk().ApplyPatchOperation(
            type="update_file", path="f.txt", diff="@@\n line 2\n-line 3\n+line three\n line 4\n"
        ),
        sdk().ApplyPatchOperation(
            type="update_file", path="f.txt", diff="@@\n line 17\n-line 18\n+line 18!\n line 19\n"
        ),
    )
    assert carried.status == "completed"
    assert refused.status == "failed" and refused.output is not None
    assert "anchor_stale" in refused.output and "other" in refused.output
    text = (root / "f.txt").read_text()
    assert "line three\n" in text and "line eighteen\n" in text and "line 18!" not in text
