"""Checkpoints of a big tree: a 100,000-file, ~60 MB workspace (`--quick`: tiny).

- First checkpoint (the daemon has hashed nothing yet): wall time of
  `checkpoint_create`, against a shadow-git snapshot of the same tree in the same run
  (`git add -A` + `git write-tree` into a fresh repository: what Aider- and
  Cline-style snapshots do).
- Other agents meanwhile: `ping` round trips from a second client while the first
  checkpoint is taken, against the same pings on the idle daemon; the goal is no
  wait of more than ~100 ms (the daemon takes the tree in 50 ms slices).
- Second checkpoint, one file changed: against the second shadow-git snapshot.
- Journal growth for the first checkpoint: against the bytes git's object store
  grows by for the same tree (each file zlib-compressed: the compressed tree).
- Journal growth for a third checkpoint, 10 files changed in 10 directories (what a
  prompt checkpoint per turn costs, issue 37): against what git's object store grows
  by for the same snapshot (10 blobs, 10 trees and the root).
- Other agents during a restore of many files (issue 40: `MAX_RESTORE_FILES`, the most
  one restore writes, 1,000 of the tree's files, `--quick`: 100, changed after the
  third checkpoint, then restored to it; a restore of more is refused with its parts): `ping`
  round trips from a second client, against the idle daemon's; the daemon's longest
  turn meanwhile (`status`'s `group_commit.turns`: the final run and its commit, one
  step) in the row's note.
"""

from __future__ import annotations

import random
import shutil
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

from bench.daemons import serving
from bench.growth import checkpointed_size
from bench.rows import Figure, Row
from bench.sizes import Sizes
from bench.stats import Summary
from editjournal.client import Client
from editjournal.schemas.endpoint import JOURNAL_FILE, STATE_DIR_NAME
from editjournal.schemas.tools import MAX_RESTORE_FILES

FIRST_GOAL_US = 10_000_000
SECOND_GOAL_US = 1_000_000
TURN_GOAL_BYTES = 64 * 1024
STALL_GOAL_US = 100_000
PER_DIR = 200
RESTORED_FILES = MAX_RESTORE_FILES  # of the tree, at most: the most one restore writes


def rows(tmp: Path, sizes: Sizes) -> list[Row]:
    work = tmp / "tree"
    total = _make_tree(work, sizes.checkpoint_files, sizes.checkpoint_bytes)
    git = _ShadowSnapshot(work, tmp / "git")
    git_first = git.snapshot()
    git_bytes = git.objects_bytes()
    journal = work / STATE_DIR_NAME / JOURNAL_FILE
    with (
        serving(work, "--no-watch"),
        Client(work, "bench-checkpoint", autostart=False, timeout=600) as client,
    ):
        idle = _pings(work, 0.5)
        before = checkpointed_size(journal)
        first_us, busy = timed_with_pings(work, lambda: client.checkpoint_create("first"))
        grown = checkpointed_size(journal) - before
        victim = work / "d0000" / "f00000.txt"
        victim.write_text(victim.read_text() + "one more line\n")
        started = time.perf_counter()
        client.checkpoint_create("second")
        second_us = (time.perf_counter() - started) * 1e6
        _change_ten(work, sizes.checkpoint_files)
        before = checkpointed_size(journal)
        client.checkpoint_create("third")
        turn_bytes = checkpointed_size(journal) - before
        restored = _change_many(work, min(RESTORED_FILES, sizes.checkpoint_files // 4))
        _, restoring = timed_with_pings(work, lambda: client.checkpoint_restore("third"))
        longest_turn = _longest_turn(client)
    git_victim = git.work / "d0000" / "f00000.txt"
    git_victim.write_text(git_victim.read_text() + "one more line\n")
    git_second = git.snapshot()
    _change_ten(git.work, sizes.checkpoint_files)
    git_before = git.objects_bytes()
    git.snapshot()
    git_turn_bytes = git.objects_bytes() - git_before
    files = f"{sizes.checkpoint_files:,} files, {total / 1e6:.0f} MB"
    stall = Summary.of(busy)
    calm = Summary.of(idle)
    during = Summary.of(restoring)
    return [
        Row(
            f"first checkpoint of {files}",
            Figure("editjournal", first_us, "us"),
            [Figure("shadow git add -A + write-tree", git_first, "us")],
            goal="≤ 10 s",
            met=first_us <= FIRST_GOAL_US,
        ),
        Row(
            f"`ping` while that checkpoint is taken ({len(busy)} pings)",
            Figure("editjournal", stall.p50, "us", p99=stall.p99, extra=f"max {_ms(max(busy))}"),
            [Figure("idle daemon", calm.p50, "us", p99=calm.p99)],
            goal="≤ ~100 ms at a time",
            met=max(busy) <= STALL_GOAL_US * 1.5 and stall.p99 <= STALL_GOAL_US,
        ),
        Row(
            "second checkpoint, one file changed",
            Figure("editjournal", second_us, "us"),
            [Figure("shadow git, again", git_second, "us")],
            goal="≤ 1 s",
            met=second_us <= SECOND_GOAL_US,
        ),
        Row(
            "journal growth of the first checkpoint",
            Figure("editjournal", grown, "bytes"),
            [Figure("git objects (zlib per file)", git_bytes, "bytes")],
            goal="≈ the compressed tree",
            met=grown <= 1.5 * git_bytes,
        ),
        Row(
            "journal growth of a checkpoint, 10 files changed",
            Figure("editjournal", turn_bytes, "bytes"),
            [Figure("git objects, same snapshot", git_turn_bytes, "bytes")],
            goal="≤ 64 KB",
            met=turn_bytes <= TURN_GOAL_BYTES,
        ),
        Row(
            f"`ping` while a restore of {restored:,} changed files runs ({len(restoring)} pings)",
            Figure(
                "editjournal",
                during.p50,
                "us",
                p99=during.p99,
                extra=f"max {_ms(max(restoring))}, longest turn {longest_turn:.0f} ms",
            ),
            [Figure("idle daemon", calm.p50, "us", p99=calm.p99)],
            goal="≤ ~100 ms at a time",
            met=max(restoring) <= STALL_GOAL_US * 1.5 and during.p99 <= STALL_GOAL_US,
        ),
    ]


def _change_ten(root: Path, files: int) -> None:
    """One line more in 10 files spread over the tree (10 directories)."""
    for k in range(10):
        i = (k * files // 10 + 37) % files
        path = root / f"d{i // PER_DIR:04}" / f"f{i:05}.txt"
        path.write_text(path.read_text() + f"turn = {k}\n")


def _change_many(root: Path, count: int) -> int:
    """One line more in each of the first `count` files of the tree; how many."""
    for i in range(count):
        path = root / f"d{i // PER_DIR:04}" / f"f{i:05}.txt"
        with path.open("a") as f:
            f.write("changed since the checkpoint\n")
    return count


def _longest_turn(client: Client) -> float:
    """The daemon's longest turn so far (ms), as `status` reports it."""
    result = client.call("status", {}).result
    turns = result["group_commit"]["turns"] if isinstance(result, dict) else None
    return float(turns["longest_ms"]) if isinstance(turns, dict) else float("nan")


def _ms(us: float) -> str:
    return f"{us / 1e3:.0f} ms"


def _make_tree(root: Path, files: int, total_bytes: int) -> int:
    """`files` text files in directories of PER_DIR, ~`total_bytes` in all, of
    source-like lines (compressible as code is)."""
    rng = random.Random(7)
    words = ["value", "result", "items", "config", "self", "return", "import", "def"]
    each = max(1, total_bytes // files)
    written = 0
    for i in range(files):
        directory = root / f"d{i // PER_DIR:04}"
        if i % PER_DIR == 0:
            directory.mkdir(parents=True)
        lines, size = [], 0
        while size < each:
            line = f"{rng.choice(words)}_{rng.randrange(1000)} = {rng.randrange(10**6)}\n"
            lines.append(line)
            size += len(line)
        (directory / f"f{i:05}.txt").write_text("".join(lines))
        written += size
    return written


class _ShadowSnapshot:
    """A shadow git repository over a copy of the tree: one snapshot = stage + write-tree."""

    def __init__(self, source: Path, git_dir: Path) -> None:
        self.work = git_dir.with_name("gitwork")
        shutil.copytree(source, self.work)
        self.git_dir = git_dir
        self.base = ["git", f"--git-dir={git_dir}", f"--work-tree={self.work}"]
        subprocess.run([*self.base, "init", "-q"], check=True, capture_output=True)

    def snapshot(self) -> float:
        """Microseconds of `git add -A` + `git write-tree`."""
        started = time.perf_counter()
        subprocess.run([*self.base, "add", "-A"], check=True, capture_output=True)
        subprocess.run([*self.base, "write-tree"], check=True, capture_output=True)
        return (time.perf_counter() - started) * 1e6

    def objects_bytes(self) -> int:
        return sum(p.stat().st_size for p in (self.git_dir / "objects").rglob("*") if p.is_file())


def _pings(root: Path, seconds: float, stop: threading.Event | None = None) -> list[float]:
    """Round trips of `ping` (µs) from a client of its own, for `seconds` or until `stop`."""
    samples: list[float] = []
    with Client(root, "bench-pinger", autostart=False) as pinger:
        deadline = time.monotonic() + seconds
        while True:  # at least one
            started = time.perf_counter()
            pinger.ping()
            samples.append((time.perf_counter() - started) * 1e6)
            if time.monotonic() > deadline or (stop is not None and stop.is_set()):
                break
            time.sleep(0.002)
    return samples


def timed_with_pings(root: Path, request: Callable[[], object]) -> tuple[float, list[float]]:
    """The request's wall time (µs), and the pings another client made meanwhile."""
    done = threading.Event()
    busy: list[float] = []
    pinger = threading.Thread(target=lambda: busy.extend(_pings(root, 600, done)))
    pinger.start()
    started = time.perf_counter()
    try:
        request()
    finally:
        elapsed = (time.perf_counter() - started) * 1e6
        done.set()
        pinger.join()
    return elapsed, busy
