"""Property: two agents interleaving reads and edits on one file, through a real daemon.

Every line ever written is unique, so a line's text identifies it for good.
The test keeps each agent's snapshot as the daemon defines it (its last read,
its own last write, or the content a stale error's delta showed it). Then, for
each edit an agent makes with the anchors of its last read:
- it is applied exactly when every line it relies on is in its snapshot, was
  shown to it (read, written by itself, or in a stale error's delta) and is
  still there unchanged — for a range, the whole block between the endpoints
  as the snapshot had it, so nothing someone else put inside is overwritten;
  an edit whose targets changed is never applied, one whose targets did not
  change is never refused;
- an applied edit changes nothing but its own target.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from editjournal.client import Client, RequestError
from tests.conftest import RunningDaemon

_files = itertools.count()
_texts = itertools.count()

steps = st.lists(
    st.tuples(
        st.sampled_from(["a", "b"]),
        st.sampled_from(["read", "replace_line", "delete_line", "insert_after", "replace_range"]),
        st.integers(min_value=0, max_value=10_000),
    ),
    min_size=1,
    max_size=14,
)


@dataclass
class Agent:
    client: Client
    view: list[tuple[str, str]] = field(default_factory=list)  # (anchor, text) of last read
    snapshot: list[str] = field(default_factory=list)  # the content the daemon says it saw
    seen: set[str] = field(default_factory=set)  # every line it was ever shown or wrote


def fresh_text() -> str:
    return f"text number {next(_texts)} = value"


def read(agent: Agent, path: str) -> None:
    rows = agent.client.read_file(path, hashes=True).lines or []
    agent.view = [(r.hash, r.text) for r in rows]
    agent.snapshot = [r.text for r in rows]
    agent.seen = set(agent.snapshot)


def block(snapshot: list[str], kind: str, targets: list[str]) -> list[str] | None:
    """The lines the edit relies on, as the agent's snapshot has them."""
    if not all(t in snapshot for t in targets):
        return None
    first, last = snapshot.index(targets[0]), snapshot.index(targets[-1])
    return snapshot[min(first, last) : max(first, last) + 1]


def position(before: list[str], lines: list[str]) -> int | None:
    """Where `lines` stand contiguously in `before`, if they do."""
    for at in range(len(before) - len(lines) + 1):
        if before[at : at + len(lines)] == lines:
            return at
    return None


def expected_after(before: list[str], kind: str, at: int, size: int, new: str) -> list[str]:
    if kind == "delete_line":
        return [*before[:at], *before[at + 1 :]]
    if kind == "insert_after":
        return [*before[: at + 1], new, *before[at + 1 :]]
    return [*before[:at], new, *before[at + size :]]  # replace_line, replace_range


def operation(agent: Agent, kind: str, pick: int, new: str) -> tuple[dict, list[str]] | None:
    if len(agent.view) < 2:
        return None
    i = pick % (len(agent.view) - 1)
    (anchor, text), (next_anchor, next_text) = agent.view[i], agent.view[i + 1]
    if kind == "replace_range":
        op = {"op": kind, "start_hash": anchor, "end_hash": next_anchor, "content": new}
        return op, [text, next_text]
    op = {"op": kind, "hash": anchor}
    if kind != "delete_line":
        op["content"] = new
    return op, [text]


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(script=steps, size=st.integers(min_value=3, max_value=12))
# An own insert inside a range read earlier: the latest view (which shows it) decides.
@example(script=[("a", "insert_after", 0), ("a", "replace_range", 0)], size=3)
# B's line, carried into A's snapshot by A's own write, is inside A's range: refused.
@example(
    script=[("b", "insert_after", 0), ("a", "replace_line", 3), ("a", "replace_range", 0)],
    size=5,
)
def test_interleaved_agents_never_lose_or_misplace_an_edit(
    daemon: RunningDaemon, script: list[tuple[str, str, int]], size: int
):
    path = f"prop-{next(_files)}.txt"
    target = daemon.root / path
    target.write_text("".join(fresh_text() + "\n" for _ in range(size)))
    n = next(_files)
    agents = {
        name: Agent(Client(daemon.root, f"{name}-{n}", autostart=False)) for name in ("a", "b")
    }
    for agent in agents.values():
        read(agent, path)
    try:
        for who, kind, pick in script:
            agent = agents[who]
            if kind == "read":
                read(agent, path)
                continue
            new = fresh_text()
            planned = operation(agent, kind, pick, new)
            if planned is None:
                continue
            op, targets = planned
            before = target.read_text().splitlines()
            relied_on = block(agent.snapshot, kind, targets)
            if relied_on is not None and not agent.seen.issuperset(relied_on):
                relied_on = None  # it would rely on a line the agent was never shown
            at = position(before, relied_on) if relied_on is not None else None
            try:
                agent.client.edit(path, [op])
                applied = True
            except RequestError as e:
                assert e.code == "anchor_stale", e
                applied = False
                if "delta" in e.details:  # it was shown the current content's changes
                    agent.snapshot = before
                    agent.seen |= {row["text"] for row in e.details["delta"]["changed_lines"]}
            after = target.read_text().splitlines()
            assert applied == (at is not None), (kind, targets, agent.snapshot, before)
            if applied:
                assert relied_on is not None and at is not None
                assert after == expected_after(before, kind, at, len(relied_on), new)
                agent.snapshot = after
                agent.seen.add(new)
            else:
                assert after == before
    finally:
        for agent in agents.values():
            agent.client.close()
