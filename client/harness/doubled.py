"""Hooks installed twice: editjournal's hooks in two scopes of one harness, each journaling.

A harness runs the matching hooks of every settings scope it reads (Claude Code: the
user's file, the project's committed one and its uncommitted local one), and drops only
identical ones (Claude Code deduplicates command hooks by their command string and http
hooks by their URL). So the project's `editjournal hook claude-code` command and a
local http hook to the daemon both run for the same Edit: the read, the check and the
claim are made twice, and the journal holds every call twice. An install cannot tell
which one the person wants (teams commit the command; the fast path is the local http
hook), so `hooks install` and `hooks status` say so, naming each scope's hook and the
command that removes one; nothing is removed behind the person's back.

Reads settings files only; never writes one, never needs a daemon.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from editjournal.client.harness.hook_settings import (
    Harness,
    Plan,
    SettingsFileError,
    find_ours,
    read_settings,
)

# (event, matcher) -> {what the harness runs: the scopes whose file holds it}
Runs = dict[tuple[str, str | None], dict[str, list[str]]]


def doubled_notes(
    harness: Harness, project: Path | None, home: Path, planned: Plan | None = None
) -> list[str]:
    """A note for each hook of ours that more than one scope runs differently (and so
    twice), with `planned` counted as written; empty when every call runs it once."""
    runs: Runs = {}
    for scope in harness.files:
        if project is None and not harness.in_home(scope):
            continue
        settings = _settings(harness, scope, project, home, planned)
        for found in find_ours(settings, harness):
            by_scope = runs.setdefault((found.event, found.matcher), {})
            by_scope.setdefault(found.command, [])
            if scope not in by_scope[found.command]:
                by_scope[found.command].append(scope)
    twice = {key: by for key, by in runs.items() if _more_than_once(by)}
    if not twice:
        return []
    return [_note(harness, twice)]


def _settings(
    harness: Harness, scope: str, project: Path | None, home: Path, planned: Plan | None
) -> Mapping[str, Any]:
    """The scope's settings as the harness will read them: `planned`'s when the plan
    writes that scope's file; a file that cannot be read counts as none of ours."""
    if planned is not None and planned.scope == scope and planned.after is not None:
        try:
            found = json.loads(planned.after)
        except ValueError:
            return {}
        return found if isinstance(found, dict) else {}
    try:
        _, settings = read_settings(harness.settings_file(scope, project, home))
    except (SettingsFileError, OSError):
        return {}
    return settings


def _more_than_once(by_hook: dict[str, list[str]]) -> bool:
    """Several different hooks of ours for one entry, from more than one scope."""
    scopes = {scope for found in by_hook.values() for scope in found}
    return len(by_hook) > 1 and len(scopes) > 1


def _note(harness: Harness, twice: Runs) -> str:
    """Which scopes run which hook, for which entries, and how to keep one."""
    held: dict[str, str] = {}
    for by_hook in twice.values():
        for hook, scopes in by_hook.items():
            for scope in scopes:
                held.setdefault(scope, hook)
    entries = ", ".join(f"{e} {m}" if m else e for e, m in twice)
    where = "; ".join(f"the {scope} scope runs {hook}" for scope, hook in held.items())
    kept = next(iter(held))  # the first in the harness's order: the project's, when there
    drop = [scope for scope in held if scope != kept]
    undo = " and ".join(
        f"`{shlex.join(['editjournal', 'hooks', 'uninstall', harness.name, '--scope', s])}`"
        for s in drop
    )
    return (
        f"{harness.title} runs the hooks of every scope, so editjournal's run twice for"
        f" {entries} ({where}): each such call is journaled twice. Keep one: {undo} leaves"
        f" the {kept} scope's"
    )
