"""The daemon carries anchors through edits incrementally; what it serves must equal
anchors computed from scratch on the bytes on disk, edit after edit (twins that
become unique, blank runs around the edited lines, low-quality repeats)."""

from __future__ import annotations

from editjournal.client import Client
from editjournal.daemon.text.anchors import AnchorIndex
from editjournal.daemon.text.lines import parse
from tests.conftest import RunningDaemon


def _scratch(daemon: RunningDaemon, name: str) -> list[tuple[int, str, str, bool, str]]:
    lines = parse((daemon.root / name).read_text()).lines
    return [(a.line, a.anchor, a.kind, a.unique, a.quality) for a in AnchorIndex(lines).anchors()]


def _served(client: Client, name: str) -> list[tuple[int, str, str, bool, str]]:
    rows = client.read_file(name, hashes=True).lines or []
    return [(r.line, r.hash, r.kind, r.unique, r.quality) for r in rows]


def test_served_anchors_equal_scratch_after_every_edit(daemon: RunningDaemon, client: Client):
    body = ["def f(x):", "    return x", "", "", "}", *(f"v{i} = {i}" for i in range(40))]
    (daemon.root / "t.py").write_text("\n".join([*body, "    return x", "}", "}"]) + "\n")
    steps = [  # (operation, the line it names) on the content the previous step left
        ({"op": "delete_line"}, 46),  # a twin goes: line 2 becomes unique
        ({"op": "insert_after", "content": "\n\n    return x"}, 6),  # a twin again, blanks
        ({"op": "replace_line", "content": "    return x"}, 20),  # a third copy: all go low
    ]
    for op, line in steps:
        anchor = {row.line: row.hash for row in client.read_file("t.py", hashes=True).lines or []}
        result = client.edit("t.py", [{**op, "hash": anchor[line]}])
        assert result.lines_after == len(_scratch(daemon, "t.py"))
        assert _served(client, "t.py") == _scratch(daemon, "t.py")
