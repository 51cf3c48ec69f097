"""A scripted multi-agent run for the audit tests, and the test's own record of it.

Three agents (alice, bob, carol) and an outside writer change `app.txt` (and
`notes.md`); after every call the test notes the journal's last seq and the
bytes of every file, and keeps its own model of who wrote each line of
`app.txt` — computed from what the script did, not from the journal — so
`blame`, `replay` and `read_file(at_version)` can be checked against it.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from editjournal.client import Client, RequestError
from tests.conftest import RunningDaemon, start, wait_until

APP, NOTES = "app.txt", "notes.md"
FILES = (APP, NOTES)
ORIGINAL = [f"line {n}: original" for n in range(1, 7)]


@dataclass
class Line:
    text: str
    owner: str
    seq: int


@dataclass
class Run:
    """What the script did and saw."""

    daemon: RunningDaemon
    lines: list[Line] = field(default_factory=list)  # the model of app.txt
    seen: list[tuple[int, dict[str, bytes | None]]] = field(default_factory=list)
    seqs: dict[str, int] = field(default_factory=dict)  # named moments of the script

    @property
    def root(self) -> Path:
        return self.daemon.root

    def observe(self, client: Client) -> int:
        """Note the last seq and every file's bytes now."""
        seq = client.status().last_seq
        files = {p: _bytes(self.root / p) for p in FILES}
        self.seen.append((seq, files))
        return seq

    def expected_at(self, seq: int) -> dict[str, bytes | None]:
        """The files as observed after the last call whose events ended at or before `seq`
        (None: absent, or not yet known to the journal)."""
        found: dict[str, bytes | None] = {p: None for p in FILES}
        for at, files in self.seen:
            if at <= seq:
                found = dict(files)
        for path in FILES:
            if seq < self.seqs.get(path, seq + 1):
                found[path] = None
        return found

    def model_bytes(self) -> bytes:
        return "".join(line.text + "\n" for line in self.lines).encode()

    def index(self, text: str) -> int:
        return next(i for i, line in enumerate(self.lines) if line.text == text)


def _bytes(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def outside_write(run: Run, client: Client, rel: str, data: bytes | None) -> int:
    """Change a file as an editor would (atomic rename, or delete); wait for its event."""
    target = run.root / rel
    if data is None:
        os.remove(target)
        want = None
    else:
        temp = run.root.parent / f"outside-{rel}"
        temp.write_bytes(data)
        os.replace(temp, target)
        want = hashlib.sha256(data).hexdigest()

    def recorded() -> int | None:
        events = client.log(path=rel, kind="outside_change", limit=1000).events
        hits = [e.seq for e in events if e.body.get("new_sha256") == want]
        return hits[-1] if hits else None

    return wait_until(recorded, 20, f"the outside change of {rel}")


def anchor_of(client: Client, path: str, text: str) -> str:
    rows = client.read_file(path, hashes=True).lines or []
    return next(row.hash for row in rows if row.text == text)


def scripted_run(daemon: RunningDaemon) -> Run:
    """The run every audit test looks at (about 25 events, a second or two)."""
    run = Run(daemon)
    (daemon.root / APP).write_text("".join(t + "\n" for t in ORIGINAL))
    alice, bob, carol = daemon.client("alice"), daemon.client("bob"), daemon.client("carol")
    run.observe(alice)

    first = alice.read_file(APP, hashes=True)
    run.lines = [Line(t, "outside", first.version) for t in ORIGINAL]
    run.seqs[APP] = first.version  # the journal knows the file from here on
    rows = {row.text: row.hash for row in first.lines or []}
    run.observe(alice)

    done = alice.edit(
        APP,
        [
            {"op": "replace_line", "hash": rows["line 2: original"], "content": "alice: two"},
            {"op": "insert_after", "hash": rows["line 4: original"], "content": "alice: 4b"},
        ],
    )
    run.lines[1] = Line("alice: two", "alice", done.version)
    run.lines.insert(4, Line("alice: 4b", "alice", done.version))
    run.seqs["alice_edit"] = done.version
    run.observe(alice)

    bob_rows = {row.text: row.hash for row in bob.read_file(APP, hashes=True).lines or []}
    run.observe(bob)
    done = bob.edit(
        APP, [{"op": "replace_line", "hash": bob_rows["line 5: original"], "content": "bob: five"}]
    )
    run.lines[run.index("line 5: original")] = Line("bob: five", "bob", done.version)
    run.observe(bob)

    # the outside writer: line 3 changed, a line added at the end
    lines = [line.text for line in run.lines]
    lines[lines.index("line 3: original")] = "outside: three"
    seq = outside_write(
        run, bob, APP, "".join(t + "\n" for t in [*lines, "outside: tail"]).encode()
    )
    run.lines[run.index("line 3: original")] = Line("outside: three", "outside", seq)
    run.lines.append(Line("outside: tail", "outside", seq))
    run.seqs["outside"] = seq
    run.observe(bob)

    carol_rows = {row.text: row.hash for row in carol.read_file(APP, hashes=True).lines or []}
    run.observe(carol)
    done = carol.edit(
        APP,
        [
            {"op": "insert_after", "hash": carol_rows["line 1: original"], "content": "carol: 1b"},
            {"op": "replace_line", "hash": carol_rows["outside: tail"], "content": "carol: tail"},
        ],
    )
    run.lines.insert(1, Line("carol: 1b", "carol", done.version))
    run.lines[run.index("outside: tail")] = Line("carol: tail", "carol", done.version)
    run.observe(carol)

    # alice's snapshot is her own write: line 6 is untouched since, so this is carried over
    done = alice.edit(
        APP, [{"op": "replace_line", "hash": rows["line 6: original"], "content": "alice: six"}]
    )
    run.lines[run.index("line 6: original")] = Line("alice: six", "alice", done.version)
    run.seqs["alice_rebased"] = done.version
    run.observe(alice)

    # bob's anchor for line 3 went stale (the outside writer changed it): refused, then retried
    try:
        bob.edit(
            APP, [{"op": "replace_line", "hash": bob_rows["line 3: original"], "content": "x"}]
        )
        raise AssertionError("a stale anchor was accepted")
    except RequestError as e:
        assert e.code == "anchor_stale", e
    run.seqs["bob_rejected"] = run.observe(bob)
    fresh = anchor_of(bob, APP, "outside: three")
    run.observe(bob)
    done = bob.edit(APP, [{"op": "replace_line", "hash": fresh, "content": "bob: three"}])
    run.lines[run.index("outside: three")] = Line("bob: three", "bob", done.version)
    run.seqs["bob_recovered"] = done.version
    run.observe(bob)

    run.seqs[NOTES] = bob.write_file(NOTES, "# notes\nby bob\n").version
    run.observe(bob)
    done = carol.append_to_file(APP, "carol: appended\n")
    run.lines.append(Line("carol: appended", "carol", done.version))
    run.observe(carol)
    run.seqs["notes_removed"] = outside_write(run, carol, NOTES, None)
    run.observe(carol)
    return run


def scripted_run_in(tmp_path_factory: pytest.TempPathFactory, name: str) -> Iterator[Run]:
    """The scripted run in a fresh workspace of its own, its daemon stopped afterwards
    (the body of each audit test module's `run` fixture)."""
    root = tmp_path_factory.mktemp(name) / "ws"
    root.mkdir()
    daemon = start(root)
    try:
        yield scripted_run(daemon)
    finally:
        daemon.stop()
