"""Confinement beyond the lexical check: what the open itself refuses.

Real files in temp workspaces, the real `Workspace`. Permission cases run the
workspace in a forked child that drops to `nobody` (root writes anything, so a
refusal only shows for an unprivileged daemon), as tests/unit/test_workspace.py does.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from editjournal.daemon.files.workspace import Workspace
from editjournal.schemas.errors import ErrorCode, ToolError

NOBODY = 65534
as_root = pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to act as another user"
)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "inner.txt").write_bytes(b"inner\n")
    return ws


def code_of(call: Callable[[], object]) -> str:
    try:
        call()
    except ToolError as e:
        return e.code.value
    return "ok"


def test_trailing_slash_names_no_file(root: Path) -> None:
    ws = Workspace(root)
    assert code_of(lambda: ws.read("inner.txt/")) == ErrorCode.INVALID_PARAMS.value
    assert code_of(lambda: ws.write_atomic("inner.txt/", b"x\n")) == "invalid_params"
    assert code_of(lambda: ws.prepare_delete("inner.txt/")) == "invalid_params"
    assert ws.read("inner.txt").data == b"inner\n"


@pytest.mark.parametrize(
    "path", [".git/config", ".git/hooks/pre-commit", "sub/.git/config", ".GIT/config", "g/config"]
)
def test_git_is_never_written(root: Path, path: str) -> None:
    (root / ".git" / "hooks").mkdir(parents=True)
    (root / ".git" / "config").write_bytes(b"[core]\n")
    (root / "g").symlink_to(".git")
    ws = Workspace(root)
    assert code_of(lambda: ws.write_atomic(path, b"[alias]\n")) == "path_protected"
    assert code_of(lambda: ws.prepare_delete(path)) in {"path_protected", "file_not_found"}
    assert (root / ".git" / "config").read_bytes() == b"[core]\n"
    assert sorted(p.name for p in (root / ".git" / "hooks").iterdir()) == []
    assert not (root / "sub").exists()  # refused before any parent was made
    assert ws.read(".git/config").data == b"[core]\n"  # reading is harmless


@pytest.mark.parametrize(
    "path",
    [
        ".editjournal/journal.sqlite",
        "./.editjournal/journal.sqlite",
        ".//.editjournal//journal.sqlite",
        "sub/../.editjournal/journal.sqlite",
        ".EditJournal/journal.sqlite",
        "state/journal.sqlite",
        "here/.editjournal/journal.sqlite",
        "abs/journal.sqlite",
        "direct.sqlite",
    ],
)
def test_state_dir_unreachable_by_any_spelling(root: Path, path: str) -> None:
    state = root / ".editjournal"
    state.mkdir()
    (state / "journal.sqlite").write_bytes(b"journal\n")
    (root / "sub").mkdir()
    (root / "state").symlink_to(".editjournal")
    (root / "here").symlink_to(".")
    (root / "abs").symlink_to(state)
    (root / "direct.sqlite").symlink_to(state / "journal.sqlite")
    ws = Workspace(root)
    assert code_of(lambda: ws.read(path)) in {"permission_denied", "path_outside_workspace"}
    assert code_of(lambda: ws.write_atomic(path, b"x\n")) in {
        "permission_denied",
        "path_outside_workspace",
    }
    assert (state / "journal.sqlite").read_bytes() == b"journal\n"


def test_symlinks_inside_still_work(root: Path) -> None:
    """The walk follows links itself: one that stays inside is written through."""
    (root / "d").mkdir()
    (root / "d" / "real.txt").write_bytes(b"old\n")
    (root / "alias").symlink_to("d/real.txt")
    (root / "dirlink").symlink_to(str(root / "d"))  # absolute, into the workspace
    ws = Workspace(root)
    ws.write_atomic("alias", b"new\n")
    assert (root / "alias").is_symlink() and (root / "d" / "real.txt").read_bytes() == b"new\n"
    assert ws.read("dirlink/real.txt").data == b"new\n"
    ws.write_atomic("dirlink/made/deep.txt", b"deep\n")
    assert (root / "d" / "made" / "deep.txt").read_bytes() == b"deep\n"


def test_link_out_is_refused_for_reads_and_writes(root: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_bytes(b"secret\n")
    (root / "out").symlink_to(secret)
    (root / "up").symlink_to("..")
    ws = Workspace(root)
    for path in ("out", "up/secret.txt"):
        assert code_of(lambda p=path: ws.read(p)) == "path_outside_workspace"
        assert code_of(lambda p=path: ws.write_atomic(p, b"x\n")) == "path_outside_workspace"
    assert secret.read_bytes() == b"secret\n"


def test_hard_link_is_read_but_never_replaced(root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_bytes(b"outside\n")
    os.link(outside, root / "linked.txt")
    ws = Workspace(root)
    assert ws.read("linked.txt").data == b"outside\n"  # see README "Guarantees": reads allowed
    assert code_of(lambda: ws.write_atomic("linked.txt", b"x\n")) == "hard_linked"
    assert outside.read_bytes() == b"outside\n"
    assert os.stat(root / "linked.txt").st_ino == outside.stat().st_ino  # link not split


@pytest.fixture
def shared_root() -> Iterator[Path]:
    """Outside pytest's 0700 temp tree, so that an unprivileged child can reach it."""
    with tempfile.TemporaryDirectory(prefix="editjournal-conf-") as top:
        root = Path(top)
        root.chmod(0o777)  # nobody may create temp files here: only the file's bits decide
        yield root


def as_nobody(ws: Workspace, rel: str, data: bytes | None) -> str:
    """`ws.write_atomic(rel, data)` (None: a removal prepared and done) in a forked child
    running as nobody: its code, or ok."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        code = "crash"
        try:
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            code = code_of(
                lambda: ws.write_atomic(rel, data) if data is not None else remove(ws, rel)
            )
        finally:
            os.write(write_end, code.encode())
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        answer = pipe.read().decode()
    os.waitpid(pid, 0)
    return answer


def remove(ws: Workspace, rel: str) -> None:
    """A removal as the daemon does one: prepared (every check), then moved away."""
    removal = ws.prepare_delete(rel)
    swap = removal.swap_in()
    if swap.displaced is not None:
        removal.drop_displaced(swap.displaced)
    removal.close()


@as_root
def test_read_only_file_is_not_overwritten(shared_root: Path) -> None:
    path = shared_root / "ro.txt"
    path.write_bytes(b"read only\n")
    os.chown(path, NOBODY, NOBODY)
    path.chmod(0o444)
    ws = Workspace(shared_root)
    assert as_nobody(ws, "ro.txt", b"changed\n") == "read_only_file"
    assert as_nobody(ws, "ro.txt", None) == "read_only_file"
    assert path.read_bytes() == b"read only\n"
    path.chmod(0o644)  # the same file, writable by its owner: the child may replace it
    assert as_nobody(ws, "ro.txt", b"changed\n") == "ok"
    assert path.read_bytes() == b"changed\n" and path.stat().st_uid == NOBODY


@as_root
def test_another_users_file_is_not_replaced(shared_root: Path) -> None:
    path = shared_root / "roots.txt"
    path.write_bytes(b"root's\n")
    path.chmod(0o666)  # writable in place by anyone: but a rename would make it nobody's
    ws = Workspace(shared_root)
    assert as_nobody(ws, "roots.txt", b"changed\n") == "permission_denied"
    assert as_nobody(ws, "roots.txt", None) == "permission_denied"  # nor removed
    assert path.read_bytes() == b"root's\n" and path.stat().st_uid == 0


def test_a_file_without_a_write_bit_is_neither_replaced_nor_removed_even_by_root(
    tmp_path: Path,
) -> None:
    """Whoever the daemon runs as (CI runs it as root, which `os.access` lets write
    anything): no write bit means no change, as editors and `rm` ask first."""
    path = tmp_path / "locked.txt"
    path.write_bytes(b"locked\n")
    path.chmod(0o444)
    ws = Workspace(tmp_path)
    assert code_of(lambda: ws.write_atomic("locked.txt", b"changed\n")) == "read_only_file"
    assert code_of(lambda: remove(ws, "locked.txt")) == "read_only_file"
    assert path.read_bytes() == b"locked\n"


@as_root
def test_replacing_keeps_mode_and_owner(shared_root: Path) -> None:
    path = shared_root / "theirs.txt"
    path.write_bytes(b"theirs\n")
    os.chown(path, NOBODY, NOBODY)
    path.chmod(0o640)
    Workspace(shared_root).write_atomic("theirs.txt", b"new\n")  # as root: may give it back
    info = path.stat()
    assert (info.st_uid, info.st_gid, stat.S_IMODE(info.st_mode)) == (NOBODY, NOBODY, 0o640)
