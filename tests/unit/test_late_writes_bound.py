"""How many displaced files the daemon holds for late writes, what it says when it must
let one go early, and what /proc tells of an unlinked file's writers
(daemon/files/latewrites.py). Real files and real processes; no daemon needed."""

from __future__ import annotations

import logging
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from editjournal.daemon.files.latewrites import LateWrites, held_bound_for, proc_writers


@pytest.mark.parametrize(
    ("soft", "bound"),
    [(1024, 256), (256, 64), (8192, 2048), (1 << 20, 4096), (None, 4096)],
    ids=["usual-1024", "tiny-floor", "8192", "raised-ceiling", "unlimited"],
)
def test_the_bound_is_a_quarter_of_the_open_file_limit_within_a_floor_and_a_ceiling(
    soft: int | None, bound: int
) -> None:
    assert held_bound_for(soft) == bound


@pytest.fixture
def directory(tmp_path: Path) -> Iterator[int]:
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    yield fd
    os.close(fd)


def test_a_file_let_go_to_keep_the_bound_while_a_writer_holds_it_is_reported(
    tmp_path: Path, directory: int, caplog: pytest.LogCaptureFixture
) -> None:
    late = LateWrites(1 << 20, bound=2)
    writers = []
    for n in range(3):
        (tmp_path / f"f{n}").write_bytes(b"base\n")
        writers.append(open(tmp_path / f"f{n}", "ab"))  # noqa: SIM115 (closed below)
        late.hold(directory, f"f{n}", (f"f{n}", n + 1), b"base\n", changed=False)
    try:
        with caplog.at_level(logging.WARNING, logger="editjournal"):
            assert late.due(time.monotonic()) == []  # none due: only the bound acts
        stats = late.stats()
        assert (stats["held"], stats["bound"]) == (2, 2)
        assert (stats["let_go_early"], stats["let_go_with_writers"]) == (1, 1)
        [record] = caplog.records
        assert "f0 (seq 1), let go before its grace was over while a process" in record.message
    finally:
        for writer in writers:
            writer.close()
        late.close()


def test_proc_names_an_unlinked_file_another_process_writes_and_not_one_it_reads(
    tmp_path: Path,
) -> None:
    written, read = tmp_path / "written", tmp_path / "read"
    written.write_text("")
    read.write_text("")
    with open(written, "a") as out, open(read) as into:  # the children keep their copies
        appender = subprocess.Popen(["sleep", "30"], stdout=out)
        reader = subprocess.Popen(["sleep", "30"], stdin=into)
    try:
        ids = {p: (s.st_dev, s.st_ino) for p in (written, read) if (s := p.stat())}
        written.unlink()
        read.unlink()
        found = proc_writers()
        assert ids[written] in found
        assert ids[read] not in found
    finally:
        for process in (appender, reader):
            process.kill()
            process.wait()
