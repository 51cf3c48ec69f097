"""A big file's `write_file`, `edit_file`, append or section update is planned in a job
(issue 40): a `write_file` rewriting a 200,000-line file held every agent 19.5 s (its
anchors derived through every changed line), a new 200,000-line file 3 s, in one turn.

Now an index mostly changed is built afresh a slice at a time, the atomic writers plan
ahead like `edit` (daemon/writing/ahead.py, a new big file's plan kept too), the safety
check a writer skips is not made past 20,000 lines, and a reply's diff shows at most
`MAX_ROWS` rows and its `changed_lines` at most `MAX_CHANGED_LINES`, the diff's last
row counting the rest. Each test: a real daemon, the write from one client while
another polls `status` (the write is seen parked), the file right to the byte.
"""

from __future__ import annotations

import threading
from typing import Any

from editjournal.daemon.text.diff import MAX_CHANGED_LINES, MAX_ROWS
from tests.conftest import RunningDaemon

LINES = 50_000  # past SLICED_FROM (20,000): planned in a job


def body(prefix: str, lines: int = LINES) -> str:
    return "".join(f"    {prefix}{i} = f({i % 997}, {i})\n" for i in range(lines))


def parked_while(daemon: RunningDaemon, call: Any) -> tuple[Any, bool]:
    """Run `call` with its own client in a thread; whether another saw it parked."""
    worker, watcher = daemon.client("worker", timeout=300), daemon.client("watcher")
    out: dict[str, Any] = {}
    thread = threading.Thread(target=lambda: out.setdefault("reply", call(worker)))
    thread.start()
    parked = False
    while thread.is_alive():
        parked = parked or watcher.status().parked > 0
        thread.join(0.005)
    return out["reply"], parked


def test_a_big_rewrite_is_planned_in_a_job_and_its_reply_is_bounded(
    daemon: RunningDaemon,
) -> None:
    path = daemon.root / "big.py"
    path.write_text(body("v"))
    daemon.client("worker").read_file("big.py", hashes=True, range="1-5")
    new = body("w")
    reply, parked = parked_while(
        daemon, lambda c: c.call("write_file", {"path": "big.py", "content": new})
    )
    assert reply.error is None and parked
    assert path.read_text() == new
    result = reply.result
    assert len(result["changed_lines"]) == MAX_CHANGED_LINES
    diff = result["diff"]
    assert len(diff.split("\n")) == MAX_ROWS + 1
    assert diff.endswith(f"more added lines not shown (a diff shows {MAX_ROWS:,} rows)")
    assert result["safety_check"] == "skipped"
    fresh = daemon.client("worker").read_file("big.py", hashes=True, range="49990-50000")
    assert [line.text for line in fresh.lines or []] == new.splitlines()[-11:]


def test_a_big_new_file_is_planned_in_a_job(daemon: RunningDaemon) -> None:
    new = body("n")
    reply, parked = parked_while(
        daemon, lambda c: c.call("write_file", {"path": "new.py", "content": new})
    )
    assert reply.error is None and parked
    assert (daemon.root / "new.py").read_text() == new
    assert reply.result["lines_after"] == LINES


def test_an_edit_file_of_a_big_file_is_planned_in_a_job_and_an_append_lands(
    daemon: RunningDaemon,
) -> None:
    path = daemon.root / "big.py"
    path.write_text(body("v"))
    client = daemon.client("worker")
    client.read_file("big.py", range="1-5")
    old, new = "    v40000 = f(120, 40000)\n", "    v40000 = 1\n"
    reply, parked = parked_while(
        daemon,
        lambda c: c.call("edit_file", {"path": "big.py", "old_string": old, "new_string": new}),
    )
    assert reply.error is None and parked
    # a line appended: planned ahead too, and done within the inline try (not parked)
    reply, _ = parked_while(
        daemon, lambda c: c.call("append_to_file", {"path": "big.py", "content": "tail\n"})
    )
    assert reply.error is None
    assert path.read_text() == body("v").replace(old, new) + "tail\n"


def test_a_since_version_read_of_a_big_file_lists_what_changed_in_place(
    daemon: RunningDaemon,
) -> None:
    """Every hundredth line of 50,000 changed: the delta lists those 500, not the whole
    file as one change (past 40,000 lines the diff no longer searched, and a file of as
    many lines is now compared line for line); all lines changed: the first
    MAX_CHANGED_LINES listed, a warning saying to read the rest."""
    path = daemon.root / "big.py"
    path.write_text(body("v"))
    client = daemon.client("worker", timeout=300)
    since = client.read_file("big.py", range="1-2").version
    lines = body("v").splitlines(keepends=True)
    path.write_text("".join(f"# {line}" if i % 100 == 0 else line for i, line in enumerate(lines)))
    delta = client.call("read_file", {"path": "big.py", "since_version": since})
    assert delta.error is None
    listed = delta.result["lines"]
    assert len(listed) == LINES // 100
    assert [row["line"] for row in listed][:3] == [1, 101, 201]
    since = delta.result["version"]
    path.write_text(body("u"))
    whole = client.call("read_file", {"path": "big.py", "since_version": since})
    assert whole.error is None and len(whole.result["lines"]) == MAX_CHANGED_LINES
    assert any("the delta lists the first" in w for w in whole.warnings)


def test_a_big_documents_headers_are_found_off_the_loop(daemon: RunningDaemon) -> None:
    """A markdown file past `sections.SLOW_FROM` lines: its headers are parsed on the
    worker thread (a 180,000-line file's parse held every agent 2-4 s), the section then
    written as any write; a second update of the same content finds them kept."""
    sections = 40
    text = "".join(
        f"## Section {k}\n" + "".join(f"text {k} {i}\n" for i in range(200))
        for k in range(sections)
    )
    path = daemon.root / "big.md"
    path.write_text(text)
    client = daemon.client("worker", timeout=120)
    client.read_file("big.md", max_lines=10_000)

    def done() -> int:
        result = client.call("status", {}).result
        assert isinstance(result, dict)
        return int(result["group_commit"]["off_thread"]["done"])

    before = done()
    reply = client.call(
        "update_section",
        {"path": "big.md", "section_header": "## Section 30", "new_content": "new text\n"},
    )
    assert reply.error is None
    assert done() == before + 1
    kept = path.read_text()
    assert "## Section 30\nnew text\n## Section 31" in kept.replace("\n\n", "\n")
    assert kept.count("text 30 ") == 0 and kept.count("text 29 ") == 200
