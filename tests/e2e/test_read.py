"""`read_file` and `read_many_files` through a real daemon, journaled end to end."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from editjournal.client import Client, RequestError
from tests.conftest import RunningDaemon, start

CODE = "def area(r):\n    return 3.14 * r * r\n}\n\ndef name():\n    return 'circle'\n"


def write(root: Path, rel: str, data: bytes | str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def error_of(client: Client, path: str, **params) -> RequestError:
    with pytest.raises(RequestError) as caught:
        client.read_file(path, **params)
    return caught.value


def test_read_returns_versioned_content(daemon: RunningDaemon, client: Client):
    write(daemon.root, "shape.py", CODE)
    result = client.read_file("shape.py")
    assert result.file_path == "shape.py"
    assert result.content == CODE
    assert result.sha256 == hashlib.sha256(CODE.encode()).hexdigest()
    assert result.line_count == 6
    assert (result.start_line, result.end_line, result.truncated) == (1, 6, False)
    assert result.version == client.last_response.seq  # the seq of this read's event
    assert result.lines is None and result.rendered is None


def test_read_with_hashes_gives_anchors_and_rendered_rows(daemon: RunningDaemon, client: Client):
    write(daemon.root, "shape.py", CODE)
    result = client.read_file("shape.py", hashes=True)
    rows = result.rendered.split("\n")
    assert len(rows) == len(result.lines) == 6
    first = result.lines[0]
    assert (first.line, first.quality, first.text) == (1, "high", "def area(r):")
    assert rows[0] == f"1#{first.hash}|def area(r):"
    assert len(first.hash) == 6
    brace, blank = result.lines[2], result.lines[3]
    assert brace.quality == blank.quality == "low"
    assert rows[2] == f"3#{brace.hash}~|}}"  # low-quality rows are marked
    assert rows[3] == f"4#{blank.hash}~|"


def test_identical_lines_get_context_anchors(daemon: RunningDaemon, client: Client):
    write(daemon.root, "dup.py", "a = 1\nx = compute()\nb = 2\nx = compute()\nc = 3\n")
    lines = client.read_file("dup.py", hashes=True).lines
    twins = [lines[1], lines[3]]
    assert {t.kind for t in twins} == {"context"}
    assert twins[0].hash != twins[1].hash
    assert all(t.unique for t in twins)


@pytest.mark.parametrize(
    ("params", "span", "content"),
    [
        ({"range": "2-3"}, (2, 3), "    return 3.14 * r * r\n}\n"),
        ({"range": "5"}, (5, 5), "def name():\n"),
        ({"range": "5-"}, (5, 6), "def name():\n    return 'circle'\n"),
        ({"range": "5-99"}, (5, 6), "def name():\n    return 'circle'\n"),
        ({"offset": 2, "limit": 2}, (2, 3), "    return 3.14 * r * r\n}\n"),
        ({"offset": 6}, (6, 6), "    return 'circle'\n"),
    ],
)
def test_partial_reads(daemon: RunningDaemon, client: Client, params, span, content):
    write(daemon.root, "shape.py", CODE)
    result = client.read_file("shape.py", hashes=True, **params)
    assert (result.start_line, result.end_line) == span
    assert result.content == content
    assert [row.line for row in result.lines] == list(range(span[0], span[1] + 1))
    assert result.sha256 == hashlib.sha256(CODE.encode()).hexdigest()  # whole file


def test_partial_read_anchors_match_whole_file_anchors(daemon: RunningDaemon, client: Client):
    write(daemon.root, "shape.py", CODE)
    whole = client.read_file("shape.py", hashes=True).lines
    part = client.read_file("shape.py", hashes=True, range="4-6").lines
    assert part == whole[3:6]


def test_max_lines_truncates(daemon: RunningDaemon, client: Client):
    write(daemon.root, "long.txt", "".join(f"line {i}\n" for i in range(1, 101)))
    result = client.read_file("long.txt", max_lines=10)
    assert result.truncated is True
    assert (result.start_line, result.end_line, result.line_count) == (1, 10, 100)
    assert result.content.count("\n") == 10


def test_default_max_lines_is_2000(daemon: RunningDaemon, client: Client):
    write(daemon.root, "huge.txt", "".join(f"{i}\n" for i in range(2500)))
    result = client.read_file("huge.txt")
    assert (result.end_line, result.truncated) == (2000, True)


@pytest.mark.parametrize(
    ("params", "code"),
    [
        ({"range": "abc"}, "invalid_range"),
        ({"range": "5-2"}, "invalid_range"),
        ({"range": "0-2"}, "invalid_range"),
        ({"range": "50-60"}, "invalid_range"),
        ({"range": "1-2", "offset": 1}, "invalid_params"),
    ],
)
def test_bad_ranges_are_refused(daemon: RunningDaemon, client: Client, params, code):
    write(daemon.root, "shape.py", CODE)
    assert error_of(client, "shape.py", **params).code == code


def test_file_path_is_a_deprecated_alias(daemon: RunningDaemon, client: Client):
    write(daemon.root, "a.txt", "alpha\n")
    write(daemon.root, "b.txt", "beta\n")
    response = client.call("read_file", {"file_path": "a.txt"})
    assert response.ok and response.result["content"] == "alpha\n"
    assert any("deprecated" in w for w in response.warnings)
    both = client.call("read_file", {"path": "b.txt", "file_path": "a.txt"})
    assert both.result["content"] == "beta\n"
    assert any("path takes precedence" in w for w in both.warnings)


@pytest.mark.parametrize(
    "raw",
    [
        b"lf\nlines\n",
        b"crlf\r\nlines\r\n",
        b"cr\rlines\r",
        b"mixed\r\nlines\nand\rmore",
        b"\xef\xbb\xbfbom\nfile\n",
        b"no final newline",
        b"",
    ],
    ids=["lf", "crlf", "cr", "mixed", "bom", "no-final-newline", "empty"],
)
def test_line_endings_bom_and_final_newline_are_preserved(
    daemon: RunningDaemon, client: Client, raw: bytes
):
    write(daemon.root, "f.txt", raw)
    result = client.read_file("f.txt", hashes=True)
    text = raw.decode("utf-8")
    assert result.bom == text.startswith("\ufeff")
    assert result.content == text.removeprefix("\ufeff")
    assert result.sha256 == hashlib.sha256(raw).hexdigest()
    assert result.final_newline == text.endswith(("\n", "\r"))
    assert (daemon.root / "f.txt").read_bytes() == raw  # reading never rewrites


def test_eol_is_reported(daemon: RunningDaemon, client: Client):
    for name, raw, eol in [
        ("a", b"x\ny\n", "lf"),
        ("b", b"x\r\ny\r\n", "crlf"),
        ("c", b"x\ry\r", "cr"),
        ("d", b"x\r\ny\n", "mixed"),
        ("e", b"x", "none"),
    ]:
        write(daemon.root, name, raw)
        assert client.read_file(name).eol == eol, name


def test_absolute_path_inside_the_workspace_is_accepted(daemon: RunningDaemon, client: Client):
    path = write(daemon.root, "sub/x.txt", "inside\n")
    result = client.read_file(str(path))
    assert result.file_path == "sub/x.txt"


def test_path_errors(daemon: RunningDaemon, client: Client, tmp_path: Path):
    outside = write(tmp_path, "outside.txt", "secret\n")
    os.symlink(outside, daemon.root / "escape")
    os.symlink(tmp_path, daemon.root / "escape_dir")
    (daemon.root / "dir").mkdir()
    write(daemon.root, "nul.bin", b"abc\x00def")
    write(daemon.root, "latin1.txt", b"caf\xe9\n")
    cases = {
        "../outside.txt": "path_outside_workspace",
        str(outside): "path_outside_workspace",
        "escape": "path_outside_workspace",
        "escape_dir/outside.txt": "path_outside_workspace",
        "missing.txt": "file_not_found",
        "dir": "is_a_directory",
        "nul.bin": "binary_file",
        "latin1.txt": "not_utf8",
    }
    for path, code in cases.items():
        error = error_of(client, path)
        assert error.code == code, path
        assert error.message and error.suggested_action, path
    assert error_of(client, "latin1.txt").details["offset"] == 3


def test_files_over_the_size_limit_are_refused(workspace: Path):
    write(workspace, "big.txt", "x" * 2048)
    write(workspace, "small.txt", "x" * 10)
    running = start(workspace, "--max-file-size", "1024")
    try:
        client = running.client()
        error = error_of(client, "big.txt")
        assert error.code == "file_too_large"
        assert error.details["limit"] == 1024
        assert client.read_file("small.txt").size == 10
    finally:
        running.stop()


def test_every_read_is_journaled_as_the_agents_snapshot(daemon: RunningDaemon):
    write(daemon.root, "shape.py", CODE)
    a, b = daemon.client("agent-a"), daemon.client("agent-b")
    first = a.read_file("shape.py")
    second = b.read_file("shape.py", range="2-3", hashes=True)
    reads = list(daemon.journal().records(kind="file_read"))
    assert [(r.seq, r.agent) for r in reads] == [
        (first.version, "agent-a"),
        (second.version, "agent-b"),
    ]
    assert reads[0].event.lines is None
    assert reads[1].event.lines == (2, 3)
    assert reads[1].event.hashes is True
    assert reads[1].event.sha256 == first.sha256
    journal = daemon.journal()
    assert journal.blob(first.sha256) == CODE.encode()  # content kept for later diffs
    rows = journal.db.execute("SELECT COUNT(*) FROM blobs").fetchone()[0]
    assert rows == 1  # stored once


def test_file_version_changes_only_with_content(daemon: RunningDaemon, client: Client):
    path = write(daemon.root, "v.txt", "one\n")
    first = client.read_file("v.txt")
    client.read_file("v.txt")
    assert client.status().known_files == 1
    path.write_text("two\n")
    changed = client.read_file("v.txt")
    assert changed.sha256 != first.sha256
    assert changed.version > first.version


def test_read_many_files_reports_each_file(daemon: RunningDaemon, client: Client):
    write(daemon.root, "a.txt", "alpha\n")
    write(daemon.root, "b.txt", "beta\n")
    result = client.read_many_files(["a.txt", "missing.txt", "b.txt", "../x"], hashes=True)
    items = result.files
    assert [i.ok for i in items] == [True, False, True, False]
    assert items[0].result.content == "alpha\n" and items[0].result.lines
    assert items[1].error.code == "file_not_found"
    assert items[3].error.code == "path_outside_workspace"
    assert items[2].result.version == items[0].result.version + 1
    assert client.last_response.seq == items[2].result.version
    assert [r.path for r in daemon.journal().records(kind="file_read")] == ["a.txt", "b.txt"]


def test_read_many_files_reads_two_spellings_of_a_file_once(workspace: Path):
    # No watcher: the read itself must notice the outside change, deterministically.
    running = start(workspace, "--no-watch")
    try:
        client = running.client()
        path = write(workspace, "f.txt", "one\n")
        before = client.read_file("f.txt").sha256
        path.write_text("two\n")
        items = client.read_many_files(["f.txt", "./f.txt"]).files
        after = hashlib.sha256(b"two\n").hexdigest()
        assert [(i.file_path, i.ok, i.result.sha256) for i in items] == [("f.txt", True, after)] * 2
        assert items[0].result.version == items[1].result.version == client.last_response.seq
        [change] = client.log(path="f.txt", kind="outside_change").events
        assert (change.body["old_sha256"], change.body["new_sha256"]) == (before, after)
        reads = client.log(path="f.txt", kind="file_read").events
        assert [r.seq for r in reads][1:] == [items[0].result.version]  # read once, not twice
    finally:
        running.stop()
