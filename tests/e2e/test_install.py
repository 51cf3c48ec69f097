"""An installed editjournal owns exactly one import name, `editjournal`.

The repository keeps `daemon/`, `client/` and `schemas/` at its top level, but
a wheel must not put packages of those names into site-packages: `daemon` is
python-daemon's import name, and `client` / `schemas` are users' own. The
wheel is built for real, installed into a fresh virtual environment beside
python-daemon, and used end to end from there.

The installed package is the tested package: `make test` imports the editable
tree, which imports any subpackage whether the wheel ships it or not (a hand
list of packages once left the fleet out). So the wheel's files are compared
with the sources, the wheel is installed with every extra into a fresh venv
(not editable), and every module and entry point is run from there.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import venv
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.once import once_per_run

pytestmark = pytest.mark.slow  # started first on its worker (tests/conftest.py)

REPO = Path(__file__).resolve().parents[2]


def run(*argv: str | Path, cwd: Path, **kwargs) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [str(a) for a in argv], cwd=cwd, capture_output=True, text=True, timeout=300, **kwargs
    )
    assert done.returncode == 0, f"{argv} failed:\n{done.stdout}\n{done.stderr}"
    return done


SOURCES = ("pyproject.toml", "setup.py", "README.md", "editjournal", "daemon", "client", "schemas")
PARTS = ("editjournal", "daemon", "client", "schemas")
EXTRAS = ("mcp", "agents", "claude", "fleet")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Built from a copy of the sources: an in-tree build would leave build/ behind, and
    a stale build/lib could put files the sources no longer have into the wheel. Built
    once per run, whichever workers the module's tests land on (tests/once.py)."""
    return once_per_run(tmp_path_factory, "wheel", lambda: _built(tmp_path_factory))


def _built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    src, out = tmp_path_factory.mktemp("src"), tmp_path_factory.mktemp("wheel")
    for name in SOURCES:
        copy = shutil.copytree if (REPO / name).is_dir() else shutil.copy2
        copy(REPO / name, src / name)
    # setuptools is in the test environment already: no build isolation, no download
    run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w", out,
        src, cwd=out)  # fmt: skip
    [built] = out.glob("editjournal-*.whl")
    return built


@pytest.fixture(scope="module")
def fresh_env(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A new venv holding the wheel with every extra; the dependencies (and
    python-daemon) come from the test environment's site-packages through a path
    entry, without its editable install, and pip resolves the extras against them
    with no index: an extra that names something the test environment lacks fails."""
    return once_per_run(tmp_path_factory, "fresh-env", lambda: _fresh(wheel, tmp_path_factory))


def _fresh(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fresh") / "venv"
    venv.create(root, with_pip=False)
    python = root / "bin" / "python"
    site = Path(
        run(
            python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])", cwd=root
        ).stdout.strip()
    )
    # a plain path line: the test environment's own .pth files (its editable
    # editjournal finder among them) are not run, only its packages become importable
    (site / "zz_test_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    wanted = f"{wheel}[{','.join(EXTRAS)}]"
    run(sys.executable, "-m", "pip", "--python", python, "install", "--no-index", wanted, cwd=root)
    return root


_RUNTIME_DIRS: list[Path] = []


@pytest.fixture(scope="module", autouse=True)
def _runtime_dirs_removed() -> Iterator[None]:
    yield
    while _RUNTIME_DIRS:
        shutil.rmtree(_RUNTIME_DIRS.pop(), ignore_errors=True)


def installed_env(fresh_env: Path, tmp_path: Path) -> dict[str, str]:
    """The environment for the installed command: no test settings, its own registry,
    in a short directory of its own: the daemon's socket goes in it, and a socket's path
    may not pass 107 bytes (the test's temp path grows with pytest's run counter)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "EDITJOURNAL"))}
    _RUNTIME_DIRS.append(Path(tempfile.mkdtemp(prefix="eji")))
    env["XDG_RUNTIME_DIR"] = str(_RUNTIME_DIRS[-1])  # its own daemon registry (0700)
    return env


def source_modules() -> set[str]:
    """Every module of the sources, by the name it has once installed."""
    names = set()
    for part in PARTS:
        for file in (REPO / part).rglob("*.py"):
            dotted = ".".join(file.relative_to(REPO).with_suffix("").parts).removesuffix(
                ".__init__"
            )
            names.add(dotted if part == "editjournal" else f"editjournal.{dotted}")
    return names


def test_the_wheel_installs_one_top_level_name(wheel: Path):
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        [top_level] = [n for n in names if n.endswith(".dist-info/top_level.txt")]
        assert archive.read(top_level).decode().split() == ["editjournal"]
    tops = {name.split("/")[0] for name in names}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"editjournal"}
    for part in ("daemon", "client", "schemas"):
        assert f"editjournal/{part}/__init__.py" in names
    assert "editjournal/daemon/text/anchors.py" in names
    assert "editjournal/py.typed" in names


def test_python_daemon_and_editjournal_import_side_by_side(fresh_env: Path, tmp_path: Path):
    script = (
        "import daemon, daemon.pidfile, editjournal.daemon.runtime.server\n"
        "from editjournal import Client, __version__\n"
        "assert daemon.DaemonContext  # python-daemon's own API\n"
        "assert 'site-packages' in daemon.__file__ and 'editjournal' not in daemon.__file__\n"
        "assert editjournal.daemon.runtime.server.__file__.startswith(sys.prefix), "
        "editjournal.daemon.runtime.server.__file__\n"
        "print(__version__, Client.__name__)\n"
    )
    done = run(fresh_env / "bin" / "python", "-c", "import sys\n" + script, cwd=tmp_path)
    assert done.stdout.split() == ["0.1.0", "Client"]


def test_the_installed_command_starts_serves_and_stops_a_daemon(fresh_env: Path, tmp_path: Path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "a.txt").write_text("alpha\n")
    command = fresh_env / "bin" / "editjournal"
    env = installed_env(fresh_env, tmp_path)
    run(command, "--workspace", workspace, "start", cwd=tmp_path, env=env)
    try:
        read = run(command, "--workspace", workspace, "read", "a.txt", cwd=tmp_path, env=env)
        assert read.stdout == "alpha\n"
        pid = int((workspace / ".editjournal" / "daemon.pid").read_text())
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        assert argv[0] == str(fresh_env / "bin" / "python").encode()  # the installed copy
    finally:
        run(command, "--workspace", workspace, "stop", cwd=tmp_path, env=env)


def test_the_wheel_ships_every_module_of_the_sources(wheel: Path):
    with zipfile.ZipFile(wheel) as archive:
        shipped = {
            name.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
            for name in archive.namelist()
            if name.endswith(".py")
        }
    assert source_modules() - shipped == set()
    assert "editjournal.daemon.fleet.shipper" in shipped


def test_every_installed_module_imports_with_its_extras(fresh_env: Path, tmp_path: Path):
    """Every module the venv holds, the extras' adapters among them (MCP server, Agents
    SDK editor, Claude SDK hooks, the fleet), imports from the installed copy."""
    script = (
        "import importlib, pkgutil, editjournal\n"
        "assert editjournal.__file__.startswith(sys.prefix), editjournal.__file__\n"
        "names = [m.name for m in pkgutil.walk_packages(editjournal.__path__, 'editjournal.')\n"
        "         if not m.name.endswith('.__main__')]\n"
        "for name in names:\n"
        "    importlib.import_module(name)\n"
        "print('\\n'.join(names))\n"
    )
    done = run(fresh_env / "bin" / "python", "-c", "import sys\n" + script, cwd=tmp_path)
    imported = {"editjournal", *done.stdout.split()}
    expected = {name for name in source_modules() if not name.endswith(".__main__")}
    assert imported == expected


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["ship", "--help"],
        ["fleet", "--help"],
        ["mcp", "--help"],
        ["hook", "--help"],
        ["hooks", "--help"],
        ["report", "--help"],
    ],
    ids=lambda argv: argv[0],
)
def test_every_installed_command_answers(fresh_env: Path, tmp_path: Path, argv: list[str]):
    done = run(
        fresh_env / "bin" / "editjournal",
        *argv,
        cwd=tmp_path,
        env=installed_env(fresh_env, tmp_path),
    )
    assert "Usage:" in done.stdout


def test_the_installed_ship_reaches_the_fleet_code(fresh_env: Path, tmp_path: Path):
    """`ship` to a server that is not there: the fleet's own refusal (psycopg imported,
    the connection refused), not "the fleet needs psycopg"."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "a.txt").write_text("alpha\n")
    command, env = fresh_env / "bin" / "editjournal", installed_env(fresh_env, tmp_path)
    run(command, "--workspace", workspace, "read", "a.txt", cwd=tmp_path, env=env)  # a journal
    run(command, "--workspace", workspace, "stop", cwd=tmp_path, env=env)
    done = subprocess.run(
        [fresh_env / "bin" / "editjournal", "--workspace", workspace, "--json", "ship",
         "--to", "postgresql://nobody@127.0.0.1:9/none?connect_timeout=2"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
        env=installed_env(fresh_env, tmp_path),
    )  # fmt: skip
    assert done.returncode != 0
    assert "fleet_unavailable" in done.stdout + done.stderr, done.stdout + done.stderr
    assert "needs psycopg" not in done.stdout + done.stderr


def test_the_installed_daemon_module_runs(fresh_env: Path, tmp_path: Path):
    done = run(
        fresh_env / "bin" / "python", "-I", "-m", "editjournal.daemon", "--help", cwd=tmp_path
    )
    assert "usage" in done.stdout.lower()


def test_the_installed_cli_module_runs(fresh_env: Path, tmp_path: Path):
    """`python -m editjournal.client.cli`, the way the tests and a hook installed by module
    run the command (the `cli/` room's `__main__`)."""
    done = run(fresh_env / "bin" / "python", "-I", "-m", "editjournal.client.cli", "--help",
               cwd=tmp_path)  # fmt: skip
    assert "Usage:" in done.stdout
