"""The offline audit commands on a real run's journal: replay, verify, export and
report, through the real `editjournal` command, with no daemon needed (the
tampering tests work on a copy of the journal, as an auditor would)."""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path

import msgspec
import pytest

from editjournal.daemon.audit import open_readonly
from editjournal.daemon.audit.replay import replay
from editjournal.daemon.store.hashchain import chain_hash
from editjournal.schemas.events import EVENT_ENCODER, AnyEvent
from tests.e2e.audit_support import APP, FILES, NOTES, Run, scripted_run_in
from tests.e2e.cli_support import cli


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    yield from scripted_run_in(tmp_path_factory, "offline")


def copy_journal(run: Run, dest: Path) -> Path:
    """A consistent copy of the live journal (SQLite's backup API: the WAL included)."""
    source = sqlite3.connect(f"{run.daemon.journal().path.as_uri()}?mode=ro", uri=True)
    target = sqlite3.connect(dest)
    with target:
        source.backup(target)
    source.close()
    target.close()
    return dest


def test_replay_until_every_seq_reproduces_the_files_seen_then(run: Run, tmp_path: Path):
    journal = open_readonly(run.daemon.journal().path)
    last = run.seen[-1][0]
    for seq in range(1, last + 1):
        out = tmp_path / str(seq)
        replay(journal, seq, out)
        got = {p: (out / p).read_bytes() if (out / p).exists() else None for p in FILES}
        assert got == run.expected_at(seq), f"replay --until {seq}"
        assert sorted(p.name for p in out.iterdir()) == sorted(p for p in FILES if got[p])


def test_replay_cli_writes_into_an_empty_directory_only(run: Run, tmp_path: Path):
    seq = run.seqs["outside"]
    out = cli(run.root, "replay", "--until", str(seq), "--to", str(tmp_path / "r"))
    assert out.returncode == 0, out.stderr
    assert f"as of seq {seq}" in out.stdout
    assert (tmp_path / "r" / APP).read_bytes() == run.expected_at(seq)[APP]
    again = cli(run.root, "replay", "--until", str(seq), "--to", str(tmp_path / "r"))
    assert again.returncode == 2 and "not empty" in again.stderr
    past = cli(run.root, "replay", "--until", "99999", "--to", str(tmp_path / "p"))
    assert past.returncode == 2 and "unknown_seq" in past.stderr
    gone = cli(run.root, "replay", "--to", str(tmp_path / "end"))
    assert "removed by then: notes.md" in gone.stdout and not (tmp_path / "end" / NOTES).exists()


def test_verify_passes_on_an_honest_journal_and_workspace(run: Run):
    out = cli(run.root, "verify")
    assert out.returncode == 0, out.stdout + out.stderr
    for check in ("chain", "fold", "workspace"):
        assert f"{check:<10} ok" in out.stdout
    as_json = json.loads(cli(run.root, "verify", "--json").stdout)
    assert as_json["ok"] is True and as_json["problems"] == []


def test_verify_names_the_seq_of_a_row_altered_with_the_triggers_dropped(run: Run, tmp_path: Path):
    copy = copy_journal(run, tmp_path / "journal.db")
    tampered = run.seqs["alice_edit"]
    db = sqlite3.connect(copy)
    for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall():
        db.execute(f"DROP TRIGGER {name}")
    db.execute("UPDATE events SET agent = 'mallory' WHERE seq = ?", [tampered])
    db.commit()
    db.close()
    out = cli(None, "verify", "--journal", str(copy))
    assert out.returncode == 1, out.stdout
    assert f"FAILED chain: seq {tampered}:" in out.stdout
    honest_copy = copy_journal(run, tmp_path / "honest.db")
    before = honest_copy.read_bytes()
    honest = cli(None, "verify", "--journal", str(honest_copy))
    assert honest.returncode == 0 and "workspace  skipped" in honest.stdout
    for args in (["export", "--jsonl"], ["report", "--html", str(tmp_path / "r.html")]):
        assert cli(None, *args, "--journal", str(honest_copy)).returncode == 0
    assert honest_copy.read_bytes() == before  # read-only: not a byte written
    assert sorted(p.name for p in tmp_path.iterdir()) == ["honest.db", "journal.db", "r.html"]


def test_verify_names_the_file_that_differs_from_the_journal(run: Run, tmp_path: Path):
    copy = copy_journal(run, tmp_path / "journal.db")
    workspace = tmp_path / "ws"
    shutil.copytree(run.root, workspace, ignore=shutil.ignore_patterns(".editjournal"))
    (workspace / APP).write_text("someone else's content\n")
    (workspace / NOTES).write_text("back again\n")
    out = cli(workspace, "verify", "--journal", str(copy), "--strict")
    assert out.returncode == 1, out.stdout
    last_app_write = max(line.seq for line in run.lines)
    assert f"CHANGED workspace: seq {last_app_write}: {APP}: " in out.stdout
    assert (
        f"seq {run.seqs['notes_removed']}: {NOTES}: " in out.stdout
        and "left it removed" in out.stdout
    )


def test_verify_never_reads_through_a_link_out_of_the_workspace(run: Run, tmp_path: Path):
    """A journaled file replaced by a link to a copy of its content outside the
    workspace is not that file: verify says it is missing, it does not read the copy."""
    copy = copy_journal(run, tmp_path / "journal.db")
    workspace = tmp_path / "ws"
    shutil.copytree(run.root, workspace, ignore=shutil.ignore_patterns(".editjournal"))
    outside = tmp_path / "outside.py"
    outside.write_bytes((workspace / APP).read_bytes())
    (workspace / APP).unlink()
    (workspace / APP).symlink_to(outside)
    out = cli(workspace, "verify", "--journal", str(copy), "--strict")
    assert out.returncode == 1, out.stdout
    assert f"{APP}: " in out.stdout and "is missing" in out.stdout


def test_export_round_trips_every_event_in_order(run: Run):
    out = cli(run.root, "export", "--jsonl", "--blobs")
    assert out.returncode == 0, out.stderr
    lines = [json.loads(line) for line in out.stdout.splitlines()]
    records = list(open_readonly(run.daemon.journal().path).records())
    assert [line["seq"] for line in lines] == [r.seq for r in records]
    blobs: dict[str, str] = {}
    prev = "0" * 64
    for line, record in zip(lines, records, strict=True):
        event = msgspec.convert(line["event"], AnyEvent)
        assert event == record.event and line["hash"] == record.hash
        body = EVENT_ENCODER.encode(event)  # the stored body, so the chain recomputes
        args = (prev, line["seq"], line["ts"], line["agent"], line["kind"], line["path"], body)
        assert chain_hash(*args) == line["hash"]
        prev = line["hash"]
        blobs.update({sha: b["data"] for sha, b in line["blobs"].items()})
    assert run.model_bytes().decode() in blobs.values()
    plain = cli(run.root, "export", "--jsonl")
    assert all("blobs" not in json.loads(line) for line in plain.stdout.splitlines())


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.rejected: set[str] = set()
        self.tags: set[str] = set()
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        self.tags.add(tag)
        if found.get("id"):
            self.ids.add(str(found["id"]))
            if "rej" in (found.get("class") or "").split():
                self.rejected.add(str(found["id"]))
        for key in ("href", "src"):
            if found.get(key):
                self.links.append(str(found[key]))


def test_html_report_is_self_contained_and_has_every_event(run: Run, tmp_path: Path):
    out = cli(run.root, "report", "--html", str(tmp_path / "r.html"))
    assert out.returncode == 0, out.stderr
    page = _Page()
    page.feed((tmp_path / "r.html").read_text())
    page.close()
    last = run.seen[-1][0]
    assert {f"e{seq}" for seq in range(1, last + 1)} <= page.ids
    assert page.rejected == {f"e{run.seqs['bob_rejected']}"}
    assert "script" not in page.tags and "link" not in page.tags
    assert all(link.startswith("#e") for link in page.links)
    assert "details" in page.tags and "alice" in (tmp_path / "r.html").read_text()
