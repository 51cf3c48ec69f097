"""A many-file `apply_patch` is planned a slice at a time (issue 40: no request holds
the daemon's thread for long), and answers as the inline path does.

A patch of more than 64 file operations and no move is handed to a `PatchJob`
(daemon/handlers/patchjob.py): its paths claimed, then its files planned, a slice at
a time between other requests, the plans merged all or nothing. Each test: a real
daemon on files put in place before it started, the patch from one client (a thread:
the client waits on its socket) while another pings; the request is seen parked, and
the files are right to the byte. The longest ping is a stall guard here, not the
100 ms goal (measured with /tmp/r48/patchturn.py, written in docs/performance.md).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest

from editjournal.client import RequestError
from editjournal.schemas.events import EditApplied
from tests.conftest import RunningDaemon, start
from tests.held import held
from tests.patch_support import sha
from tests.polling import wait_until

FILES = 300  # operations of each patch: over the 64 planned at once, a few slices' worth
LINES = 40
LONGEST_WAIT_S = 10.0  # a stall guard: a busy machine stretches every slice


def path_of(i: int) -> str:
    return f"d{i // 100:02}/f{i:04}.py"


def text_of(i: int) -> str:
    return "".join(f"line {j} of {i}\n" for j in range(LINES))


def updated(i: int) -> str:
    return text_of(i).replace(f"line 11 of {i}\n", f"LINE 11 of {i}\n")


def update(i: int) -> str:
    """An Update File of file `i`: its line 11 upper-cased, found by its context."""
    return (
        f"*** Update File: {path_of(i)}\n@@\n line 10 of {i}\n-line 11 of {i}\n"
        f"+LINE 11 of {i}\n line 12 of {i}\n"
    )


def envelope(*operations: str) -> str:
    return "*** Begin Patch\n" + "".join(operations) + "*** End Patch\n"


def on_disk(root: Path) -> dict[str, bytes]:
    return {path_of(i): (root / path_of(i)).read_bytes() for i in range(FILES)}


@pytest.fixture
def files(workspace: Path) -> Iterator[RunningDaemon]:
    """`FILES` files of `LINES` lines, in place before the daemon starts (none of them
    an outside change), and the daemon."""
    for i in range(FILES):
        (workspace / path_of(i)).parent.mkdir(exist_ok=True)
        (workspace / path_of(i)).write_text(text_of(i))
    running = start(workspace, "--no-watch")
    yield running
    if running.proc.poll() is None:
        running.stop()


def applied(daemon: RunningDaemon, after: int) -> list[EditApplied]:
    journal = daemon.journal()
    try:
        found = journal.records(kind="edit_applied", after_seq=after)
        return [r.event for r in found if isinstance(r.event, EditApplied)]
    finally:
        journal.close()


def test_a_patch_of_many_updates_is_planned_in_slices_and_written_to_the_byte(
    files: RunningDaemon,
) -> None:
    """Parked while its files are planned; every file right, the reply's files in the
    patch's order at consecutive seqs, one edit_applied each, in that order."""
    patch = envelope(*(update(i) for i in range(FILES)))
    done = held(files, lambda c: c.apply_patch(patch), refusals_too=True)
    assert done.parked and done.longest <= LONGEST_WAIT_S
    result = done.result
    assert on_disk(files.root) == {path_of(i): updated(i).encode() for i in range(FILES)}
    assert [f.path for f in result.files] == [path_of(i) for i in range(FILES)]
    assert {f.action for f in result.files} == {"updated"}
    first = result.files[0].version
    assert [f.version for f in result.files] == list(range(first, first + FILES))
    assert all(f.sha256 == sha(updated(i).encode()) for i, f in enumerate(result.files))
    assert [h.line for f in result.files for h in f.hunks] == [12] * FILES
    assert result.message.splitlines()[1:] == [f"M {path_of(i)}" for i in range(FILES)]
    events = applied(files, first - 1)
    assert [e.path for e in events] == [path_of(i) for i in range(FILES)]
    assert {e.writer for e in events} == {"apply_patch"}


def test_a_sliced_patch_answers_as_the_inline_path_does(workspace: Path) -> None:
    """The same updates of two copies of the files: one patch of 150 operations (sliced)
    and three of 50 (each planned at once) give the same reply, file for file, but for
    the paths and the seqs."""
    for copy in ("a", "b"):
        for i in range(150):
            (workspace / copy / f"f{i:03}.py").parent.mkdir(exist_ok=True)
            (workspace / copy / f"f{i:03}.py").write_text(text_of(i))
    running = start(workspace, "--no-watch")
    try:
        client = running.client("worker", timeout=120)

        def ops(copy: str, numbers: range) -> str:
            return envelope(*(update(i).replace(path_of(i), f"{copy}/f{i:03}.py") for i in numbers))

        sliced = client.apply_patch(ops("a", range(150))).files
        inline = [
            f for n in (0, 50, 100) for f in client.apply_patch(ops("b", range(n, n + 50))).files
        ]
    finally:
        running.stop()

    def shown(files: list[Any]) -> list[dict[str, Any]]:
        return [{**msgspec.to_builtins(f), "path": None, "version": None} for f in files]

    assert shown(sliced) == shown(inline)
    assert [f.path for f in sliced] == [f"a/f{i:03}.py" for i in range(150)]


def test_one_refused_operation_in_the_middle_refuses_the_whole_patch(
    files: RunningDaemon,
) -> None:
    """A Delete File of a missing file as operation 150 of 300, found in a slice: the
    inline path's refusal word for word, naming that operation; nothing written."""
    before = on_disk(files.root)
    ops = [update(i) for i in range(FILES)]
    ops[149] = "*** Delete File: gone/missing.py\n"
    done = held(files, lambda c: c.apply_patch(envelope(*ops)), refusals_too=True)
    assert done.parked and done.longest <= LONGEST_WAIT_S
    error = done.result
    assert isinstance(error, RequestError) and error.code == "file_not_found"
    assert error.message == (
        "operation 150 (*** Delete File: gone/missing.py): gone/missing.py does not exist:"
        " there is nothing to delete (nothing was written: all files or none)"
    )
    assert error.details["operation"] == 150 and error.details["path"] == "gone/missing.py"
    assert on_disk(files.root) == before
    assert not applied(files, 0)


@pytest.mark.parametrize(
    ("refused", "code"),
    [("read-only", "read_only_file"), ("../outside.py", "path_outside_workspace")],
)
def test_a_read_only_or_outside_path_among_many_is_refused_naming_it(
    files: RunningDaemon, refused: str, code: str
) -> None:
    """Operation 150 of 300 on a 0444 file (refused before the patch is parsed) or a
    path outside the workspace (refused as its path is claimed): that operation named,
    nothing written."""
    ops = [update(i) for i in range(FILES)]
    if refused == "read-only":
        (files.root / path_of(149)).chmod(0o444)
    else:
        ops[149] = ops[149].replace(path_of(149), refused, 1)
    before = on_disk(files.root)
    with pytest.raises(RequestError) as caught:
        files.client("worker").apply_patch(envelope(*ops))
    named = path_of(149) if refused == "read-only" else refused
    assert caught.value.code == code
    assert caught.value.message.startswith(f"operation 150 (*** Update File: {named}):")
    assert on_disk(files.root) == before
    assert not applied(files, 0)


def test_two_operations_on_one_file_are_refused_as_the_inline_path_refuses_them(
    files: RunningDaemon,
) -> None:
    """Paths are claimed in the job's slices; a file claimed twice ends the job and the
    patch is refused at once, as it always was: nothing written."""
    before = on_disk(files.root)
    ops = [update(i) for i in range(FILES)]
    ops[199] = update(2).replace(f"LINE 11 of {2}", "again")
    with pytest.raises(RequestError) as caught:
        files.client("worker").apply_patch(envelope(*ops))
    assert caught.value.code == "invalid_params"
    assert caught.value.message.startswith(f"operations 3 and 200 both change {path_of(2)}:")
    assert on_disk(files.root) == before


def test_another_agents_write_between_the_slices_is_kept(files: RunningDaemon) -> None:
    """An agent appends to the patch's first file while the patch is parked (its plan
    made already, in the inline try of a patch of 200): the final run plans that file
    again on the append, which stays."""
    patched = range(200)  # under 256: the handler's inline try plans the first files
    patch = envelope(*(update(i) for i in patched))
    writer, first = files.client("writer"), path_of(0)
    out: dict[str, Any] = {}
    patching = threading.Thread(
        target=lambda: out.update(result=files.client("worker", timeout=120).apply_patch(patch))
    )
    patching.start()
    try:
        wait_until(lambda: writer.status().parked == 1, 60, "the patch to be parked")
        appended = writer.append_to_file(first, "written meanwhile\n")
    finally:
        patching.join(120)
    result = out["result"]
    assert (files.root / first).read_text() == updated(0) + "written meanwhile\n"
    assert result.files[0].path == first and result.files[0].version > appended.version
    [ours] = [e for e in applied(files, appended.version) if e.path == first]
    assert ours.before_sha256 == sha((text_of(0) + "written meanwhile\n").encode())
    expected = {path_of(i): (updated(i) if i in patched else text_of(i)) for i in range(FILES)}
    assert on_disk(files.root) | {first: updated(0).encode()} == {
        path: text.encode() for path, text in expected.items()
    }


def test_a_many_file_patch_with_a_move_is_planned_at_once(files: RunningDaemon) -> None:
    """A move's new path is planned from its old path's plan, in one run (not in
    slices): the patch moves the file with its update, the others updated in place."""
    ops = [update(i) for i in range(100)]
    ops[50] = update(50).replace("\n@@\n", "\n*** Move to: moved/f.py\n@@\n", 1)
    done = held(files, lambda c: c.apply_patch(envelope(*ops)), refusals_too=True)
    assert [f.action for f in done.result.files].count("moved") == 1
    assert (files.root / "moved/f.py").read_text() == updated(50)
    assert not (files.root / path_of(50)).exists()
    assert (files.root / path_of(99)).read_text() == updated(99)


def test_a_big_file_in_a_many_file_patch_keeps_another_agents_write(workspace: Path) -> None:
    """A 25,000-line file among 100: planned in its slice (never an index or plan-ahead
    job of its own, whose final runs are not the patch's), and an append to it while
    the patch is parked is kept, whichever lands first."""
    big = "".join(f"row {n}\n" for n in range(25_000))
    (workspace / "big.txt").write_text(big)
    for i in range(100):
        (workspace / path_of(i)).parent.mkdir(exist_ok=True)
        (workspace / path_of(i)).write_text(text_of(i))
    running = start(workspace, "--no-watch")
    try:
        writer = running.client("writer")
        big_update = (
            "*** Update File: big.txt\n@@\n row 19999\n-row 20000\n+ROW 20000\n row 20001\n"
        )
        patch = envelope(big_update, *(update(i) for i in range(100)))
        out: dict[str, Any] = {}
        worker = running.client("worker", timeout=120)
        patching = threading.Thread(target=lambda: out.update(result=worker.apply_patch(patch)))
        patching.start()
        try:
            wait_until(lambda: writer.status().parked >= 1, 60, "the patch to be parked")
            writer.append_to_file("big.txt", "tail\n")
        finally:
            patching.join(120)
        assert [f.path for f in out["result"].files] == ["big.txt", *map(path_of, range(100))]
    finally:
        running.stop()
    expected = big.replace("row 20000\n", "ROW 20000\n") + "tail\n"
    assert (workspace / "big.txt").read_text() == expected
    assert all((workspace / path_of(i)).read_text() == updated(i) for i in range(100))


def test_the_responses_apis_operations_are_sliced_alike(files: RunningDaemon) -> None:
    """The same updates as the Responses API's operation list: planned in slices too."""
    operations = [
        {
            "type": "update_file",
            "path": path_of(i),
            "diff": f"@@\n line 10 of {i}\n-line 11 of {i}\n+LINE 11 of {i}\n",
        }
        for i in range(FILES)
    ]
    done = held(files, lambda c: c.apply_patch(operations=operations), refusals_too=True)
    assert done.parked
    assert [f.path for f in done.result.files] == [path_of(i) for i in range(FILES)]
    assert on_disk(files.root) == {path_of(i): updated(i).encode() for i in range(FILES)}
