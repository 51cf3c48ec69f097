"""Prepare first, apply once, through a real daemon: plans write nothing, apply writes
exactly the plan, hunks are owned, expire, apply once, survive a restart."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from editjournal.client import Client
from tests.conftest import RunningDaemon, start, wait_until
from tests.e2e.hunk_support import configure, events, kinds, refused

TEXT = "# Notes\n\nalpha = 1\nbeta = 2\ngamma = 3\n\n## End\n"


@pytest.fixture
def notes(workspace: Path) -> Path:
    path = workspace / "notes.md"
    path.write_text(TEXT)
    return path


def test_every_prepare_kind_is_reviewable_and_writes_nothing(
    client: Client, notes: Path, workspace: Path
):
    plans = [
        client.prepare_file_range_edit("notes.md", "beta = 20\n", range="4-4"),
        client.prepare_file_append("notes.md", "- appended\n"),
        client.prepare_file_insert("notes.md", "alpha", "after_alpha\n"),
        client.prepare_file_insert(
            "notes.md", "## End", "before_end\n", after=False, match="exact"
        ),
        client.prepare_file_block_replace("notes.md", "beta = 2\ngamma = 3", "bg = 23"),
    ]
    assert notes.read_text() == TEXT
    assert len({p.hunk_id for p in plans}) == 5
    for plan in plans:
        assert plan.diff.startswith("--- a/notes.md\n+++ b/notes.md\n@@ ")
        assert plan.evidence.version >= 1 and len(plan.evidence.sha256) == 64
        assert plan.expires_at_ms > plan.created_at_ms
        assert f"hunk_id: {plan.hunk_id}\n" in plan.summary
    range_plan, _, insert_plan, _, block_plan = plans
    assert range_plan.evidence.matched[0].text == "beta = 2"
    assert "-beta = 2\n+beta = 20\n" in range_plan.diff
    assert insert_plan.evidence.start_line == 3 and insert_plan.blankline_style is not None
    assert block_plan.normalized.content_eof_newline_added
    listed = client.list_hunks("notes.md").hunks
    # in apply order: created_at_ms, then hunk_id (plans made in one ms tie on the first)
    in_order = sorted(plans, key=lambda p: (p.created_at_ms, p.hunk_id))
    assert [h.hunk_id for h in listed] == [p.hunk_id for p in in_order]
    assert not [k for k in kinds(workspace) if k == "edit_applied"]


def test_apply_writes_exactly_the_planned_diff(client: Client, notes: Path, workspace: Path):
    plan = client.prepare_file_insert("notes.md", "beta", "beta_2 = 2.5")
    applied = client.apply_file_modification(plan.hunk_id)
    assert applied.applied_diff == plan.diff
    assert notes.read_text() == TEXT.replace("beta = 2\n", "beta = 2\nbeta_2 = 2.5\n")
    assert applied.normalized.content_eof_newline_added  # "beta_2 = 2.5" had no newline
    assert applied.apply_evidence.planned_sha256 == plan.evidence.sha256
    assert not applied.apply_evidence.rebased
    assert kinds(workspace)[-2:] == ["edit_applied", "hunk_applied"]
    assert client.list_hunks().hunks == []


def test_a_file_without_final_newline_gets_one(client: Client, workspace: Path):
    (workspace / "raw.txt").write_bytes(b"one\ntwo")
    plan = client.prepare_file_append("raw.txt", "three")
    assert plan.normalized.file_eof_newline_added and plan.normalized.content_eof_newline_added
    assert plan.style_warning is not None and "glue" in plan.style_warning
    client.apply_file_modification(plan.hunk_id)
    assert (workspace / "raw.txt").read_bytes() == b"one\ntwo\nthree\n"


def test_unknown_hunk_is_refused_and_journaled(client: Client, notes: Path, workspace: Path):
    error = refused(lambda: client.apply_file_modification("hdeadbeef00"))
    assert error.code == "hunk_not_found"
    rejected = events(workspace, "hunk_rejected")
    assert rejected[-1].event.code == "hunk_not_found"


def test_only_the_owner_applies_or_discards(daemon: RunningDaemon, client: Client, notes: Path):
    plan = client.prepare_file_append("notes.md", "mine\n")
    other = daemon.client("agent-b")
    for call in (other.apply_file_modification, other.discard_hunk):
        error = refused(lambda call=call: call(plan.hunk_id))
        assert error.code == "wrong_owner" and error.details["owner"] == "agent-a"
    assert notes.read_text() == TEXT
    client.apply_file_modification(plan.hunk_id)


def test_a_hunk_applies_once(client: Client, notes: Path):
    plan = client.prepare_file_append("notes.md", "once\n")
    applied = client.apply_file_modification(plan.hunk_id)
    error = refused(lambda: client.apply_file_modification(plan.hunk_id))
    assert error.code == "hunk_already_applied"
    assert error.details["applied_seq"] == applied.version
    assert notes.read_text().count("once") == 1


def test_an_expired_hunk_is_refused(workspace: Path, notes: Path):
    configure(workspace, "[hunks]\nttl_seconds = 0.05\n")
    daemon = start(workspace)
    try:
        client = daemon.client("agent-a")
        plan = client.prepare_file_append("notes.md", "late\n")
        assert plan.expires_at_ms - plan.created_at_ms == 50
        wait_until(lambda: time.time() * 1000 > plan.expires_at_ms + 1, what="the hunk to expire")
        for _ in range(2):  # noticed once (journaled), still expired afterwards
            error = refused(lambda: client.apply_file_modification(plan.hunk_id))
            assert error.code == "hunk_expired"
        assert notes.read_text() == TEXT
        discarded = events(workspace, "hunk_discarded")
        assert [e.event.reason for e in discarded] == ["expired"]
        assert client.list_hunks().hunks == []
    finally:
        daemon.stop()


def test_replan_keeps_the_id_and_replaces_the_plan(client: Client, notes: Path):
    first = client.prepare_file_insert("notes.md", "alpha", "one\n")
    again = client.prepare_file_insert("notes.md", "gamma", "two\n", existing_hunk_id=first.hunk_id)
    assert again.hunk_id == first.hunk_id and again.replanned
    assert [h.diff for h in client.list_hunks().hunks] == [again.diff]
    client.apply_file_modification(first.hunk_id)
    assert "gamma = 3\ntwo\n" in notes.read_text() and "one" not in notes.read_text()


def test_replan_of_another_kinds_hunk_is_refused(client: Client, notes: Path):
    append = client.prepare_file_append("notes.md", "x\n")
    error = refused(
        lambda: client.prepare_file_insert(
            "notes.md", "alpha", "y\n", existing_hunk_id=append.hunk_id
        )
    )
    assert error.code == "hunk_kind_mismatch" and error.details["hunk_kind"] == "append"
    error = refused(lambda: client.prepare_file_append("notes.md", "y\n", existing_hunk_id="hnope"))
    assert error.code == "hunk_not_found"


def test_sentinel_values_mean_not_given(client: Client, notes: Path):
    plan = client.request(
        "prepare_file_insert_after",
        {
            "path": "notes.md",
            "anchor": "beta",
            "content": "x\n",
            "match": "",
            "occurrence": "",
            "existing_hunk_id": "",
        },
    )
    assert plan["evidence"]["match"] == "contains" and not plan["replanned"]
    zero = client.request(
        "prepare_file_block_replace",
        {"path": "notes.md", "old_block": "alpha", "new_block": "a", "occurrence": 0},
    )
    assert zero["evidence"]["occurrences"] == 1
    ranged = client.request(
        "prepare_file_range_edit",
        {"path": "notes.md", "range": "", "start_line": 3, "end_line": 3, "content": "a = 1\n"},
    )
    assert "-alpha = 1\n+a = 1\n" in ranged["diff"]
    read = client.request("read_file", {"path": "notes.md", "range": "", "max_lines": 0})
    assert read["content"] == TEXT
    overwrite = client.request(
        "overwrite_entire_file", {"path": "new.md", "content": "x\n", "content_format": ""}
    )
    assert overwrite["created"]


def test_insert_anchor_modes_and_occurrence(client: Client, workspace: Path):
    (workspace / "a.py").write_text("x = 1\nx = 2\nif x:\n    pass\n")
    many = refused(lambda: client.prepare_file_insert("a.py", "x = ", "y\n"))
    assert many.code == "multiple_matches" and many.details["lines"] == [1, 2]
    second = client.prepare_file_insert("a.py", "x = ", "y = 0\n", occurrence=2)
    assert second.evidence.start_line == 2
    regex = client.prepare_file_insert("a.py", r"^\s+pass$", "z\n", match="regex", after=False)
    assert regex.evidence.start_line == 4
    read = client.read_file("a.py", hashes=True)
    anchor = f"3#{read.lines[2].hash}"
    by_anchor = client.prepare_file_insert("a.py", anchor, "    y = 1\n")
    assert by_anchor.evidence.start_line == 3
    missing = refused(lambda: client.prepare_file_insert("a.py", "nothing", "y\n", match="exact"))
    assert missing.code == "no_match"
    bad = refused(lambda: client.prepare_file_insert("a.py", "(", "y\n", match="regex"))
    assert bad.code == "invalid_params"


def test_a_catastrophic_regex_is_refused_and_the_daemon_goes_on(
    daemon: RunningDaemon, workspace: Path
):
    (workspace / "a.py").write_text("x = 1\n" + "a" * 60 + "b\n" + "y = 2\n")
    # Without the time limit `(a|aa)+$` backtracks for hours on line 2, and this client's
    # own timeout is what ends the test (as a failure).
    slow = daemon.client("agent-a", timeout=20.0)
    error = refused(lambda: slow.prepare_file_insert("a.py", r"(a|aa)+$", "z\n", match="regex"))
    assert error.code == "regex_timeout" and error.details["line"] == 2
    assert 'match: "contains"' in error.message
    other = daemon.client("agent-b", timeout=5.0)
    assert other.ping().pid == daemon.proc.pid
    plan = other.prepare_file_insert("a.py", r"^y = \d$", "z = 3\n", match="regex")
    assert plan.evidence.start_line == 3


def test_discarded_hunk_is_gone(client: Client, notes: Path, workspace: Path):
    plan = client.prepare_file_append("notes.md", "x\n")
    client.discard_hunk(plan.hunk_id)
    assert refused(lambda: client.apply_file_modification(plan.hunk_id)).code == "hunk_not_found"
    assert events(workspace, "hunk_discarded")[-1].event.reason == "discarded"


def test_a_hunk_survives_a_restart(workspace: Path, notes: Path):
    daemon = start(workspace)
    before = daemon.client("agent-a")
    plan = before.prepare_file_insert("notes.md", "gamma", "delta = 4\n")
    daemon.stop()
    daemon = start(workspace)
    try:
        client = daemon.client("agent-a", credential=before.credential)  # the same identity
        assert [h.hunk_id for h in client.list_hunks().hunks] == [plan.hunk_id]
        assert [h.hunk_id for h in client.agent_status().pending_hunks] == [plan.hunk_id]
        client.apply_file_modification(plan.hunk_id)
        assert "gamma = 3\ndelta = 4\n" in notes.read_text()
    finally:
        daemon.stop()


def test_overwrite_refuses_diff_looking_content_unless_declared(client: Client, notes: Path):
    patch = "--- a/notes.md\n+++ b/notes.md\n@@ -1,1 +1,1 @@\n-# Notes\n+# Changed\n"
    error = refused(lambda: client.overwrite_entire_file("notes.md", patch))
    assert error.code == "content_looks_like_diff" and "looks like a diff" in error.message
    assert 'pass content_format: "text"' in error.suggested_action
    assert notes.read_text() == TEXT
    written = client.overwrite_entire_file("notes.md", patch, content_format="text")
    assert notes.read_text() == patch and not written.normalized.content_eof_newline_added
    client.overwrite_entire_file("notes.md", "plain")
    assert notes.read_text() == "plain\n"
