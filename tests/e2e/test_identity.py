"""A name alone no longer buys what only its agent should have (issue 40).

Every request carries a credential: a `Client` object makes one, the CLI and the hooks
keep one per workspace and agent in the user's runtime directory. What a request makes
that only its maker may act on is journaled with the credential's fingerprint: a
prepared hunk, a write a plain `undo` takes back, a keyed reply. A second client that
only names `alice` cannot apply or discard her hunk (`hunk_identity_mismatch`), undo
her write by a plain undo (`write_identity_mismatch`), poison her idempotency key (make
her keyed write `idempotency_key_reused`) or pre-empt it (have her write replayed as
done, not written); alice herself keeps her identity across reconnects and a restart,
the CLI across its processes, a hook session across its hook processes.
"""

from __future__ import annotations

import json
import stat
from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest
import zmq

from editjournal.client import Client, RequestError
from editjournal.client.library.credentials import credential_file, kept_credential
from editjournal.client.library.trust import Untrusted
from editjournal.schemas.events import EditApplied
from editjournal.schemas.wire import Response, identity_of
from tests.conftest import RunningDaemon, start
from tests.e2e.cli_support import cli
from tests.e2e.hook_support import claude_payload, run_hook

TEXT = "".join(f"value_{n} = {n}\n" for n in range(1, 11))


@pytest.fixture
def ws(workspace: Path) -> RunningDaemon:
    (workspace / "conf.py").write_text(TEXT)
    return start(workspace)


@pytest.fixture
def served(ws: RunningDaemon) -> Iterator[RunningDaemon]:
    yield ws
    if ws.proc.poll() is None:
        ws.stop()


def refused(code: str, call: object, *args: object, **kwargs: object) -> RequestError:
    assert callable(call)
    with pytest.raises(RequestError) as caught:
        call(*args, **kwargs)
    assert caught.value.code == code, caught.value
    return caught.value


def is_retry(response: Response) -> bool:
    return any(w.startswith("a retry:") for w in response.warnings)


def bare_request(client: Client, method: str, params: dict[str, object]) -> dict[str, object]:
    """A request naming `client`'s agent sent without any credential (an older client)."""
    sock: zmq.Socket[bytes] = zmq.Context.instance().socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.connect(client.address)
    try:
        frame = {"id": 1, "method": method, "agent": client.agent, "params": params}
        sock.send(msgspec.msgpack.encode(frame))
        assert sock.poll(10_000), "no reply"
        reply: dict[str, object] = msgspec.msgpack.decode(sock.recv())
        return reply
    finally:
        sock.close()


def test_another_client_named_alice_can_neither_apply_nor_discard_her_hunk(served: RunningDaemon):
    alice, mallory = served.client("alice"), served.client("alice")
    plan = alice.prepare_file_append("conf.py", "alice_was_here = 1\n")
    error = refused("hunk_identity_mismatch", mallory.apply_file_modification, plan.hunk_id)
    assert "another client named 'alice'" in error.message and error.hint
    refused("hunk_identity_mismatch", mallory.discard_hunk, plan.hunk_id)
    assert mallory.list_hunks().hunks == []  # not hers to see as her own either
    reply = bare_request(alice, "apply_file_modification", {"hunk_id": plan.hunk_id})
    assert reply["ok"] is False and reply["error"]["code"] == "hunk_identity_mismatch"  # type: ignore[index]
    assert (served.root / "conf.py").read_text() == TEXT
    assert [h.hunk_id for h in alice.list_hunks().hunks] == [plan.hunk_id]
    alice.apply_file_modification(plan.hunk_id)
    assert (served.root / "conf.py").read_text().endswith("alice_was_here = 1\n")


def test_a_plain_undo_by_another_client_named_alice_is_refused(served: RunningDaemon):
    alice, mallory = served.client("alice"), served.client("alice")
    written = alice.write_file("conf.py", TEXT.replace("value_3 = 3", "value_3 = 30"))
    error = refused("write_identity_mismatch", mallory.undo, "conf.py")
    assert error.details["seq"] == written.version
    assert f'undo({{"path": "conf.py", "seq": {written.version}}})' in (error.hint or "")
    assert "value_3 = 30\n" in (served.root / "conf.py").read_text()
    undone = alice.undo("conf.py")
    assert undone.undone["seq"] == written.version
    assert (served.root / "conf.py").read_text() == TEXT
    last = list(served.journal().records(kind="edit_applied"))[-1].event
    assert isinstance(last, EditApplied) and last.identity == alice.identity


def test_another_client_named_alice_can_neither_poison_nor_preempt_her_keys(
    served: RunningDaemon,
):
    alice, mallory = served.client("alice"), served.client("alice")
    # poisoned: the key used first for another request
    mallory.call("write_file", {"path": "m.txt", "content": "mallory\n"}, idempotency_key="k1")
    mine = alice.call("write_file", {"path": "a.txt", "content": "alice\n"}, idempotency_key="k1")
    assert mine.ok and not is_retry(mine), mine
    assert (served.root / "a.txt").read_text() == "alice\n"
    # pre-empted: the very request she will send, sent first under her name
    line = {"path": "conf.py", "content": "alice_line = 1\n", "skip_safety_check": True}
    first = mallory.call("append_to_file", line, idempotency_key="k2")
    assert first.ok
    hers = alice.call("append_to_file", line, idempotency_key="k2")
    assert hers.ok and hers.seq != first.seq and not is_retry(hers), hers
    assert (served.root / "conf.py").read_text().count("alice_line = 1\n") == 2
    again = alice.call("append_to_file", line, idempotency_key="k2")  # her own retry
    assert again.seq == hers.seq and is_retry(again)


def test_alice_keeps_her_identity_across_a_reconnect_and_a_restart(ws: RunningDaemon):
    alice = ws.client("alice")
    plan = alice.prepare_file_append("conf.py", "after_restart = 1\n")
    ws.stop()
    again = start(ws.root)
    try:
        alice._revive()  # the same object, a new connection to a new daemon
        alice.apply_file_modification(plan.hunk_id)
        assert (ws.root / "conf.py").read_text().endswith("after_restart = 1\n")
    finally:
        again.stop()
        alice.close()


def test_the_cli_keeps_the_agents_identity_across_its_processes(served: RunningDaemon):
    prepared = cli(
        served.root, "call", "prepare_file_append", agent="alice",
        stdin=json.dumps({"path": "conf.py", "content": "from_the_cli = 1\n"}),
    )  # fmt: skip
    assert prepared.returncode == 0, prepared.stderr
    hunk_id = json.loads(prepared.stdout)["result"]["hunk_id"]
    refused("hunk_identity_mismatch", served.client("alice").apply_file_modification, hunk_id)
    applied = cli(
        served.root, "call", "apply_file_modification", agent="alice",
        stdin=json.dumps({"hunk_id": hunk_id}),
    )  # fmt: skip
    assert applied.returncode == 0, applied.stdout + applied.stderr
    assert (served.root / "conf.py").read_text().endswith("from_the_cli = 1\n")


def test_a_hook_session_keeps_its_identity_across_hook_processes(served: RunningDaemon):
    """PreToolUse announces, PostToolUse claims, each in a hook process of its own: the
    claim is the session's (the same kept credential); a client that only names the
    session cannot claim what the session announced (`wrong_owner`)."""
    root, agent = served.root, "claude-code:s-1"
    edit = {"old_string": "value_5 = 5", "new_string": "value_5 = 50"}
    pre = claude_payload(root, "s-1", "PreToolUse", "Edit", "conf.py", **edit)
    assert run_hook("claude-code", pre, cwd=root).returncode == 0
    (root / "conf.py").write_text(TEXT.replace("value_5 = 5", "value_5 = 50"))  # the Edit
    stolen = served.client(agent).call("claim_write", {"path": "conf.py", "tool": "Edit"})
    assert stolen.error is not None and stolen.error.code == "wrong_owner", stolen
    assert "another client named 'claude-code:s-1'" in stolen.error.message
    post = claude_payload(root, "s-1", "PostToolUse", "Edit", "conf.py", **edit)
    assert run_hook("claude-code", post, cwd=root).returncode == 0
    writes = list(served.journal().records(kind="edit_applied", path="conf.py"))
    assert [w.agent for w in writes] == [agent]
    kept = identity_of(kept_credential(root, agent))
    assert isinstance(writes[0].event, EditApplied) and writes[0].event.identity == kept


def test_the_kept_credential_is_one_per_workspace_and_agent_and_private(tmp_path: Path):
    first = kept_credential(tmp_path, "alice")
    assert kept_credential(tmp_path, "alice") == first
    assert kept_credential(tmp_path, "bob") != first
    path = credential_file(tmp_path, "alice")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    path.chmod(0o644)  # readable by others: not a secret any more, not used
    with pytest.raises(Untrusted, match="may be read by others"):
        kept_credential(tmp_path, "alice")
    planted = credential_file(tmp_path, "carol")
    planted.symlink_to(path)
    with pytest.raises(Untrusted, match="symlink"):
        kept_credential(tmp_path, "carol")
