"""The command explains itself: --version, help with examples, methods, operations,
global options anywhere, shell completion."""

from __future__ import annotations

import json
import os
import subprocess
import typing
from importlib.metadata import version
from pathlib import Path

import pytest

from editjournal.client.cli.app import cli as group
from editjournal.client.tools.guidance import DESCRIPTIONS
from editjournal.schemas.tools import TOOL_PARAMS, Operation
from tests.conftest import RunningDaemon
from tests.e2e.cli_support import BIN, CLI, TIMEOUT, cli, cli_env


def test_version_names_the_installed_distribution():
    done = cli(None, "--version")
    assert done.returncode == 0
    assert done.stdout.strip() == f"editjournal {version('editjournal')}"


@pytest.mark.parametrize("name", sorted(group.commands))
def test_every_command_has_a_description_and_an_example(name: str):
    done = cli(None, name, "--help")
    assert done.returncode == 0, done.stderr
    usage, description = done.stdout.split("\n\n")[:2]
    assert usage.startswith(f"Usage: editjournal {name}")
    assert len(description.strip()) > 10
    assert "Example" in done.stdout
    assert "--workspace" in done.stdout and "--json" in done.stdout  # global options too


def test_call_help_lists_every_method_with_a_description():
    text = cli(None, "call", "--help").stdout
    rows = {line.split()[0]: line for line in text.splitlines() if line.startswith("    ")}
    assert set(TOOL_PARAMS) <= set(rows)
    described = {m for m, row in rows.items() if m in TOOL_PARAMS and len(row.split()) > 2}
    assert {"ping", "status", "log", "read_many_files", "agent_status"} <= described
    for method, description in DESCRIPTIONS.items():  # the agents' guidance, first sentence
        assert description.split(",")[0].split(".")[0] in rows[method]


def test_edit_help_shows_the_operation_format():
    text = cli(None, "edit", "--help").stdout
    for op in typing.get_args(Operation):
        assert f"  {op.__struct_config__.tag}  " in text
    assert "replace_range  start_hash, end_hash, content" in text
    assert '[{"op": "replace_line", "hash": "a1b2c3", "content": ' in text


def test_global_options_work_before_or_after_the_command(daemon: RunningDaemon):
    (daemon.root / "a.txt").write_text("alpha\n")
    env = cli_env(EDITJOURNAL_AGENT="from-env")
    after = cli(None, "status", "--workspace", str(daemon.root), "--json", env=env)
    assert after.returncode == 0, after.stderr
    assert json.loads(after.stdout)["pid"] == daemon.proc.pid
    before = cli(None, "--json", "--workspace", str(daemon.root), "status", env=env)
    assert json.loads(before.stdout)["pid"] == daemon.proc.pid
    # the command's own --agent beats the group's, which beats the environment
    args = ("--workspace", str(daemon.root), "--agent", "group", "read", "a.txt")
    assert cli(None, *args, "--agent", "command", env=env).returncode == 0
    assert cli(None, *args, env=env).returncode == 0
    assert cli(None, "read", "a.txt", "--workspace", str(daemon.root), env=env).returncode == 0
    log = json.loads(cli(daemon.root, "log", "--kind", "file_read", "--json", env=env).stdout)
    assert [e["agent"] for e in log["events"]] == ["command", "group", "from-env"]


def test_log_filters_by_kind_and_after_seq(daemon: RunningDaemon):
    (daemon.root / "k.txt").write_text("kappa\n")
    first = json.loads(cli(daemon.root, "read", "k.txt", "--json").stdout)["version"]
    cli(daemon.root, "read", "k.txt")
    log = json.loads(
        cli(daemon.root, "log", "--kind", "file_read", "--after-seq", str(first), "--json").stdout
    )
    assert [(e["kind"], e["seq"] > first) for e in log["events"]] == [("file_read", True)]
    typo = cli(daemon.root, "log", "--kind", "file_raed")
    assert typo.returncode == 2 and "file_read" in typo.stderr  # the choices are named


def test_completion_scripts_are_printed_for_each_shell():
    for shell, marker in (
        ("bash", "complete -o"),
        ("zsh", "compdef"),
        ("fish", "--command editjournal"),
    ):
        done = cli(None, "completion", shell)
        assert done.returncode == 0, done.stderr
        assert "_EDITJOURNAL_COMPLETE" in done.stdout and marker in done.stdout


def test_bash_completion_completes_commands_and_methods(tmp_path: Path):
    """The printed bash script, sourced by a real bash, asks the real command."""
    script = tmp_path / "editjournal.bash"
    script.write_text(cli(None, "completion", "bash").stdout)
    probe = f"""
source {script}
complete_words() {{ COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMPREPLY=();
  _editjournal_completion editjournal; echo "${{COMPREPLY[*]}}"; }}
complete_words editjournal st
complete_words editjournal call read_
"""
    env = cli_env(PATH=f"{BIN}{os.pathsep}{os.environ['PATH']}")
    done = subprocess.run(
        ["bash", "-c", probe], capture_output=True, text=True, timeout=TIMEOUT, env=env
    )
    assert done.returncode == 0, done.stderr
    commands, methods = done.stdout.splitlines()
    assert commands.split() == ["start", "stats", "status", "stop"]
    assert methods.split() == ["read_file", "read_many_files"]


def test_the_module_and_the_script_are_one_command():
    script = subprocess.run(
        [str(BIN / "editjournal"), "--help"], capture_output=True, text=True, timeout=TIMEOUT
    )
    module = subprocess.run([*CLI, "--help"], capture_output=True, text=True, timeout=TIMEOUT)
    assert script.returncode == module.returncode == 0
    assert script.stdout == module.stdout
