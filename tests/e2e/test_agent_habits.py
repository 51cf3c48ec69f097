"""Text writers meet real agents' habits, through a real daemon: text is proof of sight,
several edits from one read (the agent's view is its read plus its own writes), a stale
text edit hands the way out, and a seam that could be aligned two ways is refused."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from editjournal.client import Client, RequestError
from tests.conftest import RunningDaemon

LONG = "".join(f"value_{n} = compute({n})\n" for n in range(1, 3001))  # over the 2,000 window
FUNCS = "".join(
    f"def step_{n}(state):\n    total = state + {n}\n    return total\n\n\n" for n in range(1, 9)
)

MANY = "".join(
    f"def step_{n}(state):\n    total = state + {n}\n    return total\n\n\n" for n in range(1, 201)
)


def both_read(daemon: RunningDaemon, name: str, text: str) -> tuple[Path, Client, Client]:
    """The file written, and agents A and B, who both read it whole."""
    target = daemon.root / name
    target.write_text(text)
    a, b = daemon.client("agent-a"), daemon.client("agent-b")
    a.read_file(name)
    b.read_file(name)
    return target, a, b


def refused(call) -> RequestError:  # type: ignore[no-untyped-def]
    with pytest.raises(RequestError) as caught:
        call()
    return caught.value


def envelope(path: str, old: str, new: str) -> str:
    body = "".join(f"-{x}\n" for x in old.splitlines()) + "".join(
        f"+{x}\n" for x in new.splitlines()
    )
    return f"*** Begin Patch\n*** Update File: {path}\n@@\n{body}*** End Patch\n"


def unified(text: str, line: int, new: str, path: str = "long.py") -> str:
    """`git diff -U3`'s hunk replacing 1-based `line` of `text` by `new`."""
    lines = text.splitlines()
    before, after = lines[line - 4 : line - 1], lines[line : line + 3]
    body = [f" {x}" for x in before] + [f"-{lines[line - 1]}", f"+{new}"]
    body += [f" {x}" for x in after]
    header = f"@@ -{line - 3},7 +{line - 3},7 @@"
    return f"--- a/{path}\n+++ b/{path}\n{header}\n" + "".join(x + "\n" for x in body)


# --- text is proof of sight -------------------------------------------------------------------


def test_a_hunk_deep_in_a_long_file_read_with_the_default_window_lands_with_every_text_writer(
    daemon: RunningDaemon,
):
    target = daemon.root / "long.py"
    target.write_text(LONG)
    a = daemon.client("agent-a")
    assert a.read_file("long.py").end_line == 2000  # the default window
    a.edit_file("long.py", "value_2500 = compute(2500)\n", "value_2500 = 0\n")
    patch = envelope("long.py", "value_2700 = compute(2700)", "value_2700 = 1")
    a.apply_patch(patch)
    latest = a.read_file("long.py", range="1-1")  # the sha only: the window stays small
    a.safe_patch("long.py", unified(target.read_text(), 2800, "value_2800 = 2"), latest.sha256)
    text = target.read_text()
    assert "value_2500 = 0\n" in text and "value_2700 = 1\n" in text
    assert "value_2800 = 2\n" in text
    assert text.count("\n") == 3000


def test_an_edit_beyond_the_window_lands_though_another_agent_changed_the_file_since(
    daemon: RunningDaemon,
):
    target = daemon.root / "long.py"
    target.write_text(LONG)
    a, b = daemon.client("agent-a"), daemon.client("agent-b")
    a.read_file("long.py")
    b.edit_file("long.py", "value_10 = compute(10)\n", "value_10 = 10\n")
    a.edit_file("long.py", "value_2900 = compute(2900)\n", "value_2900 = 2\n")
    lines = target.read_text().splitlines()
    assert lines[9] == "value_10 = 10" and lines[2899] == "value_2900 = 2"


def test_text_another_agent_moved_away_from_where_the_agent_read_it_is_refused(
    daemon: RunningDaemon,
):
    """The agent's view places the text where it read it; the only copy now is one another
    agent wrote elsewhere after changing the original: not guessed onto the copy."""
    target, a, b = both_read(daemon, "f.py", FUNCS)
    b.edit_file("f.py", "    total = state + 3\n", "    total = state * 3\n")
    b.append_to_file("f.py", "# state + 3\n")
    e = refused(lambda: a.edit_file("f.py", "state + 3", "state + 30"))
    assert e.code == "anchor_stale" and "agent-b" in e.message
    assert target.read_text() == FUNCS.replace("state + 3", "state * 3") + "# state + 3\n"


# --- the agent's view: its read plus its own writes ---------------------------------------------


def test_several_edit_files_from_one_read_land_over_another_agents_change_between_them(
    daemon: RunningDaemon,
):
    """A's second old_string quotes line 6 as A read it; B rewrote that line before A's
    first edit, which was carried over it: the text is in A's view, not in the file."""
    target, a, b = both_read(daemon, "f.py", FUNCS)
    b.edit_file("f.py", "def step_2(state):\n", "def step_two(state):\n")
    a.edit_file("f.py", "    total = state + 1\n", "    total = state + 100\n")
    done = a.edit_file(
        "f.py",
        "def step_2(state):\n    total = state + 2\n",
        "def step_2(state):\n    total = state + 200\n",
    )
    notes = [c.type for c in done.auto_corrections]
    assert "context_carried" in notes
    expected = (
        FUNCS.replace("state + 1\n", "state + 100\n")
        .replace("def step_2(", "def step_two(")
        .replace("state + 2\n", "state + 200\n")
    )
    assert target.read_text() == expected


def test_an_edit_from_the_view_over_a_line_another_agent_changed_is_refused_with_the_delta(
    daemon: RunningDaemon,
):
    target, a, b = both_read(daemon, "f.py", MANY)
    b_done = b.edit_file("f.py", "    total = state + 50\n", "    total = state - 50\n")
    a.edit_file("f.py", "    total = state + 1\n", "    total = state + 100\n")
    e = refused(
        lambda: a.edit_file("f.py", "    total = state + 50\n", "    total = state + 500\n")
    )
    assert e.code == "anchor_stale"
    assert [c["seq"] for c in e.details["conflicts"]] == [b_done.version]
    assert "state - 50" in e.details["delta"]["diff"]
    full = len(json.dumps(a.read_file("f.py", hashes=True).content))
    assert len(json.dumps(e.details)) < 0.05 * full  # the retry needs no re-read
    assert target.read_text() == MANY.replace("+ 50\n", "- 50\n").replace("+ 1\n", "+ 100\n")


def test_apply_patch_hunks_from_the_view_land_over_another_agents_change(daemon: RunningDaemon):
    target, a, b = both_read(daemon, "f.py", FUNCS)
    b.edit_file("f.py", "def step_4(state):\n", "def step_four(state):\n")
    a.apply_patch(envelope("f.py", "    total = state + 3", "    total = state + 300"))
    patch = (
        "*** Begin Patch\n*** Update File: f.py\n@@\n def step_4(state):\n"
        "-    total = state + 4\n+    total = state + 400\n     return total\n*** End Patch\n"
    )
    a.apply_patch(patch)
    expected = (
        FUNCS.replace("state + 3\n", "state + 300\n")
        .replace("def step_4(", "def step_four(")
        .replace("state + 4\n", "state + 400\n")
    )
    assert target.read_text() == expected


def test_safe_patch_made_from_the_view_with_its_hash_lands(daemon: RunningDaemon):
    target, a, b = both_read(daemon, "f.py", FUNCS)
    b.edit_file("f.py", "def step_6(state):\n", "def step_six(state):\n")
    a.edit_file("f.py", "    total = state + 1\n", "    total = state + 100\n")
    view = FUNCS.replace("state + 1\n", "state + 100\n")
    sha = hashlib.sha256(view.encode()).hexdigest()
    lines = view.splitlines()
    at = lines.index("    total = state + 6")
    body = " " + lines[at - 1] + "\n-" + lines[at] + "\n+    total = state + 600\n " + lines[at + 1]
    diff = f"--- a/f.py\n+++ b/f.py\n@@ -{at},3 +{at},3 @@\n{body}\n"
    a.safe_patch("f.py", diff, sha, rebase=True)
    expected = view.replace("def step_6(", "def step_six(").replace("state + 6\n", "state + 600\n")
    assert target.read_text() == expected


# --- a stale text edit hands the way out --------------------------------------------------------


def test_text_the_agents_own_later_edit_changed_is_stale_not_no_match(daemon: RunningDaemon):
    target = daemon.root / "f.py"
    target.write_text(FUNCS)
    a = daemon.client("agent-a")
    a.read_file("f.py")
    mine = a.edit_file("f.py", "    total = state + 7\n", "    total = state * 7\n")
    e = refused(lambda: a.edit_file("f.py", "    total = state + 7\n", "    total = 7\n"))
    assert e.code == "anchor_stale"
    assert [c["seq"] for c in e.details["conflicts"]] == [mine.version]
    assert "state * 7" in e.details["delta"]["diff"]
    assert target.read_text() == FUNCS.replace("state + 7", "state * 7")


def test_a_safe_patch_of_text_another_agent_changed_since_the_read_is_stale_with_the_delta(
    daemon: RunningDaemon,
):
    target = daemon.root / "long.py"
    target.write_text(LONG)
    a, b = daemon.client("agent-a"), daemon.client("agent-b")
    read = a.read_file("long.py")
    b_done = b.edit_file("long.py", "value_1500 = compute(1500)\n", "value_1500 = None\n")
    mine = a.edit_file("long.py", "value_10 = compute(10)\n", "value_10 = 10\n")
    diff = unified(LONG, 1500, "value_1500 = 15")
    with pytest.raises(RequestError) as caught:
        a.safe_patch("long.py", diff, read.sha256, rebase=True)
    e = caught.value
    assert e.code == "state_mismatch"
    assert [c["seq"] for c in e.details["conflicts"]] == [b_done.version]
    assert "value_1500 = None" in e.details["delta"]["diff"]
    assert mine.version > b_done.version


def test_text_found_nowhere_stays_no_match(client: Client, daemon: RunningDaemon):
    (daemon.root / "f.py").write_text(FUNCS)
    client.read_file("f.py")
    e = refused(lambda: client.edit_file("f.py", "not in any version\n", "x\n"))
    assert e.code == "no_match"


# --- an ambiguous seam is refused, not guessed ------------------------------------------------

PYRIGHT = "import os\n\n# pyright: strict\n\ndef main():\n    return os.sep\n"


def test_a_removed_blank_beside_a_blank_another_agent_rewrote_is_refused_not_guessed(
    daemon: RunningDaemon,
):
    """A removes the pragma and one of the blanks around it; which blank was the diff's
    choice. B rewrote the blank above since: either alignment would be a guess."""
    target, a, b = both_read(daemon, "m.py", PYRIGHT)
    b.edit_file("m.py", "import os\n\n", "import os\nimport sys\n")
    after_b = target.read_text()
    e = refused(
        lambda: a.edit_file(
            "m.py", "import os\n\n# pyright: strict\n\ndef main():\n", "import os\n\ndef main():\n"
        )
    )
    assert e.code == "anchor_stale" and e.details["reason"] == "ambiguous_seam"
    assert "agent-b" in e.message and "import sys" in e.details["delta"]["diff"]
    assert target.read_text() == after_b


def test_the_same_removal_lands_when_nobody_touched_the_blanks(daemon: RunningDaemon):
    target, a, b = both_read(daemon, "m.py", PYRIGHT)
    b.edit_file("m.py", "    return os.sep\n", "    return os.linesep\n")
    a.edit_file(
        "m.py", "import os\n\n# pyright: strict\n\ndef main():\n", "import os\n\ndef main():\n"
    )
    assert target.read_text() == "import os\n\ndef main():\n    return os.linesep\n"


# --- a closing line the agent quoted is no boundary duplicate, for every text writer ----------

LUA = (
    "function M.setup(opts)\n  local function validate(key)\n    if opts[key] == nil then\n"
    '      error("missing " .. key)\n    end\n  end\n  validate("name")\nend\n'
)
NORMALISE = "  local function normalise(key)\n    opts[key] = vim.trim(opts[key])\n  end\n"


def test_edit_file_adding_a_block_ending_in_end_above_the_quoted_end_lands(
    daemon: RunningDaemon,
):
    target = daemon.root / "setup.lua"
    target.write_text(LUA)
    a = daemon.client("agent-a")
    a.read_file("setup.lua")
    # the new block ends with `  end` right above the `  end` old_string quotes
    a.edit_file("setup.lua", "    end\n  end\n", "    end\n" + NORMALISE + "  end\n")
    assert NORMALISE + '  end\n  validate("name")' in target.read_text()


def test_apply_patch_adding_a_block_ending_in_end_above_the_quoted_end_lands(
    daemon: RunningDaemon,
):
    target = daemon.root / "setup.lua"
    target.write_text(LUA)
    a = daemon.client("agent-a")
    a.read_file("setup.lua")
    added = "".join(
        f"+{x}\n" for x in ["  local function normalise(key)", "    opts[key] = 1", "  end"]
    )
    patch = (
        "*** Begin Patch\n*** Update File: setup.lua\n@@\n"
        '       error("missing " .. key)\n     end\n' + added + "   end\n"
        '   validate("name")\n*** End Patch\n'
    )
    a.apply_patch(patch)
    assert "    opts[key] = 1\n  end\n  end\n" in target.read_text()


def test_an_old_string_whose_occurrences_overlap_is_not_unique(daemon: RunningDaemon):
    """Counted without overlaps, "x = 1\nx = 1\n" occurs once in three such lines; it
    starts on line 1 and on line 2, and which was meant would be a guess."""
    target = daemon.root / "o.py"
    target.write_text("x = 1\nx = 1\nx = 1\n")
    a = daemon.client("agent-a")
    a.read_file("o.py")
    e = refused(lambda: a.edit_file("o.py", "x = 1\nx = 1\n", "x = 2\n"))
    assert e.code == "multiple_matches" and e.details["lines"] == [1, 2]
    assert target.read_text() == "x = 1\nx = 1\nx = 1\n"


# --- the agent's view decides when a copy of the text sits elsewhere ---------------------------

TWINS = (
    "import os\n\n\n"
    "def pager(cmd):\n    path = which(cmd)\n    if not path:\n        out = default()\n"
    '        yield out, "utf-8", False\n        return\n    run(path)\n\n\n'
    + "".join(f"def helper_{n}():\n    return {n}\n\n\n" for n in range(20))
    + "def tempfile_pager(cmd):\n    path = which(cmd)\n    if not path:\n"
    '        out = default()\n        yield out, "utf-8", False\n        return\n    run(path)\n'
)


def _after_b_and_a_first_edit(daemon: RunningDaemon) -> tuple[Client, str]:
    """A read; B commented the first block between two of its lines; A's own first edit
    then landed (its reply's sha includes B's change, which A never saw)."""
    _, a, b = both_read(daemon, "pager.py", TWINS)
    block = '        out = default()\n        yield out, "utf-8", False\n        return\n'
    after = "    run(path)\n\n\ndef helper_0"
    b.edit_file(
        "pager.py",
        "    if not path:\n" + block + after,
        "    if not path:\n        # no pager: stdout\n" + block + after,
    )
    done = a.edit_file("pager.py", "import os\n", "import os\nimport sys\n")
    return a, done.sha256


def _expected_first_block_changed() -> str:
    first = TWINS.index('        yield out, "utf-8", False\n')
    fixed = (
        TWINS[:first]
        + "        with pager(out) as rv:\n            yield rv\n"
        + TWINS[first + 34 :]
    )
    return fixed.replace("import os\n", "import os\nimport sys\n", 1).replace(
        "    if not path:\n        out",
        "    if not path:\n        # no pager: stdout\n        out",
        1,
    )


def test_a_diff_from_memory_goes_to_the_block_the_agent_meant_not_its_twin(
    daemon: RunningDaemon,
):
    a, sha = _after_b_and_a_first_edit(daemon)
    diff = (
        "--- a/pager.py\n+++ b/pager.py\n@@ -6,5 +7,6 @@\n     if not path:\n"
        '         out = default()\n-        yield out, "utf-8", False\n'
        "+        with pager(out) as rv:\n+            yield rv\n         return\n     run(path)\n"
    )
    a.safe_patch("pager.py", diff, sha, rebase=True)
    assert (daemon.root / "pager.py").read_text() == _expected_first_block_changed()


def test_an_envelope_from_memory_goes_to_the_block_the_agent_meant_not_its_twin(
    daemon: RunningDaemon,
):
    a, _ = _after_b_and_a_first_edit(daemon)
    patch = (
        "*** Begin Patch\n*** Update File: pager.py\n@@\n     if not path:\n"
        '         out = default()\n-        yield out, "utf-8", False\n'
        "+        with pager(out) as rv:\n+            yield rv\n         return\n*** End Patch\n"
    )
    a.apply_patch(patch)
    assert (daemon.root / "pager.py").read_text() == _expected_first_block_changed()


# --- anchors from the read, after the agent's own edit changed a neighbour ---------------------


def test_a_context_anchor_from_the_read_lands_after_the_agents_own_edit_beside_it(
    daemon: RunningDaemon,
):
    """`    pass` repeats, so the read anchors it by its context; A's own edit of the line
    above changed that context. The anchor is planned in the read it came from and
    carried over A's edit, which did not touch the line."""
    target = daemon.root / "p.py"
    target.write_text("def a():\n    pass\n\n\ndef b():\n    pass\n\n\ndef c():\n    pass\n")
    a = daemon.client("agent-a")
    rows = {r.line: r for r in a.read_file("p.py", hashes=True).lines or []}
    assert rows[6].kind == "context"
    a.edit("p.py", [{"op": "replace_line", "hash": f"5#{rows[5].hash}", "content": "def bee():"}])
    a.edit("p.py", [{"op": "replace_line", "hash": f"6#{rows[6].hash}", "content": "    return 2"}])
    assert target.read_text() == (
        "def a():\n    pass\n\n\ndef bee():\n    return 2\n\n\ndef c():\n    pass\n"
    )


def test_a_read_anchor_of_a_line_the_agent_itself_changed_since_is_still_stale(
    daemon: RunningDaemon,
):
    target = daemon.root / "p.py"
    target.write_text("def a():\n    pass\n\n\ndef b():\n    pass\n")
    a = daemon.client("agent-a")
    rows = {r.line: r for r in a.read_file("p.py", hashes=True).lines or []}
    a.edit("p.py", [{"op": "replace_line", "hash": f"6#{rows[6].hash}", "content": "    return 1"}])
    e = refused(
        lambda: a.edit(
            "p.py", [{"op": "replace_line", "hash": f"6#{rows[6].hash}", "content": "    return 2"}]
        )
    )
    assert e.code == "anchor_stale"
    assert target.read_text() == "def a():\n    pass\n\n\ndef b():\n    return 1\n"
