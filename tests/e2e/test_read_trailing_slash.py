"""`notes.md/` names a directory, never the file: every read path refuses it.

The cached read (an unchanged file is served from its last snapshot) used to judge
only the name, so a settled file was served under `notes.md/`; writes always
refused it. The unit test drives the cache directly (`racy_ns=0`: "still long
enough"); the end-to-end tests go through every way a daemon reads a file.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from editjournal.client import Client, RequestError
from editjournal.daemon.files.readcache import RACY_NS, SnapshotCache
from editjournal.daemon.files.workspace import Workspace
from editjournal.schemas.errors import ToolError
from tests.conftest import RunningDaemon

TEXT = "# Notes\n- one\n"


def code_of(client: Client, call) -> str:
    with pytest.raises(RequestError) as caught:
        call()
    return caught.value.code


def test_the_snapshot_cache_refuses_a_trailing_slash_even_for_a_cached_file(tmp_path: Path):
    (tmp_path / "notes.md").write_text(TEXT)
    ws, cache = Workspace(tmp_path), SnapshotCache(racy_ns=0)
    assert cache.read(ws, "notes.md").text == TEXT  # now cached
    for spelling in ("notes.md/", "./notes.md/"):
        with pytest.raises(ToolError) as caught:
            cache.read(ws, spelling)
        assert caught.value.code.value == "invalid_params"
    assert cache.hits == 0


def test_read_file_of_a_settled_file_with_a_trailing_slash_is_invalid_params(
    daemon: RunningDaemon, client: Client
):
    path = daemon.root / "notes.md"
    path.write_text(TEXT)
    changed = os.stat(path).st_ctime_ns
    time.sleep(max(0.0, (changed + RACY_NS - time.time_ns()) / 1e9) + 0.2)  # settled: cached
    client.read_file("notes.md")
    client.read_file("notes.md")
    with pytest.raises(RequestError) as caught:
        client.read_file("notes.md/")
    assert caught.value.code == "invalid_params"
    assert "drop the trailing '/'" in (caught.value.suggested_action or "")


def test_every_read_mode_refuses_a_trailing_slash(daemon: RunningDaemon, client: Client):
    (daemon.root / "notes.md").write_text(TEXT)
    version = client.read_file("notes.md").version
    reads = [
        lambda: client.read_file("notes.md/"),
        lambda: client.read_file("notes.md/", hashes=True, range="1-1"),
        lambda: client.read_file("notes.md/", since_version=version),
        lambda: client.read_file("notes.md/", at_version=version),
    ]
    assert [code_of(client, read) for read in reads] == ["invalid_params"] * len(reads)


def test_read_many_files_refuses_the_slashed_spelling_of_a_file_it_read(
    daemon: RunningDaemon, client: Client
):
    (daemon.root / "notes.md").write_text(TEXT)
    items = client.read_many_files(["notes.md", "notes.md/"]).files
    assert items[0].ok and items[0].result is not None and items[0].result.content == TEXT
    assert not items[1].ok and items[1].error is not None
    assert items[1].error.code == "invalid_params"
