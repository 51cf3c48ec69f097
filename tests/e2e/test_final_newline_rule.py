"""One rule for the text tools: every file they write ends with a newline.

The atomic tools (`edit_file`, `append_to_file`, `prepend_to_file`,
`update_section`, `write_file`) follow the rule the prepare tools always had: text
written by a tool is whole lines, the last one included, so a file one of them
writes ends with a newline — content sent without one gets one, and so does a file
that had none. The reply says so (`auto_corrections`: `final_newline_added`, or
`separator_added` where the newline went between file and content). Line endings
and BOM are the file's own. An empty result stays empty.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from editjournal.client import Client
from tests.conftest import RunningDaemon

NO_NEWLINE = "# Notes\n\n## Done\n- one\n\n## Todo\n- two"

#: tool -> (call, what the file holds after it, written onto NO_NEWLINE)
CALLS: dict[str, tuple[Callable[[Client], Any], str]] = {
    "append_to_file": (
        lambda c: c.append_to_file("n.md", "- three"),
        NO_NEWLINE + "\n- three\n",
    ),
    "prepend_to_file": (
        lambda c: c.prepend_to_file("n.md", "<!-- top -->\n"),
        "<!-- top -->\n" + NO_NEWLINE + "\n",
    ),
    "update_section (in the middle)": (
        lambda c: c.update_section("n.md", "## Done", "- one\n- 1.5"),
        NO_NEWLINE.replace("- one\n", "- one\n- 1.5\n") + "\n",
    ),
    "update_section (the last one)": (
        lambda c: c.update_section("n.md", "## Todo", "- two\n- four"),
        NO_NEWLINE + "\n- four\n",
    ),
    "edit_file (in the middle)": (
        lambda c: c.edit_file("n.md", "- one", "- ONE"),
        NO_NEWLINE.replace("- one", "- ONE") + "\n",
    ),
    "edit_file (the last line)": (
        lambda c: c.edit_file("n.md", "- two", "- TWO"),
        NO_NEWLINE.replace("- two", "- TWO") + "\n",
    ),
    "write_file": (
        lambda c: c.write_file("n.md", "# New"),
        "# New\n",
    ),
}


@pytest.mark.parametrize("tool", list(CALLS))
def test_a_text_tool_leaves_the_file_ending_with_a_newline_and_says_so(
    daemon: RunningDaemon, client: Client, tool: str
):
    target = daemon.root / "n.md"
    target.write_text(NO_NEWLINE)
    call, expected = CALLS[tool]
    result = call(client)
    assert target.read_text() == expected
    assert {c.type for c in result.auto_corrections} & {"final_newline_added", "separator_added"}


@pytest.mark.parametrize("eol", ["\n", "\r\n"])
def test_the_added_newline_is_the_files_own_ending_and_the_bom_stays(
    daemon: RunningDaemon, client: Client, eol: str
):
    target = daemon.root / "c.txt"
    target.write_bytes(f"\ufefffirst{eol}last".encode())
    client.append_to_file("c.txt", "added")
    assert target.read_bytes() == f"\ufefffirst{eol}last{eol}added{eol}".encode()


def test_nothing_is_corrected_when_file_and_content_end_with_a_newline(
    daemon: RunningDaemon, client: Client
):
    target = daemon.root / "n.md"
    target.write_text(NO_NEWLINE + "\n")
    results = [
        client.append_to_file("n.md", "- three\n"),
        client.prepend_to_file("n.md", "<!-- top -->\n"),
        client.update_section("n.md", "## Done", "- one\n"),
        client.edit_file("n.md", "- two", "- TWO"),
        client.write_file("n.md", "# New\n"),
    ]
    assert [r.auto_corrections for r in results] == [[]] * len(results)
    assert target.read_text() == "# New\n"


def test_an_emptied_file_stays_empty(daemon: RunningDaemon, client: Client):
    target = daemon.root / "e.txt"
    target.write_text("only")
    result = client.edit_file("e.txt", "only", "")
    assert target.read_bytes() == b"" and not result.auto_corrections
    client.write_file("e.txt", "")
    assert target.read_bytes() == b""


def test_append_to_file_and_a_prepared_append_write_the_same_bytes(
    daemon: RunningDaemon, client: Client
):
    (daemon.root / "a.md").write_text(NO_NEWLINE)
    (daemon.root / "b.md").write_text(NO_NEWLINE)
    client.append_to_file("a.md", "- three")
    client.apply_file_modification(client.prepare_file_append("b.md", "- three").hunk_id)
    assert (daemon.root / "a.md").read_bytes() == (daemon.root / "b.md").read_bytes()
