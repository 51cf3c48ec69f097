"""Prepared hunks in the fold (daemon.model.hunkbook), the config they obey
(daemon.settings.config), and the order of applies that arrive together
(daemon.runtime.applyorder)."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from editjournal.daemon.model.state import State, fold
from editjournal.daemon.runtime.applyorder import in_apply_order
from editjournal.daemon.settings.config import DEFAULT, parse, write_access_denied
from editjournal.daemon.store.journal import Journal
from editjournal.schemas.errors import ErrorCode, ToolError
from editjournal.schemas.events import HunkApplied, HunkDiscarded, HunkPrepared


def prepared(hunk_id: str, created: int, path: str = "a.md") -> HunkPrepared:
    return HunkPrepared(
        path=path,
        hunk_id=hunk_id,
        hunk_kind="append",
        created_at_ms=created,
        expires_at_ms=created + 1000,
        base_version=1,
        base_sha256="0" * 64,
        start=0,
        end=0,
        new_lines=["x"],
    )


def folded(tmp_path: Path, *events: tuple[str, object]) -> tuple[State, State]:
    """(live state, fold of the committed journal) after `events` by (agent, event)."""
    journal = Journal(tmp_path / "j.db")
    live = State()
    for agent, event in events:
        live.apply(journal.stage(agent, event))  # type: ignore[arg-type]
    journal.commit()
    again = fold(journal.records())
    journal.close()
    return live, again


def test_hunks_fold_from_the_journal(tmp_path: Path):
    live, again = folded(
        tmp_path,
        ("agent-a", prepared("h1", 100)),
        ("agent-b", prepared("h2", 200)),
        ("agent-a", prepared("h3", 300)),
        ("agent-a", HunkApplied(path="a.md", hunk_id="h1", edit_seq=9)),
        ("agent-b", HunkDiscarded(path="a.md", hunk_id="h2", reason="discarded")),
        ("agent-a", HunkDiscarded(path="a.md", hunk_id="h3", reason="expired")),
    )
    assert live.digest() == again.digest()
    book = again.hunks
    assert book.get("h1") is not None and book.get("h1").applied_seq == 9  # type: ignore[union-attr]
    assert book.get("h2") is None
    assert book.get("h3").expired(0)  # type: ignore[union-attr]
    assert book.pending() == []


def test_pending_hunks_expire_by_the_time_asked(tmp_path: Path):
    live, _ = folded(tmp_path, ("agent-a", prepared("h1", 100)))
    (hunk,) = live.hunks.pending("agent-a")
    assert not hunk.expired(1099) and hunk.expired(1100)
    assert live.hunks.pending("agent-b") == [] and live.hunks.pending(path="b.md") == []


def _frame(method: str, hunk_id: str) -> list[bytes]:
    body = {"id": 1, "agent": "x", "method": method, "params": {"hunk_id": hunk_id}}
    return [b"route", msgspec.msgpack.encode(body)]


def test_applies_waiting_together_go_in_plan_order_per_file(tmp_path: Path):
    live, _ = folded(
        tmp_path,
        ("agent-a", prepared("ha", 100)),
        ("agent-b", prepared("hb", 200)),
        ("agent-c", prepared("hc", 50, path="other.md")),
    )
    read = [b"route", msgspec.msgpack.encode({"id": 2, "method": "read_file"})]
    requests = [
        _frame("apply_file_modification", "hb"),
        read,
        _frame("apply_file_modification", "hunk-unknown"),
        _frame("apply_file_modification", "ha"),
        _frame("apply_file_modification", "hc"),
        [b"route", b"\xc1 not msgpack apply_file_modification"],
    ]
    ordered = in_apply_order(requests, live.hunks)
    assert ordered == [requests[3], read, requests[2], requests[0], requests[4], requests[5]]


def test_config_defaults_and_access():
    assert DEFAULT.may_write("anyone") and DEFAULT.hunk_ttl_ms == 3_600_000
    config = parse('[access]\nread_only = ["rev"]\n[hunks]\nttl_seconds = 90\n')
    assert not config.may_write("rev") and config.may_write("agent-a")
    assert config.hunk_ttl_ms == 90_000
    only = parse('[access]\nwriters = ["a"]\n')
    assert only.may_write("a") and not only.may_write("b")


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("[access\n", "not valid TOML"),
        ("[acess]\n", "unknown section [acess]"),
        ("[access]\nreadonly = []\n", "unknown key(s): readonly"),
        ("[access]\nread_only = 'rev'\n", "list of agent names"),
        ("[hunks]\nttl_seconds = 0\n", "positive number"),
        ("[hunks]\nttl_seconds = true\n", "positive number"),
        ("access = 1\n", "must be a table"),
    ],
)
def test_a_malformed_config_is_config_invalid(text: str, says: str):
    with pytest.raises(ToolError) as caught:
        parse(text)
    assert caught.value.code is ErrorCode.CONFIG_INVALID and says in caught.value.message


def test_a_config_symlink_is_refused_not_followed(tmp_path: Path):
    secret = tmp_path / "secret.toml"
    secret.write_text('[access]\nread_only = ["a"]\n')
    (tmp_path / "config.toml").symlink_to(secret)
    denied = write_access_denied(tmp_path, "a")
    assert denied is not None and denied.code is ErrorCode.CONFIG_INVALID
    assert "not a regular file" in denied.message
