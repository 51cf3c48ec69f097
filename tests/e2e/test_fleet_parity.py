"""The fleet answers what the workspace answers (issue 34).

`fleet blame` and `fleet stats` are the local folds run over the shipped copy, so for
one journal they must say what `blame` and `stats` say in the workspace, field by
field. What blame folds must be on the server (`ship --blobs`, which also backfills
the contents of events shipped without them) or `fleet blame` refuses
`blobs_not_shipped`. The witness check recomputes every local row's hash: a row
rewritten behind the triggers' back, its old hash left beside it, is named by seq.

Everything is real: daemons and agents, the CLI as a process, a PostgreSQL server
(tests/pg_support.py), the journal's SQLite file tampered with by hand.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from editjournal.client import RequestError
from editjournal.daemon.fleet.shipper import Shipped, Shipper
from editjournal.daemon.store.identity import workspace_id
from editjournal.schemas.endpoint import JOURNAL_FILE, STATE_DIR_NAME
from tests.conftest import RunningDaemon, start, wait_until
from tests.e2e.cli_support import cli
from tests.e2e.test_ship import busy_workspace, db_name
from tests.pg_support import PostgresServer

APP = "".join(f"v{n} = {n}\n" for n in range(1, 31))
NOTES = "# Notes\n\nfirst\nsecond\nthird\n"


def outside_changes(running: RunningDaemon, path: str) -> int:
    journal = running.journal()
    try:
        return sum(1 for _ in journal.records(path=path, kind="outside_change"))
    finally:
        journal.close()


def lived_in_workspace(root: Path) -> RunningDaemon:
    """A journal with all a fold must get right: several agents on one file, an outside
    change, refusals and their recovery, an agent that only took a checkpoint, a write
    over a file nobody had read."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "app.py").write_text(APP)
    (root / "notes.md").write_text(NOTES)
    running = start(root)
    alice, bob, carol, dave = (running.client(a) for a in ("alice", "bob", "carol", "dave"))
    for agent in (alice, bob):
        agent.read_file("app.py")
    alice.edit_file("app.py", "v1 = 1\n", "v1 = 10\n")
    alice.edit_file("app.py", "v2 = 2\n", "v2 = 20\n")
    bob.edit_file("app.py", "v11 = 11\n", "v11 = 110\n")
    bob.edit_file("app.py", "v12 = 12\n", "v12 = 120\n")
    edited = (root / "app.py").read_text().replace("v20 = 20\n", "v20 = 'outside'\nextra = 1\n")
    (root / "app.py").write_text(edited)  # an editor's save: the daemon's watcher sees it
    wait_until(lambda: outside_changes(running, "app.py") == 1, what="the outside change")
    for _ in range(2):  # a streak of two refusals: one recovery of two attempts
        with pytest.raises(RequestError):
            alice.edit_file("app.py", "v11 = 11\n", "v11 = 111\n")
    alice.read_file("app.py")
    alice.edit_file("app.py", "v11 = 110\n", "v11 = 111\n")
    with pytest.raises(RequestError):  # never followed by a write: unrecovered
        bob.edit_file("app.py", "v2 = 2\n", "v2 = 22\n")
    carol.checkpoint_create("carol-was-here")  # nothing but a checkpoint
    dave.edit_file("notes.md", "second\n", "second, by dave\n")  # never read first
    return running


def first_seq(running: RunningDaemon, kind: str) -> int:
    journal = running.journal()
    try:
        return next(r.seq for r in journal.records(kind=kind))
    finally:
        journal.close()


def ship(root: Path, url: str, blobs: bool = False) -> Shipped:
    shipper = Shipper(root, url, blobs=blobs)
    try:
        return shipper.ship()
    finally:
        shipper.close()


def as_json(done: Any) -> Any:
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def fleet(url: str, ident: str, *args: str, json_out: bool = True) -> Any:
    shape = ["--json"] if json_out else []
    return cli(None, "--workspace", ident, "fleet", *args, "--from", url, *shape)


def refused_blame(url: str, ident: str, path: str) -> str:
    """`fleet blame PATH`'s refusal as a person sees it (exit 1, on stderr)."""
    done = fleet(url, ident, "blame", path, json_out=False)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert done.stdout == ""
    return str(done.stderr)


def assert_same_fields(shipped: dict[str, Any], local: dict[str, Any], what: str) -> None:
    assert set(shipped) == set(local), what
    for name, value in local.items():
        assert shipped[name] == value, f"{what}: {name} is {shipped[name]!r} on the server"


def test_fleet_blame_and_stats_are_the_local_ones_field_by_field(
    workspace: Path, postgres: PostgresServer
):
    url = postgres.new_database()
    running = lived_in_workspace(workspace)
    try:
        as_json(cli(workspace, "ship", "--to", url, "--blobs", "--json"))
        local_stats = as_json(cli(workspace, "stats", "--json"))
        local_blames = {
            p: as_json(cli(workspace, "blame", p, "--json")) for p in ("app.py", "notes.md")
        }
        before = str(first_seq(running, "outside_change") - 1)  # bob's and alice's only
        local_then = as_json(cli(workspace, "blame", "app.py", "--at-version", before, "--json"))
    finally:
        running.stop()
    ident = workspace_id(workspace / STATE_DIR_NAME)

    (shipped,) = as_json(fleet(url, ident, "stats"))
    assert shipped["last_seq"] == local_stats["last_seq"]  # nothing recorded in between
    assert [a["agent"] for a in shipped["agents"]] == ["alice", "bob", "carol", "dave"]
    for theirs, ours in zip(shipped["agents"], local_stats["agents"], strict=True):
        assert_same_fields(theirs, ours, f"stats of {ours['agent']}")
    alice = next(a for a in shipped["agents"] if a["agent"] == "alice")
    assert (alice["recoveries"], alice["mean_recovery_attempts"]) == (1, 2.0)

    for path, local in local_blames.items():
        blamed = as_json(fleet(url, ident, "blame", path))
        assert_same_fields({k: v for k, v in blamed.items() if k != "lines"},
                           {k: v for k, v in local.items() if k != "lines"}, path)  # fmt: skip
        assert len(blamed["lines"]) == len(local["lines"])
        for theirs, ours in zip(blamed["lines"], local["lines"], strict=True):
            assert_same_fields(theirs, ours, f"{path} line {ours['line']}")
    authors = {line["agent"] for line in local_blames["app.py"]["lines"]}
    assert authors == {"alice", "bob", "outside"}
    assert as_json(fleet(url, ident, "blame", "app.py", "--at-version", before)) == local_then
    shown = fleet(url, ident, "stats", json_out=False)
    assert shown.returncode == 0 and f"workspace {ident[:8]}" in shown.stdout
    assert all(name in shown.stdout for name in ("alice", "bob", "carol", "dave"))


def blobs_held(postgres: PostgresServer, url: str) -> int:
    with postgres.connect(db_name(url)) as conn:
        row = conn.execute("SELECT count(*) FROM ej_blobs").fetchone()
        assert row is not None
        return int(row[0])


def test_fleet_blame_refuses_without_blobs_until_ship_blobs_backfills_them(
    workspace: Path, postgres: PostgresServer
):
    url = postgres.new_database()
    running = busy_workspace(workspace)
    agent = running.client("agent-0")
    ident = workspace_id(workspace / STATE_DIR_NAME)
    try:
        ship(workspace, url)  # no contents
        refused = refused_blame(url, ident, "app.py")
        assert "blobs_not_shipped" in refused and "editjournal ship --blobs" in refused
        assert blobs_held(postgres, url) == 0

        agent.read_file("app.py")
        agent.edit_file("app.py", "v30 = 30\n", "v30 = 300\n")
        done = ship(workspace, url, blobs=True)
        assert done.events == 2 and done.backfilled >= 2 and done.blobs == 1, done
        held = blobs_held(postgres, url)
        local = running.client().blame("app.py")
        assert as_json(fleet(url, ident, "blame", "app.py")) == json.loads(
            cli(workspace, "blame", "app.py", "--json").stdout
        )
        assert {line.agent for line in local.lines} == {"agent-0", "agent-1", "outside"}

        again = ship(workspace, url, blobs=True)  # idempotent: nothing twice
        assert (again.events, again.blobs, again.backfilled) == (0, 0, 0)
        assert blobs_held(postgres, url) == held

        (workspace / "other.py").write_text("a = 1\n")
        agent.read_file("other.py")
        agent.edit_file("other.py", "a = 1\n", "a = 2\n")
        ship(workspace, url)  # without contents again: only other.py lacks its own
        assert fleet(url, ident, "blame", "app.py").returncode == 0
        assert "blobs_not_shipped" in refused_blame(url, ident, "other.py")
    finally:
        running.stop()


def test_a_copy_shipped_before_schema_2_is_migrated_and_its_contents_confirmed(
    workspace: Path, postgres: PostgresServer
):
    url = postgres.new_database()
    busy_workspace(workspace).stop()
    ship(workspace, url, blobs=True)
    with postgres.connect(db_name(url), autocommit=True) as conn:  # back to schema 1
        conn.execute("ALTER TABLE ej_workspaces DROP COLUMN blobs_seq")
        conn.execute("UPDATE ej_meta SET value = '1' WHERE key = 'schema_version'")
        conn.execute("DELETE FROM ej_blobs WHERE sha256 IN (SELECT sha256 FROM ej_blobs LIMIT 1)")
    ident = workspace_id(workspace / STATE_DIR_NAME)
    assert "blobs_not_shipped" in refused_blame(url, ident, "app.py")  # not known to be there
    done = ship(workspace, url, blobs=True)
    assert (done.events, done.backfilled) == (0, 1)  # the one content the server lacked
    with postgres.connect(db_name(url)) as conn:
        row = conn.execute("SELECT value FROM ej_meta WHERE key = 'schema_version'").fetchone()
        assert row == ("2",)
    assert fleet(url, ident, "blame", "app.py").returncode == 0


def rewrite_agent(root: Path, seq: int, agent: str) -> None:
    """What an attacker with the user's rights can do: drop the trigger, change a row,
    leave its stored hash as it was."""
    with sqlite3.connect(root / STATE_DIR_NAME / JOURNAL_FILE) as db:
        db.execute("DROP TRIGGER events_no_update")
        db.execute("UPDATE events SET agent = ? WHERE seq = ?", (agent, seq))
    db.close()


def test_the_witness_check_recomputes_hashes_and_names_the_rewritten_seq(
    workspace: Path, postgres: PostgresServer
):
    url = postgres.new_database()
    running = busy_workspace(workspace)
    journal = running.journal()
    try:
        edits = [r.seq for r in journal.records(kind="edit_applied", agent="agent-1")]
    finally:
        journal.close()
    running.stop()
    ship(workspace, url)
    agrees = cli(workspace, "fleet", "verify", "--from", url)
    assert agrees.returncode == 0 and "agrees with its shipped copy" in agrees.stdout

    rewritten = edits[1]
    rewrite_agent(workspace, rewritten, "agent-0")  # agent-1's edit claimed by agent-0
    done = cli(workspace, "fleet", "verify", "--from", url)
    assert done.returncode == 1, done.stdout
    assert f"DIFFERS from its shipped copy at seq {rewritten}:" in done.stdout
    assert "hash does not match the event's contents" in done.stdout
    report = json.loads(cli(workspace, "fleet", "verify", "--from", url, "--json").stdout)
    assert report["witness"]["first_difference"] == rewritten
    assert [c["ok"] for c in report["chains"]] == [True]  # the server's copy is whole
