"""The atomic text tools through a real daemon: edit_file, append/prepend, update_section,
write_file — for agents whose context forgets what they read.

Every refusal is checked to leave the file byte-for-byte unchanged (`refused`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from editjournal.client import Client, RequestError
from tests.conftest import RunningDaemon, start

WORKSPACE_MD = "# Workspace Context\n\n## Current State\nStatus: Initializing\n\n## Notes\n- one\n"
FUNCS = "".join(f"def step_{n}(state):\n    return state + {n}\n\n" for n in range(1, 6))


def put(daemon: RunningDaemon, path: str, data: str | bytes) -> Path:
    target = daemon.root / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data.encode() if isinstance(data, str) else data)
    return target


def refused(client: Client, path: str, call: Callable[[], Any]) -> RequestError:
    target = client.root / path
    before = target.read_bytes() if target.exists() else None
    try:
        call()
    except RequestError as e:
        assert (target.read_bytes() if target.exists() else None) == before, "file changed"
        return e
    raise AssertionError("the call was applied")


# --- edit_file ------------------------------------------------------------------------------


def test_edit_file_replaces_a_unique_string_and_journals_its_writer(
    daemon: RunningDaemon, client: Client
):
    target = put(daemon, "workspace.md", WORKSPACE_MD)
    result = client.edit_file("workspace.md", "Status: Initializing", "Status: Phase 2 complete")
    assert target.read_text() == WORKSPACE_MD.replace("Initializing", "Phase 2 complete")
    assert result.replacements == 1 and result.lines == [(4, 4)]
    assert result.details.writer_type == "edit_file" and result.safety_check == "clean"
    assert [c.text for c in result.changed_lines] == ["Status: Phase 2 complete"]
    [entry] = client.log(path="workspace.md", kind="edit_applied").events
    assert entry.body["writer"] == "edit_file" and entry.seq == result.version


def test_edit_file_no_match_says_so_and_hints_the_closest_lines(
    daemon: RunningDaemon, client: Client
):
    put(daemon, "workspace.md", WORKSPACE_MD)
    e = refused(
        client,
        "workspace.md",
        lambda: client.edit_file("workspace.md", "Status: Initialising", "x"),
    )
    assert e.code == "no_match"
    assert e.message.startswith(
        "old_string not found in workspace.md. Make sure it matches exactly (including whitespace)."
    )
    best = e.details["similar_lines"][0]
    assert best["first_line"] == 4 and best["lines"][0]["text"] == "Status: Initializing"
    assert len(best["lines"][0]["hash"]) >= 6  # an anchor to use with edit
    assert "Closest similar line: 4" in e.message


def test_edit_file_multiple_matches_names_the_lines(daemon: RunningDaemon, client: Client):
    put(daemon, "f.py", FUNCS)
    e = refused(client, "f.py", lambda: client.edit_file("f.py", "return state", "return s"))
    assert e.code == "multiple_matches"
    assert e.message.startswith(
        "old_string appears 5 times in f.py. Include more surrounding context to make it unique."
    )
    assert e.details["lines"] == [2, 5, 8, 11, 14]


def test_edit_file_expected_replacements_replaces_exactly_that_many(
    daemon: RunningDaemon, client: Client
):
    target = put(daemon, "f.py", FUNCS)
    e = refused(
        client,
        "f.py",
        lambda: client.edit_file("f.py", "state +", "state -", expected_replacements=4),
    )
    assert e.code == "multiple_matches" and "not the 4 expected_replacements" in e.message
    result = client.edit_file("f.py", "state +", "state -", expected_replacements=5)
    assert target.read_text() == FUNCS.replace("state +", "state -")
    assert result.replacements == 5


@pytest.mark.parametrize("eol", ["\n", "\r\n"])
def test_edit_file_keeps_line_endings_and_matches_across_lines(
    daemon: RunningDaemon, client: Client, eol: str
):
    text = "alpha one\nbeta two\ngamma three\n".replace("\n", eol)
    target = put(daemon, "e.txt", text)
    client.edit_file("e.txt", "one\nbeta", "1\nBETA\nextra")
    assert (
        target.read_bytes() == "alpha 1\nBETA\nextra two\ngamma three\n".replace("\n", eol).encode()
    )


@pytest.mark.parametrize(
    ("text", "old", "new"),
    [
        ("a\nb\nc\n", "a\n", ""),  # a whole line removed
        ("a\nb\nc\n", "a\n", "z"),  # the replacement runs on into the next line
        ("a\nb", "b", ""),  # the last line emptied, no final newline
        ("a\nb", "\nb", ""),
        ("a\nb\n", "b\n", "c"),  # the final newline replaced away: one is put back
        ("a\nb", "b", "b\n"),  # a final newline added
        ("x y x\nx\n", "x", "é"),  # several matches on one line
        ("ünï côdé\n", "côdé", "code ✓"),
    ],
)
def test_edit_file_result_is_str_replace_ending_with_a_newline(
    daemon: RunningDaemon, client: Client, text: str, old: str, new: str
):
    target = put(daemon, "r.txt", text)
    count = text.count(old)
    client.edit_file("r.txt", old, new, expected_replacements=count)
    replaced = text.replace(old, new)
    expected = replaced if replaced.endswith("\n") or not replaced else replaced + "\n"
    assert target.read_text(encoding="utf-8") == expected


def test_edit_file_on_a_missing_file_is_file_not_found(client: Client):
    e = refused(client, "nope.md", lambda: client.edit_file("nope.md", "a", "b"))
    assert e.code == "file_not_found"


def test_stale_edit_file_inside_a_rewritten_function_is_refused_naming_the_writer(
    daemon: RunningDaemon, client: Client
):
    target = put(daemon, "f.py", FUNCS)
    other = daemon.client("agent-b")
    client.read_file("f.py")
    other.read_file("f.py")
    rewritten = other.edit_file(
        "f.py", "def step_3(state):\n    return state + 3\n", "def step_3(state):\n    return 3\n"
    )
    stale = lambda: client.edit_file("f.py", "    return state + 3", "    return state + 33")  # noqa: E731
    e = refused(client, "f.py", stale)
    assert e.code == "anchor_stale"
    assert "agent-b" in e.message and e.details["stale"][0]["lines"] == [8]
    [conflict] = e.details["conflicts"]
    assert (conflict["agent"], conflict["seq"]) == ("agent-b", rewritten.version)
    assert "return 3" in e.details["delta"]["diff"]
    # a stale edit_file elsewhere lands; quoting the other agent's new line exactly proves
    # the agent knows it (a grep, a delta showed it): that lands too
    client.edit_file("f.py", "state + 5", "state + 50")
    client.edit_file("f.py", "    return 3\n", "    return 33\n")
    assert target.read_text() == FUNCS.replace("state + 3", "33").replace("+ 5", "+ 50")


def test_edit_file_by_an_agent_that_never_read_keeps_plain_semantics(
    daemon: RunningDaemon, client: Client
):
    target = put(daemon, "f.py", FUNCS)
    daemon.client("agent-b").edit_file("f.py", "state + 3", "3")
    client.edit_file("f.py", "return 3", "return 30")
    assert "return 30" in target.read_text()


# --- append / prepend -----------------------------------------------------------------------


def test_append_creates_a_missing_file_and_its_directories(daemon: RunningDaemon, client: Client):
    result = client.append_to_file("notes/today/log.md", "- first\n")
    assert (daemon.root / "notes/today/log.md").read_text() == "- first\n"
    assert result.created and result.details.writer_type == "append_to_file"


def test_append_adds_a_separating_newline_and_reports_it(daemon: RunningDaemon, client: Client):
    target = put(daemon, "w.md", "# W\n- a")
    result = client.append_to_file("w.md", "- b\n")
    assert target.read_text() == "# W\n- a\n- b\n"
    assert result.separator_added
    assert [c.type for c in result.auto_corrections] == ["separator_added"]
    assert not client.append_to_file("w.md", "- c").separator_added
    assert target.read_text() == "# W\n- a\n- b\n- c\n"  # a text tool ends the file


@pytest.mark.parametrize("eol", ["\n", "\r\n"])
def test_append_and_prepend_keep_crlf_and_bom(daemon: RunningDaemon, client: Client, eol: str):
    target = put(daemon, "c.txt", "\ufeffmiddle line\n".replace("\n", eol))
    client.prepend_to_file("c.txt", "top line\n")
    client.append_to_file("c.txt", "bottom line\n")
    expected = "\ufefftop line\nmiddle line\nbottom line\n".replace("\n", eol)
    assert target.read_bytes() == expected.encode()


def test_prepend_to_an_empty_file_and_without_final_newline(daemon: RunningDaemon, client: Client):
    target = put(daemon, "p.md", "")
    client.prepend_to_file("p.md", "# Title")
    assert target.read_text() == "# Title\n"
    target.write_text("# Title")  # an outside writer leaves no final newline
    result = client.prepend_to_file("p.md", "> note")
    assert target.read_text() == "> note\n# Title\n" and result.separator_added


def test_append_of_empty_content_is_invalid_params(client: Client):
    assert refused(client, "x.md", lambda: client.append_to_file("x.md", "")).code == (
        "invalid_params"
    )


def test_context_compaction_story_100_appends_across_a_restart_lose_nothing(workspace: Path):
    running = start(workspace)
    agent = running.client("forgetful")
    for n in range(50):
        agent.append_to_file("workspace.md", f"- entry {n}\n")
    running.stop()
    running = start(workspace)
    try:
        agent = running.client("forgetful")
        for n in range(50, 100):
            agent.append_to_file("workspace.md", f"- entry {n}\n")
        expected = "".join(f"- entry {n}\n" for n in range(100))
        assert (workspace / "workspace.md").read_text() == expected
        events = agent.log(path="workspace.md", kind="edit_applied", limit=1000).events
        assert len(events) == 100 and {e.body["writer"] for e in events} == {"append_to_file"}
    finally:
        running.stop()


# --- update_section -------------------------------------------------------------------------

SECTIONED = """\
# Workspace

## Current State
Phase: 1

### Detail
old detail

## Notes
```bash
## not a header
```
- keep me
"""


def test_update_section_replaces_up_to_the_next_header_of_same_level(
    daemon: RunningDaemon, client: Client
):
    target = put(daemon, "w.md", SECTIONED)
    result = client.update_section("w.md", "## Current State", "Phase: 2\nStatus: Processing")
    after = SECTIONED.replace(
        "Phase: 1\n\n### Detail\nold detail\n", "Phase: 2\nStatus: Processing\n"
    )
    assert target.read_text() == after
    assert result.details.writer_type == "update_section"


def test_update_section_ignores_headers_in_fenced_code(daemon: RunningDaemon, client: Client):
    target = put(daemon, "w.md", SECTIONED)
    e = refused(client, "w.md", lambda: client.update_section("w.md", "## not a header", "x"))
    assert e.code == "section_not_found"
    assert [h["header"] for h in e.details["headers"]] == [
        "# Workspace", "## Current State", "### Detail", "## Notes",
    ]  # fmt: skip
    client.update_section("w.md", "Notes", "- replaced\n")
    assert target.read_text().endswith("## Notes\n- replaced\n")


def test_update_section_ambiguous_header_is_refused(daemon: RunningDaemon, client: Client):
    put(daemon, "d.md", "# A\n## Log\nx\n# B\n## Log\ny\n")
    e = refused(client, "d.md", lambda: client.update_section("d.md", "## Log", "z"))
    assert e.code == "section_ambiguous" and [m["line"] for m in e.details["matches"]] == [2, 5]


# --- write_file -----------------------------------------------------------------------------


def test_write_file_creates_nested_paths_and_fills_empty_files(
    daemon: RunningDaemon, client: Client
):
    result = client.write_file("a/b/c/new.md", "# New\n")
    assert (daemon.root / "a/b/c/new.md").read_text() == "# New\n"
    assert result.created and result.message == "Created: a/b/c/new.md (6 bytes)"
    assert client.last_response is not None and client.last_response.warnings == []
    empty = put(daemon, "empty.txt", "")
    client.write_file("empty.txt", "filled\n")
    assert empty.read_text() == "filled\n"


def test_write_file_refuses_paths_outside_the_workspace(daemon: RunningDaemon, client: Client):
    outside = daemon.root.parent / "escape.txt"
    e = refused(client, "../escape.txt", lambda: client.write_file("../escape.txt", "x"))
    assert e.code == "path_outside_workspace" and not outside.exists()


def test_write_file_over_unseen_changes_warns_and_names_them(daemon: RunningDaemon, client: Client):
    target = put(daemon, "w.md", WORKSPACE_MD)
    client.read_file("w.md")
    other = daemon.client("agent-b")
    changed = other.append_to_file("w.md", "- from b\n")
    result = client.write_file("w.md", "# Rewritten\n")
    assert target.read_text() == "# Rewritten\n"
    [warning] = client.last_response.warnings if client.last_response else []
    assert "agent-b" in warning and "edit_file" in warning and "append_to_file" in warning
    assert [c["seq"] for c in result.overwrote_unseen] == [changed.version]
    # having just written it, the agent has seen it: no warning the second time
    client.write_file("w.md", "# Again\n")
    assert client.last_response is not None and client.last_response.warnings == []
