"""`editjournal hooks install|uninstall|status`: editjournal's Claude Code hooks merged into a
settings file that keeps everything else, installed once however often it is run, removed
exactly, refused on a file it cannot read; every file it writes has the shape Claude
Code's hooks reference documents (tests/fixtures/claude-code-hooks.schema.json). No
daemon is started or needed (conftest checks none is left)."""

from __future__ import annotations

import copy
import json
import os
import re
import stat
import subprocess
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tests.e2e.cli_support import SCRIPT, cli, cli_env

SCHEMA = json.loads(
    (Path(__file__).parents[1] / "fixtures" / "claude-code-hooks.schema.json").read_text()
)
# a project's file is committed: it names editjournal as PATH finds it (the tests put this
# one first on PATH), never this machine's absolute path
COMMAND = "editjournal hook claude-code"
ABSOLUTE = f"{SCRIPT} hook claude-code"  # the user's own files: the venv's console script
OURS = {"type": "command", "command": COMMAND, "timeout": 30}
WRITES = "Edit|MultiEdit|Write"
READS = "Read|Edit|MultiEdit|Write"
SHELL = "Bash"  # a Bash command's shell window: entries of their own
INSTALLED = {
    "hooks": {
        "PreToolUse": [
            {"matcher": WRITES, "hooks": [OURS]},
            {"matcher": SHELL, "hooks": [OURS]},
        ],
        "PostToolUse": [
            {"matcher": READS, "hooks": [OURS]},
            {"matcher": SHELL, "hooks": [OURS]},
        ],
        "PostToolUseFailure": [{"matcher": SHELL, "hooks": [OURS]}],
        "UserPromptSubmit": [{"hooks": [OURS]}],  # each prompt's checkpoint: no matcher
    }
}
ENTRIES = 6  # (event, matcher) entries an install makes


def installed_as(command: str) -> dict[str, Any]:
    """INSTALLED with `command` in every hook."""
    text = json.dumps(INSTALLED).replace(json.dumps(COMMAND), json.dumps(command))
    return dict(json.loads(text))


PRETTIER = {"type": "command", "command": "prettier --check", "timeout": 5}
# A user's settings: keys Claude Code knows and one it does not, hooks in other events,
# another matcher, a foreign command under our very matcher, an entry left empty.
FOREIGN: dict[str, Any] = {
    "$schema": "https://json.schemastore.org/claude-code-settings.json",
    "permissions": {"allow": ["Bash(npm run *)", "Read(./src/**)"], "deny": ["Read(./.env)"]},
    "hooks": {
        "Notification": [{"hooks": [{"type": "command", "command": "notify-send Claude"}]}],
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "./check-bash.sh"}]},
            {"matcher": WRITES, "hooks": [PRETTIER]},
        ],
        "PostToolUse": [{"matcher": "Glob", "hooks": []}],
    },
    "model": "opus",
    "x-team-notes": {"owner": "ana", "since": 2024, "ratio": 0.5, "tags": ["é", None, True]},
}


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / ".git").mkdir(parents=True)
    return root


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


def hooks(ws: Path, home: Path, *args: str, ok: bool = True) -> Any:
    """`editjournal hooks ARGS` in workspace `ws` with HOME at `home`; its result."""
    done = cli(ws, "hooks", *args, env=on_path(HOME=str(home)))
    if ok:
        assert done.returncode == 0, done.stderr
    return done


def on_path(**extra: str) -> dict[str, str]:
    """The CLI's environment with this editjournal first on PATH."""
    return cli_env(PATH=f"{SCRIPT.parent}{os.pathsep}{os.environ.get('PATH', '')}", **extra)


def project_file(ws: Path) -> Path:
    return ws / ".claude" / "settings.json"


def write_json(path: Path, value: Any, indent: int = 2) -> bytes:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=indent, ensure_ascii=False) + "\n")
    return path.read_bytes()


def read_json(path: Path) -> Any:
    value = json.loads(path.read_text())
    jsonschema.Draft7Validator(SCHEMA).validate(value)  # as Claude Code's reference has it
    return value


def status_of(ws: Path, home: Path) -> dict[str, Any]:
    rows = json.loads(hooks(ws, home, "status", "--json").stdout)["hooks"]
    return {row["scope"]: row for row in rows if row["harness"] == "claude-code"}


# --- install --------------------------------------------------------------------------------


def test_install_into_an_empty_project_writes_our_two_entries(ws: Path, home: Path):
    done = hooks(ws, home, "install", "claude-code")
    assert read_json(project_file(ws)) == INSTALLED
    assert re.search(r"\n +PreToolUse +Edit\|MultiEdit\|Write +added\n", done.stdout)
    assert re.search(r"\n +PostToolUseFailure +Bash +added\n", done.stdout)
    assert f"hook command: {COMMAND}\n" in done.stdout  # what the file holds, as written
    assert project_file(ws).read_text().endswith("}\n")
    assert not (ws / ".editjournal").exists()  # no daemon was started for it
    assert not (home / ".claude").exists()


def test_install_keeps_every_foreign_setting_and_hook_in_its_place(ws: Path, home: Path):
    write_json(project_file(ws), FOREIGN, indent=4)
    hooks(ws, home, "install", "claude-code")
    expected = copy.deepcopy(FOREIGN)
    expected["hooks"]["PreToolUse"][1]["hooks"].append(OURS)  # beside prettier, after it
    expected["hooks"]["PreToolUse"][0]["hooks"].append(OURS)  # beside the user's Bash check
    expected["hooks"]["PostToolUse"].append({"matcher": READS, "hooks": [OURS]})
    expected["hooks"]["PostToolUse"].append({"matcher": SHELL, "hooks": [OURS]})
    expected["hooks"]["PostToolUseFailure"] = [{"matcher": SHELL, "hooks": [OURS]}]
    expected["hooks"]["UserPromptSubmit"] = [{"hooks": [OURS]}]
    after = read_json(project_file(ws))
    assert after == expected
    assert list(after) == list(FOREIGN)  # key order too
    assert list(after["hooks"]) == [
        "Notification",
        "PreToolUse",
        "PostToolUse",
        "PostToolUseFailure",
        "UserPromptSubmit",
    ]
    assert '\n    "permissions"' in project_file(ws).read_text()  # the file's own indent
    assert '"é"' in project_file(ws).read_text()


def test_installing_twice_changes_nothing_the_second_time(ws: Path, home: Path):
    hooks(ws, home, "install", "claude-code")
    # the user reformats it: an install that finds itself there must not rewrite it
    write_json(project_file(ws), json.loads(project_file(ws).read_text()), indent=3)
    before = project_file(ws).read_bytes()
    done = hooks(ws, home, "install", "claude-code")
    assert "already installed" in done.stdout and "nothing written" in done.stdout
    assert project_file(ws).read_bytes() == before
    again = json.loads(hooks(ws, home, "install", "claude-code", "--json").stdout)
    assert (again["changed"], again["written"]) == (False, False)
    assert [e["outcome"] for e in again["entries"]] == ["already installed"] * ENTRIES


def test_an_older_editjournal_is_pointed_at_this_one_where_it_stands(ws: Path, home: Path):
    old = {"type": "command", "command": "/old/venv/bin/editjournal hook claude-code"}
    by_module = "/usr/bin/python3 -m editjournal.client.cli hook claude-code"
    old_module = {"type": "command", "command": by_module, "timeout": 9}
    settings = {
        "hooks": {
            "PreToolUse": [{"matcher": WRITES, "hooks": [old, PRETTIER]}],
            "PostToolUse": [{"matcher": READS, "hooks": [PRETTIER, old_module]}],
        }
    }
    write_json(project_file(ws), settings)
    assert status_of(ws, home)["project"]["state"] == "partly installed"  # no Bash entries
    done = json.loads(hooks(ws, home, "install", "claude-code", "--json").stdout)
    assert [e["outcome"] for e in done["entries"]] == ["updated", "updated", *["added"] * 4]
    after = read_json(project_file(ws))
    assert after["hooks"]["PreToolUse"] == [
        {"matcher": WRITES, "hooks": [{**old, "command": COMMAND}, PRETTIER]},
        {"matcher": SHELL, "hooks": [OURS]},
    ]
    assert after["hooks"]["PostToolUse"] == [
        {"matcher": READS, "hooks": [PRETTIER, {**old_module, "command": COMMAND}]},
        {"matcher": SHELL, "hooks": [OURS]},
    ]


def test_a_second_copy_of_ours_under_our_matcher_is_dropped(ws: Path, home: Path):
    old = {"type": "command", "command": "/old/bin/editjournal hook claude-code"}
    settings = {"hooks": {"PreToolUse": [{"matcher": WRITES, "hooks": [old, PRETTIER, OURS]}]}}
    write_json(project_file(ws), settings)
    done = json.loads(hooks(ws, home, "install", "claude-code", "--json").stdout)
    assert [e["outcome"] for e in done["entries"]] == ["updated", *["added"] * 5]
    assert read_json(project_file(ws))["hooks"]["PreToolUse"] == [
        {"matcher": WRITES, "hooks": [PRETTIER, OURS]},
        {"matcher": SHELL, "hooks": [OURS]},
    ]


def test_look_alike_commands_are_never_taken_for_ours(ws: Path, home: Path):
    look_alikes = [
        "editjournal-wrapper hook claude-code",
        "/opt/editjournal hook codex",
        "echo editjournal hook claude-code",
        "editjournal hook claude-code --verbose",
        "editjournal hook 'claude-code",  # no shell would run it
        "python3 -m editjournal.client.cli_hooks hook claude-code",
    ]
    foreign = [{"type": "command", "command": c} for c in look_alikes]
    prompt = {"type": "prompt", "prompt": "editjournal hook claude-code"}
    settings = {"hooks": {"PreToolUse": [{"matcher": WRITES, "hooks": [*foreign, prompt]}]}}
    write_json(project_file(ws), settings)
    assert status_of(ws, home)["project"]["state"] == "not installed"
    hooks(ws, home, "install", "claude-code")
    after = read_json(project_file(ws))
    assert after["hooks"]["PreToolUse"][0]["hooks"] == [*foreign, prompt, OURS]
    hooks(ws, home, "uninstall", "claude-code")
    assert read_json(project_file(ws)) == settings


# --- uninstall ------------------------------------------------------------------------------


def test_uninstall_removes_exactly_what_install_added(ws: Path, home: Path):
    write_json(project_file(ws), FOREIGN)
    hooks(ws, home, "install", "claude-code")
    done = hooks(ws, home, "uninstall", "claude-code")
    assert done.stdout.count(f"removed: {COMMAND}") == ENTRIES
    after = read_json(project_file(ws))
    assert after == FOREIGN  # the entry the user left empty is still there
    assert json.dumps(after) == json.dumps(FOREIGN)  # in the same order
    again = hooks(ws, home, "uninstall", "claude-code")
    assert "nothing to remove" in again.stdout


def test_uninstall_from_a_file_we_created_leaves_it_empty_but_there(ws: Path, home: Path):
    hooks(ws, home, "install", "claude-code")
    hooks(ws, home, "uninstall", "claude-code")
    assert read_json(project_file(ws)) == {}


def test_uninstall_with_no_file_creates_none(ws: Path, home: Path):
    done = hooks(ws, home, "uninstall", "claude-code")
    assert "no such file" in done.stdout
    assert not (ws / ".claude").exists()


# --- dry run --------------------------------------------------------------------------------


def test_dry_run_prints_the_diff_and_writes_nothing(ws: Path, home: Path):
    done = hooks(ws, home, "install", "claude-code", "--dry-run")
    path = project_file(ws)
    lines = len(json.dumps(INSTALLED, indent=2).splitlines())
    assert done.stdout.startswith(f"--- {path}\n+++ {path}\n@@ -0,0 +1,{lines} @@\n")
    assert f'+            "command": "{COMMAND}",\n' in done.stdout
    assert "dry run, nothing written" in done.stdout
    assert not (ws / ".claude").exists()

    before = write_json(path, FOREIGN)
    as_json = json.loads(hooks(ws, home, "install", "claude-code", "--dry-run", "--json").stdout)
    assert (as_json["changed"], as_json["written"], as_json["dry_run"]) == (True, False, True)
    assert f'+            "command": "{COMMAND}",' in as_json["diff"].splitlines()
    assert path.read_bytes() == before

    hooks(ws, home, "install", "claude-code")
    installed = path.read_bytes()
    removal = hooks(ws, home, "uninstall", "claude-code", "--dry-run").stdout
    assert f'-            "command": "{COMMAND}",' in removal.splitlines()
    assert path.read_bytes() == installed


# --- status ---------------------------------------------------------------------------------


def test_status_before_and_after_each_scope(ws: Path, home: Path):
    before = status_of(ws, home)
    assert {s: (r["exists"], r["state"]) for s, r in before.items()} == {
        "project": (False, "not installed"),
        "local": (False, "not installed"),
        "user": (False, "not installed"),
    }
    assert before["project"]["file"] == str(project_file(ws))
    assert before["user"]["file"] == str(home / ".claude" / "settings.json")
    assert before["user"]["command"] == ABSOLUTE

    hooks(ws, home, "install", "claude-code")
    after = status_of(ws, home)
    assert after["project"]["state"] == "installed"
    assert [(e["event"], e["matcher"], e["state"]) for e in after["project"]["entries"]] == [
        ("PreToolUse", WRITES, "installed"),
        ("PostToolUse", READS, "installed"),
        ("PreToolUse", SHELL, "installed"),
        ("PostToolUse", SHELL, "installed"),
        ("PostToolUseFailure", SHELL, "installed"),
        ("UserPromptSubmit", "", "installed"),
    ]
    assert after["user"]["state"] == "not installed"

    hooks(ws, home, "install", "claude-code", "--scope", "user")
    assert status_of(ws, home)["user"]["state"] == "installed"
    text = hooks(ws, home, "status", "claude-code", "--scope", "user").stdout
    assert (
        text.splitlines()[0] == f"Claude Code, user scope: {home}/.claude/settings.json: installed"
    )


def test_status_names_ours_found_under_another_matcher(ws: Path, home: Path):
    mine = {"type": "command", "command": COMMAND}
    write_json(project_file(ws), {"hooks": {"PreToolUse": [{"matcher": "Edit", "hooks": [mine]}]}})
    row = status_of(ws, home)["project"]
    assert row["state"] == "not installed"
    assert row["elsewhere"] == [{"event": "PreToolUse", "matcher": "Edit", "command": COMMAND}]
    hooks(ws, home, "uninstall", "claude-code")  # ours wherever they are
    assert read_json(project_file(ws)) == {}


# --- user scope, the file itself --------------------------------------------------------------


def test_user_scope_writes_under_home_and_keeps_the_files_mode(ws: Path, home: Path):
    user_file = home / ".claude" / "settings.json"
    write_json(user_file, {"model": "sonnet"})
    user_file.chmod(0o600)
    hooks(ws, home, "install", "claude-code", "--scope", "user")
    assert read_json(user_file) == {"model": "sonnet", **installed_as(ABSOLUTE)}
    assert stat.S_IMODE(user_file.stat().st_mode) == 0o600
    assert not (ws / ".claude").exists()
    assert sorted(os.listdir(user_file.parent)) == ["settings.json"]  # no temporary left


def test_a_linked_settings_file_stays_a_link(ws: Path, home: Path, tmp_path: Path):
    dotfiles = tmp_path / "dotfiles" / "claude-settings.json"
    write_json(dotfiles, {"model": "sonnet"})
    project_file(ws).parent.mkdir()
    project_file(ws).symlink_to(dotfiles)
    hooks(ws, home, "install", "claude-code")
    assert project_file(ws).is_symlink()
    assert read_json(dotfiles) == {"model": "sonnet", **INSTALLED}


@pytest.mark.parametrize(
    "text",
    [
        '{"hooks": {"PreToolUse": [}\n',
        '{"hooks": [1]}\n',
        '["hooks"]\n',
        '{"model": "opus", "model": "sonnet"}\n',
        '{"hooks": {"PreToolUse": {"matcher": "Edit"}}}\n',
    ],
    ids=["not-json", "hooks-not-an-object", "not-an-object", "a-key-twice", "event-not-an-array"],
)
def test_a_file_we_cannot_use_is_refused_and_left_alone(ws: Path, home: Path, text: str):
    path = project_file(ws)
    path.parent.mkdir()
    path.write_text(text)
    for args in (("install", "claude-code"), ("uninstall", "claude-code")):
        done = hooks(ws, home, *args, ok=False)
        assert done.returncode == 2
        assert str(path) in done.stderr and "nothing was changed" in done.stderr
        assert path.read_text() == text
    assert sorted(os.listdir(path.parent)) == ["settings.json"]
    as_json = json.loads(hooks(ws, home, "install", "claude-code", "--json", ok=False).stdout)
    assert as_json["code"] == "invalid_params"
    assert status_of(ws, home)["project"]["state"] == "invalid"


def test_the_schema_would_catch_a_malformed_entry():
    """The validation above is not vacuous: the schema refuses what Claude Code would."""
    validator = jsonschema.Draft7Validator(SCHEMA)
    assert validator.is_valid(INSTALLED)
    bad = copy.deepcopy(INSTALLED)
    bad["hooks"]["PreToolUse"][0]["hooks"][0]["timeout"] = 0
    assert not validator.is_valid(bad)
    assert not validator.is_valid({"hooks": {"PreToolUsed": []}})


def test_the_local_scope_is_claude_codes_uncommitted_file(ws: Path, home: Path):
    hooks(ws, home, "install", "claude-code", "--scope", "local")
    local = ws / ".claude" / "settings.local.json"
    assert read_json(local) == installed_as(ABSOLUTE)  # no daemon ever served: commands
    assert not project_file(ws).exists()
    assert status_of(ws, home)["local"]["state"] == "installed"
    hooks(ws, home, "uninstall", "claude-code", "--scope", "local")
    assert read_json(local) == {}
    refused = hooks(ws, home, "install", "gemini-cli", "--scope", "local", ok=False)
    assert refused.returncode == 2 and "Gemini CLI has no local settings file" in refused.stderr


def test_the_user_scope_follows_claude_config_dir(ws: Path, home: Path, tmp_path: Path):
    config = tmp_path / "claude-config"
    env = cli_env(HOME=str(home), CLAUDE_CONFIG_DIR=str(config))
    done = cli(ws, "hooks", "install", "claude-code", "--scope", "user", env=env)
    assert done.returncode == 0, done.stderr
    assert read_json(config / "settings.json") == installed_as(ABSOLUTE)
    assert not (home / ".claude").exists()


# --- installs that travel, and hooks over HTTP -------------------------------------------------


def test_a_project_install_that_cannot_travel_goes_to_the_local_scope(ws: Path, home: Path):
    """No editjournal on PATH is this one, and this one lies outside the project: the
    committed file would hold this machine's path, so it is not written at all."""
    done = cli(
        ws, "hooks", "install", "claude-code", env=cli_env(HOME=str(home), PATH="/usr/bin:/bin")
    )
    assert done.returncode == 0, done.stderr
    assert not project_file(ws).exists()
    local = ws / ".claude" / "settings.local.json"
    assert f"installed in {local} (local scope)" in done.stdout
    assert "note: the project's file is committed and no editjournal" in done.stdout  # why
    assert f"hook command: {ABSOLUTE}\n" in done.stdout
    assert read_json(local) == installed_as(ABSOLUTE)


def test_no_token_and_no_machine_path_in_the_committed_file(ws: Path, home: Path):
    """A daemon has served the workspace (its endpoint files are there): the project's
    file still gets commands that travel; the local file gets the http hooks, 0600."""
    state = ws / ".editjournal"
    state.mkdir(mode=0o700)
    token = "t" * 43
    url = "http://127.0.0.1:45678/hook/"
    (state / "hook-http.json").write_text(json.dumps({"url": url, "port": 45678}))
    (state / "hook-http.token").write_text(token + "\n")
    hooks(ws, home, "install", "claude-code")
    committed = project_file(ws).read_text()
    assert token not in committed and str(SCRIPT) not in committed and "http" not in committed
    assert read_json(project_file(ws)) == INSTALLED

    hooks(ws, home, "install", "claude-code", "--scope", "local")
    local = ws / ".claude" / "settings.local.json"
    assert stat.S_IMODE(local.stat().st_mode) == 0o600  # it carries the token
    http = {
        "type": "http",
        "url": url + "claude-code",
        "headers": {"Authorization": f"Bearer {token}"},
        "timeout": 30,
    }
    written = read_json(local)["hooks"]
    assert written["PreToolUse"] == [
        {"matcher": WRITES, "hooks": [http]},
        {"matcher": SHELL, "hooks": [http]},
    ]
    assert written["PostToolUseFailure"] == [{"matcher": SHELL, "hooks": [http]}]
    prompt = {"type": "command", "command": ABSOLUTE, "timeout": 30}
    assert written["UserPromptSubmit"] == [{"hooks": [prompt]}]  # starts a daemon if none
    assert status_of(ws, home)["local"]["state"] == "installed"
    assert token not in hooks(ws, home, "status", "--json").stdout  # a URL, never the token

    (state / "hook-http.token").write_text("u" * 43 + "\n")  # a new token: pointed at it
    assert status_of(ws, home)["local"]["state"] == "outdated"
    hooks(ws, home, "install", "claude-code", "--scope", "local")
    assert "u" * 43 in local.read_text() and token not in local.read_text()
    hooks(ws, home, "uninstall", "claude-code", "--scope", "local")
    assert read_json(local) == {}


def test_a_local_file_git_would_commit_never_gets_the_token(tmp_path: Path, home: Path):
    ws = tmp_path / "repo"
    ws.mkdir()
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    state = ws / ".editjournal"
    state.mkdir(mode=0o700)
    (state / "hook-http.json").write_text(json.dumps({"url": "http://127.0.0.1:45678/hook/"}))
    (state / "hook-http.token").write_text("t" * 43 + "\n")
    hooks(ws, home, "install", "claude-code", "--scope", "local")
    local = ws / ".claude" / "settings.local.json"
    assert "t" * 43 not in local.read_text()  # not ignored by git: command hooks
    assert read_json(local) == installed_as(ABSOLUTE)
    (ws / ".gitignore").write_text(".claude/settings.local.json\n")
    hooks(ws, home, "install", "claude-code", "--scope", "local")
    assert "t" * 43 in local.read_text()
