"""No request holds the thread (issue 40, round 3): the caps on what one request may ask.

`check_write`'s edits (as many as `edit` takes operations), the hunks of one `safe_patch`
or `apply_patch`, and a write to a read-only file refused before the new content is
planned. Each over-cap request is `invalid_params` naming the limit and the field, and
nothing is written or journaled.
"""

from __future__ import annotations

from pathlib import Path

from editjournal.client import Client
from editjournal.schemas.events import EditRejected
from editjournal.schemas.tools import MAX_HUNKS, MAX_OPERATIONS
from editjournal.schemas.wire import Response
from tests.conftest import RunningDaemon
from tests.patch_support import sha


def refused(response: Response, code: str) -> str:
    """The error message of a response that must be an error of `code`."""
    assert response.error is not None, response
    assert response.error.code == code, response.error
    return response.error.message


def lines_file(daemon: RunningDaemon, path: str, count: int) -> Path:
    target = daemon.root / path
    target.write_text("".join(f"line {i}\n" for i in range(count)))
    return target


def one_line_hunks(count: int) -> str:
    """A unified diff changing every other line of `lines_file`, one hunk per change."""
    body = [
        f"@@ -{2 * i + 1},1 +{2 * i + 1},1 @@\n-line {2 * i}\n+LINE {2 * i}\n" for i in range(count)
    ]
    return "--- a/f\n+++ b/f\n" + "".join(body)


def v4a_chunks(path: str, count: int, start: int = 0) -> str:
    """An Update File body of `count` one-line chunks over `lines_file`'s lines."""
    chunks = [f"@@\n-line {2 * i}\n+LINE {2 * i}\n" for i in range(start, start + count)]
    return "".join(chunks)


def rejections(daemon: RunningDaemon) -> list[EditRejected]:
    return [r.event for r in daemon.journal().records() if isinstance(r.event, EditRejected)]


def test_check_write_takes_as_many_edits_as_edit_takes_operations(
    daemon: RunningDaemon, client: Client
) -> None:
    """5,000 edits held the thread 29 s; now one past the cap is refused as decoded."""
    (daemon.root / "a.txt").write_text("alpha\n")
    client.read_file("a.txt")
    edits = [{"old_string": "alpha", "new_string": "beta"}] * (MAX_OPERATIONS + 1)
    response = client.call("check_write", {"path": "a.txt", "tool": "t:Edit", "edits": edits})
    message = refused(response, "invalid_params")
    assert f"<= {MAX_OPERATIONS}" in message and "$.params.edits" in message
    assert f"at most {MAX_OPERATIONS} edits per check_write" in message
    allowed = client.check_write("a.txt", "t:Edit", edits=edits[:MAX_OPERATIONS])
    assert allowed.checked == MAX_OPERATIONS
    assert (daemon.root / "a.txt").read_text() == "alpha\n"


def test_a_safe_patch_over_the_hunk_cap_is_refused_and_one_at_the_cap_applies(
    daemon: RunningDaemon, client: Client
) -> None:
    target = lines_file(daemon, "f", 2 * MAX_HUNKS + 2)
    before = target.read_bytes()
    base = client.read_file("f").sha256
    response = client.call(
        "safe_patch",
        {"path": "f", "unified_diff": one_line_hunks(MAX_HUNKS + 1), "base_content_sha256": base},
    )
    message = refused(response, "invalid_params")
    assert f"{MAX_HUNKS + 1:,} hunks, over the limit of {MAX_HUNKS:,}" in message
    assert message.endswith("- at `$.params.unified_diff`")
    assert target.read_bytes() == before and rejections(daemon) == []
    result = client.safe_patch("f", one_line_hunks(MAX_HUNKS), sha(before))
    assert len(result.hunks) == MAX_HUNKS
    assert target.read_text().count("LINE") == MAX_HUNKS


def test_an_apply_patch_over_the_hunk_cap_is_refused_for_all_its_files(
    daemon: RunningDaemon, client: Client
) -> None:
    """The cap counts every file's hunks: two files under it alone are over it together."""
    half = MAX_HUNKS // 2 + 1
    a, b = lines_file(daemon, "a.txt", 2 * half), lines_file(daemon, "b.txt", 2 * half)
    before = (a.read_bytes(), b.read_bytes())
    envelope = (
        "*** Begin Patch\n*** Update File: a.txt\n" + v4a_chunks("a.txt", half)
        + "*** Update File: b.txt\n" + v4a_chunks("b.txt", half) + "*** End Patch\n"
    )  # fmt: skip
    message = refused(client.call("apply_patch", {"patch": envelope}), "invalid_params")
    assert f"{2 * half:,} hunks, over the limit of {MAX_HUNKS:,}" in message
    assert message.endswith("- at `$.params.patch`")
    operations = [
        {"type": "update_file", "path": p, "diff": v4a_chunks(p, half)} for p in ("a.txt", "b.txt")
    ]
    response = client.call("apply_patch", {"operations": operations})
    assert refused(response, "invalid_params").endswith("- at `$.params.operations`")
    assert (a.read_bytes(), b.read_bytes()) == before and rejections(daemon) == []


def test_a_first_chunk_without_a_header_is_counted_once_parsed(
    daemon: RunningDaemon, client: Client
) -> None:
    """The `@@` lines counted before parsing never overcount; the parsed chunks are exact."""
    lines_file(daemon, "a.txt", 2 * MAX_HUNKS + 2)
    body = "-line 0\n+LINE 0\n" + v4a_chunks("a.txt", MAX_HUNKS, start=1)
    envelope = f"*** Begin Patch\n*** Update File: a.txt\n{body}*** End Patch\n"
    message = refused(client.call("apply_patch", {"patch": envelope}), "invalid_params")
    assert f"{MAX_HUNKS + 1:,} hunks" in message


def test_a_big_write_to_a_read_only_file_is_refused_before_it_is_planned(
    daemon: RunningDaemon, client: Client
) -> None:
    """The mode is checked before the new content is planned: a content planning would
    refuse (a NUL character: `invalid_params`) is refused `read_only_file` instead, so
    the refusal no longer costs parsing 7.5 MB on the daemon's thread."""
    target = daemon.root / "locked.txt"
    target.write_text("old\n")
    target.chmod(0o444)
    client.read_file("locked.txt")
    content = "x" * 70 + "\n"
    big = content * 100_000 + "\x00\n"  # 7.1 MB
    response = client.call("overwrite_entire_file", {"path": "locked.txt", "content": big})
    assert "read-only" in refused(response, "read_only_file")
    assert target.read_text() == "old\n"
    target.chmod(0o644)
    response = client.call("overwrite_entire_file", {"path": "locked.txt", "content": big})
    assert "NUL" in refused(response, "invalid_params")  # what planning says of it
