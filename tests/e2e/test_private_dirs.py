"""A daemon refuses to start in a private directory someone else could control.

Another user who pre-creates the workspace's `.editjournal/` (to read the journal's
blobs) or the runtime socket directory (to answer the victim's requests) must get
nothing: the real daemon process exits with `directory_not_private` naming the
directory, and chmods nothing.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from editjournal.client.library.connection import live_endpoint
from tests.conftest import spawn

NOBODY = 65534
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to chown to another user")


def refusal(workspace: Path) -> str:
    """The daemon's stderr; it must exit without ever serving."""
    proc = spawn(workspace)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode != 0 and not live_endpoint(workspace)
    return err.decode()


def test_world_writable_state_dir_is_refused(workspace: Path) -> None:
    state = workspace / ".editjournal"
    state.mkdir()
    state.chmod(0o777)
    err = refusal(workspace)
    assert "directory_not_private" in err and str(state) in err, err
    assert stat.S_IMODE(state.stat().st_mode) == 0o777  # not chmod-ed behind anyone's back
    assert list(state.iterdir()) == []


@as_root
def test_foreign_state_dir_is_refused(workspace: Path) -> None:
    state = workspace / ".editjournal"
    state.mkdir(mode=0o700)
    os.chown(state, NOBODY, NOBODY)
    err = refusal(workspace)
    assert "directory_not_private" in err and f"owned by uid {NOBODY}" in err, err
    assert state.stat().st_uid == NOBODY and list(state.iterdir()) == []


@as_root
def test_foreign_runtime_dir_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a workspace path too long for a socket beside it: the socket goes to the runtime dir
    workspace = tmp_path / ("w" * 60) / ("x" * 60)
    workspace.mkdir(parents=True)
    runtime = tmp_path / "run"
    (runtime / "editjournal").mkdir(parents=True, mode=0o700)
    os.chown(runtime / "editjournal", NOBODY, NOBODY)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    err = refusal(workspace)
    assert "directory_not_private" in err and str(runtime / "editjournal") in err, err
    assert list((runtime / "editjournal").iterdir()) == []
