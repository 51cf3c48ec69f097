"""Which paths the watcher ignores: gitignore semantics (from pathspec), the
always-ignored directories, extra patterns, and the walk's fast per-directory test."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from editjournal.daemon.files.tempfiles import TEMP_PREFIX
from editjournal.daemon.watch.ignore import Ignorer
from editjournal.daemon.watch.kernelwatches import _parse_fdinfo


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / ".gitignore").write_text("*.log\nbuild/\n!keep.log\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / ".gitignore").write_text("secret.txt\n/local-only\n")
    (tmp_path / "plain").mkdir()
    return tmp_path


@pytest.mark.parametrize(
    ("rel", "is_dir", "expected"),
    [
        ("debug.log", False, True),
        ("keep.log", False, False),  # negation
        ("deep/down/x.log", False, True),  # root patterns apply at every depth
        ("build", True, True),
        ("build", False, False),  # `build/` matches directories only
        ("sub/secret.txt", False, True),
        ("secret.txt", False, False),  # a nested .gitignore applies below itself only
        ("sub/local-only", False, True),
        ("sub/deeper/local-only", False, False),  # anchored to sub/
        (".git", True, True),
        (".git/HEAD", False, True),
        (".editjournal/journal.db", False, True),
        (f"plain/{TEMP_PREFIX}x", False, True),
        ("plain/file.py", False, False),
    ],
)
def test_gitignore_semantics(tree: Path, rel: str, is_dir: bool, expected: bool) -> None:
    assert Ignorer(tree).ignored(rel, is_dir) is expected


def test_extra_patterns_apply_everywhere(tree: Path) -> None:
    ignorer = Ignorer(tree, ["*.tmp", "node_modules/"])
    assert ignorer.ignored("a/b/c.tmp")
    assert ignorer.ignored("web/node_modules", is_dir=True)
    assert not ignorer.ignored("web/app.js")


def test_a_changed_gitignore_is_reloaded_once_forgotten(tree: Path) -> None:
    ignorer = Ignorer(tree)
    assert not ignorer.ignored("notes.md")
    (tree / ".gitignore").write_text("*.md\n")
    assert not ignorer.ignored("notes.md")  # cached until told
    ignorer.forget(".gitignore")
    assert ignorer.ignored("notes.md")


NAMES = st.sampled_from(
    ["a.py", "x.log", "keep.log", "secret.txt", "local-only", ".git", ".editjournal", "b.tmp"]
) | st.text(alphabet="abc.-_", min_size=1, max_size=6).filter(lambda n: n not in (".", ".."))
DIRS = st.sampled_from(["", "sub", "plain", "sub/deeper", "plain/x"])


@given(directory=DIRS, name=NAMES | st.just(TEMP_PREFIX + "z"), extra=st.booleans())
def test_the_walks_fast_test_agrees_with_ignored(
    tmp_path_factory: pytest.TempPathFactory, directory: str, name: str, extra: bool
) -> None:
    root = tmp_path_factory.getbasetemp() / "agree"
    if not root.exists():
        root.mkdir()
        (root / "sub").mkdir()
        (root / "sub" / ".gitignore").write_text("secret.txt\n*.log\n")
    ignorer = Ignorer(root, ["*.tmp"] if extra else [])
    rel = f"{directory}/{name}" if directory else name
    assert ignorer.files_ignored_in(directory)(name) == ignorer.ignored(rel)


def test_fdinfo_lines_give_device_and_inode() -> None:
    info = (
        "pos:\t0\nflags:\t00\nmnt_id:\t17\nino:\t26\n"
        "inotify wd:1 ino:20c01f sdev:fe00000 mask:2 ignored_mask:0 fhandle-bytes:8\n"
        "inotify wd:2 ino:7 sdev:800001 mask:fc6 ignored_mask:0 fhandle-bytes:8\n"
    )
    assert _parse_fdinfo(info) == {(0xFE00000, 0x20C01F), (0x800001, 0x7)}
