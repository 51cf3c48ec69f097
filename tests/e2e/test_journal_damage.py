"""A damaged journal file, met by a real daemon, its start-up and `editjournal verify`.

The journal's SQLite file is cut short while the daemon serves, or has random bytes
written over it between two runs. Every request still gets a reply, and the reply is
`journal_corrupt` (a malformed file) or `journal_unavailable`, never `internal_error`
and never silence; a start on a damaged file refuses in one line, with no traceback;
`verify` runs SQLite's `PRAGMA integrity_check` and fails on a malformed file.
"""

from __future__ import annotations

import json
import os
import random
import sqlite3
import subprocess
from pathlib import Path

import pytest

from editjournal.client import Client
from editjournal.client.library.errors import RequestError
from editjournal.schemas.endpoint import JOURNAL_FILE, STATE_DIR_NAME
from tests.conftest import START_TIMEOUT, RunningDaemon, spawn, start
from tests.e2e.cli_support import SCRIPT, TIMEOUT, cli, cli_env

JOURNAL_CODES = {"journal_corrupt", "journal_unavailable"}


def journal_path(root: Path) -> Path:
    return root / STATE_DIR_NAME / JOURNAL_FILE


def edit_line(client: Client, line: int, content: str) -> None:
    anchor = client.read_file("notes.txt", hashes=True).lines[line].hash
    client.edit("notes.txt", [{"op": "replace_line", "hash": anchor, "content": content}])


def with_history(root: Path) -> RunningDaemon:
    """A serving daemon whose journal holds 20 reads and edits (about 50 KiB)."""
    (root / "notes.txt").write_text("".join(f"line {i}\n" for i in range(300)))
    daemon = start(root, "--no-watch")
    client = daemon.client()
    for k in range(20):
        edit_line(client, 10, f"edit number {k}")
    return daemon


def checkpoint(root: Path) -> None:
    """Move the WAL into the database file, so cutting the file cuts committed pages."""
    with sqlite3.connect(journal_path(root)) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def overwrite(root: Path, offsets: list[int], seed: int = 1) -> None:
    """Write 64 random bytes at each offset of the (stopped) daemon's journal file."""
    rnd = random.Random(seed)
    with open(journal_path(root), "r+b") as f:
        for offset in offsets:
            f.seek(offset)
            f.write(rnd.randbytes(64))


def start_or_refusal(root: Path) -> RunningDaemon | str:
    """The daemon serving `root`, or the stderr of its refusal to start (exit 1)."""
    proc = spawn(root, "--no-watch")
    try:
        _, err = proc.communicate(timeout=3)
    except subprocess.TimeoutExpired:
        return RunningDaemon(root, proc)
    assert proc.returncode == 1, err.decode()
    return err.decode()


def refused(root: Path) -> str:
    proc = spawn(root, "--no-watch")
    try:
        _, err = proc.communicate(timeout=START_TIMEOUT)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise AssertionError("the daemon started on a damaged journal") from None
    assert proc.returncode == 1, err.decode()
    return err.decode()


def assert_one_line_refusal(err: str) -> None:
    assert "journal_corrupt" in err, err
    assert "Traceback" not in err, err
    assert len(err.strip().splitlines()) == 1, err


def test_a_journal_cut_short_while_serving_answers_every_request_with_a_journal_code(
    workspace: Path,
) -> None:
    daemon = with_history(workspace)
    client = daemon.client()
    checkpoint(workspace)
    os.truncate(journal_path(workspace), 8192)
    codes = []
    for k in range(5):
        with pytest.raises(RequestError) as caught:
            if k % 2:
                edit_line(client, 12, f"after the cut {k}")
            else:
                client.read_file("notes.txt")
        codes.append(caught.value.code)
    assert set(codes) <= JOURNAL_CODES, codes
    assert "journal_corrupt" in codes
    assert daemon.proc.poll() is None  # still up, still answering
    assert client.ping().pid == daemon.proc.pid  # a request that records nothing is served
    assert daemon.stop() == 0  # and stops cleanly
    stderr = daemon.proc.stderr.read().decode() if daemon.proc.stderr else ""
    assert "Traceback" not in stderr, stderr
    assert_one_line_refusal(refused(workspace))


@pytest.mark.parametrize("offsets", [[0], [4096, 20000], [12000, 45000], [30000, 40000]])
def test_random_bytes_in_the_journal_are_refused_at_start_or_answered_journal_corrupt(
    workspace: Path, offsets: list[int]
) -> None:
    assert with_history(workspace).stop() == 0
    overwrite(workspace, offsets)
    found = start_or_refusal(workspace)
    if isinstance(found, str):
        assert_one_line_refusal(found)
        return
    client = found.client()
    try:
        for k in range(3):
            try:
                edit_line(client, 12 + k, f"after the damage {k}")
            except RequestError as e:
                assert e.code in JOURNAL_CODES, (e.code, e.message)
    finally:
        assert found.stop() == 0
    assert "Traceback" not in (found.proc.stderr.read().decode() if found.proc.stderr else "")


@pytest.mark.parametrize("offsets", [[0], [4096, 20000], [12000, 45000]])
def test_verify_fails_a_malformed_journal_naming_integrity_check(
    workspace: Path, offsets: list[int]
) -> None:
    assert with_history(workspace).stop() == 0
    assert cli(workspace, "verify").returncode == 0
    overwrite(workspace, offsets)
    result = cli(workspace, "verify")
    assert result.returncode != 0
    assert "integrity_check" in result.stdout + result.stderr, result
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    "sent",
    [
        "[" * 100_000 + "]" * 100_000,  # deeper than json's recursion: RecursionError
        '{"a":' * 100_000 + "1" + "}" * 100_000,
        json.dumps({"hook_event_name": "PreToolUse", "tool_name": "Edit", "x": "y" * 20_000_000}),
        "42",
        '"a string"',
        "null",
        "\udcff",
    ],
    ids=["list-100k-deep", "object-100k-deep", "20-MB", "number", "string", "null", "bad-utf8"],
)
def test_the_hook_allows_any_payload_with_one_line_on_stderr(workspace: Path, sent: str) -> None:
    """No daemon is needed: a payload the hook cannot judge never reaches one."""
    done = subprocess.run(
        [str(SCRIPT), "hook", "claude-code"],
        input=sent.encode("utf-8", "surrogateescape"),
        capture_output=True,
        timeout=TIMEOUT,
        env=cli_env(),
        cwd=workspace,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == b""
    err = done.stderr.decode()
    assert "Traceback" not in err
    assert err == "" or (len(err.splitlines()) == 1 and err.startswith("editjournal hook: "))
    if sent.startswith("["):
        assert "nested too deeply" in err and "allowed" in err
