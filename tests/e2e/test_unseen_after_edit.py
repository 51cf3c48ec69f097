"""Lines an agent was not shown, kept as ranges through a real daemon: a ranged read
leaves the rest unseen, its own edit moves those ranges and makes its new lines seen."""

from __future__ import annotations

from editjournal.client import Client
from tests.conftest import RunningDaemon
from tests.e2e.edit_support import rejected

NUMBERED = "".join(f"line_{n} = {n}\n" for n in range(1, 41))


def ranged(client: Client, path: str, line: int) -> str:
    """The anchor of one line, from a one-line ranged read."""
    rows = client.read_file(path, hashes=True, range=f"{line}-{line}").lines or []
    return next(row.hash for row in rows if row.line == line)


def unseen_of(client: Client, path: str) -> list[tuple[int, int]]:
    [seen] = [f for f in client.agent_status().files if f.path == path]
    return [(first, last) for first, last in seen.unseen_lines]


def test_a_ranged_read_leaves_the_rest_of_the_file_unseen(daemon: RunningDaemon):
    (daemon.root / "numbered.py").write_text(NUMBERED)
    a = daemon.client("agent-a")
    ranged(a, "numbered.py", 20)
    assert unseen_of(a, "numbered.py") == [(1, 19), (21, 40)]


def test_an_own_insert_moves_the_unseen_lines_below_it(daemon: RunningDaemon):
    (daemon.root / "numbered.py").write_text(NUMBERED)
    a = daemon.client("agent-a")
    anchor = ranged(a, "numbered.py", 20)
    a.edit(
        "numbered.py", [{"op": "insert_after", "hash": anchor, "content": "x = 1\ny = 2\nz = 3"}]
    )
    assert unseen_of(a, "numbered.py") == [(1, 19), (24, 43)]


def test_an_agent_may_rewrite_the_lines_it_wrote_after_a_ranged_read(daemon: RunningDaemon):
    target = daemon.root / "numbered.py"
    target.write_text(NUMBERED)
    a = daemon.client("agent-a")
    anchor = ranged(a, "numbered.py", 20)
    done = a.edit(
        "numbered.py", [{"op": "insert_after", "hash": anchor, "content": "x = 1\ny = 2\nz = 3"}]
    )
    last = done.changed_lines[-1].hash
    op = {"op": "replace_range", "start_hash": anchor, "end_hash": last, "content": "w = 0"}
    a.edit("numbered.py", [op])
    assert target.read_text().splitlines()[18:21] == ["line_19 = 19", "w = 0", "line_21 = 21"]


def test_a_range_reaching_into_unseen_lines_after_an_own_edit_is_refused(
    daemon: RunningDaemon,
):
    (daemon.root / "numbered.py").write_text(NUMBERED)
    a, b = daemon.client("agent-a"), daemon.client("agent-b")
    anchor = ranged(a, "numbered.py", 20)
    a.edit("numbered.py", [{"op": "insert_after", "hash": anchor, "content": "x = 1"}])
    below = ranged(b, "numbered.py", 23)  # line_22, which agent-a was never shown
    op = {"op": "replace_range", "start_hash": anchor, "end_hash": below, "content": "w = 0"}
    error = rejected(a, "numbered.py", [op])
    assert error.code == "anchor_stale"
    assert error.details["unseen_lines"][0] == 22
