"""The `editjournal` command, run as a real process against a real daemon.

The other test_cli_*.py files cover help and completion, how errors read,
interruption, and the lifecycle commands.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
from pathlib import Path

import pytest

from editjournal.client.library.connection import live_endpoint
from tests.conftest import RunningDaemon, pid_alive, wait_until
from tests.e2e.cli_support import CLI, cli

REPO = Path(__file__).resolve().parents[2]


def test_call_prints_the_envelope_and_exits_0(daemon: RunningDaemon):
    (daemon.root / "a.txt").write_text("alpha\n")
    done = cli(daemon.root, "call", "read_file", stdin='{"path": "a.txt", "hashes": true}')
    assert done.returncode == 0, done.stderr
    envelope = json.loads(done.stdout)
    assert envelope["ok"] is True
    assert envelope["result"]["content"] == "alpha\n"
    assert envelope["seq"] == envelope["result"]["version"]


def test_call_exits_1_on_an_error_reply(daemon: RunningDaemon):
    done = cli(daemon.root, "call", "read_file", stdin='{"path": "nope"}')
    assert done.returncode == 1
    assert json.loads(done.stdout)["error"]["code"] == "file_not_found"


def test_call_exits_2_on_input_that_is_not_json(daemon: RunningDaemon):
    done = cli(daemon.root, "call", "read_file", stdin="{path:")
    assert done.returncode == 2
    assert "not JSON" in done.stderr


def test_call_with_empty_stdin_sends_no_params(daemon: RunningDaemon):
    done = cli(daemon.root, "call", "ping", stdin="")
    assert done.returncode == 0 and json.loads(done.stdout)["result"]["pong"] is True


def test_call_retried_with_an_idempotency_key_applies_once(daemon: RunningDaemon):
    target = daemon.root / "w.md"
    target.write_text("# log\n")
    params = json.dumps({"path": "w.md", "content": "- entry\n"})
    key = ("call", "append_to_file", "--idempotency-key", "append-1")
    first, retry = (cli(daemon.root, *key, stdin=params) for _ in range(2))
    assert first.returncode == 0 and retry.returncode == 0, (first.stderr, retry.stderr)
    assert json.loads(retry.stdout)["seq"] == json.loads(first.stdout)["seq"]
    assert target.read_text() == "# log\n- entry\n"
    empty = cli(daemon.root, "call", "ping", "--idempotency-key", "", stdin="")
    assert empty.returncode == 2 and "1 to 200 characters" in empty.stderr


def test_status_without_a_daemon_exits_2(workspace: Path):
    done = cli(workspace, "status")
    assert done.returncode == 2
    assert "no daemon serves" in done.stderr


def test_unknown_command_is_a_usage_error(workspace: Path):
    assert cli(workspace, "frobnicate").returncode == 2


def test_read_prints_anchored_rows(daemon: RunningDaemon):
    (daemon.root / "a.py").write_text("def f():\n    return 1\n")
    done = cli(daemon.root, "read", "a.py", "--hashes", "--range", "2-2")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("2#") and done.stdout.rstrip().endswith("|    return 1")
    assert "version" in done.stderr


def test_read_json_and_error_exit_codes(daemon: RunningDaemon):
    (daemon.root / "a.py").write_text("x = 1\n")
    done = cli(daemon.root, "read", "a.py", "--json")
    assert json.loads(done.stdout)["content"] == "x = 1\n"
    missing = cli(daemon.root, "read", "zz.py")
    assert missing.returncode == 1
    assert "file_not_found" in missing.stderr and "suggested action" in missing.stderr


def test_log_filters_by_path_and_by_agent(daemon: RunningDaemon):
    for name in ("a.txt", "b.txt"):
        (daemon.root / name).write_text(name)
    cli(daemon.root, "read", "a.txt", agent="alice")
    cli(daemon.root, "read", "b.txt", agent="bob")
    by_path = json.loads(cli(daemon.root, "log", "--path", "a.txt", "--json").stdout)
    reads = [e["agent"] for e in by_path["events"] if e["kind"] == "file_read"]
    assert reads == ["alice"]
    by_agent = json.loads(cli(daemon.root, "log", "--by", "bob", "--json").stdout)
    assert [e["path"] for e in by_agent["events"]] == ["b.txt"]
    text = cli(daemon.root, "log", "--limit", "2").stdout.splitlines()
    assert len(text) == 2 and "bob" in text[-1] and "file_read" in text[-1]


def test_status_prints_aligned_text_in_words_and_units(daemon: RunningDaemon):
    done = cli(daemon.root, "status")
    assert done.returncode == 0, done.stderr
    matches = [re.fullmatch(r"(\S+(?: \S+)?)\s{2,}(.+)", line) for line in done.stdout.splitlines()]
    assert all(matches), done.stdout
    assert len({m.start(2) for m in matches if m}) == 1  # one column of values
    rows = {m.group(1): m.group(2) for m in matches if m}
    assert rows["pid"] == str(daemon.proc.pid)
    assert rows["watcher"] == "running"
    assert re.fullmatch(r"(\d+m )?\d+s", rows["uptime"]), rows["uptime"]
    assert re.fullmatch(r".*journal\.db \(\d+(\.\d)? (B|KB|MB)\)", rows["journal"])
    assert re.fullmatch(r"\d+ \(last seq \d+\)", rows["events"])
    assert "\x1b[" not in done.stdout  # no colour on a pipe
    assert json.loads(cli(daemon.root, "status", "--json").stdout)["event_count"] >= 1


def test_start_status_stop(workspace: Path):
    started = cli(workspace, "start")
    assert started.returncode == 0 and "started: pid" in started.stdout
    pid = live_endpoint(workspace).pid
    assert "already running" in cli(workspace, "start").stdout
    stopped = cli(workspace, "stop")
    assert stopped.returncode == 0 and f"stopped: pid {pid}" in stopped.stdout
    wait_until(lambda: not pid_alive(pid), what="the daemon to exit")
    assert "not running" in cli(workspace, "stop").stdout


def test_serve_runs_in_the_foreground_and_ctrl_c_ends_it_with_130(workspace: Path):
    proc = subprocess.Popen(
        [*CLI, "--workspace", str(workspace), "serve"], stderr=subprocess.PIPE, text=True
    )
    try:
        endpoint = wait_until(lambda: live_endpoint(workspace), what="serve to bind")
        assert endpoint.pid == proc.pid  # serve execs the daemon in place
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=15)
    assert proc.returncode == 130
    assert "serving" in err and "daemon_stopped" not in err  # human lines, not kinds
    assert "stopped (SIGINT)" in err and "Traceback" not in err


@pytest.mark.slow
def test_make_run_serves_a_workspace_with_spaces_and_its_commands_work_as_printed(
    tmp_path: Path,
):
    """`make run WORKSPACE="a dir with spaces"`: the Makefile quotes it, and every command
    the banner prints works pasted into a shell (it names the script by its path: make
    does not activate the venv), the last one stopping the daemon."""
    workspace = tmp_path / "a dir with spaces"
    workspace.mkdir()
    (workspace / "README.md").write_text("hello\n")
    proc = subprocess.Popen(
        ["make", "--no-print-directory", "-C", str(REPO), "run", f"WORKSPACE={workspace}"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert proc.stderr is not None
        # make's own lines (an install, when the stamp is stale) come first
        while not (line := proc.stderr.readline()).startswith("editjournal: serving"):
            assert line, "make run ended before serving"
        banner = [proc.stderr.readline() for _ in range(7)]
        commands = [line.split("#")[0].strip() for line in banner if line.startswith("    ")]
        words = [shlex.split(c.split(" | ")[-1])[1] for c in commands]  # `echo … | X call`
        assert words == ["status", "read", "call", "log", "stop"]
        wait_until(lambda: live_endpoint(workspace), what="make run to serve")
        outputs = []
        for command in commands:
            done = subprocess.run(command, shell=True, capture_output=True, text=True, timeout=30)
            assert done.returncode == 0, f"{command}: {done.stderr}"
            outputs.append(done.stdout)
        assert str(workspace) in outputs[0]
        assert "#" in outputs[1] and "hello" in outputs[1]  # LINE#ANCHOR rows
        assert proc.wait(15) == 0  # `stop` ended the daemon that make ran
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.communicate(timeout=15)


def test_watch_prints_events_live(daemon: RunningDaemon):
    (daemon.root / "w.txt").write_text("watched\n")
    reader = daemon.client("reader")
    # The watcher journals w.txt's creation (after its hold for new files); let that
    # happen before `watch` starts, so the first event it prints is the read below.
    wait_until(
        lambda: reader.log(path="w.txt", kind="outside_change").events,
        20,
        "the watcher to record w.txt created",
    )
    proc = subprocess.Popen(
        [*CLI, "--workspace", str(daemon.root), "watch", "w.txt", "--count", "1", "--json"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        wait_until(lambda: reader.read_file("w.txt") and proc.poll() is not None, 20, "an event")
    finally:
        if proc.poll() is None:
            proc.kill()
    event = json.loads(proc.stdout.read().splitlines()[0])
    assert event["kind"] == "file_read" and event["path"] == "w.txt"
    assert event["agent"] == "reader"


def test_agent_status_and_read_since(daemon: RunningDaemon):
    target = daemon.root / "s.txt"
    target.write_text("one line\nanother line\n")
    first = json.loads(cli(daemon.root, "read", "s.txt", "--json", agent="alice").stdout)
    target.write_text("one line\nchanged line\n")
    daemon.client("bob").read_file("s.txt")  # notices the outside change
    status = cli(daemon.root, "agent-status", "alice")
    assert status.returncode == 0
    assert "1 stale" in status.stdout and "outside_change by outside" in status.stdout
    since = cli(daemon.root, "read", "s.txt", "--since", str(first["version"]), agent="alice")
    assert "-2|another line" in since.stdout and "|changed line" in since.stdout
    assert "0 stale" in cli(daemon.root, "agent-status", "alice").stdout


# --- call edit, edit from stdin, --skip-safety-check ----------------------------------


def anchors(root: Path, path: str) -> dict[int, str]:
    """line -> anchor, from a `call read_file` with hashes."""
    done = cli(root, "call", "read_file", stdin=json.dumps({"path": path, "hashes": True}))
    assert done.returncode == 0, done.stderr
    return {row["line"]: row["hash"] for row in json.loads(done.stdout)["result"]["lines"]}


def test_call_edit_applies_operations_from_stdin(daemon: RunningDaemon):
    target = daemon.root / "e.txt"
    target.write_text("first line here\nsecond line here\n")
    a = anchors(daemon.root, "e.txt")
    params = {
        "path": "e.txt",
        "operations": [{"op": "replace_line", "hash": a[2], "content": "second line edited"}],
    }
    done = cli(daemon.root, "call", "edit", stdin=json.dumps(params))
    assert done.returncode == 0, done.stderr
    envelope = json.loads(done.stdout)
    assert envelope["ok"] is True and envelope["result"]["file_path"] == "e.txt"
    assert target.read_text() == "first line here\nsecond line edited\n"
    log = json.loads(cli(daemon.root, "log", "--path", "e.txt", "--json").stdout)
    applied = [e for e in log["events"] if e["kind"] == "edit_applied"]
    assert [e["agent"] for e in applied] == ["cli-test"]


def test_call_edit_with_a_stale_anchor_exits_1_and_leaves_the_file(daemon: RunningDaemon):
    target = daemon.root / "e.txt"
    target.write_text("first line here\nsecond line here\n")
    old = anchors(daemon.root, "e.txt")
    target.write_text("first line here\nsecond line changed outside\n")
    params = {
        "path": "e.txt",
        "operations": [{"op": "replace_line", "hash": old[2], "content": "mine"}],
    }
    done = cli(daemon.root, "call", "edit", stdin=json.dumps(params))
    assert done.returncode == 1, done.stderr
    envelope = json.loads(done.stdout)
    assert envelope["ok"] is False and envelope["error"]["code"] == "anchor_stale"
    assert target.read_text() == "first line here\nsecond line changed outside\n"


def test_edit_reads_operations_from_stdin_and_prints_json(daemon: RunningDaemon):
    target = daemon.root / "s.py"
    target.write_text("def f():\n    return 1\n")
    a = anchors(daemon.root, "s.py")
    ops = [{"op": "replace_line", "hash": a[2], "content": "    return 2"}]
    done = cli(daemon.root, "edit", "s.py", "--json", stdin=json.dumps(ops))
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["file_path"] == "s.py" and result["safety_check"] == "clean"
    assert result["lines_before"] == result["lines_after"] == 2
    assert target.read_text() == "def f():\n    return 2\n"
    b = anchors(daemon.root, "s.py")  # the {"operations": [...]} form, text output
    ops = [{"op": "insert_after", "hash": b[2], "content": "# done"}]
    done = cli(daemon.root, "edit", "s.py", stdin=json.dumps({"operations": ops}))
    assert done.returncode == 0, done.stderr
    assert "lines 2 -> 3 (+1)" in done.stdout
    assert target.read_text() == "def f():\n    return 2\n# done\n"


def test_edit_skip_safety_check_lets_a_refused_edit_through(daemon: RunningDaemon):
    original = "def f(x):\n    return x\n"
    target = daemon.root / "u.py"
    target.write_text(original)
    a = anchors(daemon.root, "u.py")
    ops = json.dumps([{"op": "replace_line", "hash": a[1], "content": "def f(x:"}])
    refused = cli(daemon.root, "edit", "u.py", "--json", stdin=ops)
    assert refused.returncode == 1
    assert json.loads(refused.stdout)["code"] == "safety_check_failed"
    assert target.read_text() == original
    refused_text = cli(daemon.root, "edit", "u.py", stdin=ops)
    assert refused_text.returncode == 1 and "safety_check_failed" in refused_text.stderr
    assert target.read_text() == original
    done = cli(daemon.root, "edit", "u.py", "--skip-safety-check", "--json", stdin=ops)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["safety_check"] == "overridden"
    assert target.read_text() == "def f(x:\n    return x\n"


# --- global options and environment -----------------------------------------------------


def test_global_agent_option_names_the_agent(daemon: RunningDaemon):
    (daemon.root / "g.txt").write_text("gamma\n")
    # the option wins over EDITJOURNAL_AGENT (cli() sets it to "cli-test")
    done = cli(daemon.root, "--agent", "alice", "read", "g.txt")
    assert done.returncode == 0, done.stderr
    by_alice = json.loads(cli(daemon.root, "log", "--by", "alice", "--json").stdout)
    assert [(e["kind"], e["path"]) for e in by_alice["events"]] == [("file_read", "g.txt")]
    by_env = json.loads(cli(daemon.root, "log", "--by", "cli-test", "--json").stdout)
    assert by_env["events"] == []
    journal = daemon.journal()
    try:
        reads = [r.agent for r in journal.records(kind="file_read", path="g.txt")]
    finally:
        journal.close()
    assert reads == ["alice"]
    status = cli(daemon.root, "--agent", "alice", "agent-status", "--json")
    assert [f["path"] for f in json.loads(status.stdout)["files"]] == ["g.txt"]


def test_workspace_env_var_chooses_the_workspace(daemon: RunningDaemon, tmp_path: Path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (daemon.root / "env.txt").write_text("from the env\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("EDITJOURNAL_")}
    env["EDITJOURNAL_WORKSPACE"] = str(daemon.root)
    # run this checkout's code, whatever the cwd (`-m` would import from the cwd)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*CLI, *args], cwd=elsewhere, env=env, capture_output=True, text=True, timeout=60
        )

    # status never starts a daemon: a wrong workspace would exit 2 here
    status = run("status", "--json")
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout)["pid"] == daemon.proc.pid
    read = run("read", "env.txt", "--json")
    assert read.returncode == 0, read.stderr
    assert json.loads(read.stdout)["content"] == "from the env\n"
    log = json.loads(run("log", "--path", "env.txt", "--json").stdout)
    reads = [e["agent"] for e in log["events"] if e["kind"] == "file_read"]
    assert reads == ["anonymous"]
    assert not (elsewhere / ".editjournal").exists()
