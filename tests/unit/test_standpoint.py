"""The CLI's one path rule, both ways: a typed path to the wire's, the wire's to the typed.

Pure (`client.standpoint`): the root and the current directory are given, nothing is
read from the disk. The end-to-end half (the real CLI in subdirectories) is in
tests/e2e/test_cli_suggestions.py and tests/e2e/test_cli_paths.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from editjournal.client.cli.standpoint import Standpoint, paths_in
from editjournal.schemas.tools import CheckpointRestoreResult, LogEntry

ROOT = Path("/ws")
IN_PKG = Standpoint(ROOT, "pkg")
AT_ROOT = Standpoint(ROOT, "")


@pytest.mark.parametrize(
    ("cwd", "base"),
    [("/ws", ""), ("/ws/pkg", "pkg"), ("/ws/pkg/sub", "pkg/sub"), ("/elsewhere", ""),
     ("/", ""), ("/wsx", "")],
)  # fmt: skip
def test_a_standpoint_is_the_directory_inside_the_workspace_else_its_root(cwd: str, base: str):
    assert Standpoint.at(ROOT, Path(cwd)).base == base


@pytest.mark.parametrize(
    ("typed", "wire"),
    [("m.py", "pkg/m.py"), ("./m.py", "pkg/m.py"), ("../lib/x.py", "lib/x.py"),
     ("..", "."), ("sub/", "pkg/sub/"), ("../../out.txt", "/out.txt"), ("/abs/x", "/abs/x")],
)  # fmt: skip
def test_a_typed_path_starts_where_you_stand(typed: str, wire: str):
    assert IN_PKG.to_wire(typed) == wire


def test_at_the_root_or_outside_a_typed_path_goes_as_typed():
    assert AT_ROOT.to_wire("pkg/m.py") == "pkg/m.py" and AT_ROOT.to_wire("./x") == "./x"


@pytest.mark.parametrize(
    ("wire", "shown"),
    [("pkg/m.py", "m.py"), ("lib/x.py", "../lib/x.py"), ("top.py", "../top.py"),
     ("pkg", "."), ("pkg/sub/", "sub/"), ("/abs/x", "/abs/x"), ("", "")],
)  # fmt: skip
def test_a_printed_path_is_as_typed_from_where_you_stand(wire: str, shown: str):
    assert IN_PKG.shown(wire) == shown


_SEGMENT = st.text("abcxyz_.-", min_size=1, max_size=6).filter(lambda s: s not in {".", ".."})
_PATH = st.lists(_SEGMENT, min_size=1, max_size=4).map("/".join)


@given(wire=_PATH, base=st.lists(_SEGMENT, max_size=3).map("/".join))
def test_what_is_printed_types_back_to_the_same_file(wire: str, base: str):
    where = Standpoint(ROOT, base)
    assert where.to_wire(where.shown(wire)) == wire


def test_prose_names_a_known_path_as_typed_and_nothing_else():
    said = "edit pkg/m.py rejected; see pkg/m.py.orig, xpkg/m.py and 'pkg/m.py'."
    assert IN_PKG.in_text(said, {"pkg/m.py"}) == (
        "edit m.py rejected; see pkg/m.py.orig, xpkg/m.py and 'm.py'."
    )


def test_prose_is_rewritten_in_one_pass():
    """`pkg/top.py` becomes `top.py`, which is also the root's `top.py`: not again."""
    said = "moved pkg/top.py to top.py"
    assert IN_PKG.in_text(said, {"pkg/top.py", "top.py"}) == "moved top.py to ../top.py"


def test_a_reply_is_localized_field_by_field_and_its_message_with_it():
    reply = {"message": "Edited pkg/m.py", "file_path": "pkg/m.py", "diff": "--- a/pkg/m.py\n"}
    shown = IN_PKG.localized(reply)
    assert (shown["file_path"], shown["message"]) == ("m.py", "Edited m.py")
    assert shown["diff"] == reply["diff"]  # a diff's headers stay the workspace's, as git's


def test_nested_path_lists_and_records_are_localized():
    restored = CheckpointRestoreResult.__struct_fields__
    assert "kept_new" in restored and "left_alone" in restored
    summary = "edit lib/x.py: 1 operation"
    entry = LogEntry(
        seq=4, ts=0, agent="a", kind="edit_applied", path="lib/x.py", hash="",
        summary=summary, body={"moved_from": "pkg/y.py"},
    )  # fmt: skip
    shown = IN_PKG.localized(entry)
    assert (shown.path, shown.summary) == ("../lib/x.py", "edit ../lib/x.py: 1 operation")
    assert shown.body["moved_from"] == "y.py"
    assert set(paths_in({"left_alone": [{"path": "a/b", "why": "binary"}], "scope": [""]})) == {
        "a/b"
    }


def test_at_the_root_nothing_is_rewritten():
    entry = LogEntry(
        seq=1, ts=0, agent=None, kind="file_read", path="pkg/m.py", summary="read", hash="", body={}
    )
    assert AT_ROOT.localized(entry) is entry
