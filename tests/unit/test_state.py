"""Tests for daemon.model.state: the fold of the journal equals the live projection."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from editjournal.daemon.model.state import FileInfo, Snapshot, State, fold
from editjournal.daemon.store.journal import Journal, sha256_hex
from editjournal.schemas.events import DaemonStarted, DaemonStopped, FileRead, Record


def read(
    path: str,
    content: bytes,
    lines: tuple[int, int] | None = None,
    unseen: list[tuple[int, int]] | None = None,
) -> FileRead:
    return FileRead(
        path=path,
        sha256=sha256_hex(content),
        size=len(content),
        line_count=content.count(b"\n"),
        lines=lines,
        unseen=unseen or [],
    )


@pytest.fixture
def journal(tmp_path: Path) -> Iterator[Journal]:
    j = Journal(tmp_path / "journal.sqlite")
    yield j
    j.close()


class Live:
    """A journal plus the state a daemon keeps by applying each record as it stages it."""

    def __init__(self, journal: Journal) -> None:
        self.journal = journal
        self.state = State()

    def stage(self, agent: str | None, event, blobs: dict[str, bytes] | None = None) -> Record:
        record = self.journal.stage(agent, event, blobs or {})
        self.state.apply(record)
        return record

    def append(self, agent: str | None, event) -> Record:
        record = self.stage(agent, event)
        self.journal.commit()
        return record


@pytest.fixture
def live(journal: Journal) -> Live:
    return Live(journal)


def test_fold_of_the_journal_equals_the_live_state(live: Live) -> None:
    live.append(None, DaemonStarted(pid=1, workspace="/w", version="0", socket="s"))
    live.stage("alice", read("a.py", b"1\n"))
    live.stage("bob", read("a.py", b"1\n", lines=(1, 1)))
    live.journal.commit()
    live.append("alice", read("b.py", b"2\n2\n"))
    live.append("bob", read("a.py", b"3\n"))
    live.append(None, read("c.py", b""))
    live.append(None, DaemonStopped(pid=1, reason="bye"))

    folded = fold(live.journal.records())

    assert folded == live.state
    assert folded.digest() == live.state.digest()
    assert folded.last_seq == folded.event_count == 7


def test_first_read_of_new_content_starts_a_version_at_its_seq(live: Live) -> None:
    live.append(None, DaemonStarted(pid=1, workspace="/w", version="0", socket="s"))
    record = live.append("alice", read("a.py", b"one\ntwo\n"))

    assert live.state.files["a.py"] == FileInfo(
        "a.py", sha256_hex(b"one\ntwo\n"), version=2, size=8, line_count=2, last_seq=2
    )
    assert record.seq == 2


def test_rereading_same_content_keeps_the_version_and_new_content_bumps_it(live: Live) -> None:
    live.append("alice", read("a.py", b"v1\n"))  # 1
    live.append("bob", read("a.py", b"v1\n"))  # 2
    live.append("alice", read("a.py", b"v1\n", lines=(1, 1)))  # 3
    assert (live.state.files["a.py"].version, live.state.files["a.py"].last_seq) == (1, 3)

    live.append("bob", read("a.py", b"v2\nv2\n"))  # 4
    info = live.state.files["a.py"]
    assert (info.version, info.last_seq, info.sha256) == (4, 4, sha256_hex(b"v2\nv2\n"))
    assert (info.size, info.line_count) == (6, 2)

    live.append("alice", read("a.py", b"v1\n"))  # 5: back to old content is a new version
    assert live.state.files["a.py"].version == 5


def test_versions_are_per_path(live: Live) -> None:
    live.append("alice", read("a.py", b"same\n"))  # 1
    live.append("alice", read("b.py", b"same\n"))  # 2
    assert live.state.files["a.py"].version == 1
    assert live.state.files["b.py"].version == 2


def test_snapshot_holds_the_agents_last_read_and_its_lines(live: Live) -> None:
    content = b"a\nb\nc\n"
    digest = sha256_hex(content)
    live.append("alice", read("a.py", content))  # 1
    live.append("bob", read("a.py", content, lines=(2, 3), unseen=[(1, 1)]))  # 2
    live.append("alice", read("b.py", content, lines=(1, 1), unseen=[(2, 3)]))  # 3
    live.append("alice", read("a.py", content, lines=(1, 2)))  # 4: line 3 seen at 1

    assert live.state.snapshots == {
        ("alice", "a.py"): Snapshot("alice", "a.py", 4, digest, (1, 2), (), (4, digest)),
        ("bob", "a.py"): Snapshot("bob", "a.py", 2, digest, (2, 3), ((1, 1),), None),
        ("alice", "b.py"): Snapshot("alice", "b.py", 3, digest, (1, 1), ((2, 3),), None),
    }
    assert live.state.agents() == {"alice", "bob"}


def test_the_last_full_view_outlives_views_with_unseen_lines(live: Live) -> None:
    one, two = b"a\nb\n", b"a\nB\n"
    live.append("alice", read("a.py", one))  # 1: all of it
    live.append("alice", read("a.py", two, lines=(1, 1), unseen=[(2, 2)]))  # 2
    snapshot = live.state.snapshots["alice", "a.py"]
    assert (snapshot.version, snapshot.unseen) == (2, ((2, 2),))
    assert snapshot.full_view == (1, sha256_hex(one))  # what explains line 2 later
    live.append("alice", read("a.py", two, lines=(2, 2)))  # 3: now every line was shown
    assert live.state.snapshots["alice", "a.py"].full_view == (3, sha256_hex(two))


def test_whole_file_read_has_no_lines_range(live: Live) -> None:
    live.append("alice", read("a.py", b"x\n", lines=(1, 1)))
    live.append("alice", read("a.py", b"x\n"))
    assert live.state.snapshots["alice", "a.py"].lines is None


def test_read_without_agent_updates_the_file_but_no_snapshot(live: Live) -> None:
    live.append(None, read("a.py", b"x\n"))
    assert "a.py" in live.state.files
    assert live.state.snapshots == {}
    assert live.state.agents() == set()


def test_daemon_start_and_stop_count_as_events_but_change_no_files(live: Live) -> None:
    live.append(None, DaemonStarted(pid=1, workspace="/w", version="0", socket="s"))
    live.append(None, DaemonStopped(pid=1, reason="bye"))

    assert (live.state.last_seq, live.state.event_count) == (2, 2)
    assert live.state.files == {} and live.state.snapshots == {}


@pytest.mark.parametrize("seq", [0, 1, 3, 10])
def test_apply_refuses_an_out_of_order_record(live: Live, seq: int) -> None:
    live.append("alice", read("a.py", b"x\n"))
    before = dataclasses.replace(live.state, files=dict(live.state.files))
    digest = live.state.digest()
    stray = Record(seq=seq, ts=0, agent="bob", event=read("b.py", b"y\n"), prev_hash="", hash="")

    with pytest.raises(ValueError, match="out of order"):
        live.state.apply(stray)

    assert live.state == before
    assert live.state.digest() == digest


# --- digest ------------------------------------------------------------------------------

FILE = FileInfo("a.py", "h1", version=1, size=10, line_count=2, last_seq=3)
SNAP = Snapshot("alice", "a.py", version=3, sha256="h1", lines=(1, 2))


def state_with(file: FileInfo = FILE, snap: Snapshot = SNAP) -> State:
    return State(
        files={file.path: file},
        snapshots={(snap.agent, snap.path): snap},
        last_seq=3,
        event_count=3,
    )


@pytest.mark.parametrize(
    "changes",
    [
        {"path": "b.py"},
        {"sha256": "h2"},
        {"version": 2},
        {"size": 11},
        {"line_count": 3},
        {"last_seq": 2},
    ],
)
def test_digest_differs_when_a_file_differs(changes: dict[str, object]) -> None:
    assert state_with(file=dataclasses.replace(FILE, **changes)).digest() != state_with().digest()


@pytest.mark.parametrize(
    "changes",
    [
        {"agent": "bob"},
        {"path": "b.py"},
        {"version": 2},
        {"sha256": "h2"},
        {"lines": None},
        {"lines": (1, 3)},
    ],
)
def test_digest_differs_when_a_snapshot_differs(changes: dict[str, object]) -> None:
    assert state_with(snap=dataclasses.replace(SNAP, **changes)).digest() != state_with().digest()


def test_digest_differs_with_an_extra_file_or_snapshot_or_counter() -> None:
    base = state_with()
    extra_file = state_with()
    extra_file.files["b.py"] = dataclasses.replace(FILE, path="b.py")
    extra_snap = state_with()
    extra_snap.snapshots["bob", "a.py"] = dataclasses.replace(SNAP, agent="bob")
    later = dataclasses.replace(state_with(), last_seq=4, event_count=4)

    digests = {s.digest() for s in (base, extra_file, extra_snap, later)}
    assert len(digests) == 4


def test_digest_ignores_dict_insertion_order() -> None:
    other = dataclasses.replace(FILE, path="b.py")
    one = State(files={"a.py": FILE, "b.py": other})
    two = State(files={"b.py": other, "a.py": FILE})
    assert one == two and one.digest() == two.digest()


# --- property: live application == fold of the journal reread from disk -----------------

_reads = st.tuples(
    st.sampled_from(["a.py", "b.py", "c/d.py"]),
    st.sampled_from([b"", b"one\n", b"one\ntwo\n"]),
    st.one_of(st.none(), st.tuples(st.integers(1, 3), st.integers(1, 3))),
)
_steps = st.lists(
    st.tuples(st.sampled_from(["alice", "bob", None]), _reads, st.booleans()), max_size=25
)


@settings(deadline=None, max_examples=60)
@given(steps=_steps)
def test_live_state_equals_fold_of_journal_reread_from_disk(
    tmp_path_factory: pytest.TempPathFactory,
    steps: list[tuple[str | None, tuple[str, bytes, tuple[int, int] | None], bool]],
) -> None:
    db = tmp_path_factory.mktemp("prop") / "journal.sqlite"
    live = Live(Journal(db))
    for agent, (path, content, lines), commit_now in steps:
        # as the daemon does: a read stores the content it saw, so verify() finds it
        live.stage(agent, read(path, content, lines), {sha256_hex(content): content})
        if commit_now:
            live.journal.commit()
    live.journal.commit()
    live.journal.close()

    reopened = Journal(db)
    try:
        assert reopened.verify().ok
        folded = fold(reopened.records())
    finally:
        reopened.close()

    assert folded == live.state
    assert folded.digest() == live.state.digest()
    assert folded.last_seq == len(steps)


def test_the_digest_is_kept_until_the_state_moves() -> None:
    """`digest` is computed once per position: `status` asks it at every call."""
    state = State()
    first = state.digest()
    assert state.digest() == first == fold([]).digest()
    read = FileRead(path="x", sha256="0" * 64, size=0, line_count=0)
    state.apply(Record(seq=1, ts=0, agent="a", event=read, prev_hash="", hash=""))
    moved = state.digest()
    assert moved != first
    state._digest_kept = None  # computed afresh, it is the same
    assert state.digest() == moved
