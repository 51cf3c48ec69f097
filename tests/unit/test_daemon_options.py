"""The daemon's options are one table: the daemon's parser and the CLI's `serve` /
`start` are built from it, and the daemon's own defaults are the table's."""

from __future__ import annotations

import click
import pytest

from editjournal.client.cli.daemons import daemon_argv, serve, start
from editjournal.daemon.__main__ import parse_args
from editjournal.daemon.files.workspace import DEFAULT_MAX_FILE_SIZE
from editjournal.daemon.runtime.logs import BACKUPS, LEVELS, LogSettings
from editjournal.daemon.settings.limits import DEFAULT_FILE_LINES
from editjournal.daemon.watch.intake import WatchSettings
from editjournal.schemas.daemonoptions import DAEMON_OPTIONS, LOG_BACKUPS, LOG_LEVELS

BY_FLAG = {o.flag: o for o in DAEMON_OPTIONS}


def test_the_daemons_own_defaults_are_the_tables():
    defaults = {
        "--max-file-size": DEFAULT_MAX_FILE_SIZE,
        "--max-file-lines": DEFAULT_FILE_LINES,
        "--poll-interval": WatchSettings.poll_s,
        "--watch-retry": WatchSettings.retry_s,
        "--log-level": LogSettings.level,
        "--log-max-bytes": LogSettings.max_bytes,
        "--no-watch": False,
        "--ignore": (),
        "--allow-broad": False,
    }
    assert {o.flag: o.default for o in DAEMON_OPTIONS} == defaults
    assert (LOG_BACKUPS, set(LOG_LEVELS)) == (BACKUPS, set(LEVELS))


def test_the_daemon_parses_every_option_with_the_tables_default():
    args = vars(parse_args([]))
    for option in DAEMON_OPTIONS:
        expected = [] if option.kind == "pattern" else option.default
        assert args[option.name] == expected, option.flag


@pytest.mark.parametrize("command", [serve, start], ids=["serve", "start"])
def test_serve_and_start_offer_every_option_with_the_tables_help(command: click.Command):
    offered = {p.opts[0]: p for p in command.params if p.opts[0] in BY_FLAG}
    assert set(offered) == set(BY_FLAG)
    for flag, param in offered.items():
        assert isinstance(param, click.Option) and param.help == BY_FLAG[flag].full_help


def test_what_the_cli_passes_the_daemon_parses_back():
    values = {
        "max_file_size": 16 * 1024 * 1024, "max_file_lines": 5, "no_watch": True,
        "ignore": ("*.log", "build/"), "poll_interval": 0.5, "watch_retry": 7.0,
        "log_level": "debug", "log_max_bytes": 0, "allow_broad": True,
    }  # fmt: skip
    args = vars(parse_args(daemon_argv(values)))
    for name, value in values.items():
        assert args[name] == (list(value) if isinstance(value, tuple) else value), name
