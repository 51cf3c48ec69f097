"""A checkpoint per prompt: a harness's prompt hook (Claude Code's UserPromptSubmit,
Gemini CLI's BeforeAgent) takes the session's whole-workspace checkpoint of that turn,
`<harness>:<session>/turn-<n>`, n counted by the journal; the prompt's text is kept only
when config.toml allows it; a session keeps its newest `[prompts] keep_checkpoints`
(older ones pruned, no blob lost: an older kept one restores, verify stays green);
`undo --by SESSION --since turn-N` takes back turn N and later, nothing before; a
prompt is never blocked; `hooks install` adds the prompt hooks once, beside others'.

The documented payloads go to the real `editjournal hook HARNESS` command once per
harness; the other turns call the same `decide` in-process (the hook's whole logic,
without an interpreter start per turn)."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from editjournal.client import RequestError
from editjournal.client.harness import hook_settings
from editjournal.client.harness.hook import decide
from editjournal.schemas.events import CheckpointCreated, CheckpointsPruned
from tests.conftest import RunningDaemon
from tests.e2e.cli_support import cli
from tests.e2e.hook_support import run_hook

APP = "".join(f"app_{n} = {n}\n" for n in range(1, 11))
SECRET = "deploy with token hunter2"


def prompt(
    root: Path, session: str, text: str = SECRET, harness: str = "claude-code"
) -> dict[str, Any]:
    """A prompt hook's payload as the harness documents it."""
    event = "UserPromptSubmit" if harness == "claude-code" else "BeforeAgent"
    return {
        "session_id": session,
        "transcript_path": f"/tmp/{session}.jsonl",
        "cwd": str(root),
        "hook_event_name": event,
        "prompt": text,
        **({"permission_mode": "default"} if harness == "claude-code" else {"timestamp": "now"}),
    }


def turn(ws: RunningDaemon, session: str, harness: str = "claude-code") -> None:
    assert decide(prompt(ws.root, session, harness=harness), harness, workspace=ws.root) is None


def created(ws: RunningDaemon) -> list[CheckpointCreated]:
    events = [r.event for r in ws.journal().records(kind="checkpoint_created")]
    return [e for e in events if isinstance(e, CheckpointCreated)]


def names(ws: RunningDaemon) -> list[str]:
    return [c.name for c in ws.client("lister").checkpoint_list().checkpoints]


@pytest.fixture
def ws(daemon: RunningDaemon) -> RunningDaemon:
    (daemon.root / "app.py").write_text(APP)
    return daemon


def config(ws: RunningDaemon, text: str) -> None:
    (ws.root / ".editjournal" / "config.toml").write_text(text)


def test_each_prompt_leaves_a_checkpoint_named_after_its_session_and_turn(ws: RunningDaemon):
    done = run_hook("claude-code", prompt(ws.root, "s1"))
    assert done.returncode == 0 and done.stdout == "" and done.stderr == "", done
    (ws.root / "app.py").write_text(APP + "more = 1\n")
    turn(ws, "s1")
    turn(ws, "s2")
    turn(ws, "s1")
    assert names(ws) == [
        "claude-code:s1/turn-1", "claude-code:s1/turn-2",
        "claude-code:s2/turn-1", "claude-code:s1/turn-3",
    ]  # fmt: skip
    records = list(ws.journal().records(kind="checkpoint_created"))
    assert [r.agent for r in records] == ["claude-code:s1"] * 2 + [
        "claude-code:s2",
        "claude-code:s1",
    ]
    # the whole workspace, and never the prompt's text without the config's leave
    assert all(e.scope == [] and e.prompt is None for e in created(ws))
    assert SECRET.encode() not in (ws.root / ".editjournal" / "journal.db").read_bytes()


def test_gemini_clis_before_agent_takes_the_turns_checkpoint(ws: RunningDaemon):
    done = run_hook("gemini-cli", prompt(ws.root, "g1", harness="gemini-cli"))
    assert done.returncode == 0 and done.stdout == "" and done.stderr == "", done
    turn(ws, "g1", "gemini-cli")
    assert names(ws) == ["gemini-cli:g1/turn-1", "gemini-cli:g1/turn-2"]


def test_the_prompt_text_is_kept_only_when_the_config_allows_it(ws: RunningDaemon):
    config(ws, "[prompts]\nstore_text = true\n")
    turn(ws, "s1")
    assert [e.prompt for e in created(ws)] == [SECRET]


def test_retention_prunes_the_oldest_and_loses_no_blob(ws: RunningDaemon):
    config(ws, "[prompts]\nkeep_checkpoints = 2\n")
    agent = ws.client("claude-code:s1")
    for n in range(1, 5):  # turn n: the checkpoint, then the session's edit
        turn(ws, "s1")
        agent.edit_file("app.py", f"app_{n} = {n}", f"app_{n} = 'turn {n}'")
    turn(ws, "other")  # another session's turns are never this one's to prune
    turn(ws, "s1")
    assert names(ws) == [
        "claude-code:s1/turn-4",
        "claude-code:other/turn-1",
        "claude-code:s1/turn-5",
    ]
    pruned = [r.event for r in ws.journal().records(kind="checkpoints_pruned")]
    assert [p.names for p in pruned if isinstance(p, CheckpointsPruned)] == [
        ["claude-code:s1/turn-1"], ["claude-code:s1/turn-2"], ["claude-code:s1/turn-3"],
    ]  # fmt: skip
    with pytest.raises(RequestError) as refused:
        agent.checkpoint_restore("claude-code:s1/turn-2")
    assert refused.value.code == "checkpoint_not_found"
    # the oldest kept one restores byte for byte (its blobs, shared with pruned ones, stay)
    agent.checkpoint_restore("claude-code:s1/turn-4")
    expected = APP
    for n in range(1, 4):
        expected = expected.replace(f"app_{n} = {n}", f"app_{n} = 'turn {n}'")
    assert (ws.root / "app.py").read_text() == expected
    ws.stop()
    verified = cli(ws.root, "verify")
    assert verified.returncode == 0, verified.stdout + verified.stderr


def test_undo_since_a_turn_takes_back_only_that_turn(ws: RunningDaemon):
    session, other = ws.client("claude-code:s1"), ws.client("agent-b")
    turn(ws, "s1")
    session.edit_file("app.py", "app_1 = 1", "app_1 = 'turn 1'")
    turn(ws, "s1")
    session.edit_file("app.py", "app_9 = 9", "app_9 = 'turn 2'")
    session.write_file("made.py", "made_in_turn_2 = True\n")
    ws.client("claude-code:s1/sub7").write_file("sub.py", "by_the_subagent = 1\n")
    other.edit_file("app.py", "app_5 = 5", "app_5 = 'B'")
    # a subagent's turn is its session's: its work alone is taken back
    ws.client("boss").undo(by="claude-code:s1/sub7", since="turn-2")
    assert not (ws.root / "sub.py").exists() and (ws.root / "made.py").exists()
    done = ws.client("boss").undo(by="claude-code:s1", since="turn-2")
    assert done.since == ws.client("lister").checkpoint_list().checkpoints[1].id
    assert (ws.root / "app.py").read_text() == APP.replace("app_1 = 1", "app_1 = 'turn 1'").replace(
        "app_5 = 5", "app_5 = 'B'"
    )
    assert not (ws.root / "made.py").exists()
    with pytest.raises(RequestError) as refused:
        ws.client("boss").undo(by="claude-code:s1", since="turn-7")
    assert refused.value.code == "checkpoint_not_found" and "turn-7" in str(refused.value)


def test_undo_since_a_pruned_turn_still_finds_where_it_began(ws: RunningDaemon):
    config(ws, "[prompts]\nkeep_checkpoints = 1\n")
    session = ws.client("claude-code:s1")
    turn(ws, "s1")
    session.edit_file("app.py", "app_1 = 1", "app_1 = 'turn 1'")
    turn(ws, "s1")
    session.edit_file("app.py", "app_2 = 2", "app_2 = 'turn 2'")
    assert names(ws) == ["claude-code:s1/turn-2"]
    done = cli(ws.root, "undo", "--by", "claude-code:s1", "--since", "turn-1", agent="boss")
    assert done.returncode == 0 and "pruned" in done.stdout, done.stdout + done.stderr
    assert (ws.root / "app.py").read_text() == APP


def test_a_prompt_is_never_blocked(ws: RunningDaemon):
    done = run_hook("claude-code", {**prompt(ws.root, "s1"), "session_id": ""})
    assert done.returncode == 0 and done.stdout == "" and "session_id" in done.stderr
    config(ws, "[prompts]\nkeep_checkpoints = 0\n")  # a broken config: the prompt goes on
    done = run_hook("claude-code", prompt(ws.root, "s1"))
    assert done.returncode == 0 and done.stdout == "" and "config_invalid" in done.stderr


def test_hooks_install_adds_the_prompt_hooks_once_beside_others():
    theirs = {"type": "command", "command": "notify-me"}
    before = {"hooks": {e: [{"hooks": [theirs]}] for e in ("UserPromptSubmit", "BeforeAgent")}}
    for harness, event in (
        (hook_settings.CLAUDE_CODE, "UserPromptSubmit"),
        (hook_settings.GEMINI_CLI, "BeforeAgent"),
    ):
        command = hook_settings.hook_command(harness, ["/opt/bin/editjournal"])
        once, _ = hook_settings.install(before, harness, command)
        twice, outcomes = hook_settings.install(once, harness, command)
        assert twice == once and {o.outcome for o in outcomes} == {"already installed"}
        groups = once["hooks"][event]
        ours = [h for g in groups for h in g["hooks"] if hook_settings.is_ours(h, harness)]
        assert len(ours) == 1 and all("matcher" not in g for g in groups)
        assert theirs in [h for g in groups for h in g["hooks"]]
        states = hook_settings.entry_states(once, harness, command)
        assert {s.state for s in states} == {"installed"}


def test_a_turns_checkpoint_stores_the_manifest_chunks_it_changed_as_deltas(ws: RunningDaemon):
    """A chunk lists up to ~1,000 files: a turn that changed two stores each one's
    chunk as a line delta of a few hundred bytes, not the chunk again (issue 37); the
    older turn restores from it and verify stays green."""
    for n in range(400):
        folder = ws.root / f"d{n // 40}"
        folder.mkdir(exist_ok=True)
        (folder / f"f{n}.py").write_text(f"v = {n}\n")
    turn(ws, "s1")
    (ws.root / "d0" / "f7.py").write_text("v = 'changed'\n")
    (ws.root / "d9" / "f390.py").write_text("v = 'changed'\n")
    turn(ws, "s1")
    rows = new_chunks(ws)
    assert 1 <= len(rows) <= 2
    assert all(codec in ("delta", "zdelta") and size < 400 for codec, size in rows), rows
    ws.client("claude-code:s1").checkpoint_restore("claude-code:s1/turn-1")
    assert (ws.root / "d9" / "f390.py").read_text() == "v = 390\n"
    ws.stop()
    verified = cli(ws.root, "verify")
    assert verified.returncode == 0, verified.stdout + verified.stderr


def new_chunks(ws: RunningDaemon) -> list[tuple[str, int]]:
    """(codec, stored bytes) of the manifest chunks the last checkpoint added to the one
    before it."""
    *_, before, last = created(ws)
    journal = ws.root / ".editjournal" / "journal.db"
    with sqlite3.connect(f"file:{journal}?mode=ro", uri=True) as db:
        return [
            db.execute("SELECT codec, length(data) FROM blobs WHERE sha256 = ?", [bytes.fromhex(d)])
            .fetchone() for d in set(last.manifest) - set(before.manifest)
        ]  # fmt: skip


@pytest.mark.stress
def test_a_second_prompt_checkpoint_of_a_big_tree_costs_what_changed(ws: RunningDaemon):
    """10,000 files: the first prompt checkpoint reads them all; the second, after 10
    changed, reads 10 and stores 10 contents plus a line delta of each manifest chunk
    they touch."""
    for n in range(10_000):
        folder = ws.root / f"d{n // 500}"
        folder.mkdir(exist_ok=True)
        (folder / f"f{n}.py").write_text(f"value_{n} = {n}\n" * 20)
    session = ws.client("claude-code:big", timeout=600)
    started = time.perf_counter()
    first = session.prompt_checkpoint()
    first_s = time.perf_counter() - started
    for n in range(0, 10_000, 1_000):
        (ws.root / f"d{n // 500}" / f"f{n}.py").write_text(f"changed_{n} = 1\n")
    started = time.perf_counter()
    second = session.prompt_checkpoint()
    second_s = time.perf_counter() - started
    print(
        f"\nfirst: {first_s:.2f} s, {first.read_files} read, {first.stored_bytes} B stored;"
        f" second: {second_s:.2f} s, {second.read_files} read, {second.stored_bytes} B stored"
    )
    assert first.file_count == second.file_count == 10_001
    # files written within the last moments are read again (their stat cannot vouch)
    assert second.read_files < 1_000 and second.stored_bytes < first.stored_bytes / 50
    chunks = new_chunks(ws)  # each a line delta, not the chunk again (issue 37)
    assert chunks and all(codec in ("delta", "zdelta") for codec, _ in chunks), chunks
    assert sum(size for _, size in chunks) < 400 * len(chunks)
