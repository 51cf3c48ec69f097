"""`safe_patch` through a real daemon: the seed's SafePatchTool test plan, and more.

Every refusal is checked to leave the file byte-for-byte unchanged (`refused`).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from editjournal.client import Client, RequestError
from editjournal.daemon.model.state import fold
from tests.conftest import RunningDaemon
from tests.e2e.edit_support import anchors_of
from tests.e2e.watch_support import not_sentinels, outside, settle
from tests.patch_support import sha, shifted, unified

TEXT = "".join(f"def step_{n}(state):\n    return state + {n}\n\n" for n in range(1, 11))
EMPTY = sha(b"")


def put(daemon: RunningDaemon, path: str, text: str | bytes) -> Path:
    target = daemon.root / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(text.encode() if isinstance(text, str) else text)
    return target


def refused(client: Client, path: str, diff: str, base: str, **kwargs) -> RequestError:
    target = client.root / path
    before = target.read_bytes() if target.exists() else None
    try:
        client.safe_patch(path, diff, base, **kwargs)
    except RequestError as e:
        after = target.read_bytes() if target.exists() else None
        assert after == before, "a refused patch changed the file"
        return e
    raise AssertionError("the patch was applied")


# --- the seed's test plan (section 7, SafePatchTool) -------------------------------------


def test_success_case_correct_patch(daemon: RunningDaemon, client: Client):
    target = put(daemon, "s.py", TEXT)
    read = client.read_file("s.py")
    new = TEXT.replace("state + 4\n", "state * 4\n")
    result = client.safe_patch("s.py", unified(TEXT, new), read.sha256)
    assert target.read_text() == new
    assert result.success and result.message == "Patch applied successfully."
    state = result.latest_file_state
    assert (state.file_path, state.sha256, state.content) == ("s.py", sha(new), new)
    assert state.version > read.version and state.exists
    assert result.details.writer_type == "safe_patch" and result.safety_check == "clean"
    assert [(h.hunk, h.offset) for h in result.hunks] == [(1, 0)]
    [changed] = result.changed_lines
    assert changed.text == "    return state * 4" and f"#{changed.hash}|" in result.diff
    [entry] = client.log(path="s.py", kind="edit_applied").events
    assert entry.seq == state.version and entry.body["writer"] == "safe_patch"
    assert entry.body["operations"][0]["unified_diff"] == unified(TEXT, new)


def test_success_case_corrected_patch_wrong_line_numbers_right_context(
    daemon: RunningDaemon, client: Client
):
    target = put(daemon, "s.py", TEXT)
    read = client.read_file("s.py")
    new = TEXT.replace("state + 2\n", "state - 2\n").replace("state + 9\n", "state - 9\n")
    result = client.safe_patch("s.py", shifted(unified(TEXT, new), 7), read.sha256)
    assert target.read_text() == new
    assert [h.offset for h in result.hunks] == [-7, -7]
    assert [h.stated_line - h.applied_line for h in result.hunks] == [7, 7]


def test_failure_case_hash_mismatch_returns_the_latest_state(daemon: RunningDaemon, client: Client):
    put(daemon, "s.py", TEXT)
    diff = unified(TEXT, TEXT.replace("state + 1\n", "state\n"))
    error = refused(client, "s.py", diff, sha("some other content"))
    assert error.code == "state_mismatch"
    assert error.message.startswith(
        "State Mismatch: File has changed on disk since it was last read."
    )
    state = error.details["latest_file_state"]
    assert error.details["success"] is False
    assert (state["sha256"], state["content"], state["exists"]) == (sha(TEXT), TEXT, True)
    assert state["version"] == error.seq  # the refusal is journaled; its seq is the version
    assert "conflicts" not in error.details  # a hash the journal never saw explains nothing


def test_failure_case_invalid_diff_content(daemon: RunningDaemon, client: Client):
    put(daemon, "s.py", TEXT)
    read = client.read_file("s.py")
    diff = "@@ -4,3 +4,3 @@\n def step_2(state):\n-    return state + 22\n+    return 0\n \n"
    error = refused(client, "s.py", diff, read.sha256)
    assert error.code == "invalid_diff"
    assert error.message.startswith(
        "Invalid Diff: The provided diff content does not match the file's content. The context"
        " or lines to be removed may be incorrect."
    )
    assert "hunk 1" in error.message.lower() and "return state + 22" in error.message
    assert (error.details["hunk"], error.details["row"]) == (1, 2)
    assert error.details["latest_file_state"]["sha256"] == read.sha256
    [rejection] = client.log(path="s.py", kind="edit_rejected").events
    assert rejection.body["code"] == "invalid_diff" and rejection.body["writer"] == "safe_patch"


def test_failure_case_internal_patch_error(daemon: RunningDaemon, client: Client):
    """Forced for real: the diff's new side ends in an empty line "without a newline",
    which no file can hold. Located fine, the strict check of the result refuses it."""
    target = put(daemon, "t.txt", "alpha\nbeta\n")
    diff = "@@ -1,2 +1,3 @@\n alpha\n beta\n+\n\\ No newline at end of file\n"
    error = refused(client, "t.txt", diff, sha(target.read_bytes()))
    assert error.code == "patch_failed"
    assert error.message.startswith(
        "Internal Error: The corrected patch failed to apply. Please review the diff for subtle"
        " errors."
    )
    assert error.details["latest_file_state"]["content"] == "alpha\nbeta\n"


def test_file_creation_case(daemon: RunningDaemon, client: Client):
    diff = unified("", "print('hi')\nx = 1\n").replace("a/f", "/dev/null")
    result = client.safe_patch("pkg/new.py", diff, EMPTY)
    assert (daemon.root / "pkg/new.py").read_text() == "print('hi')\nx = 1\n"
    assert result.created and result.latest_file_state.sha256 == sha("print('hi')\nx = 1\n")
    error = refused(client, "pkg/new.py", diff, EMPTY)  # exists now: the base is stale
    assert error.code == "state_mismatch"


# --- beyond the seed ------------------------------------------------------------------------


def test_a_read_only_file_is_not_deleted_through_dev_null(daemon: RunningDaemon, client: Client):
    """A removal obeys the rules every writer does: no write bit, no change (root too)."""
    target = put(daemon, "locked.txt", "one\ntwo\n")
    target.chmod(0o444)
    base = client.read_file("locked.txt").sha256
    diff = unified("one\ntwo\n", "").replace("b/f", "/dev/null")
    assert refused(client, "locked.txt", diff, base).code == "read_only_file"
    assert target.read_text() == "one\ntwo\n"


def test_file_deletion_through_dev_null_is_journaled_and_not_an_outside_change(
    daemon: RunningDaemon, client: Client
):
    target = put(daemon, "gone.txt", "one\ntwo\n")
    base = client.read_file("gone.txt").sha256
    partial = "--- a/gone.txt\n+++ /dev/null\n@@ -1,2 +0,1 @@\n-one\n two\n"
    assert refused(client, "gone.txt", partial, base).code == "invalid_diff"
    diff = unified("one\ntwo\n", "").replace("b/f", "/dev/null")
    result = client.safe_patch("gone.txt", diff, base)
    assert result.deleted and not target.exists()
    assert not result.latest_file_state.exists and result.latest_file_state.content is None
    settle(client, daemon.root)
    assert not_sentinels(outside(client)) == []
    assert fold(daemon.journal().records()).digest() == client.status().state_digest
    again = client.safe_patch("gone.txt", unified("", "back\n"), EMPTY)  # re-created
    assert again.created and target.read_text() == "back\n"


def test_include_content_false_leaves_the_content_out(daemon: RunningDaemon, client: Client):
    put(daemon, "s.py", TEXT)
    diff = unified(TEXT, TEXT.replace("state + 3\n", "state + 33\n"))
    result = client.safe_patch("s.py", diff, sha(TEXT), include_content=False)
    assert result.latest_file_state.content is None
    assert result.latest_file_state.sha256 == sha((daemon.root / "s.py").read_bytes())
    error = refused(client, "s.py", diff, sha(TEXT), include_content=False)
    assert error.details["latest_file_state"]["content"] is None


def test_diffs_made_by_git_diff_apply(daemon: RunningDaemon, client: Client, tmp_path: Path):
    repo = tmp_path / "repo"
    repo.mkdir()
    src = Path(__file__).read_text()  # a real file: this one
    (repo / "real.py").write_text(src)
    git = ["git", "-C", str(repo), "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "real.py"], check=True)
    new = src.replace("def put(", "def put_file(").replace("EMPTY = ", "EMPTY_SHA = EMPTY = ")
    new += "\n\n# appended by the test\n"
    (repo / "real.py").write_text(new)
    diff = subprocess.run([*git, "diff"], check=True, capture_output=True, text=True).stdout
    assert diff.startswith("diff --git")
    put(daemon, "real.py", src)
    result = client.safe_patch("real.py", diff, client.read_file("real.py").sha256)
    assert (daemon.root / "real.py").read_text() == new and len(result.hunks) == 3


def test_diffs_made_by_difflib_on_real_files_apply(daemon: RunningDaemon, client: Client):
    src = (Path(__file__).parents[2] / "daemon" / "text" / "lines.py").read_text()
    new = src.replace("def parse(", "def parse_text(").replace('BOM = "\\ufeff"', 'BOM = "\\uFEFF"')
    put(daemon, "lines.py", src)
    client.safe_patch("lines.py", unified(src, new, "lines.py"), sha(src))
    assert (daemon.root / "lines.py").read_text() == new


@pytest.mark.parametrize("ending", ["\n", "\r\n"])
def test_crlf_and_missing_final_newline_are_kept_and_changed_only_as_the_diff_says(
    daemon: RunningDaemon, client: Client, ending: str
):
    text = ending.join(["first", "second", "third"])  # no final newline
    target = put(daemon, "e.txt", text)
    new = ending.join(["first", "2nd", "third"])
    client.safe_patch("e.txt", unified(text, new), sha(text))
    assert target.read_bytes() == new.encode()
    lf_diff = "@@ -1,2 +1,3 @@\n first\n+inserted\n 2nd\n"  # an LF diff on a CRLF file
    client.safe_patch("e.txt", lf_diff, sha(new))
    newer = ending.join(["first", "inserted", "2nd", "third"])
    assert target.read_bytes() == newer.encode()
    client.safe_patch("e.txt", unified(newer, newer + ending), sha(newer))  # adds the newline
    assert target.read_bytes() == (newer + ending).encode()


@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    a=st.lists(st.sampled_from(["a = 1", "b = 2", "", "c()", "d = [1]"]), max_size=12),
    b=st.lists(st.sampled_from(["a = 1", "b = 2", "", "c()", "e = 5"]), max_size=12),
    final=st.booleans(),
)
def test_any_diff_of_a_to_b_on_a_yields_b_through_the_daemon(
    daemon: RunningDaemon, client: Client, a: list[str], b: list[str], final: bool
):
    old = "\n".join(a) + ("\n" if final and a else "")
    new = "\n".join(b) + ("\n" if b else "")
    target = put(daemon, "p.py", old)
    if old != new:
        client.safe_patch("p.py", unified(old, new), sha(old), skip_safety_check=True)
    assert target.read_text() == new


def test_two_agents_with_rebase_disjoint_hunks_both_land(daemon: RunningDaemon):
    target = put(daemon, "s.py", TEXT)
    a, b = daemon.client("agent-a"), daemon.client("agent-b")
    base = a.read_file("s.py").sha256
    b.read_file("s.py")
    first = b.safe_patch("s.py", unified(TEXT, TEXT.replace("+ 1\n", "+ 100\n")), base)
    mine = TEXT.replace("+ 9\n", "+ 900\n")
    strict = refused(a, "s.py", unified(TEXT, mine), base)
    assert strict.code == "state_mismatch" and strict.details["conflicts"] == []
    assert "rebase: true" in strict.message  # nothing it relies on changed: say so
    result = a.safe_patch("s.py", unified(TEXT, mine), base, rebase=True)
    assert target.read_text() == TEXT.replace("+ 1\n", "+ 100\n").replace("+ 9\n", "+ 900\n")
    assert result.rebased_from_version is not None
    assert [(c["seq"], c["agent"]) for c in result.rebased_over] == [
        (first.latest_file_state.version, "agent-b")
    ]


def test_two_agents_with_rebase_a_hunk_whose_context_changed_lands_and_says_so(
    daemon: RunningDaemon,
):
    target = put(daemon, "s.py", TEXT)
    a, b = daemon.client("agent-a"), daemon.client("agent-b")
    base = a.read_file("s.py").sha256
    first = b.safe_patch("s.py", unified(TEXT, TEXT.replace("+ 5\n", "+ 50\n")), base)
    # A's hunk only has line 14 ("return state + 5") as context: it finds the place
    result = a.safe_patch(
        "s.py", unified(TEXT, TEXT.replace("def step_6", "def step_six")), base, rebase=True
    )
    assert target.read_text() == TEXT.replace("+ 5\n", "+ 50\n").replace(
        "def step_6", "def step_six"
    )
    [note] = [c for c in result.auto_corrections if c.type == "context_carried"]
    assert "14" in note.detail and f"seq {first.latest_file_state.version}" in note.detail


def test_two_agents_with_rebase_touching_hunks_the_second_is_refused_naming_the_first(
    daemon: RunningDaemon,
):
    target = put(daemon, "s.py", TEXT)
    a, b = daemon.client("agent-a"), daemon.client("agent-b")
    base = a.read_file("s.py").sha256
    first = b.safe_patch("s.py", unified(TEXT, TEXT.replace("+ 5\n", "+ 50\n")), base)
    after_b = target.read_bytes()
    # A changes the very line B changed
    error = refused(a, "s.py", unified(TEXT, TEXT.replace("+ 5\n", "+ 500\n")), base, rebase=True)
    assert error.code == "state_mismatch" and target.read_bytes() == after_b
    assert error.message.startswith(
        "State Mismatch: File has changed on disk since it was last read."
    )
    [conflict] = error.details["conflicts"]
    assert (conflict["seq"], conflict["agent"]) == (first.latest_file_state.version, "agent-b")
    assert conflict["lines"] == [14] and "agent-b" in error.message
    assert error.details["stale"] == [{"hunk": 1, "op": "hunk", "lines": [14]}]
    delta = error.details["delta"]
    [fresh] = delta["changed_lines"]
    assert fresh["text"] == "    return state + 50"
    retry = a.safe_patch(
        "s.py",
        unified(after_b.decode(), after_b.decode().replace("+ 50\n", "+ 500\n")),
        error.details["latest_file_state"]["sha256"],
    )
    assert retry.success and "return state + 500" in target.read_text()


def test_mismatch_on_a_version_the_agent_read_names_the_conflicts_and_the_delta(
    daemon: RunningDaemon,
):
    target = put(daemon, "s.py", TEXT)
    a, b = daemon.client("agent-a"), daemon.client("agent-b")
    base = a.read_file("s.py").sha256
    anchors = anchors_of(b, "s.py")
    done = b.edit("s.py", [{"op": "replace_line", "hash": anchors[8], "content": "    return 3"}])
    error = refused(a, "s.py", unified(TEXT, TEXT.replace("+ 3\n", "+ 33\n")), base)
    assert error.details["base_version"] < done.version
    [conflict] = error.details["conflicts"]
    assert (conflict["seq"], conflict["agent"], conflict["kind"]) == (
        done.version,
        "agent-b",
        "edit_applied",
    )
    assert "-8|    return state + 3" in error.details["delta"]["diff"]
    assert error.details["latest_file_state"]["sha256"] == sha(target.read_bytes())


def test_baseline_continuity_is_mixed_once_a_second_writer_type_wrote(
    daemon: RunningDaemon, client: Client
):
    put(daemon, "s.py", TEXT)
    first = client.safe_patch("s.py", unified(TEXT, TEXT + "# end\n"), sha(TEXT))
    assert first.details.baseline_continuity == "clean"
    anchors = anchors_of(client, "s.py")
    client.edit("s.py", [{"op": "replace_line", "hash": anchors[2], "content": "    return 0"}])
    now = (daemon.root / "s.py").read_text()
    second = client.safe_patch("s.py", unified(now, now + "# more\n"), sha(now))
    assert second.details.baseline_continuity == "mixed"


def test_read_many_files_items_carry_version_and_sha256(daemon: RunningDaemon, client: Client):
    put(daemon, "x.txt", "x\n")
    put(daemon, "y.txt", "y\n")
    items = client.read_many_files(["x.txt", "y.txt"]).files
    assert [i.result.sha256 for i in items] == [sha("x\n"), sha("y\n")]
    assert items[0].result.version < items[1].result.version


def test_file_path_alias_and_bad_params(daemon: RunningDaemon, client: Client):
    put(daemon, "s.py", TEXT)
    diff = unified(TEXT, TEXT + "# end\n")
    params = {"file_path": "s.py", "unified_diff": diff, "base_content_sha256": sha(TEXT)}
    response = client.call("safe_patch", params)
    assert response.ok and any("file_path is deprecated" in w for w in response.warnings)
    bad = client.call("safe_patch", {**params, "base_content_sha256": "abc"})
    assert not bad.ok and bad.error.code == "invalid_params"
    assert "base_content_sha256" in bad.error.message
