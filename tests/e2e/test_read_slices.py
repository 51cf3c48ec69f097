"""A big read is prepared a slice at a time, and says what the journal records (issue 40).

Anchored reads of `SLICED_BYTES` or more are read, parsed and anchored by a job
(daemon/handlers/readjob.py) between other requests, and journaled by the request's
final run, against the files as they are then. A real daemon each: another agent's
read is answered while a big anchored `read_many_files` is parked (its journal seq
comes first); the big reply is the reply each file gets when read at once; and a file
an outside writer changes while the job works is served and journaled as it is at the
end, never as the job first read it. (The issue's sizes, 32 MiB and three at once,
are measured by `make bench`, bench/reads.py.)
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

from editjournal.daemon.handlers.readjob import SLICED_BYTES
from editjournal.daemon.text.anchors import AnchorIndex
from editjournal.schemas.events import FileRead
from editjournal.schemas.tools import ReadFileResult, ReadManyFilesResult
from tests.conftest import RunningDaemon
from tests.polling import wait_until

FILES = 24  # of ~30 KB: ~3x SLICED_BYTES, ~24,000 lines to anchor (a few slices)
LINES = 1_000


def _files(root: Path) -> list[str]:
    names = [f"f{k:02d}.py" for k in range(FILES)]
    for k, name in enumerate(names):
        body = "".join(f"    v_{k}_{i:05d} = f({i % 97}, 'text')\n" for i in range(LINES))
        (root / name).write_text(body + ("}\n" if k % 2 else ""))  # low-quality marks too
    assert sum((root / n).stat().st_size for n in names) > 2 * SLICED_BYTES
    return names


def _in_thread(call: Callable[[], Any]) -> tuple[threading.Thread, dict[str, Any]]:
    out: dict[str, Any] = {}

    def run() -> None:
        try:
            out["result"] = call()
        except Exception as e:  # re-raised by the test
            out["error"] = e

    thread = threading.Thread(target=run)
    thread.start()
    return thread, out


def _answer(thread: threading.Thread, out: dict[str, Any]) -> Any:
    thread.join(120)
    assert not thread.is_alive(), "the big read never answered"
    if "error" in out:
        raise out["error"]
    return out["result"]


def _without_version(result: ReadFileResult) -> dict[str, Any]:
    fields = msgspec.structs.asdict(result)
    del fields["version"]
    return fields


def test_another_agent_is_answered_while_a_big_read_is_parked(daemon: RunningDaemon) -> None:
    names = _files(daemon.root)
    big, other, watcher = daemon.client("big", timeout=120), daemon.client(), daemon.client("w")
    thread, out = _in_thread(lambda: big.read_many_files(names, hashes=True))
    wait_until(lambda: watcher.status().parked > 0, what="the big read to be parked")
    small = other.read_file(names[0], range="1-3", hashes=True)  # a small read: at once

    whole: ReadManyFilesResult = _answer(thread, out)
    versions = [item.result.version for item in whole.files if item.result is not None]
    assert len(versions) == FILES
    assert small.version < min(versions), "the small read was answered first"
    for name, item in zip(names, whole.files, strict=True):
        assert item.ok and item.result is not None
        at_once = other.read_file(name, hashes=True)  # one file: under SLICED_BYTES
        assert _without_version(item.result) == _without_version(at_once)
    lines = (daemon.root / names[1]).read_text().splitlines()
    assert whole.files[1].result is not None
    assert whole.files[1].result.anchors == AnchorIndex(lines).anchor_strings


def test_a_file_changed_while_the_job_works_is_served_and_journaled_as_it_is_then(
    daemon: RunningDaemon,
) -> None:
    names = _files(daemon.root)
    big, watcher = daemon.client("big", timeout=120), daemon.client("w")
    thread, out = _in_thread(lambda: big.read_many_files(names, hashes=True))
    wait_until(lambda: watcher.status().parked > 0, what="the big read to be parked")
    changed = "".join(f"changed_{i} = {i}\n" for i in range(LINES))
    (daemon.root / names[0]).write_text(changed)  # the job read it first: now stale
    still_parked = watcher.status().parked > 0

    whole: ReadManyFilesResult = _answer(thread, out)
    first = whole.files[0].result
    assert first is not None
    data = (daemon.root / names[0]).read_bytes()
    assert still_parked, "the change came after the job was done: nothing was tested"
    assert first.content == changed
    assert first.sha256 == hashlib.sha256(data).hexdigest()
    assert first.anchors == AnchorIndex(changed.splitlines()).anchor_strings
    reads = [r.event for r in daemon.journal().records(kind="file_read") if r.agent == "big"]
    journaled = {e.path: e.sha256 for e in reads if isinstance(e, FileRead)}
    assert len(reads) == FILES, "each file journaled once, by the final run"
    assert journaled[names[0]] == first.sha256
    for item in whole.files:
        assert item.result is not None
        assert journaled[item.result.file_path] == item.result.sha256


def test_a_window_of_a_big_file_is_served_from_the_job_as_if_read_at_once(
    daemon: RunningDaemon,
) -> None:
    lines = [f"item_{i} = {i % 89}" if i % 7 else "}" for i in range(12_000)]  # ~190 KB
    lines += [f"pad_{i:06d} " + "x" * 60 for i in range(1_500)]  # ~100 KB more
    (daemon.root / "big.py").write_text("".join(f"{line}\n" for line in lines))
    assert (daemon.root / "big.py").stat().st_size > SLICED_BYTES
    agent = daemon.client()
    read = agent.read_file("big.py", hashes=True, range="2-11000", max_lines=20_000)
    index = AnchorIndex(lines)
    assert read.anchors == index.anchor_strings[1:11000]
    assert read.marks == index.marks(1, 11000)
    assert read.content == "".join(f"{line}\n" for line in lines[1:11000])
    past = agent.call("read_file", {"path": "big.py", "hashes": True, "range": "20000-"})
    assert past.error is not None and past.error.code == "invalid_range"
