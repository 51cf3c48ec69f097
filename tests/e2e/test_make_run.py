"""`make run`: installs only what running needs, prints what the README lists, and
Ctrl-C ends it without a make error.

The recipe runs for real on a pseudo-terminal, with this test environment's venv
as `VENV` and its install stamp taken as done (`make -o`), so nothing is installed;
Ctrl-C is the terminal's ^C, which reaches make, its shell and the daemon alike.
What each target installs is read from `make -n` on a venv that does not exist.
Serving needs the core alone: `editjournal mcp` without the MCP SDK says how to
install it (the SDK's absence is made by `sys.modules`, the one thing not real).
"""

from __future__ import annotations

import os
import pty
import select
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from editjournal.client.cli.common import program
from editjournal.client.cli.daemons import _serve_banner
from tests.e2e.cli_support import cli_env

REPO = Path(__file__).resolve().parents[2]
VENV = Path(sys.executable).parent.parent

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs make")


def dry_run(target: str, tmp_path: Path, *assignments: str) -> str:
    venv = tmp_path / "no-venv"
    done = subprocess.run(
        ["make", "-n", "-C", str(REPO), f"VENV={venv}", target, *assignments],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_make_run_installs_the_core_only_and_test_the_development_set(tmp_path: Path):
    run = dry_run("run", tmp_path)
    assert "pip install --quiet --python " in run and " -e .\n" in run, run
    assert "[mcp]" not in run and ".[dev]" not in run
    assert ".installed-run" in run
    for target in ("test", "lint"):
        assert "-e '.[dev]'" in dry_run(target, tmp_path)


def test_make_run_names_the_workspace_only_when_one_was_given(tmp_path: Path):
    """Without WORKSPACE the daemon finds it from the repository, as the commands it
    prints do, and says how it found it, not "(given by --workspace)"."""
    serve = [line for line in dry_run("run", tmp_path).splitlines() if " serve" in line]
    assert serve and "--workspace" not in serve[0], serve
    given = dry_run("run", tmp_path, "WORKSPACE=/some dir")
    assert '--workspace "/some dir" serve' in given, given


def test_the_serve_banner_prints_the_readmes_list_for_this_repository(
    monkeypatch: pytest.MonkeyPatch,
):
    """The Quick start's commands, one for one, as `make run` prints them here (the
    README writes the program as `.venv/bin/editjournal`; the banner spells it out)."""
    monkeypatch.chdir(REPO)
    monkeypatch.delenv("EDITJOURNAL_WORKSPACE", raising=False)
    printed = [
        line.strip().split("    #")[0]
        for line in _serve_banner(REPO, "git work tree")[2:]
    ]  # fmt: skip
    assert printed == [
        line.replace(".venv/bin/editjournal", program()) for line in readme_commands()
    ]


def readme_commands() -> list[str]:
    """The commands of the README's Quick start block that talks to the daemon."""
    text = (REPO / "README.md").read_text()
    start = text.index("```sh\n.venv/bin/editjournal status") + len("```sh\n")
    return text[start : text.index("```", start)].strip().splitlines()


def test_mcp_without_its_sdk_says_how_to_install_it(tmp_path: Path):
    """The core alone serves; `editjournal mcp` is the one command that needs the extra,
    and says so before starting anything."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    no_sdk = "import sys; sys.modules['mcp'] = None; from editjournal.client.entry import main"
    done = subprocess.run(
        [sys.executable, "-c", f"{no_sdk}; sys.argv[0] = 'editjournal'; sys.exit(main())",
         "mcp", "--workspace", str(workspace)],
        capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL, env=cli_env(),
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "the MCP SDK is not installed" in done.stderr
    assert "pip install 'editjournal[mcp]'" in done.stderr
    assert not (workspace / ".editjournal" / "daemon.json").exists()  # nothing started


def _read(fd: int, seen: bytearray, seconds: float) -> bool:
    """Read the terminal for `seconds`; False once it is closed."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:  # EIO: every writer of the terminal has closed it
                return False
            if not chunk:
                return False
            seen += chunk
    return True


def test_ctrl_c_ends_make_run_quietly(tmp_path: Path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    argv = ["make", "-C", str(REPO), f"VENV={VENV}", "-o", f"{VENV}/.installed-run", "run",
            f"WORKSPACE={workspace}"]  # fmt: skip
    pid, fd = pty.fork()
    if pid == 0:  # the child: SIGINT at its default, as a terminal's foreground job has it
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.execvp(argv[0], argv)
    seen = bytearray()
    try:
        deadline = time.monotonic() + 60
        serving = workspace / ".editjournal" / "daemon.json"
        while not serving.exists() and time.monotonic() < deadline:
            assert _read(fd, seen, 0.2), seen.decode(errors="replace")
        assert serving.exists(), seen.decode(errors="replace")
        os.write(fd, b"\x03")
        while _read(fd, seen, 0.5) and time.monotonic() < deadline:
            pass
    finally:
        _, status = os.waitpid(pid, 0)
        os.close(fd)
    text = seen.decode(errors="replace")
    assert f"serving {workspace.resolve()} (given by --workspace)" in text, text
    assert "stopped (SIGINT)" in text, text
    assert "make: ***" not in text and "Error 130" not in text, text
    code = os.waitstatus_to_exitcode(status)
    assert code in (0, -signal.SIGINT, 130), text  # make dies by the SIGINT it was sent
