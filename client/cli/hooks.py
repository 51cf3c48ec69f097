"""`editjournal hooks install|uninstall|status`: editjournal's hooks in a harness's settings.

Thin: each command finds the settings file (the workspace's for `--scope project`, the
home directory's for `--scope user`), makes one call into `hook_settings`, and renders
what it did. Nothing here talks to a daemon, starts one or needs one: the hooks are for
the harness to run later (`editjournal hook HARNESS`, a command of its own).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from pathlib import Path

import click

from editjournal.client.cli.common import (
    EXIT_OK,
    BadInput,
    command_line,
    global_options,
    print_json,
    settings,
)
from editjournal.client.cli.help import verbatim
from editjournal.client.harness.doubled import doubled_notes
from editjournal.client.harness.hook_settings import (
    HARNESSES,
    SCOPES,
    Harness,
    Outcome,
    Plan,
    ScopeStatus,
    SettingsFileError,
    carry_out,
    hook_command,
    plan_install,
    plan_uninstall,
    status,
)
from editjournal.client.views.render import emit

GIT = "git"  # not a harness: the repository's own hooks (client/harness/git_hooks.py)
HARNESS = click.Choice(sorted([*HARNESSES, GIT]))
SCOPE_HELP = (
    "project: the workspace's settings file; local: its uncommitted one (Claude Code's"
    " settings.local.json); user: the one in your home directory."
)


@click.group(
    epilog=verbatim(
        """Examples:
  editjournal hooks install claude-code                 .claude/settings.json of the workspace
  editjournal hooks install claude-code --scope user    ~/.claude/settings.json
  editjournal hooks install claude-code --dry-run       print the change, write nothing
  editjournal hooks install codex                       .codex/hooks.json of the workspace
  editjournal hooks install git                         post-commit: git notes of authorship
  editjournal hooks status
  editjournal hooks uninstall claude-code"""
    )
)
@global_options()
def hooks() -> None:
    """A coding agent's hooks that journal its reads, edits and shell commands.

    Claude Code, Gemini CLI and Codex (docs/harnesses.md says what each one's hooks
    can and cannot tell).

    The hooks run `editjournal hook HARNESS`: in the project's file (committed) as a
    command every machine finds (on PATH, or inside the project), else in the local or
    user file by this editjournal's absolute path (or over HTTP with --scope local).
    Everything else in the settings file stays as it was; nothing needs a daemon."""


def _file(harness: Harness, scope: str) -> Path:
    if scope not in harness.files:
        scopes = ", ".join(harness.files)
        raise BadInput(f"{harness.title} has no {scope} settings file; its scopes: {scopes}")
    project = None if harness.in_home(scope) else settings().root
    return harness.settings_file(scope, project, Path.home())


@contextlib.contextmanager
def _refused() -> Iterator[None]:
    try:
        yield
    except SettingsFileError as e:
        raise BadInput(str(e)) from e


@hooks.command(name="install")
@click.argument("harness", type=HARNESS)
@click.option("--scope", type=click.Choice(SCOPES), default="project", help=SCOPE_HELP)
@click.option("--dry-run", is_flag=True, help="Print the change as a diff; write nothing.")
@global_options()
def install_hooks(harness: str, scope: str, dry_run: bool) -> int:
    """Add editjournal's hooks to HARNESS's settings.

    The workspace's settings file, or with --scope user the one in your home directory,
    created when missing. Run again, it changes nothing; hooks an older editjournal
    installed (another path) are pointed at this one, where they are.

    git: the repository's post-commit and post-rewrite hooks (where core.hooksPath
    says), which write and carry `editjournal git-notes`; a hook already there is kept
    and called first."""
    if harness == GIT:
        return _git_hooks("install", scope, dry_run)
    chosen = HARNESSES[harness]
    command = hook_command(chosen)
    with _refused():
        plan = plan_install(chosen, scope, _file(chosen, scope), command)
        if not dry_run:
            carry_out(plan)
    plan.notes += doubled_notes(chosen, settings().root, Path.home(), plan)
    _report(plan, dry_run, plan.command or command, "install")
    return EXIT_OK


@hooks.command(name="uninstall")
@click.argument("harness", type=HARNESS)
@click.option("--scope", type=click.Choice(SCOPES), default="project", help=SCOPE_HELP)
@click.option("--dry-run", is_flag=True, help="Print the change as a diff; write nothing.")
@global_options()
def uninstall_hooks(harness: str, scope: str, dry_run: bool) -> int:
    """Remove editjournal's hooks, and nothing else.

    An entry, an event or `hooks` left empty by that goes too; the file stays.
    git: ours go, and a hook they kept comes back."""
    if harness == GIT:
        return _git_hooks("uninstall", scope, dry_run)
    chosen = HARNESSES[harness]
    with _refused():
        plan = plan_uninstall(chosen, scope, _file(chosen, scope))
        if not dry_run:
            carry_out(plan)
    _report(plan, dry_run, hook_command(chosen), "uninstall")
    return EXIT_OK


@hooks.command(name="status")
@click.argument("harness", type=HARNESS, required=False)
@click.option("--scope", type=click.Choice(SCOPES), help="Only this scope (default: both).")
@global_options()
def hooks_status(harness: str | None, scope: str | None) -> int:
    """Whether editjournal's hooks are installed.

    Per harness and scope: the settings file, each hook entry editjournal wants
    (installed, outdated: another editjournal's path, or missing) and any of ours
    found elsewhere in it; a note when two scopes hold different hooks of ours for one
    entry (the harness runs both: every such call would be journaled twice)."""
    if harness == GIT:
        return _git_status()
    chosen = [HARNESSES[harness]] if harness else list(HARNESSES.values())
    rows = [
        status(h, s, _file(h, s), hook_command(h))
        for h in chosen
        for s in ([scope] if scope else SCOPES)
        if s in h.files or scope is not None  # a scope the harness lacks, when named
    ]
    notes = [note for h in chosen for note in doubled_notes(h, settings().root, Path.home())]
    if settings().json:
        print_json({"hooks": rows, "notes": notes})
        return EXIT_OK
    emit([line for row in rows for line in _status_lines(row)])
    emit([f"{h.title} hook command: {hook_command(h)}" for h in chosen])
    emit([f"note: {note}" for note in notes])
    return EXIT_OK


# --- git: the repository's hooks -----------------------------------------------------------------


def _git_dir() -> Path:
    from editjournal.client.harness.git_hooks import GitHookError, hooks_dir

    try:
        return hooks_dir(Path.cwd())
    except GitHookError:
        return hooks_dir(settings().root)  # `--workspace` named from outside the repository


@contextlib.contextmanager
def _git_refused() -> Iterator[None]:
    from editjournal.client.cli.gitnotes import GitRefused
    from editjournal.client.harness.git_hooks import GitHookError

    try:
        yield
    except (GitHookError, OSError) as e:
        raise GitRefused(str(e)) from e


def _git_hooks(verb: str, scope: str, dry_run: bool) -> int:
    from editjournal.client.harness import git_hooks
    from editjournal.client.harness.hook_settings import program

    if scope != "project":
        raise BadInput("git hooks are the repository's own: --scope does not apply")
    with _git_refused():
        directory = _git_dir()
        if verb == "install":
            done = git_hooks.install(directory, program(), dry_run)
        else:
            done = git_hooks.uninstall(directory, dry_run)
    if settings().json:
        rows = [{"hook": d.hook, "file": str(d.path), "outcome": d.outcome} for d in done]
        print_json({"harness": GIT, "dry_run": dry_run, "hooks": rows})
        return EXIT_OK
    head = "dry run, nothing written: " if dry_run else ""
    emit(
        [
            f"{head}git {d.hook} hook {d.path}: "
            + _GIT_SAID[d.outcome].format(kept=f"{d.path.name}{git_hooks.KEPT_SUFFIX}")
            for d in done
        ]
    )
    return EXIT_OK


_GIT_SAID = {
    "installed": "installed",
    "updated": "pointed at this editjournal",
    "unchanged": "already installed: nothing written",
    "chained": "installed; the hook that was there is kept as {kept} and runs first",
    "removed": "removed",
    "restored": "removed; the hook it kept is back in its place",
    "absent": "none there: nothing to remove",
    "foreign": "not editjournal's: left alone",
}


def _git_status() -> int:
    from editjournal.client.harness.git_hooks import state

    with _git_refused():
        directory = _git_dir()
        found = state(directory)
    if settings().json:
        print_json({"harness": GIT, "directory": str(directory), "hooks": found})
    else:
        emit([f"git hooks in {directory}:", *(f"  {h}: {s}" for h, s in found.items())])
    return EXIT_OK


# --- rendering ---------------------------------------------------------------------------------


def _report(plan: Plan, dry_run: bool, command: str, verb: str) -> None:
    if settings().json:
        print_json(
            {
                "harness": plan.harness.name,
                "scope": plan.scope,
                "file": str(plan.path),
                "changed": plan.changes,
                "written": plan.changes and not dry_run,
                "dry_run": dry_run,
                "command": command,
                "entries": plan.outcomes,
                "notes": plan.notes,
                "diff": plan.diff(),
            }
        )
        return
    if dry_run and plan.changes:
        click.echo(plan.diff(), nl=False)
    emit(_summary(plan, dry_run, command, verb))


def _summary(plan: Plan, dry_run: bool, command: str, verb: str) -> list[str]:
    where = f"{plan.path} ({plan.scope} scope)"
    title = plan.harness.title
    notes = [f"note: {note}" for note in plan.notes]
    if not plan.changes:
        if verb == "install":
            return [
                f"editjournal's {title} hooks are already installed in {where}: nothing written",
                *notes,
            ]
        missing = " (no such file)" if plan.before is None else ""
        return [f"no editjournal {title} hooks in {where}{missing}: nothing to remove"]
    done = {"install": f"installed in {where}", "uninstall": f"removed from {where}"}[verb]
    lines = [f"editjournal's {title} hooks {done}:"]
    if dry_run:
        lines = [f"dry run, nothing written: editjournal's {title} hooks would be {done}:"]
    lines += _outcome_lines(plan.outcomes, show_command=verb == "uninstall")
    if verb == "install":
        lines.append(f"hook command: {command}")
    lines += notes
    if not dry_run:
        lines.append(plan.harness.after_change)
    return lines


def _outcome_lines(outcomes: Sequence[Outcome], show_command: bool) -> list[str]:
    rows = [
        (o.event, o.matcher or "", o.outcome + (f": {o.command}" if show_command else ""))
        for o in outcomes
    ]
    return _table(rows)


def _status_lines(row: ScopeStatus) -> list[str]:
    title = HARNESSES[row.harness].title
    missing = "" if row.exists else " (no such file)"
    if row.error is not None:  # it names the file
        return [f"{title}, {row.scope} scope: {row.state}: {row.error}"]
    head = f"{title}, {row.scope} scope: {row.file}{missing}: {row.state}"
    lines = [head]
    if row.state != "not installed":
        lines += _table(
            [
                (e.event, e.matcher, e.state + (f": {e.command}" if e.state == "outdated" else ""))
                for e in row.entries
            ]
        )
    lines += [
        f"  also: {f.event} {f.matcher or '(no matcher)'}: {f.command}" for f in row.elsewhere
    ]
    if row.state in ("not installed", "partly installed", "outdated"):
        scope = [] if row.scope == "project" else ["--scope", row.scope]
        root = settings().root if row.scope != "user" else None
        install = command_line(root, "hooks", "install", row.harness, *scope)
        lines.append(
            f"  `{install}` installs them"
            if row.state != "outdated"
            else f"  `{install}` points them at this editjournal"
        )
    return lines


def _table(rows: Sequence[tuple[str, str, str]]) -> list[str]:
    if not rows:
        return []
    widths = [max(len(r[i]) for r in rows) for i in range(2)]
    return [f"  {a:<{widths[0]}}  {b:<{widths[1]}}  {c}" for a, b, c in rows]


COMMANDS: tuple[click.Command, ...] = (hooks,)
