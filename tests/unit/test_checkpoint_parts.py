"""The parts a checkpoint is made of, on real files in a temp directory: the manifest's
chunks (a change touches one chunk), the stat cache's racily-clean rule, the tree
taken by the ignore rules, and a checkpoint compared with the tree."""

from __future__ import annotations

import os
import time
from pathlib import Path

from editjournal.daemon.files.statcache import StatCache
from editjournal.daemon.files.workspace import Workspace
from editjournal.daemon.store.manifest import ManifestEntry, chunks, entries
from editjournal.daemon.tree.compare import NOT_HELD, compare, within
from editjournal.daemon.tree.take import TreeTaker

SHA = "ab" * 32


def _entries(n: int) -> list[ManifestEntry]:
    return [ManifestEntry(f"src/m{i:05}.py", i, f"{i:064x}") for i in range(n)]


def test_the_manifest_reads_back_as_written_in_path_order() -> None:
    written = [*_entries(5000), ManifestEntry("big.bin", 10**9, "", held=False)]
    read = [e for chunk in chunks(reversed(written)) for e in entries(chunk)]
    assert read == sorted(written)


def test_one_file_changed_added_or_removed_changes_one_chunk() -> None:
    before = chunks(_entries(20_000))
    assert len(before) > 5
    changed = _entries(20_000)
    changed[12_345] = changed[12_345]._replace(sha256=SHA)
    added = [*_entries(20_000), ManifestEntry("src/m12345a.py", 1, SHA)]
    removed = [e for e in _entries(20_000) if e.path != "src/m07000.py"]
    for after in (changed, added, removed):
        assert len(set(chunks(after)) - set(before)) == 1


def test_the_stat_cache_trusts_only_files_untouched_since_well_before_their_hashing(
    tmp_path: Path,
) -> None:
    path = tmp_path / "f.txt"
    path.write_text("one\n")
    cache = StatCache()
    cache.remember("f.txt", os.stat(path), SHA, True, time.time_ns())
    assert cache.known("f.txt", os.stat(path)) is None  # racily clean: just written
    old = time.time() - 10
    os.utime(path, (old, old))
    cache.remember("f.txt", os.stat(path), SHA, True, time.time_ns())
    assert cache.known("f.txt", os.stat(path)).sha256 == SHA  # type: ignore[union-attr]
    path.write_text("two\n")  # size, mtime and ctime move
    assert cache.known("f.txt", os.stat(path)) is None


def test_the_tree_is_taken_by_the_ignore_rules_and_never_through_a_symlink(
    tmp_path: Path,
) -> None:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.py").write_text("a = 1\n")
    (root / "notes.md").write_text("# notes\n")
    (root / ".gitignore").write_text("build/\n")
    (root / ".editjournalignore").write_text("*.log\n")
    (root / "build").mkdir()
    (root / "build" / "out.o").write_text("object\n")
    (root / "debug.log").write_text("log\n")
    (root / "image.bin").write_bytes(b"\x00\x01\x02")
    outside = tmp_path / "secret.txt"
    outside.write_text("not the workspace's\n")
    (root / "link.txt").symlink_to(outside)
    (root / ".git").mkdir()
    (root / ".git" / "HEAD").write_text("ref\n")
    workspace = Workspace(root)
    taker = TreeTaker(workspace, ["*.tmp"], store=True, has_blob=lambda digest: False)
    kept = taker.take_all()
    assert sorted(taker.entries) == [
        ".editjournalignore",
        ".gitignore",
        "image.bin",
        "notes.md",
        "src/a.py",
    ]
    assert not taker.entries["image.bin"].held
    assert sorted(kept.paths.values()) == [
        ".editjournalignore",
        ".gitignore",
        "notes.md",
        "src/a.py",
    ]
    again = TreeTaker(workspace, [], store=True, has_blob=lambda digest: digest in kept.blobs)
    assert again.take_all().blobs == {}  # everything already held: nothing to keep


def test_a_checkpoint_compared_with_the_tree() -> None:
    def entry(path: str, sha: str, held: bool = True) -> ManifestEntry:
        return ManifestEntry(path, 1, sha, held)

    before = {
        "same.py": entry("same.py", "1" * 64),
        "edited.py": entry("edited.py", "2" * 64),
        "gone.py": entry("gone.py", "3" * 64),
        "logo.png": entry("logo.png", "4" * 64, held=False),
        "other/x.py": entry("other/x.py", "5" * 64),
    }
    now = {
        "same.py": entry("same.py", "1" * 64),
        "edited.py": entry("edited.py", "6" * 64),
        "new.py": entry("new.py", "7" * 64),
        "logo.png": entry("logo.png", "8" * 64, held=False),
        "other/x.py": entry("other/x.py", "9" * 64),
    }
    found = compare(before, now, lambda p: not p.startswith("other/"))
    assert found.modified == ["edited.py"] and found.created == ["new.py"]
    assert found.deleted == ["gone.py"] and found.unchanged == ["same.py"]
    assert found.left_alone == [("logo.png", NOT_HELD)]
    inside = within(["src", "README.md"])
    assert inside("src/a.py") and inside("README.md") and not inside("srcx/a.py")
