"""Text that is not UTF-8, binary data and big files, through a real daemon.

A Latin-1 or UTF-16 file is refused as `not_utf8`, naming the encoding it looks
like, by every tool that meets it (reads, edits, the outside-change path); a
NUL-bearing file stays `binary_file`; `file_too_large` speaks in units and
names a command that really raises the limit.
"""

from __future__ import annotations

import codecs
import hashlib
import json
import os
import random
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from editjournal.client import Client, RequestError
from editjournal.client.library.connection import live_endpoint
from editjournal.schemas.units import parse_size
from tests.conftest import RunningDaemon, pid_alive, start, wait_until
from tests.e2e.edit_support import rejected
from tests.e2e.watch_support import outside

WORDS = "Grüße aus München: «schöne Straße», déjà vu.\nZweite Zeile.\n"
LATIN1 = WORDS.encode("latin-1")
UTF16 = codecs.BOM_UTF16_LE + WORDS.encode("utf-16-le")
OTHER_ENCODINGS = {  # file -> (bytes, the encoding named, first byte that is not UTF-8)
    "latin1.txt": (LATIN1, "windows-1252", 2),
    "utf16.txt": (UTF16, "UTF-16LE", 0),
}
_RNG = random.Random(11)
NOISE = bytes(_RNG.randrange(1, 256) for _ in range(4096))  # binary, yet no NUL in it
CLI = [sys.executable, "-m", "editjournal.client.cli"]
EDIT = [{"op": "replace_line", "hash": "abcdef", "content": "x"}]


def read_error(client: Client, path: str) -> RequestError:
    with pytest.raises(RequestError) as caught:
        client.read_file(path)
    return caught.value


def put(root: Path, files: dict[str, tuple[bytes, str, int]]) -> None:
    for name, (data, _, _) in files.items():
        (root / name).write_bytes(data)


@pytest.mark.parametrize("name", list(OTHER_ENCODINGS))
def test_read_file_refuses_text_in_another_encoding_naming_it(
    daemon: RunningDaemon, client: Client, name: str
):
    put(daemon.root, OTHER_ENCODINGS)
    _, encoding, offset = OTHER_ENCODINGS[name]
    error = read_error(client, name)
    assert error.code == "not_utf8"
    assert error.details == {"path": name, "encoding": encoding, "offset": offset}
    assert encoding in error.message and name in error.message
    assert "iconv -f" in error.suggested_action


def test_read_many_files_reports_each_file_as_read_file_does(daemon: RunningDaemon, client: Client):
    put(daemon.root, OTHER_ENCODINGS)
    (daemon.root / "ok.txt").write_text(WORDS)
    items = client.read_many_files(["latin1.txt", "ok.txt", "utf16.txt"]).files
    assert [item.ok for item in items] == [False, True, False]
    for item in (items[0], items[2]):
        single = read_error(client, item.file_path)
        assert (item.error.code, item.error.details) == (single.code, single.details)
    assert items[1].result.content == WORDS


def test_binary_data_stays_binary_file(daemon: RunningDaemon, client: Client):
    (daemon.root / "nul.txt").write_bytes("café\x00crème\n".encode())
    (daemon.root / "noise.bin").write_bytes(NOISE)
    (daemon.root / "utf16-no-bom.txt").write_bytes(WORDS.encode("utf-16-le"))
    nul = read_error(client, "nul.txt")
    assert nul.code == "binary_file"
    assert nul.details == {"path": "nul.txt", "offset": 5, "reason": "nul byte"}
    noise = read_error(client, "noise.bin")
    assert (noise.code, noise.details["reason"]) == ("binary_file", "invalid utf-8")
    assert read_error(client, "utf16-no-bom.txt").code == "binary_file"


@pytest.mark.parametrize("name", list(OTHER_ENCODINGS))
def test_an_edit_refuses_the_same_way_and_changes_no_byte(
    daemon: RunningDaemon, client: Client, name: str
):
    put(daemon.root, OTHER_ENCODINGS)
    before = os.stat(daemon.root / name)
    read = read_error(client, name)
    edit = rejected(client, name, EDIT)  # asserts the bytes did not change
    assert (edit.code, edit.details, edit.message) == (read.code, read.details, read.message)
    assert os.stat(daemon.root / name).st_mtime_ns == before.st_mtime_ns
    assert daemon.journal().blob(hashlib.sha256(OTHER_ENCODINGS[name][0]).hexdigest()) is None


def test_a_file_rewritten_outside_in_latin1_is_recorded_then_refused(
    daemon: RunningDaemon, client: Client
):
    """The outside-change path fingerprints the file (no content stored: it is not
    text) and the next read and edit refuse it like any Latin-1 file."""
    target = daemon.root / "notes.txt"
    target.write_text(WORDS)
    client.read_file("notes.txt")
    target.write_bytes(LATIN1)
    sha = hashlib.sha256(LATIN1).hexdigest()
    [event] = wait_until(
        lambda: [e for e in outside(client, "notes.txt") if e.body["new_sha256"] == sha],
        20,
        "the outside change",
    )
    assert event.body["change"] == "modified" and event.body["content_stored"] is False
    assert event.body["line_count"] is None
    assert read_error(client, "notes.txt").details["encoding"] == "windows-1252"
    assert rejected(client, "notes.txt", EDIT).code == "not_utf8"
    assert target.read_bytes() == LATIN1


def test_call_prints_not_utf8_with_the_encoding(daemon: RunningDaemon):
    (daemon.root / "utf16.txt").write_bytes(UTF16)
    done = subprocess.run(
        [*CLI, "--workspace", str(daemon.root), "call", "read_file"],
        input='{"path": "utf16.txt"}',
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1, done.stderr
    error = json.loads(done.stdout)["error"]
    assert (error["code"], error["details"]["encoding"]) == ("not_utf8", "UTF-16LE")


# ------------------------------------------------------------------------ big files


def test_file_too_large_speaks_in_units_and_names_a_limit_that_fits(workspace: Path):
    (workspace / "big.txt").write_text("x" * 2047 + "\n")
    running = start(workspace, "--max-file-size", "1KiB")
    try:
        client = running.client()
        error = read_error(client, "big.txt")
        assert error.code == "file_too_large"
        assert error.message == "big.txt is 2.0 KB, over the 1 KiB limit"
        assert error.details == {"path": "big.txt", "size": 2048, "limit": 1024}
        assert error.suggested_action == (
            "restart the daemon with a higher limit:"
            " editjournal stop && editjournal start --max-file-size 1MiB"
        )
        edit = rejected(client, "big.txt", EDIT)
        assert (edit.code, edit.message) == (error.code, error.message)
    finally:
        running.stop()
    # the limit it names takes the file
    limit = error.suggested_action.rsplit(" ", 1)[1]
    assert parse_size(limit) >= 2048
    running = start(workspace, "--max-file-size", limit)
    try:
        assert running.client().read_file("big.txt").size == 2048
    finally:
        running.stop()


def test_the_suggested_restart_command_works_as_printed(workspace: Path):
    """Run from the workspace with `editjournal` on PATH, as a person would: the new
    daemon serves a file over the default 8 MiB limit that refused it."""
    (workspace / "big.txt").write_bytes(b"x" * 99 + b"\n" + (b"y" * 99 + b"\n") * 89_999)
    running = start(workspace)
    client = running.client()
    error = read_error(client, "big.txt")
    assert error.message == "big.txt is 9.0 MB, over the 8 MiB limit"
    command = error.suggested_action.split(": ", 1)[1]
    assert command == "editjournal stop && editjournal start --max-file-size 16MiB"
    client.close()
    env = {k: v for k, v in os.environ.items() if not k.startswith("EDITJOURNAL_")}
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    try:
        done = subprocess.run(
            command, shell=True, cwd=workspace, env=env, capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, done.stderr
        assert running.proc.wait(10) == 0  # the old daemon ended cleanly
        with Client(workspace, "agent-a", autostart=False) as restarted:
            read = restarted.read_file("big.txt", range="1-1")
        assert (read.size, read.content) == (9_000_000, "x" * 99 + "\n")
    finally:
        _stop(workspace)


def _stop(root: Path) -> None:
    endpoint = live_endpoint(root)
    if endpoint is not None:
        os.kill(endpoint.pid, signal.SIGTERM)
        wait_until(lambda: not pid_alive(endpoint.pid), 10, "the daemon to stop")
