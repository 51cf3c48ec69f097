"""What a keyed write's retry is told, on every path the first request could have taken.

A client that sent a write with an `idempotency_key` and got no reply (or lost it)
sends the same frame again. The retry must be told what really happened to the
first request, never "ok" for what is not in the file (issue 40): refused before its
commit (nothing remembered: it runs again), refused as it landed over an outside
writer (`write_displaced`, again), applied (the first reply), killed between the
commit and the landing (recovery finishes it: "ok"; or, when the file changed while
the daemon was down, `write_displaced`). And a remembered reply keeps the outcome,
not the bulk: a keyed 200,000-line create journals about what an unkeyed one does.

Every case runs a real daemon process and the real client; the landing is met by a
real outside write, made while the daemon holds between its commit and the landing
(its test-only `--hold-after-commit FILE`), and the crash is a real SIGKILL.
"""

from __future__ import annotations

import signal
import sqlite3
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import msgspec
import pytest

from editjournal.client import Client, RequestError
from editjournal.daemon.text.diff import MAX_CHANGED_LINES, MAX_ROWS
from editjournal.schemas.endpoint import JOURNAL_FILE
from editjournal.schemas.events import RequestAnswered
from editjournal.schemas.wire import Response
from tests.conftest import STATE_DIR_NAME, RunningDaemon, start, wait_until

KEY = "write-1"
# the file had 200,000 lines (a 15 MB reply); 20,000 make a 1.5 MB reply, as
# far past the 4 KiB a remembered reply keeps, at a tenth of the suite's time
BIG_LINES = 20_000
RETRY = "a retry: this is the reply to the first request with this idempotency_key"


# keys are per (agent, identity): the client that retries keeps its credential, as a
# process that restarts would (Client(credential=...)), so it is one identity throughout
CREDENTIAL = "keyed-writes-retrying-client"


def retrier(running: RunningDaemon, **kwargs: Any) -> Client:
    return running.client(credential=CREDENTIAL, **kwargs)


def keyed_write(client: Client, path: str, content: str, key: str | None = KEY) -> Response:
    return client.call("write_file", {"path": path, "content": content}, idempotency_key=key)


def answers(running: RunningDaemon) -> list[tuple[int, RequestAnswered, Response]]:
    """(seq, event, the reply it remembers) of every `request_answered` journaled."""
    found = []
    for record in running.journal().records(kind="request_answered"):
        assert isinstance(record.event, RequestAnswered)
        reply = msgspec.msgpack.decode(record.event.reply, type=Response)
        found.append((record.seq, record.event, reply))
    return found


def applied(running: RunningDaemon, path: str) -> list[int]:
    return [r.seq for r in running.journal().records(kind="edit_applied", path=path)]


def is_retry(response: Response) -> bool:
    return any(w.startswith(RETRY) for w in response.warnings)


def stored_bytes(root: Path) -> int:
    """Bytes the journal holds in its rows (events and blobs): what a write adds to it,
    free of SQLite's page and WAL bookkeeping."""
    path = root / STATE_DIR_NAME / JOURNAL_FILE
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        events = db.execute("SELECT COALESCE(SUM(LENGTH(body)), 0) FROM events").fetchone()[0]
        blobs = db.execute("SELECT COALESCE(SUM(LENGTH(data)), 0) FROM blobs").fetchone()[0]
    return int(events) + int(blobs)


def test_a_keyed_write_refused_before_its_commit_is_not_remembered_and_runs_again(
    daemon: RunningDaemon, client: Client
) -> None:
    (daemon.root / "a.txt").write_text("one\ntwo\n")
    anchor = (client.read_file("a.txt", hashes=True).lines or [])[0].hash
    (daemon.root / "a.txt").write_text("ONE\ntwo\n")  # the line the edit targets changed
    op = {"op": "replace_line", "hash": anchor, "content": "uno"}
    params = {"path": "a.txt", "operations": [op]}
    first = client.call("edit", params, idempotency_key=KEY)
    again = client.call("edit", params, idempotency_key=KEY)
    assert not first.ok and first.error is not None and first.error.code == "anchor_stale"
    assert not again.ok and again.error is not None and again.error.code == "anchor_stale"
    assert not is_retry(again)  # judged again, not replayed
    assert answers(daemon) == []
    rejected = list(daemon.journal().records(kind="edit_rejected", path="a.txt"))
    assert len(rejected) == 2
    assert (daemon.root / "a.txt").read_text() == "ONE\ntwo\n"


def test_a_keyed_write_that_landed_is_told_its_first_reply_again(
    daemon: RunningDaemon, client: Client
) -> None:
    (daemon.root / "a.txt").write_text("old\n")
    first = keyed_write(client, "a.txt", "new\n")
    again = keyed_write(client, "a.txt", "new\n")
    assert first.ok and again.ok
    assert again.seq == first.seq == applied(daemon, "a.txt")[-1]
    assert again.result == first.result  # a small reply is remembered whole, diff and all
    assert first.result["diff"] and first.result["changed_lines"]
    assert is_retry(again) and f"(seq {first.seq})" in again.warnings[-1]
    assert (daemon.root / "a.txt").read_text() == "new\n"
    [(_, event, reply)] = answers(daemon)
    assert event.amends is None and reply.ok


def test_a_keyed_write_refused_as_it_landed_is_told_so_again_not_ok(
    workspace: Path, tmp_path: Path
) -> None:
    """The issue's case: refused at landing (`write_displaced`, after the commit) and
    resent with the same frame. Before: every retry was told `ok: true` with the first
    seq, and the content was never in the file."""
    (workspace / "a.txt").write_text("old\n")
    hold = tmp_path / "hold"
    running = start(workspace, "--hold-after-commit", str(hold))
    try:
        client = retrier(running, timeout=30)
        with ThreadPoolExecutor(1) as pool:
            sent = pool.submit(keyed_write, client, "a.txt", "new\n")
            wait_until(hold.exists, what="the daemon to hold between commit and landing")
            (workspace / "a.txt").write_text("outside\n")  # an editor saves meanwhile
            hold.unlink()
            first = sent.result(timeout=30)
        again = keyed_write(client, "a.txt", "new\n")
        assert not first.ok and first.error is not None
        assert first.error.code == "write_displaced"
        assert not again.ok and again.error == first.error and again.seq == first.seq
        assert is_retry(again)
        assert (workspace / "a.txt").read_text() == "outside\n"
        [(planned_seq, planned, said), (_, landed, told)] = answers(running)
        assert said.ok and planned.amends is None  # staged with the commit
        assert not told.ok and landed.amends == planned_seq  # the landing's real outcome
        assert len(applied(running, "a.txt")) == 1  # the retry ran nothing
    finally:
        running.stop()
    running = start(workspace)  # the journal keeps the real outcome across a restart
    try:
        after = keyed_write(retrier(running), "a.txt", "new\n")
        assert not after.ok and after.error is not None
        assert after.error.code == "write_displaced" and after.seq == first.seq
        assert (workspace / "a.txt").read_text() == "outside\n"
    finally:
        running.stop()


def killed_between_commit_and_landing(workspace: Path) -> None:
    """A keyed write whose daemon SIGKILLs itself right after the commit: no reply."""
    running = start(workspace, "--kill-after-commit")
    with pytest.raises(RequestError):
        retrier(running, timeout=5).request(
            "write_file", {"path": "a.txt", "content": "new\n"}, idempotency_key=KEY
        )
    assert running.proc.wait(timeout=10) == -signal.SIGKILL
    running.stop()
    assert (workspace / "a.txt").read_text() == "old\n"  # committed, not landed


def test_a_keyed_write_killed_before_it_landed_is_told_ok_once_recovery_finished_it(
    workspace: Path,
) -> None:
    (workspace / "a.txt").write_text("old\n")
    killed_between_commit_and_landing(workspace)
    running = start(workspace)
    try:
        again = keyed_write(retrier(running), "a.txt", "new\n")
        assert (workspace / "a.txt").read_text() == "new\n"  # rolled forward at the start
        assert again.ok and is_retry(again)
        assert [again.seq] == applied(running, "a.txt")
    finally:
        running.stop()


def test_a_keyed_write_killed_before_it_landed_and_overtaken_while_down_is_not_told_ok(
    workspace: Path,
) -> None:
    """Recovery does not roll a write forward over a change made while the daemon was
    down: the remembered `ok` is amended at the start, so the retry is not lied to."""
    (workspace / "a.txt").write_text("old\n")
    killed_between_commit_and_landing(workspace)
    (workspace / "a.txt").write_text("someone else\n")
    running = start(workspace)
    try:
        again = keyed_write(retrier(running), "a.txt", "new\n")
        assert not again.ok and again.error is not None and is_retry(again)
        assert again.error.code == "write_displaced"
        assert again.seq == applied(running, "a.txt")[0]
        assert (workspace / "a.txt").read_text() == "someone else\n"
        [(planned_seq, _, said), (_, amended, told)] = answers(running)
        assert said.ok and not told.ok and amended.amends == planned_seq
    finally:
        running.stop()


def big(prefix: str) -> str:
    return "".join(f"{prefix} line {i:06d} of a generated file\n" for i in range(BIG_LINES))


def test_a_keyed_big_create_journals_about_what_an_unkeyed_one_does(
    daemon: RunningDaemon,
) -> None:
    """Before: a keyed 200,000-line create journaled its whole 15 MB reply (diff and
    anchored lines); now its remembered reply keeps the outcome and says where the
    diff is."""
    client = daemon.client(timeout=120)
    start_bytes = stored_bytes(daemon.root)
    plain = keyed_write(client, "plain.txt", big("a"), key=None)
    unkeyed = stored_bytes(daemon.root) - start_bytes
    before = stored_bytes(daemon.root)
    first = keyed_write(client, "keyed.txt", big("b"))
    keyed = stored_bytes(daemon.root) - before
    assert plain.ok and first.ok
    # the live reply lists the added lines with their anchors up to the cap, and its
    # diff up to its own, saying how many more lines were added
    assert len(first.result["changed_lines"]) == min(BIG_LINES, MAX_CHANGED_LINES)
    diff = first.result["diff"]
    shown = diff.count("\n+")
    assert shown == MAX_ROWS - 1  # the hunk's header is a row
    assert diff.endswith(
        f"... {BIG_LINES - shown:,} more added lines not shown (a diff shows {MAX_ROWS:,} rows)"
    )
    assert keyed <= unkeyed + 16 * 1024, (keyed, unkeyed)
    [(_, event, _)] = answers(daemon)
    assert len(event.reply) < 4096
    again = keyed_write(client, "keyed.txt", big("b"))
    assert again.ok and is_retry(again) and again.seq == first.seq
    for field in ("version", "sha256", "lines_after", "file_path", "created"):
        assert again.result[field] == first.result[field], field
    assert again.result["diff"] == "" and again.result["changed_lines"] == []
    assert any(f"editjournal show {first.seq}" in w for w in again.warnings)
    shown = client.call("show", {"seq": first.seq})
    assert shown.ok and shown.result["event"]["kind"] == "edit_applied"
