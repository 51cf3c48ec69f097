"""No command takes an option twice: a command's own option must not shadow a global
one (`fleet log --agent` once did, and click quietly let one of them win)."""

from __future__ import annotations

import click

from editjournal.client.cli.app import cli


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
