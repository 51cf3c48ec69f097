"""editjournal's hooks in a harness's settings file: what they are, where, and the edit.

A harness is data (`HARNESSES`): where its settings file lives per scope, which
(event, matcher) entries call `editjournal hook HARNESS`, and their timeout: Claude
Code, Gemini CLI and Codex so far; a harness whose settings keep hooks the same way
(an object of events, each a list of `{"matcher", "hooks": [...]}` entries) is one
more row.

The functions on a settings object are pure: `install` and `uninstall` return a new
object and what they did (their argument is never changed), `find_ours` and
`entry_states` only look. `plan_install` / `plan_uninstall` read the file and say what
would be written; `write_settings` writes it. Nothing here starts or needs a daemon.

This module must never touch a hook that is not ours. Ours is a command hook whose
words (as a shell splits them) are `editjournal hook HARNESS`, the program being
any path whose name is `editjournal`, or `PYTHON -m editjournal.client.cli`. Every
other hook, matcher entry, event and key keeps its place and its value. The file is
rewritten as JSON (`json.dumps`, with the indent it had, 2 when none can be told, and
a final newline): key order and values are kept, spacing inside a line is not. When
nothing changes, nothing is written, so an install twice leaves even the spacing alone.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import difflib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from editjournal.schemas.errors import EditJournalError

SCOPES = ("project", "local", "user")  # local: the project's file kept out of git
CLI_MODULE = "editjournal.client.cli"
# where the daemon says where it serves hooks over HTTP, and the token it requires: the
# names daemon/runtime/hookhttp.py writes (the client may not import the daemon; a test
# holds the two to the same names)
STATE_DIR = ".editjournal"
HOOK_URL_FILE, HOOK_TOKEN_FILE = "hook-http.json", "hook-http.token"
_OUR_URL = re.compile(r"http://127\.0\.0\.1:[0-9]{1,5}/hook/")


class SettingsFileError(EditJournalError):
    """A settings file that cannot be read, used or written; nothing was changed."""


@dataclass(frozen=True)
class HookEntry:
    """One matcher entry of one event that runs our hook."""

    event: str
    matcher: str | None  # None: an event that takes no matcher (a prompt submitted)


@dataclass(frozen=True)
class HttpHook:
    """The daemon's hook endpoint for one workspace: where to POST, and the token."""

    url: str  # http://127.0.0.1:PORT/hook/ (the harness's name follows)
    token: str

    def hook(self, harness: Harness) -> dict[str, Any]:
        return {
            "type": "http",
            "url": self.url + harness.name,
            "headers": {"Authorization": f"Bearer {self.token}"},
            "timeout": harness.timeout,
        }


@dataclass(frozen=True)
class Harness:
    name: str  # the word after `editjournal hook`
    title: str
    files: Mapping[str, str]  # scope -> path: `~/...` under the home directory, else the project's
    entries: tuple[HookEntry, ...]
    timeout: int  # seconds, as the harness counts them
    after_change: str  # said once the file changed
    # an environment variable naming the directory the harness keeps its user settings
    # in instead of the home directory's (Claude Code's CLAUDE_CONFIG_DIR)
    config_dir_env: str | None = None
    # the variable the harness sets to the project's directory when it runs a command
    # hook: a committed hook names an editjournal inside the project through it
    project_env: str | None = None
    # the events whose hooks may be `"type": "http"` (Claude Code's, in the local scope:
    # its URL is literal, see `choose`); the others stay commands
    http_events: frozenset[str] = frozenset()

    def settings_file(self, scope: str, project: Path | None, home: Path) -> Path:
        place = self.files[scope]
        if self.in_home(scope):
            moved = os.environ.get(self.config_dir_env) if self.config_dir_env else None
            if moved:  # ~/.claude/settings.json -> $CLAUDE_CONFIG_DIR/settings.json
                return Path(moved) / Path(place).name
            return home / place.removeprefix("~/")
        if project is None:
            raise ValueError(f"the {scope} scope's file is the project's: a project is needed")
        return project / place

    def in_home(self, scope: str) -> bool:
        return self.files[scope].startswith("~/")

    def hook(self, command: str, http: HttpHook | None = None) -> dict[str, Any]:
        if http is not None:
            return http.hook(self)
        return {"type": "command", "command": command, "timeout": self.timeout}

    @property
    def fallback_scope(self) -> str:
        """Where a project install goes when it cannot travel: the harness's uncommitted
        project file, else the user's."""
        return "local" if "local" in self.files else "user"


CLAUDE_CODE = Harness(
    name="claude-code",
    title="Claude Code",
    files={
        "project": ".claude/settings.json",  # teams commit it: it gets an absolute path
        "local": ".claude/settings.local.json",  # Claude Code's own, kept out of git
        "user": "~/.claude/settings.json",
    },
    entries=(
        HookEntry("PreToolUse", "Edit|MultiEdit|Write"),
        HookEntry("PostToolUse", "Read|Edit|MultiEdit|Write"),
        # a Bash command's shell window (entries of their own: an install made before
        # them keeps its entries as they are, and gains these)
        HookEntry("PreToolUse", "Bash"),
        HookEntry("PostToolUse", "Bash"),
        HookEntry("PostToolUseFailure", "Bash"),  # a failed command may have changed files
        HookEntry("UserPromptSubmit", None),  # each prompt's checkpoint (no matcher)
    ),
    timeout=30,
    after_change="Claude Code reads its hooks when a session starts: start a new one"
    " (or review them in /hooks).",
    config_dir_env="CLAUDE_CONFIG_DIR",
    project_env="CLAUDE_PROJECT_DIR",
    # every tool call's events; UserPromptSubmit stays a command, once a prompt: it starts
    # the daemon when none serves (so the http hooks of the turn find it) or says once why not
    http_events=frozenset({"PreToolUse", "PostToolUse", "PostToolUseFailure"}),
)
GEMINI_CLI = Harness(
    name="gemini-cli",
    title="Gemini CLI",
    files={"project": ".gemini/settings.json", "user": "~/.gemini/settings.json"},
    entries=(  # Gemini CLI's matchers are regular expressions, tried unanchored
        HookEntry("BeforeTool", "^(replace|write_file)$"),
        HookEntry("AfterTool", "^(read_file|replace|write_file)$"),
        HookEntry("BeforeTool", "^run_shell_command$"),  # its shell window
        HookEntry("AfterTool", "^run_shell_command$"),
        HookEntry("BeforeAgent", None),  # each prompt's checkpoint (a lifecycle event)
    ),
    timeout=30_000,  # Gemini CLI counts milliseconds
    after_change="Gemini CLI reads its hooks when a session starts (project hooks only in a"
    " trusted folder): start a new one.",
    project_env="GEMINI_PROJECT_DIR",
)
CODEX = Harness(  # codex-rs/hooks: hooks.json beside each config layer, Claude Code's shape
    name="codex",
    title="Codex",
    files={"project": ".codex/hooks.json", "user": "~/.codex/hooks.json"},
    entries=(
        HookEntry("PreToolUse", "apply_patch"),  # its file edits: judged, then claimed
        HookEntry("PostToolUse", "apply_patch"),
        HookEntry("PreToolUse", "Bash"),  # its shell tools' window
        HookEntry("PostToolUse", "Bash"),
        HookEntry("UserPromptSubmit", None),  # each prompt's checkpoint
    ),
    timeout=30,
    after_change="Codex reads its hooks when a session starts and runs a new or changed"
    " one only once you trust it: review them in /hooks (a project's hooks load only"
    " when the project is trusted).",
    config_dir_env="CODEX_HOME",
)
HARNESSES: dict[str, Harness] = {h.name: h for h in (CLAUDE_CODE, GEMINI_CLI, CODEX)}


# --- the command a hook runs ----------------------------------------------------------------


def program() -> list[str]:
    """How a harness runs this very editjournal, as an absolute path. Never a bare
    `editjournal`: the harness runs hooks with its own PATH, which need not hold our
    virtualenv's bin (Claude Code started from a desktop, or from another project)."""
    script = Path(sys.executable).parent / "editjournal"  # the venv's console script
    if script.exists():
        return [str(script)]
    found = shutil.which("editjournal")
    if found:
        return [os.path.abspath(found)]
    return [sys.executable, "-m", CLI_MODULE]


def travelling_command(harness: Harness, project: Path) -> str | None:
    """The hook command as a committed file may hold it, or None when there is none:
    `editjournal hook NAME` when the `editjournal` on PATH is this one, else this one by
    the project's directory (`"$CLAUDE_PROJECT_DIR"/.venv/bin/editjournal ...`) when it
    lies inside the project. Never this machine's absolute path: a teammate's hook
    would run a file that is not there."""
    mine = program()
    if len(mine) != 1:
        return None
    found = shutil.which("editjournal")
    if found and os.path.realpath(found) == os.path.realpath(mine[0]):
        return shlex.join(["editjournal", "hook", harness.name])
    try:
        inside = Path(os.path.abspath(mine[0])).relative_to(os.path.abspath(project))
    except ValueError:
        return None
    if harness.project_env is None:
        return None
    return f'"${harness.project_env}"/{shlex.quote(inside.as_posix())} hook {harness.name}'


def hook_endpoint(project: Path) -> HttpHook | None:
    """Where the workspace's daemon serves hooks over HTTP, as its last start said (the
    port is kept across starts while it is free), or None: no daemon has served here."""
    state = project / STATE_DIR
    try:
        url = json.loads((state / HOOK_URL_FILE).read_text()).get("url")
        token = (state / HOOK_TOKEN_FILE).read_text().strip()
    except (OSError, ValueError, AttributeError):
        return None
    if not isinstance(url, str) or not _OUR_URL.fullmatch(url) or len(token) < 32:
        return None
    return HttpHook(url, token)


def hook_command(harness: Harness, argv: list[str] | None = None) -> str:
    """The shell command a hook entry holds: `'/path/to/editjournal' hook claude-code`."""
    return shlex.join([*(argv if argv is not None else program()), "hook", harness.name])


def is_ours(hook: object, harness: Harness) -> bool:
    """Whether `hook` (one item of a matcher entry's `hooks`) is editjournal's for `harness`:
    a command running `editjournal hook NAME`, or an http hook to a daemon's endpoint."""
    if isinstance(hook, dict) and hook.get("type") == "http":
        url = hook.get("url")
        return (
            isinstance(url, str)
            and _OUR_URL.fullmatch(url.removesuffix(harness.name)) is not None
            and url.endswith("/" + harness.name)
        )
    if not isinstance(hook, dict) or hook.get("type") != "command":
        return False
    command = hook.get("command")
    if not isinstance(command, str):
        return False
    try:
        words = shlex.split(command)
    except ValueError:  # an unclosed quote: a shell would refuse it too
        return False
    if words[-2:] != ["hook", harness.name]:
        return False
    program_words = words[:-2]
    if len(program_words) == 1:
        return os.path.basename(program_words[0]) == "editjournal"
    return (
        len(program_words) == 3
        and os.path.basename(program_words[0]).startswith("python")
        and program_words[1:] == ["-m", CLI_MODULE]
    )


# --- looking: ours, and how each wanted entry stands -----------------------------------------


@dataclass(frozen=True)
class Found:
    """A hook of ours where it was found."""

    event: str
    matcher: str | None
    command: str


@dataclass(frozen=True)
class EntryState:
    event: str
    matcher: str  # "": an event without one
    state: str  # installed | outdated (another editjournal's path) | missing
    command: str | None = None  # the one found


def _groups(settings: Mapping[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every well-formed matcher entry, with its event; anything else is passed over."""
    hooks = settings.get("hooks")
    if not isinstance(hooks, dict):
        return
    for event, groups in hooks.items():
        if isinstance(groups, list):
            for group in groups:
                if isinstance(group, dict) and isinstance(group.get("hooks"), list):
                    yield event, group


def _ours_in(
    settings: Mapping[str, Any], harness: Harness
) -> Iterator[tuple[str, dict[str, Any], dict[str, Any]]]:
    for event, group in _groups(settings):
        for hook in group["hooks"]:
            if is_ours(hook, harness):
                yield event, group, hook


def identity(hook: dict[str, Any]) -> str:
    """What names a hook of ours to a person: its command, or its URL (never its token)."""
    return str(hook.get("command") if hook.get("type") == "command" else hook.get("url"))


def find_ours(settings: Mapping[str, Any], harness: Harness) -> list[Found]:
    """Every hook of ours, in any event and matcher, in file order."""
    return [
        Found(event, group.get("matcher"), identity(hook))
        for event, group, hook in _ours_in(settings, harness)
    ]


def wanted_hook(
    harness: Harness, entry: HookEntry, command: str, http: HttpHook | None
) -> dict[str, Any]:
    """The hook an entry gets: http where the harness takes it and an endpoint is known."""
    return harness.hook(command, http if entry.event in harness.http_events else None)


def _same(hook: dict[str, Any], wanted: dict[str, Any]) -> bool:
    """`hook` does what `wanted` does (a timeout the user changed is theirs to keep)."""
    return all(hook.get(k) == v for k, v in wanted.items() if k != "timeout")


def entry_states(
    settings: Mapping[str, Any], harness: Harness, command: str, http: HttpHook | None = None
) -> list[EntryState]:
    """How each entry the harness wants stands: installed, outdated or missing."""
    found = list(_ours_in(settings, harness))
    states = []
    for entry in harness.entries:
        wanted = wanted_hook(harness, entry, command, http)
        here = [h for e, g, h in found if (e, g.get("matcher")) == (entry.event, entry.matcher)]
        matcher = entry.matcher or ""
        if any(_same(h, wanted) for h in here):
            states.append(EntryState(entry.event, matcher, "installed", identity(wanted)))
        elif here:
            states.append(EntryState(entry.event, matcher, "outdated", identity(here[0])))
        else:
            states.append(EntryState(entry.event, matcher, "missing"))
    return states


@dataclass(frozen=True)
class ScopeStatus:
    """Our hooks in one scope's file of one harness."""

    harness: str
    scope: str
    file: str
    exists: bool
    command: str  # the one this editjournal would install
    state: str  # installed | outdated | partly installed | not installed | invalid
    entries: list[EntryState]
    elsewhere: list[Found]  # ours under another event or matcher than the harness wants
    error: str | None = None


def status(harness: Harness, scope: str, path: Path, command: str) -> ScopeStatus:
    """How our hooks stand in `path` against what an install there would write (the
    travelling command in the project's file, http hooks in the local one when the
    daemon's endpoint is known); a file install would refuse says why (`error`)."""
    chosen = choose(harness, scope, path, command, redirect=False)
    command = chosen.command
    try:
        text, settings = read_settings(path)
        with _in(path):
            _check_shape(settings, harness)
    except SettingsFileError as e:
        return ScopeStatus(harness.name, scope, str(path), True, command, "invalid", [], [], str(e))
    entries = entry_states(settings, harness, command, chosen.http)
    wanted = {(e.event, e.matcher) for e in harness.entries}
    elsewhere = [f for f in find_ours(settings, harness) if (f.event, f.matcher) not in wanted]
    exists = text is not None
    return ScopeStatus(
        harness.name, scope, str(path), exists, command, _overall(entries), entries, elsewhere
    )


def _overall(entries: list[EntryState]) -> str:
    states = {e.state for e in entries}
    if states == {"installed"}:
        return "installed"
    if states == {"missing"}:
        return "not installed"
    return "partly installed" if "missing" in states else "outdated"


def shape_problem(settings: Mapping[str, Any], harness: Harness) -> str | None:
    """Why our hooks cannot be merged into `settings`, if they cannot."""
    hooks = settings.get("hooks", {})
    if not isinstance(hooks, dict):
        return f'"hooks" is {_a(hooks)}, not an object'
    for event in dict.fromkeys(e.event for e in harness.entries):
        if event in hooks and not isinstance(hooks[event], list):
            return f'"hooks.{event}" is {_a(hooks[event])}, not an array'
    return None


def _check_shape(settings: Mapping[str, Any], harness: Harness) -> None:
    problem = shape_problem(settings, harness)
    if problem is not None:
        raise SettingsFileError(problem)


def _a(value: object) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}
    names |= {int: "a number", float: "a number"}
    return "null" if value is None else names.get(type(value), f"a {type(value).__name__}")


# --- changing: install and uninstall ---------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    event: str
    matcher: str | None
    outcome: str  # added | updated | already installed | removed
    command: str


def install(
    settings: Mapping[str, Any], harness: Harness, command: str, http: HttpHook | None = None
) -> tuple[dict[str, Any], list[Outcome]]:
    """`settings` with each of the harness's entries running `command`: added where
    missing (into the user's entry of the same matcher when there is one, else as a new
    entry at the end of the event), an older editjournal's command replaced in place,
    a second copy of ours under the same matcher dropped."""
    _check_shape(settings, harness)
    new = copy.deepcopy(dict(settings))
    hooks = new.setdefault("hooks", {})
    outcomes = [
        _install_entry(hooks, harness, entry, wanted_hook(harness, entry, command, http))
        for entry in harness.entries
    ]
    return new, outcomes


def _install_entry(
    hooks: dict[str, Any], harness: Harness, entry: HookEntry, wanted: dict[str, Any]
) -> Outcome:
    groups = hooks.setdefault(entry.event, [])
    mine = [g for g in groups if _is_group(g) and g.get("matcher") == entry.matcher]
    ours = [h for g in mine for h in g["hooks"] if is_ours(h, harness)]
    named = identity(wanted)
    if not ours:
        if mine:
            mine[0]["hooks"].append(wanted)
        elif entry.matcher is None:
            groups.append({"hooks": [wanted]})
        else:
            groups.append({"matcher": entry.matcher, "hooks": [wanted]})
        return Outcome(entry.event, entry.matcher, "added", named)
    keep = next((h for h in ours if _same(h, wanted)), ours[0])
    doomed = {id(h) for h in ours if h is not keep}
    outcome = "already installed" if _same(keep, wanted) and not doomed else "updated"
    if keep.get("type") != wanted["type"]:  # a command becomes an http hook, or back
        keep.clear()
        keep.update(wanted)
    else:  # in place: its position stays, and so do its other keys (a timeout the user set)
        keep.update({k: v for k, v in wanted.items() if k != "timeout"})
    hooks[entry.event] = _without(groups, doomed)
    return Outcome(entry.event, entry.matcher, outcome, named)


def uninstall(
    settings: Mapping[str, Any], harness: Harness
) -> tuple[dict[str, Any], list[Outcome]]:
    """`settings` without any hook of ours, in every event (an older editjournal may
    have hooked others). A matcher entry, an event, and `hooks` itself are removed only
    when removing ours left them empty: one the user left empty stays."""
    _check_shape(settings, harness)
    new = copy.deepcopy(dict(settings))
    hooks = new.get("hooks")
    found = list(_ours_in(new, harness))
    if not found or not isinstance(hooks, dict):
        return new, []
    outcomes = [Outcome(e, g.get("matcher"), "removed", identity(h)) for e, g, h in found]
    doomed = {id(hook) for _, _, hook in found}
    for event in dict.fromkeys(event for event, _, _ in found):
        groups = _without(hooks[event], doomed)
        if groups:
            hooks[event] = groups
        else:
            del hooks[event]
    if not hooks:
        del new["hooks"]
    return new, outcomes


def _is_group(group: object) -> bool:
    return isinstance(group, dict) and isinstance(group.get("hooks"), list)


def _without(groups: list[Any], doomed: set[int]) -> list[Any]:
    """`groups` without the hooks whose id is in `doomed`, and without an entry that
    held nothing else."""
    kept = []
    for group in groups:
        if _is_group(group) and any(id(h) in doomed for h in group["hooks"]):
            group["hooks"] = [h for h in group["hooks"] if id(h) not in doomed]
            if not group["hooks"]:
                continue
        kept.append(group)
    return kept


# --- the file ----------------------------------------------------------------------------------


@dataclass
class Plan:
    """What a change would do to one settings file: `after` is None when nothing changes."""

    harness: Harness
    scope: str
    path: Path
    before: str | None  # None: there is no file
    after: str | None
    outcomes: list[Outcome] = field(default_factory=list)
    # what a person should know of the choice made (another scope, command hooks where
    # http was wanted, and why)
    notes: list[str] = field(default_factory=list)
    private: bool = False  # the file holds the endpoint's token: written 0600
    command: str | None = None  # the command the hooks run (http ones aside), as written

    @property
    def changes(self) -> bool:
        return self.after is not None

    def diff(self) -> str:
        if self.after is None:
            return ""
        old, new = (self.before or "").splitlines(), self.after.splitlines()
        lines = difflib.unified_diff(old, new, str(self.path), str(self.path), lineterm="")
        return "".join(line + "\n" for line in lines)


def plan_install(harness: Harness, scope: str, path: Path, command: str) -> Plan:
    """What installing into `scope`'s file would write. The choice of what travels is
    made here (`choose`): the plan may name another scope's file than `path`, and says
    why in its notes."""
    chosen = choose(harness, scope, path, command)
    before, settings = read_settings(chosen.path)
    with _in(chosen.path):
        new, outcomes = install(settings, harness, chosen.command, chosen.http)
    after = _after(before, settings, new)
    private = chosen.http is not None
    return Plan(
        harness, chosen.scope, chosen.path, before, after, outcomes, chosen.notes, private,
        chosen.command,
    )  # fmt: skip


@dataclass(frozen=True)
class Choice:
    """What an install into a scope writes, where, and why."""

    scope: str
    path: Path
    command: str
    http: HttpHook | None = None
    notes: list[str] = field(default_factory=list)


def choose(harness: Harness, scope: str, path: Path, command: str, redirect: bool = True) -> Choice:
    """The project's file (committed) gets command hooks that travel, or, when there are
    none, nothing: the install goes to the harness's uncommitted scope (`redirect`).
    The local file gets http hooks for every tool call when the harness takes them and a
    daemon has served the workspace (its URL is literal: Claude Code expands no variable
    in a hook's `url`, so it can never be committed), and only when git ignores the
    file (it carries the token). Elsewhere: `command`, this editjournal's absolute path."""
    if harness.in_home(scope):
        return Choice(scope, path, command)
    project = path.parents[len(Path(harness.files[scope]).parts) - 1]
    if scope == "project":
        travelling = travelling_command(harness, project)
        if travelling is not None or not redirect:
            return Choice(scope, path, travelling or command)
        other = harness.fallback_scope
        moved = choose(harness, other, harness.settings_file(other, project, Path.home()), command)
        why = (
            f"the project's file is committed and no editjournal can be named there for"
            f" every machine (the `editjournal` on PATH is not {program()[0]}, which is"
            f" outside the project): installed in the {other} scope instead"
        )
        return dataclasses.replace(moved, notes=[why, *moved.notes])
    if scope != "local" or not harness.http_events:
        return Choice(scope, path, command)
    http = hook_endpoint(project)
    if http is None:
        why = (
            "no daemon has served this workspace yet: command hooks; once one has"
            " (`editjournal start`), install again for hooks over HTTP"
        )
        return Choice(scope, path, command, notes=[why])
    if _tracked_by_git(path, project):
        why = f"{path} is not ignored by git and would carry the endpoint's token: command hooks"
        return Choice(scope, path, command, notes=[why])
    return Choice(scope, path, command, http, [f"hooks over HTTP: {http.url}{harness.name}"])


def _tracked_by_git(path: Path, project: Path) -> bool:
    """Whether git would commit `path`: in a repository, and not ignored by it. No git,
    or no repository: nothing commits it."""
    try:
        done = subprocess.run(
            ["git", "-C", str(project), "check-ignore", "-q", "--no-index", str(path)],
            capture_output=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 1  # 0: ignored; 128: not a repository


def plan_uninstall(harness: Harness, scope: str, path: Path) -> Plan:
    before, settings = read_settings(path)
    with _in(path):
        new, outcomes = uninstall(settings, harness)
    return Plan(harness, scope, path, before, _after(before, settings, new), outcomes)


@contextlib.contextmanager
def _in(path: Path) -> Iterator[None]:
    """A shape refused, said with the file it is in."""
    try:
        yield
    except SettingsFileError as e:
        raise SettingsFileError(f"{path}: {e}; fix it first: nothing was changed") from e


def _after(before: str | None, old: dict[str, Any], new: dict[str, Any]) -> str | None:
    """The text to write, or None: an object that did not change is not rewritten (nor
    is a missing file created for nothing)."""
    return None if new == old else render(new, indent_of(before))


def carry_out(plan: Plan) -> None:
    if plan.after is not None:
        write_settings(plan.path, plan.after, plan.private)


def read_settings(path: Path) -> tuple[str | None, dict[str, Any]]:
    """The file's text (None when there is none) and its object. An empty file is `{}`;
    anything but a JSON object, or a key given twice (json would keep only the last,
    and the first would be lost on writing), is refused with `SettingsFileError`."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None, {}
    except (OSError, UnicodeDecodeError) as e:
        raise SettingsFileError(f"cannot read {path}: {e}") from e
    if not text.strip():
        return text, {}
    try:
        value = json.loads(text, object_pairs_hook=_no_twice)
    except (json.JSONDecodeError, _KeyTwice) as e:
        raise SettingsFileError(
            f"{path} is not valid JSON ({e}); fix it first: nothing was changed"
        ) from e
    if not isinstance(value, dict):
        raise SettingsFileError(f"{path} holds {_a(value)}, not a JSON object: nothing was changed")
    return text, value


class _KeyTwice(ValueError):
    pass


def _no_twice(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [k for k, _ in pairs]
    twice = next((k for k in keys if keys.count(k) > 1), None)
    if twice is not None:
        raise _KeyTwice(f"the key {twice!r} is given twice")
    return dict(pairs)


def indent_of(text: str | None) -> int | str:
    """The indent of the file's first indented line (spaces: how many; else the
    characters themselves), 2 when it has none."""
    for line in (text or "").splitlines()[1:]:
        lead = line[: len(line) - len(line.lstrip(" \t"))]
        if lead:
            return len(lead) if lead.strip(" ") == "" else lead
    return 2


def render(settings: Mapping[str, Any], indent: int | str = 2) -> str:
    return json.dumps(settings, indent=indent, ensure_ascii=False) + "\n"


def write_settings(path: Path, text: str, private: bool = False) -> None:
    """Write `text` as the whole file or not at all: a temporary file in the same
    directory, flushed to disk, then renamed over it (a reader, Claude Code starting,
    never sees half a file). The file keeps its mode; a new one gets the umask's. A
    symbolic link (dotfiles) stays a link: the file it names is written."""
    target = Path(os.path.realpath(path))
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        mode = _mode_for(target) & (0o7700 if private else 0o7777)  # a token: this user's
        fd, temp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".new")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
                f.flush()
                os.fsync(f.fileno())
            os.chmod(temp, mode)
            os.replace(temp, target)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temp)
            raise
        _fsync_dir(target.parent)  # or a crash could lose the new name
    except OSError as e:
        raise SettingsFileError(f"cannot write {path}: {e}") from e


def _mode_for(target: Path) -> int:
    try:
        return target.stat().st_mode & 0o7777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
