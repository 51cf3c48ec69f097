"""No command takes an option twice: a command's own option must not shadow a global
one (`fleet log --agent` once did, and click quietly let one of them win). The
commands' modules load lazily, each when its command is asked for."""

from __future__ import annotations

import importlib
import subprocess
import sys

import click

from editjournal.client.cli.app import COMMAND_MODULES, cli


def commands(group: click.Group, prefix: str = "") -> list[tuple[str, click.Command]]:
    found = []
    for name, command in group.commands.items():
        found.append((f"{prefix}{name}", command))
        if isinstance(command, click.Group):
            found.extend(commands(command, f"{prefix}{name} "))
    return found


def test_every_option_of_every_command_is_its_own():
    for name, command in commands(cli):
        flags = [flag for param in command.params for flag in getattr(param, "opts", [])]
        twice = sorted({flag for flag in flags if flags.count(flag) > 1})
        assert not twice, f"editjournal {name} takes {', '.join(twice)} twice"


def test_the_lazy_command_table_names_every_hand_written_command_where_it_lives():
    """`COMMAND_MODULES` says which module to import for a command; a command missing
    there would be looked for among the generated ones and not found."""
    for module, names in COMMAND_MODULES.items():
        defined = importlib.import_module(f"editjournal.client.cli.{module}").COMMANDS
        assert sorted(c.name for c in defined) == sorted(names), module
    generated = {
        c.name for c in importlib.import_module("editjournal.client.cli.generated").COMMANDS
    }
    hand_written = {name for names in COMMAND_MODULES.values() for name in names}
    assert not generated & hand_written
    assert set(cli.commands) == generated | hand_written | {"completion"}


def test_a_command_loads_only_its_own_module():
    script = (
        "import sys\n"
        "from editjournal.client.cli.app import cli\n"
        "assert cli.commands.get('read') is not None\n"
        "assert cli.commands.get('no-such-command') is None\n"
        "room = 'editjournal.client.cli.'\n"
        "loaded = {m.removeprefix(room) for m in sys.modules if m.startswith(room)}\n"
        "print(' '.join(sorted(loaded & {'tools', 'audit', 'fleet', 'hooks', 'daemons', 'mcp'})))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert done.stdout.split() == ["tools"]
