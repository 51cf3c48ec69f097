"""The CLI as a person reads it (issue 24's smaller things): `patch --base` takes the
short sha `read` prints, messages without stray punctuation, `log` says when it left
older events out and keeps its columns, `list-hunks` is a table, counts in words,
`show` names the newest seq, `export` needs no format flag."""

from __future__ import annotations

import hashlib
import json
import re

from tests.conftest import RunningDaemon
from tests.e2e.cli_support import cli

BEFORE = "def greet():\n    return 'hi'\n"
DIFF = (
    "--- a/g.py\n+++ b/g.py\n@@ -1,2 +1,2 @@\n def greet():\n-    return 'hi'\n"
    "+    return 'hello'\n"
)


def short_sha(daemon: RunningDaemon, path: str) -> str:
    """The sha256 as `editjournal read` prints it, on stderr: `-- PATH version V sha256 S`."""
    done = cli(daemon.root, "read", path)
    assert done.returncode == 0, done.stderr
    match = re.search(r"^-- \S+ version \d+ sha256 ([0-9a-f]+) ", done.stderr, flags=re.M)
    assert match, done.stderr
    return match.group(1)


# --- patch --base ---------------------------------------------------------------------------


def test_patch_takes_the_short_sha_read_prints_and_says_so_plainly(daemon: RunningDaemon):
    (daemon.root / "g.py").write_text(BEFORE)
    short = short_sha(daemon, "g.py")
    assert 7 <= len(short) < 64
    done = cli(daemon.root, "patch", "g.py", "--base", short, stdin=DIFF)
    assert done.returncode == 0, done.stderr
    assert (daemon.root / "g.py").read_text() == BEFORE.replace("hi", "hello")
    first = done.stdout.splitlines()[0]
    assert first.startswith("Patch applied successfully: g.py version ")
    assert ".:" not in done.stdout


def test_patch_takes_seven_hex_digits_in_either_case(daemon: RunningDaemon):
    (daemon.root / "g.py").write_text(BEFORE)
    short = short_sha(daemon, "g.py")[:7].upper()
    assert cli(daemon.root, "patch", "g.py", "--base", short, stdin=DIFF).returncode == 0


def test_a_prefix_of_no_known_version_is_refused_as_a_state_mismatch(daemon: RunningDaemon):
    (daemon.root / "g.py").write_text(BEFORE)
    real = short_sha(daemon, "g.py")
    wrong = ("0" if real[0] != "0" else "1") + real[1:7]
    done = cli(daemon.root, "patch", "g.py", "--base", wrong, "--json", stdin=DIFF)
    assert done.returncode == 1
    error = json.loads(done.stdout)
    assert error["code"] == "state_mismatch" and "read g.py --json" in error["suggested_action"]
    assert (daemon.root / "g.py").read_text() == BEFORE


def test_a_prefix_of_an_older_version_is_never_applied_silently(daemon: RunningDaemon):
    """The prefix is only a spelling: it names the older version, and the daemon's
    lock refuses it as it refuses that version's full sha256."""
    (daemon.root / "g.py").write_text(BEFORE)
    old = short_sha(daemon, "g.py")
    (daemon.root / "g.py").write_text(BEFORE + "# changed meanwhile\n")
    short_sha(daemon, "g.py")  # the journal knows the new content too
    done = cli(daemon.root, "patch", "g.py", "--base", old, stdin=DIFF)
    assert done.returncode == 1 and "state_mismatch" in done.stderr
    assert (daemon.root / "g.py").read_text() == BEFORE + "# changed meanwhile\n"
    rebased = cli(daemon.root, "patch", "g.py", "--base", old, "--rebase", stdin=DIFF)
    assert rebased.returncode == 0, rebased.stderr
    assert "carried over others' changes" in rebased.stdout


def test_a_base_too_short_or_not_hex_is_a_usage_error(daemon: RunningDaemon):
    (daemon.root / "g.py").write_text(BEFORE)
    for base in ("abc123", "sha256", "z" * 64, "a" * 65):
        done = cli(daemon.root, "patch", "g.py", "--base", base, stdin=DIFF)
        assert done.returncode == 2 and "is not a SHA-256" in done.stderr, base


def test_a_full_sha256_still_works_without_asking_the_journal(daemon: RunningDaemon):
    (daemon.root / "g.py").write_text(BEFORE)  # never read: the journal has no history of it
    full = hashlib.sha256(BEFORE.encode()).hexdigest()
    assert cli(daemon.root, "patch", "g.py", "--base", full, stdin=DIFF).returncode == 0


# --- log ------------------------------------------------------------------------------------


def test_log_says_when_older_events_were_left_out(daemon: RunningDaemon):
    (daemon.root / "a.txt").write_text("a\n")
    for _ in range(3):
        cli(daemon.root, "read", "a.txt")
    cut = cli(daemon.root, "log", "--limit", "2")
    assert len(cut.stdout.splitlines()) == 2
    first = int(cut.stdout.split()[0])
    assert "--limit" in cut.stderr and f"--until-seq {first - 1}" in cut.stderr
    whole = cli(daemon.root, "log", "--limit", "1000")
    assert whole.stderr == "" and len(whole.stdout.splitlines()) > 2
    as_json = json.loads(cli(daemon.root, "log", "--limit", "2", "--json").stdout)
    assert len(as_json["events"]) == 2


def test_log_columns_stay_aligned_with_a_long_agent_name(daemon: RunningDaemon):
    (daemon.root / "a.txt").write_text("a\n")
    cli(daemon.root, "read", "a.txt", agent="b")
    cli(daemon.root, "read", "a.txt", agent="an-agent-with-a-very-long-name-indeed")
    rows = [r for r in cli(daemon.root, "log", "--kind", "file_read").stdout.splitlines() if r]
    assert len(rows) == 2
    assert len({row.index("file_read") for row in rows}) == 1  # one column of kinds


# --- list-hunks, agent-status, show, export, call --help ------------------------------------


def test_list_hunks_is_a_table_with_readable_times(daemon: RunningDaemon):
    (daemon.root / "n.md").write_text("# N\n")
    assert cli(daemon.root, "list-hunks").stdout.strip() == "no pending hunks"
    cli(daemon.root, "prepare-file-append", "n.md", "--content", "- one")
    listed = cli(daemon.root, "list-hunks")
    assert listed.returncode == 0, listed.stderr
    head, row = listed.stdout.splitlines()
    assert head.split() == ["HUNK", "KIND", "PATH", "BASE", "PREPARED", "EXPIRES"]
    assert "append" in row and "n.md" in row and "{" not in listed.stdout
    assert re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", row) and re.search(
        r"\(in (1 h|59 min)", row
    )
    hunks = json.loads(cli(daemon.root, "list-hunks", "--json").stdout)["hunks"]
    assert isinstance(hunks[0]["created_at_ms"], int)


def test_agent_status_counts_in_words(daemon: RunningDaemon):
    (daemon.root / "a.txt").write_text("a\n")
    cli(daemon.root, "read", "a.txt", agent="solo")
    done = cli(daemon.root, "agent-status", "solo")
    assert done.stdout.splitlines()[0] == "solo: 1 file seen, 0 stale"


def test_show_of_a_seq_past_the_end_names_the_newest(daemon: RunningDaemon):
    (daemon.root / "a.txt").write_text("a\n")
    cli(daemon.root, "read", "a.txt")
    last = json.loads(cli(daemon.root, "log", "--json").stdout)["last_seq"]
    done = cli(daemon.root, "show", "9999")
    assert done.returncode == 1
    assert f"the newest event is seq {last}" in done.stderr and "details." not in done.stderr


def test_export_needs_no_format_flag(daemon: RunningDaemon):
    (daemon.root / "a.txt").write_text("a\n")
    cli(daemon.root, "read", "a.txt")
    plain, flagged = cli(daemon.root, "export"), cli(daemon.root, "export", "--jsonl")
    assert plain.returncode == 0, plain.stderr
    rows = [json.loads(line) for line in plain.stdout.splitlines()]
    assert rows and rows[0]["seq"] == 1
    assert [r["seq"] for r in rows] == [json.loads(x)["seq"] for x in flagged.stdout.splitlines()]


def test_call_help_ends_each_summary_with_one_full_stop():
    done = cli(None, "call", "--help")
    assert done.returncode == 0
    assert not [line for line in done.stdout.splitlines() if line.rstrip().endswith("..")]
