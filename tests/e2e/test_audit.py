"""The audit methods through a real daemon: blame, read_file(at_version), show,
history, stats and the log filters, against the scripted run of `audit_support`
(three agents and an outside writer), whose expectations the script computed itself."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from editjournal.client import RequestError
from editjournal.daemon.audit import open_readonly
from editjournal.daemon.audit.replay import replay
from tests.e2e.audit_support import APP, NOTES, Run, scripted_run_in
from tests.e2e.cli_support import cli


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    yield from scripted_run_in(tmp_path_factory, "audit")


def test_blame_attributes_every_line_to_the_agent_or_outside_writer_that_wrote_it(run: Run):
    client = run.daemon.client("auditor")
    result = client.blame(APP)
    assert (run.root / APP).read_bytes() == run.model_bytes()
    got = [(b.text, b.agent, b.seq) for b in result.lines]
    assert got == [(line.text, line.owner, line.seq) for line in run.lines]
    assert {b.agent for b in result.lines} == {"alice", "bob", "carol", "outside"}
    assert [b.line for b in result.lines] == list(range(1, len(run.lines) + 1))


def test_blame_at_a_version_shows_the_file_as_it_was(run: Run):
    client = run.daemon.client("auditor")
    before_outside = run.seqs["outside"] - 1
    texts = [b.text for b in client.blame(APP, at_version=before_outside).lines]
    assert "outside: three" not in texts and "line 3: original" in texts


def test_read_file_at_every_version_agrees_with_replay(run: Run, tmp_path: Path):
    client = run.daemon.client("auditor")
    journal = open_readonly(run.daemon.journal().path)
    last = run.seen[-1][0]
    checked = 0
    for seq in range(1, last + 1):
        out = tmp_path / f"at-{seq}"
        replay(journal, seq, out)
        replayed = out / APP
        if not replayed.exists():
            with pytest.raises(RequestError) as e:
                client.read_file(APP, at_version=seq)
            assert e.value.code in {"file_not_in_journal", "version_not_stored"}
            continue
        result = client.read_file(APP, at_version=seq)
        assert result.content.encode() == replayed.read_bytes(), seq
        checked += 1
    assert checked >= 10
    # an audit read records nothing and moves no snapshot
    assert client.status().last_seq == last


def test_read_file_at_version_past_the_end_is_unknown_seq(run: Run):
    client = run.daemon.client("auditor")
    with pytest.raises(RequestError) as e:
        client.read_file(APP, at_version=10_000)
    assert e.value.code == "unknown_seq"
    with pytest.raises(RequestError) as e:
        client.read_file(APP, at_version=3, since_version=2)
    assert e.value.code == "invalid_params"


def test_show_gives_the_event_with_its_diff(run: Run):
    client = run.daemon.client("auditor")
    shown = client.show(run.seqs["alice_edit"])
    assert shown.event.agent == "alice" and shown.event.kind == "edit_applied"
    diff = shown.event.diff or ""
    assert "-line 2: original\n+alice: two\n" in diff and "+alice: 4b\n" in diff
    assert diff.startswith(f"--- a/{APP}\n+++ b/{APP}\n")
    outside = client.show(run.seqs["outside"]).event
    assert outside.kind == "outside_change" and "+outside: tail" in (outside.diff or "")
    with pytest.raises(RequestError) as e:
        client.show(10_000)
    assert e.value.code == "unknown_seq"


def test_history_lists_every_version_with_its_author(run: Run):
    client = run.daemon.client("auditor")
    versions = client.history(APP).versions
    authors = [v.author for v in versions]
    assert authors == ["outside", "alice", "bob", "outside", "carol", "alice", "bob", "carol"]
    alice_edit = next(v for v in versions if v.seq == run.seqs["alice_edit"])
    assert (alice_edit.added, alice_edit.removed) == (2, 1)
    gone = client.history(NOTES).versions[-1]
    assert gone.sha256 is None and gone.seq == run.seqs["notes_removed"]
    with pytest.raises(RequestError) as e:
        client.history("never-seen.txt")
    assert e.value.code == "file_not_in_journal"


def test_stats_count_reads_writes_rejections_rebases_and_recovery(run: Run):
    client = run.daemon.client("auditor")
    by_agent = {s.agent: s for s in client.stats().agents}
    alice, bob, carol = by_agent["alice"], by_agent["bob"], by_agent["carol"]
    assert (alice.applied_writes, alice.rebased_edits, alice.rejected_writes) == (2, 1, 0)
    assert bob.rejections == {"anchor_stale": 1} and bob.recoveries == 1
    recovery = run.seqs["bob_recovered"] - run.seqs["bob_rejected"]
    assert bob.mean_recovery_events == recovery and bob.mean_recovery_attempts == 1
    assert bob.unrecovered == 0 and bob.rebased_edits == 0
    assert carol.rebased_edits == 1  # its append landed on others' later changes
    assert [s.agent for s in client.stats("bob").agents] == ["bob"]


def test_log_filters_until_seq_since_kind_and_patch(run: Run):
    client = run.daemon.client("auditor")
    window = client.log(after_seq=2, until_seq=6, limit=100).events
    assert [e.seq for e in window] == [3, 4, 5, 6]
    every = client.log(limit=1000).events
    middle = every[len(every) // 2]
    since = client.log(since_ts=middle.ts, limit=1000).events
    assert since and all(e.ts >= middle.ts for e in since) and since[-1].seq == every[-1].seq
    assert [e for e in every if e.ts >= middle.ts] == since
    patched = client.log(kind="edit_applied", patch=True, limit=1000).events
    assert patched and all(e.diff and e.diff.startswith("--- ") for e in patched)
    assert all(e.diff is None for e in client.log(limit=5).events)


def test_log_cli_takes_until_seq_since_and_p(run: Run):
    out = cli(run.root, "log", "--until-seq", "4", "--since", "1h", "-p", "--limit", "100")
    assert out.returncode == 0, out.stderr
    seqs = [int(line.split()[0]) for line in out.stdout.splitlines() if line[:6].strip().isdigit()]
    assert seqs == [1, 2, 3, 4]
    assert "+alice: two" in out.stdout and "\x1b[" not in out.stdout  # no colour in a pipe
    bad = cli(run.root, "log", "--since", "ten minutes")
    assert bad.returncode == 2 and "is not a duration" in bad.stderr
    as_json = cli(run.root, "log", "--kind", "edit_rejected", "--json")
    [rejection] = json.loads(as_json.stdout)["events"]
    assert rejection["agent"] == "bob" and rejection["body"]["code"] == "anchor_stale"


def test_blame_and_show_cli_render_for_people(run: Run):
    blame = cli(run.root, "blame", APP)
    assert blame.returncode == 0, blame.stderr
    rows = blame.stdout.splitlines()
    assert len(rows) == len(run.lines)
    assert rows[0].split()[1] == "outside" and "carol: 1b" in rows[1]
    shown = cli(run.root, "show", str(run.seqs["alice_edit"]))
    assert shown.returncode == 0 and "+alice: two" in shown.stdout
    history = cli(run.root, "history", APP)
    assert history.returncode == 0 and "+2/-1" in history.stdout
    stats = cli(run.root, "stats", "bob")
    assert stats.returncode == 0 and "anchor_stale: 1" in stats.stdout


def test_show_is_coloured_on_a_terminal(run: Run):
    from tests.e2e.cli_support import CLI, cli_env, run_on_terminal

    code, shown = run_on_terminal(
        [*CLI, "--workspace", str(run.root), "show", str(run.seqs["alice_edit"])], cli_env()
    )
    assert code == 0 and "\x1b[32m+alice: two" in shown
