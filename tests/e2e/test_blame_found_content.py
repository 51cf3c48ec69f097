"""Blame, history, show, stats and the report agree with the content when a write
lands on content the journal never stored (issue 34): a file that existed before the
daemon started, edited or moved without being read. The lines the write found are
`outside`'s (kind `found_by_write`); the write is credited with the lines it changed.
Through the real CLI and the client, on a real daemon started after the files exist."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from editjournal.client import RequestError
from tests.conftest import RunningDaemon, start
from tests.e2e.cli_support import cli

FOUR = "one\ntwo\nthree\nfour\n"


@pytest.fixture
def served(workspace: Path) -> Iterator[RunningDaemon]:
    """The everyday case: the files are there first, then the daemon starts."""
    (workspace / "f1.txt").write_text(FOUR)
    (workspace / "old.txt").write_text("b1\nb2\nb3\nb4\n")
    running = start(workspace)
    yield running
    if running.proc.poll() is None:
        running.stop()


def _json(root: Path, *args: str, agent: str = "auditor") -> Any:
    done = cli(root, "--json", *args, agent=agent)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _edit_line_two(root: Path) -> int:
    done = cli(root, "edit-file", "f1.txt", "--old-string", "two", "--new-string", "TWO", agent="x")
    assert done.returncode == 0, done.stderr
    return int(_json(root, "history", "f1.txt")["versions"][-1]["seq"])


def test_an_edit_of_a_file_older_than_the_journal_is_blamed_for_its_line_only(
    served: RunningDaemon,
):
    root = served.root
    seq = _edit_line_two(root)
    lines = _json(root, "blame", "f1.txt")["lines"]
    assert [(b["text"], b["agent"], b["kind"], b["seq"]) for b in lines] == [
        ("one", "outside", "found_by_write", seq),
        ("TWO", "x", "edit_applied", seq),
        ("three", "outside", "found_by_write", seq),
        ("four", "outside", "found_by_write", seq),
    ]
    shown = cli(root, "blame", "f1.txt")
    assert shown.returncode == 0, shown.stderr
    assert [row.split()[1] for row in shown.stdout.splitlines()] == ["outside", "x"] + [
        "outside"
    ] * 2


def test_history_counts_the_edit_as_one_line_changed(served: RunningDaemon):
    root = served.root
    seq = _edit_line_two(root)
    versions = _json(root, "history", "f1.txt")["versions"]
    rows = [(v["seq"], v["author"], v["kind"], v["added"], v["removed"]) for v in versions]
    assert rows == [
        (seq, "outside", "found_by_write", 4, 0),
        (seq, "x", "edit_applied", 1, 1),
    ]
    assert all(v["stored"] for v in versions)
    table = cli(root, "history", "f1.txt").stdout
    assert "+1/-1" in table and "+4/-0" in table.splitlines()[1]


def test_show_stats_and_the_report_agree_with_blame(served: RunningDaemon, tmp_path: Path):
    root = served.root
    seq = _edit_line_two(root)
    diff = _json(root, "show", str(seq))["event"]["diff"]
    changed = [r for r in diff.splitlines() if r[:1] in "+-" and r[:3] not in ("+++", "---")]
    assert changed == ["-two", "+TWO"]
    (x,) = [a for a in _json(root, "stats")["agents"] if a["agent"] == "x"]
    assert (x["applied_writes"], x["rebased_edits"]) == (1, 0)
    page = tmp_path / "report.html"
    done = cli(root, "report", "--html", str(page))
    assert done.returncode == 0, done.stderr
    text = page.read_text()
    assert "-two" in text and "+TWO" in text
    assert "+one" not in text and "+three" not in text


def test_a_move_of_an_unread_file_keeps_each_lines_author(served: RunningDaemon):
    client = served.client("y")
    edited = client.edit_file("old.txt", "b3", "B3")
    patch = (
        "*** Begin Patch\n*** Update File: old.txt\n*** Move to: new.txt\n"
        "@@\n b1\n-b2\n+B2\n*** End Patch\n"
    )
    moved = served.client("mover").apply_patch(patch)
    assert (served.root / "new.txt").read_text() == "b1\nB2\nB3\nb4\n"
    move_seq = max(f.version for f in moved.files)
    blame = client.blame("new.txt")
    assert [(b.text, b.agent) for b in blame.lines] == [
        ("b1", "outside"),
        ("B2", "mover"),
        ("B3", "y"),
        ("b4", "outside"),
    ]
    assert blame.lines[1].seq == move_seq and blame.lines[2].seq == edited.version
    history = client.history("new.txt").versions
    assert [(v.author, v.added, v.removed) for v in history] == [
        ("outside", 4, 0),
        ("y", 1, 1),
        ("mover", 1, 1),
    ]


def test_a_pure_move_of_an_unread_file_credits_the_mover_with_nothing(served: RunningDaemon):
    patch = "*** Begin Patch\n*** Update File: f1.txt\n*** Move to: sub/f2.txt\n*** End Patch\n"
    served.client("mover").apply_patch(patch)
    blame = served.client("auditor").blame("sub/f2.txt")
    assert {b.agent for b in blame.lines} == {"outside"}
    assert [b.text for b in blame.lines] == FOUR.split()
    last = served.client("auditor").history("sub/f2.txt").versions[-1]
    assert (last.author, last.added, last.removed, last.moved_from) == ("mover", 0, 0, "f1.txt")


def test_blame_at_a_version_before_the_first_record_says_where_the_record_starts(
    served: RunningDaemon,
):
    root = served.root
    seq = _edit_line_two(root)
    done = cli(root, "blame", "f1.txt", "--at-version", "1")
    assert done.returncode != 0
    assert (
        f"the journal has no record of f1.txt at version 1: its first record is event {seq}"
        " (edit_applied by x)"
    ) in done.stderr
    assert "editjournal history f1.txt" in done.stderr  # its versions, not "read it first"
    assert "read the file first" not in done.stderr
    read = cli(root, "read", "f1.txt", "--at-version", "1")  # the same words as blame's
    assert f"at version 1: its first record is event {seq}" in read.stderr, read.stderr
    error = json.loads(cli(root, "--json", "blame", "f1.txt", "--at-version", "1").stdout)
    assert error["code"] == "file_not_in_journal"
    assert error["details"]["first_seq"] == seq
    at_edit = _json(root, "blame", "f1.txt", "--at-version", str(seq))
    assert [b["agent"] for b in at_edit["lines"]] == ["outside", "x", "outside", "outside"]
    never = cli(root, "blame", "nowhere.txt").stderr
    assert "the journal has no record of nowhere.txt" in never and "first record" not in never


def test_blame_of_a_moved_file_names_where_it_went_and_where_it_was(served: RunningDaemon):
    client = served.client("auditor")
    read = client.read_file("old.txt")
    patch = "*** Begin Patch\n*** Update File: old.txt\n*** Move to: new.txt\n*** End Patch\n"
    moved = max(f.version for f in served.client("mover").apply_patch(patch).files)
    with pytest.raises(RequestError) as gone:
        client.blame("old.txt")
    assert gone.value.code == "version_not_stored"
    assert f"old.txt was moved to new.txt by event {moved - 1}" in gone.value.message
    with pytest.raises(RequestError) as before:
        client.blame("new.txt", at_version=read.version)
    assert before.value.code == "file_not_in_journal"
    assert (
        f"new.txt did not exist at version {read.version}: the file was old.txt then"
        f" (moved to new.txt at event {moved})"
    ) in before.value.message
