"""`editjournal ship` and `editjournal fleet`: journals shipped into a real PostgreSQL.

The server is the tests' own (tests/pg_support.py: a real postmaster, as an
unprivileged user when the tests run as root); the workspaces have real daemons
and agents. Faults are real too: a server killed while a shipper follows, a
journal replaced under a workspace's id, a second shipper holding the lock.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import threading
from pathlib import Path
from urllib.parse import urlparse

import pytest

from editjournal.client import RequestError
from editjournal.daemon.fleet.shipper import Shipped, Shipper
from editjournal.daemon.store.identity import workspace_id
from editjournal.schemas.errors import ErrorCode, ToolError
from tests.conftest import RunningDaemon, start, wait_until
from tests.e2e.cli_support import cli
from tests.pg_support import PostgresServer


def busy_workspace(root: Path, agents: int = 2, edits: int = 3) -> RunningDaemon:
    """A workspace whose journal has reads, edits and a refusal by `agents` agents."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "app.py").write_text("".join(f"v{n} = {n}\n" for n in range(1, 31)))
    running = start(root)
    clients = [running.client(f"agent-{k}") for k in range(agents)]
    for client in clients:
        client.read_file("app.py")
    for k, client in enumerate(clients):
        for i in range(edits):
            line = 1 + k * 10 + i
            client.edit_file("app.py", f"v{line} = {line}\n", f"v{line} = {line}0\n")
    with contextlib.suppress(RequestError):  # refused when agent-1 changed it: a refusal
        clients[0].edit_file("app.py", "v11 = 11\n", "v11 = 111\n")
    return running


def db_name(url: str) -> str:
    return urlparse(url).path.lstrip("/")


def server_events(postgres: PostgresServer, url: str) -> list[tuple[str, int]]:
    with postgres.connect(db_name(url)) as conn:
        rows = conn.execute("SELECT workspace_id::text, seq FROM ej_events ORDER BY 1, 2")
        return [(ws, seq) for ws, seq in rows]


def ship(root: Path, url: str, blobs: bool = False) -> Shipped:
    shipper = Shipper(root, url, blobs=blobs)
    try:
        return shipper.ship()
    finally:
        shipper.close()


def test_shipping_is_complete_idempotent_and_resumes(workspace: Path, postgres: PostgresServer):
    url = postgres.new_database()
    running = busy_workspace(workspace)
    try:
        last = running.journal().last_seq
        first = ship(workspace, url)
        assert (first.first_seq, first.last_seq, first.events) == (1, last, last)
        assert ship(workspace, url).events == 0  # nothing twice
        running.client("agent-0").read_file("app.py")
        more = ship(workspace, url)
        assert (more.first_seq, more.events) == (last + 1, 1)
        ident = workspace_id(workspace / ".editjournal")
        assert server_events(postgres, url) == [(ident, s) for s in range(1, last + 2)]
        assert running.client().status().workspace_id == ident
    finally:
        running.stop()


def test_the_cli_ships_and_the_fleet_answers_across_workspaces(
    tmp_path: Path, postgres: PostgresServer
):
    url = postgres.new_database()
    roots = [tmp_path / f"ws{k}" for k in range(10)]  # ten workspaces, one server
    for k, root in enumerate(roots):
        running = busy_workspace(root, agents=1 + k % 3, edits=2)
        try:
            done = cli(root, "ship", "--to", url, "--blobs")
            assert done.returncode == 0, done.stderr
            assert "shipped" in done.stdout
        finally:
            running.stop()
    logged = cli(None, "fleet", "log", "--from", url, "--kind", "edit_rejected", "--json")
    assert logged.returncode == 0, logged.stderr
    refused_in = {str(r) for k, r in enumerate(roots) if k % 3}  # two agents or more
    assert {e["workspace_path"] for e in json.loads(logged.stdout)} == refused_in
    stats = json.loads(cli(None, "fleet", "stats", "--from", url, "--json").stdout)
    by = {(w["path"], a["agent"]): a for w in stats for a in w["agents"]}
    assert by[(str(roots[0]), "agent-0")]["reads"] == 1
    assert by[(str(roots[2]), "agent-0")]["rejections"] == {"anchor_stale": 1}
    assert by[(str(roots[2]), "agent-0")]["recoveries"] == 0
    glob = cli(None, "fleet", "log", "--from", url, "--path", "*.py", "--by", "agent-2", "--json")
    assert {e["agent"] for e in json.loads(glob.stdout)} == {"agent-2"}
    verified = cli(None, "fleet", "verify", "--from", url)
    assert verified.returncode == 0 and verified.stdout.count("chain intact") == 10
    old = cli(None, "fleet", "log", "--from", url, "--until", "1h", "--json")
    assert old.returncode == 0 and json.loads(old.stdout) == []  # nothing is an hour old


def test_fleet_blame_of_a_shipped_workspace_is_the_local_blame(
    workspace: Path, postgres: PostgresServer
):
    url = postgres.new_database()
    running = busy_workspace(workspace)
    try:
        ship(workspace, url, blobs=True)
        local = running.client().blame("app.py")
    finally:
        running.stop()
    ident = workspace_id(workspace / ".editjournal")
    done = cli(None, "--workspace", ident[:8], "fleet", "blame", "app.py", "--from", url, "--json")
    assert done.returncode == 0, done.stderr
    shipped = json.loads(done.stdout)
    assert [(row["text"], row["seq"], row["agent"]) for row in shipped["lines"]] == [
        (row.text, row.seq, row.agent) for row in local.lines
    ]


def test_a_rewritten_journal_is_refused_and_caught_by_the_witness_check(
    tmp_path: Path, postgres: PostgresServer
):
    url = postgres.new_database()
    original, other = tmp_path / "original", tmp_path / "other"
    busy_workspace(original, agents=2).stop()
    busy_workspace(other, agents=1, edits=5).stop()  # another history, as long or longer
    ship(original, url)
    shipped = server_events(postgres, url)
    # the original's journal replaced by another one, under the original's id
    for name in ("journal.db", "journal.db-wal", "journal.db-shm"):
        (original / ".editjournal" / name).unlink(missing_ok=True)
        if (other / ".editjournal" / name).exists():
            shutil.copy(other / ".editjournal" / name, original / ".editjournal" / name)
    with pytest.raises(ToolError) as refused:
        ship(original, url)
    assert refused.value.code is ErrorCode.JOURNAL_DIVERGED
    assert refused.value.details["seq"] >= 1
    assert server_events(postgres, url) == shipped  # the witness is untouched
    done = cli(original, "fleet", "verify", "--from", url)  # --workspace: the original
    assert done.returncode == 1 and "DIFFERS from its shipped copy" in done.stdout, done.stdout
    done = cli(original, "ship", "--to", url)
    assert done.returncode == 1 and "journal_diverged" in done.stderr
    assert "Traceback" not in done.stderr


def test_one_shipper_per_workspace_and_server(workspace: Path, postgres: PostgresServer):
    url = postgres.new_database()
    busy_workspace(workspace).stop()
    ship(workspace, url)
    ident = workspace_id(workspace / ".editjournal")
    database = db_name(url)
    with postgres.connect(database, autocommit=True) as holder:
        holder.execute("SELECT pg_advisory_lock(hashtextextended(%s, 27))", (ident,))
        with pytest.raises(ToolError) as busy:
            ship(workspace, url)
    assert busy.value.code is ErrorCode.SHIPPER_BUSY


def test_bad_urls_and_a_newer_schema_are_clear_errors(workspace: Path, postgres: PostgresServer):
    busy_workspace(workspace).stop()
    for url in (
        "postgresql://editjournal@/nodb?host=/nonexistent/dir",
        postgres.url_for("postgres").replace("editjournal@", "nobody_here@"),
        "not a url at all",
    ):
        with pytest.raises(ToolError) as failed:
            ship(workspace, url)
        assert failed.value.code is ErrorCode.FLEET_UNAVAILABLE
    done = cli(workspace, "ship", "--to", "postgresql://u:secret@/x?host=/nonexistent")
    assert done.returncode != 0 and "fleet_unavailable" in done.stderr
    assert "secret" not in done.stderr  # the password is never shown
    assert "Traceback" not in done.stderr and done.returncode == 1
    url = postgres.new_database()
    ship(workspace, url)
    database = db_name(url)
    with postgres.connect(database, autocommit=True) as conn:
        conn.execute("UPDATE ej_meta SET value = '99' WHERE key = 'schema_version'")
    with pytest.raises(ToolError) as newer:
        ship(workspace, url)
    assert newer.value.code is ErrorCode.FLEET_SCHEMA_TOO_NEW


def test_follow_rides_out_a_server_that_dies_and_loses_nothing(
    workspace: Path, own_postgres: PostgresServer
):
    url = own_postgres.new_database()
    running = busy_workspace(workspace)
    client = running.client("agent-0")
    shipper = Shipper(workspace, url)
    stop = threading.Event()
    errors: list[BaseException] = []

    def follow() -> None:
        try:
            shipper.follow(stop, poll_s=0.05)
        except BaseException as e:  # surfaced below
            errors.append(e)

    thread = threading.Thread(target=follow, daemon=True)
    thread.start()
    try:

        def shipped_up_to() -> int:
            try:
                rows = server_events(own_postgres, url)
            except Exception:  # not created yet, or the server is down
                return 0
            return rows[-1][1] if rows else 0

        wait_until(lambda: shipped_up_to() == running.journal().last_seq, what="first ship")
        own_postgres.kill()
        for _ in range(5):
            client.read_file("app.py")
        own_postgres.start()
        last = running.journal().last_seq
        wait_until(lambda: shipped_up_to() == last, timeout=30, what="shipping after restart")
        seqs = [seq for _, seq in server_events(own_postgres, url)]
        assert seqs == list(range(1, last + 1))  # nothing lost, nothing twice
    finally:
        stop.set()
        thread.join(10)
        shipper.close()
        running.stop()
    assert not errors, errors


def test_a_copied_workspace_ships_under_its_own_id_once_asked(
    tmp_path: Path, postgres: PostgresServer
):
    url = postgres.new_database()
    original, copy = tmp_path / "original", tmp_path / "copy"
    busy_workspace(original).stop()
    shutil.copytree(original, copy)
    for root, agent in ((original, "first"), (copy, "second")):
        running = start(root)
        running.client(agent).read_file("app.py")  # the two histories part here
        running.stop()
    ship(original, url)
    done = cli(copy, "ship", "--to", url)
    assert (
        done.returncode == 1
        and "journal_diverged" in done.stderr
        and "--new-identity" in done.stderr
    )
    done = cli(copy, "ship", "--to", url, "--new-identity")
    assert done.returncode == 0, done.stderr
    ids = {ws for ws, _ in server_events(postgres, url)}
    assert ids == {workspace_id(r / ".editjournal") for r in (original, copy)} and len(ids) == 2
