"""The README's examples run, and every CLI command and method is documented (in the
README or a page of docs/ it links to): the docs cannot lie."""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import sys
from pathlib import Path

from editjournal.client.cli.app import cli
from editjournal.client.library.connection import read_endpoint
from tests.conftest import pid_alive, start, wait_until

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"


def documentation() -> str:
    """The README and every page of docs/ (the reference the README leads to)."""
    pages = sorted((REPO / "docs").glob("*.md"))
    return "\n".join(p.read_text() for p in [README, *pages])


BIN = Path(sys.executable).parent


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README.read_text(), flags=re.S)


def stop_daemon(root: Path) -> None:
    endpoint = read_endpoint(root)
    if endpoint and pid_alive(endpoint.pid):
        os.kill(endpoint.pid, signal.SIGTERM)
        wait_until(lambda: not pid_alive(endpoint.pid), what="the daemon to exit")


def test_quick_start_names_the_two_commands():
    quick = blocks("sh")[0]
    assert "make run" in quick and "make test" in quick


def test_shell_examples_run_while_a_daemon_serves(workspace: Path):
    (workspace / "README.md").write_text(README.read_text())
    serving = start(workspace)  # what `make run` does in the other terminal
    try:
        for command in filter(str.strip, blocks("sh")[1].splitlines()):
            command = command.replace(".venv/bin/", f"{BIN}/")
            done = subprocess.run(
                command, shell=True, cwd=workspace, capture_output=True, text=True, timeout=60
            )
            assert done.returncode == 0, f"{command}: {done.stderr}"
    finally:
        serving.stop()


def test_python_example_runs(workspace: Path):
    (workspace / "README.md").write_text(README.read_text())
    try:
        done = subprocess.run(
            [sys.executable, "-c", blocks("python")[0]],
            cwd=workspace,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        assert "#" in done.stdout  # anchored rows were printed
        assert "1 operation applied" in done.stdout
        assert (workspace / "demo.txt").read_text() == "def greet():\n    return 'hello'\n"
    finally:
        stop_daemon(workspace)


def test_every_cli_command_is_documented():
    text = documentation()
    for name in cli.commands:
        assert re.search(rf"`editjournal {name}\b|/ `{name}\b", text), f"{name} not in README"


def test_every_method_is_documented():
    from editjournal.schemas.tools import TOOL_PARAMS

    text = documentation()
    for method in TOOL_PARAMS:
        assert f"`{method}`" in text, f"{method} not in README"


def test_every_docs_page_is_linked_from_the_readme_and_every_link_resolves():
    text = README.read_text()
    for page in (REPO / "docs").glob("*.md"):
        assert f"](docs/{page.name}" in text, f"docs/{page.name} is not linked from README"
    for source in [README, *(REPO / "docs").glob("*.md")]:
        for target in re.findall(r"\]\(((?:docs/)?[\w-]+\.md)(?:#[\w-]*)?\)", source.read_text()):
            base = REPO if source == README else source.parent
            assert (base / target).exists() or (REPO / target).exists(), f"{source.name}: {target}"


def test_quoting_of_examples_is_shell_safe():
    for command in blocks("sh")[1].splitlines():
        if command.strip():
            shlex.split(command)
