"""Identical lines (issue 39), end to end: a run of blank lines and identical closing
braces share their anchors; read_file marks them `?`, and the line number copied with
the anchor picks the one the agent meant in the file as it read it, after another
agent moved every line by inserting above. Refused only when the number does not
single one out: its line was replaced since, it names no twin, or the agent never
read the file (its numbers refer to nothing)."""

from __future__ import annotations

from editjournal.client import Client, RequestError
from tests.conftest import RunningDaemon

# blanks 5-7 share an anchor and a context; so do the inner closers at 3 and 10
CODE = "f() {\n  g() {\n  }\n}\n\n\n\nh() {\n  g() {\n  }\n}\n"
TWINS = (3, 5, 6, 7, 10)


def _read(client: Client) -> dict[int, str]:
    """line -> `LINE#ANCHOR`, copied whole from the rows, as agents do."""
    read = client.read_file("c.c", hashes=True)
    return {row.line: f"{row.line}#{row.hash}" for row in read.lines}


def _range(start: str, end: str, content: str) -> dict[str, str]:
    return {"op": "replace_range", "start_hash": start, "end_hash": end, "content": content}


def _refused(client: Client, ops: list[dict]) -> RequestError:
    try:
        client.edit("c.c", ops)
    except RequestError as e:
        return e
    raise AssertionError("the edit was applied")


def test_twins_edited_by_their_shifted_numbers_land_on_the_lines_read(daemon: RunningDaemon):
    target = daemon.root / "c.c"
    target.write_text(CODE)
    a, b = daemon.client("agent-a"), daemon.client("agent-b")
    read = a.read_file("c.c", hashes=True)
    rendered = read.rendered.splitlines()
    assert [n for n, row in enumerate(rendered, 1) if "?|" in row] == list(TWINS)
    rows = {row.line: f"{row.line}#{row.hash}" for row in read.lines}
    b.read_file("c.c")
    b.prepend_to_file("c.c", "// b\n")
    # every line moved down one: 6#/7# are the last two blanks as read, and would be
    # the first two by the numbers as they are now
    a.edit("c.c", [_range(rows[6], rows[7], "m = 1"), _range(rows[9], rows[10], "  k() {\n  }")])
    assert target.read_text() == "// b\nf() {\n  g() {\n  }\n}\n\nm = 1\nh() {\n  k() {\n  }\n}\n"
    # its own edit was carried over b's line: its snapshot is numbered otherwise now,
    # and the numbers of its read still pick the line it read there
    a.edit("c.c", [_range(rows[2], rows[3], "  j()")])
    assert target.read_text() == "// b\nf() {\n  j()\n}\n\nm = 1\nh() {\n  k() {\n  }\n}\n"


def test_numbers_that_do_not_single_one_out_are_refused(daemon: RunningDaemon):
    target = daemon.root / "c.c"
    target.write_text(CODE)
    a, b, never = daemon.client("agent-a"), daemon.client("agent-b"), daemon.client("agent-c")
    rows = _read(a)
    b.read_file("c.c")
    b.edit_file("c.c", "}\n\n\n\nh() {", "}\n\nx = 1\n\nh() {")  # the middle blank is text now
    after_b = target.read_bytes()
    replaced = _refused(a, [_range(rows[5], rows[6], "y")])
    assert replaced.code == "anchor_stale" and "agent-b" in replaced.message
    blank = rows[5].split("#")[1]
    no_twin = _refused(
        a, [{"op": "delete_range", "start_hash": f"9#{blank}", "end_hash": rows[11]}]
    )
    assert no_twin.code == "anchor_context_ambiguous"
    assert "line 9 does not single one out" in no_twin.message
    unread = _refused(never, [{"op": "delete_range", "start_hash": rows[5], "end_hash": rows[8]}])
    assert unread.code == "anchor_context_ambiguous"  # the plain behaviour: no numbering
    assert [c["line"] for c in unread.details["candidates"]] == [5, 7]
    assert target.read_bytes() == after_b
