"""Blame is a per-line fold of the changes (issue 34), checked as a property.

For any sequence of writes by several agents (anchored by text with `edit_file`,
whole files with `write_file`), outside changes, moves (`apply_patch`'s `*** Move
to:`, with or without a change) and reads, on a file that existed before the
journal saw it or that an agent created, `blame` must equal the test's own fold:
the contents the test itself wrote, diffed one after the other with difflib, each
changed line credited to whoever changed it (`outside` for the content found and
for outside changes), unchanged lines keeping their owner.

One real daemon serves every example (a fresh file each), started with
`--no-watch` so an outside change is noticed when the next request touches the
file, as the fold expects: the contents between two requests collapse into one.
Every line the test writes is new (`L` and a serial number), so which lines a
change touched is never ambiguous, for the daemon's exact changes or for difflib.
"""

from __future__ import annotations

import difflib
import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from editjournal.client import Client, RequestError
from tests.conftest import RunningDaemon, start

AGENTS = ("ann", "ben", "cat")
OUTSIDE = "outside"
_serials = itertools.count()
_files = itertools.count()

# (kind, agent, where, removed, inserted): a splice of the current lines, its start
# taken modulo the line count; "write" writes the whole result, "move" moves the file
# (its splice, if any, replaces one line by the hunk of the move's patch)
Step = tuple[str, str, int, int, int]
steps = st.tuples(
    st.sampled_from(("edit", "edit", "write", "outside", "move", "read")),
    st.sampled_from(AGENTS),
    st.integers(0, 30),
    st.integers(0, 3),
    st.integers(0, 3),
)


@dataclass
class Line:
    text: str
    owner: str
    seq: int | None  # the event that wrote it (outside lines: not checked)


@dataclass
class Model:
    """The test's fold: the file as the journal last saw it, and what is on disk now."""

    path: str
    lines: list[Line] = field(default_factory=list)
    disk: list[str] = field(default_factory=list)

    def take(self, new: list[str], owner: str, seq: int | None) -> None:
        """Fold a content: unchanged lines keep their owner, changed ones are `owner`'s."""
        old = [line.text for line in self.lines]
        matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
        out: list[Line] = []
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag == "equal":
                out.extend(self.lines[i1:i2])
            else:
                out.extend(Line(text, owner, seq) for text in new[j1:j2])
        self.lines = out
        self.disk = list(new)

    def noticed(self) -> None:
        """A request touched the file: an outside change since is journaled first."""
        if self.disk != [line.text for line in self.lines]:
            self.take(self.disk, OUTSIDE, None)


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningDaemon]:
    root = tmp_path_factory.mktemp("blame-property") / "ws"
    root.mkdir()
    running = start(root, "--no-watch")
    yield running
    if running.proc.poll() is None:
        running.stop()


def fresh(n: int) -> list[str]:
    return [f"L{next(_serials):07d}" for _ in range(n)]


def text_of(lines: list[str]) -> str:
    return "".join(line + "\n" for line in lines)


def spliced(
    lines: list[str], where: int, removed: int, inserted: int
) -> tuple[int, int, list[str]]:
    start = where % (len(lines) + 1)
    return start, min(start + removed, len(lines)), fresh(inserted)


def edit(client: Client, model: Model, where: int, removed: int, inserted: int) -> None:
    """`edit_file` of one region, its old text found by the lines themselves (with a
    neighbour for a pure insertion, which the journal then records as unchanged)."""
    lines = model.disk
    start, end, new = spliced(lines, where, removed, inserted)
    if start == end and not new:
        return
    if start == end and not lines:
        return write(client, model, new)
    if start < end:
        old_text, new_text = text_of(lines[start:end]), text_of(new)
    elif start < len(lines):
        old_text, new_text = text_of(lines[start : start + 1]), text_of([*new, lines[start]])
    else:
        old_text, new_text = text_of(lines[-1:]), text_of([lines[-1], *new])
    model.noticed()
    try:
        done = client.edit_file(model.path, old_text, new_text, skip_safety_check=True)
    except RequestError as e:
        event(f"edit_file refused: {e.code}")
        return  # refused (a stale view, say): nothing written, the outside change kept
    model.take([*lines[:start], *new, *lines[end:]], client.agent, done.version)


def write(client: Client, model: Model, new: list[str]) -> None:
    model.noticed()
    try:
        done = client.write_file(model.path, text_of(new))
    except RequestError as e:
        event(f"write_file refused: {e.code}")
        return
    model.take(new, client.agent, done.version)


def move(client: Client, model: Model, where: int, removed: int) -> None:
    """A move, its hunk (when `removed`) replacing one line with a new one."""
    target = f"{model.path.removesuffix('.txt')}-m.txt"
    lines = model.disk
    new = list(lines)
    hunk = ""
    if removed and lines:
        at = where % len(lines)
        (new[at],) = fresh(1)
        hunk = f"@@\n-{lines[at]}\n+{new[at]}\n"
    patch = f"*** Begin Patch\n*** Update File: {model.path}\n*** Move to: {target}\n{hunk}"
    model.noticed()
    try:
        done = client.apply_patch(patch + "*** End Patch\n", skip_safety_check=True)
    except RequestError as e:
        event(f"apply_patch refused: {e.code}")
        return
    (seq,) = [f.version for f in done.files if f.path == target]
    event("moved" + (" with a change" if hunk else ""))
    model.path = target
    model.take(new, client.agent, seq)


def run(daemon: RunningDaemon, clients: dict[str, Client], model: Model, step: Step) -> None:
    kind, agent, where, removed, inserted = step
    client = clients[agent]
    if kind == "edit":
        edit(client, model, where, removed, inserted)
    elif kind == "write":
        start, end, new = spliced(model.disk, where, removed, inserted)
        write(client, model, [*model.disk[:start], *new, *model.disk[end:]])
    elif kind == "outside":
        start, end, new = spliced(model.disk, where, removed, inserted)
        model.disk = [*model.disk[:start], *new, *model.disk[end:]]
        (daemon.root / model.path).write_text(text_of(model.disk))
    elif kind == "move":
        move(client, model, where, removed)
    else:
        model.noticed()
        client.read_file(model.path)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    first=st.lists(st.integers(0, 0), max_size=5).map(len),
    created_by_agent=st.booleans(),
    script=st.lists(steps, min_size=1, max_size=7),
)
def test_blame_is_the_fold_of_every_change(
    daemon: RunningDaemon, first: int, created_by_agent: bool, script: list[Step]
):
    clients = {name: daemon.client(name) for name in (*AGENTS, "auditor")}
    model = Model(f"f{next(_files)}.txt")
    initial = fresh(first)
    if created_by_agent:
        write(clients["ann"], model, initial)
    else:  # there before the journal saw it: found by the first request
        model.disk = initial
        (daemon.root / model.path).write_text(text_of(initial))
    for step in script:
        run(daemon, clients, model, step)
    model.noticed()
    clients["auditor"].read_file(model.path)
    blame = clients["auditor"].blame(model.path)
    assert [b.text for b in blame.lines] == model.disk
    assert [(b.text, b.agent) for b in blame.lines] == [(m.text, m.owner) for m in model.lines]
    written = [(m.text, m.seq) for m in model.lines if m.owner != OUTSIDE]
    assert [(b.text, b.seq) for b in blame.lines if b.agent != OUTSIDE] == written
    for client in clients.values():
        client.close()
