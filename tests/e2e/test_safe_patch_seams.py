"""`safe_patch` on real-world-shaped diffs, through a real daemon: seams and bogus headers.

Two defects of issue 35, each a scenario agents meet every day:

- A new block that ends with a closing line (`end`, `end;`, `fi`, `#endif`, `});`...)
  goes right above an identical closing line of the enclosing block: git writes the
  added run ending with the new closer, the old closer as the context line below.
  The diff shows both lines, so the repeated closer is what the author meant, not
  an agent pasting its anchor line twice: the patch lands. A long, distinctive line
  repeated at the seam is still refused (a real pasted duplicate).
- An agent writes hunk headers it did not count (every header `@@ -1,N +1,M @@`, or
  counts that disagree with the body) for a hunk whose lines occur more than once:
  refused `invalid_diff` naming the candidate lines, never placed by a guess. The same
  diff with honest headers lands where git would put it.

The diffs are hand-written the way `git diff` writes them (`git_insertion`: a
`diff --git` header, three lines of context, the added run where git's sliders
put it), checked against git 2.39 when written.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from editjournal.client import Client, RequestError
from tests.conftest import RunningDaemon
from tests.patch_support import sha, unified


def put(daemon: RunningDaemon, path: str, text: str) -> None:
    target = daemon.root / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)


def refused(client: Client, path: str, diff: str, base: str) -> RequestError:
    """The refusal of `diff`, having checked the file did not change by a byte."""
    before = (client.root / path).read_bytes()
    try:
        client.safe_patch(path, diff, base)
    except RequestError as e:
        assert (client.root / path).read_bytes() == before, "a refused patch changed the file"
        return e
    raise AssertionError("the patch was applied")


def git_insertion(path: str, old: str, after: int, block: str, context: int = 3) -> str:
    """The diff `git diff` writes for `block` inserted after line `after` (1-based) of
    `old`: the added run between up to `context` lines above and below."""
    lines = old.splitlines()
    added = block.splitlines()
    first = max(after - context, 0)
    above, below = lines[first:after], lines[after : after + context]
    start = first + 1 if lines else 0
    rows = [
        f"diff --git a/{path} b/{path}",
        "index 3f2a9c1..8d41e07 100644",
        f"--- a/{path}",
        f"+++ b/{path}",
        f"@@ -{start},{len(above) + len(below)} +{start},{len(above) + len(added) + len(below)} @@",
        *(f" {line}" for line in above),
        *(f"+{line}" for line in added),
        *(f" {line}" for line in below),
    ]
    return "\n".join(rows) + "\n"


def inserted(old: str, after: int, block: str) -> str:
    lines = old.splitlines(keepends=True)
    return "".join([*lines[:after], block, *lines[after:]])


# --- seams: a new block's closing line right above an identical one ----------------------


@dataclass(frozen=True)
class Seam:
    """A real-shaped file, where a commit inserts a block, and the block."""

    path: str
    old: str
    after: int  # the block goes after this line (1-based)
    block: str


LUA = """\
local M = {}

function M.setup(opts)
  opts = opts or {}
  local function validate(key)
    if opts[key] == nil then
      error("missing option " .. key)
    end
  end
  validate("name")
  validate("path")
end

return M
"""
LUA_BLOCK = """\

  local function normalise(key)
    opts[key] = vim.trim(opts[key])
  end
"""

SHELL = """\
#!/bin/sh
set -eu

install_deps() {
    if [ -f requirements.txt ]; then
        if command -v pip >/dev/null 2>&1; then
            pip install -r requirements.txt
        fi
    fi
}

install_deps "$@"
"""
SHELL_BLOCK = """\
        if [ -f requirements-dev.txt ]; then
            pip install -r requirements-dev.txt
        fi
"""

SHELL_LOOP = """\
#!/bin/bash
for dir in src tests; do
    for f in "$dir"/*.py; do
        python -m py_compile "$f"
    done
done
echo "compiled"
"""
SHELL_LOOP_BLOCK = """\
    for f in "$dir"/*.pyi; do
        python -m mypy "$f"
    done
"""

RUBY = """\
class Invoice
  attr_reader :lines

  def initialize(lines)
    @lines = lines
  end

  def total
    lines.sum(&:amount)
  end
end
"""
RUBY_BLOCK = """\

  def empty?
    lines.empty?
  end
"""

FISH = """\
function fish_prompt
    set -l last_status $status
    if test $last_status -ne 0
        set_color red
        echo -n "[$last_status] "
    end
    set_color normal
    echo -n (prompt_pwd)'> '
end
"""
FISH_BLOCK = """\
    if set -q VIRTUAL_ENV
        echo -n (basename $VIRTUAL_ENV)' '
    end
"""

PASCAL = """\
procedure TMainForm.AddButtonClick(Sender: TObject);
begin
  if NameEdit.Text <> '' then
  begin
    NamesList.Items.Add(NameEdit.Text);
    NameEdit.Clear;
  end;
end;

procedure TMainForm.ClearButtonClick(Sender: TObject);
begin
  NamesList.Clear;
end;
"""
PASCAL_BLOCK = """\
  if AutoSortCheck.Checked then
  begin
    NamesList.Sorted := True;
  end;
"""

C_HEADER = """\
#ifndef APP_PLATFORM_H
#define APP_PLATFORM_H

#ifdef _WIN32
#include <windows.h>
#ifdef UNICODE
#define TSTR(s) L##s
#endif
#endif

int platform_init(void);

#endif /* APP_PLATFORM_H */
"""
C_BLOCK = """\
#ifndef NOMINMAX
#define NOMINMAX
#endif
"""

JS = """\
describe('cart', () => {
  it('starts empty', () => {
    expect(new Cart().items).toEqual([]);
  });
});
"""
JS_BLOCK = """\

  it('adds an item', () => {
    const cart = new Cart();
    cart.add({ sku: 'A1', qty: 1 });
    expect(cart.items).toHaveLength(1);
  });
"""

SEAMS = {
    "lua-end": Seam("lua/setup.lua", LUA, 11, LUA_BLOCK),
    "shell-fi": Seam("scripts/install.sh", SHELL, 8, SHELL_BLOCK),
    "shell-done": Seam("scripts/check.sh", SHELL_LOOP, 5, SHELL_LOOP_BLOCK),
    "ruby-end": Seam("app/models/invoice.rb", RUBY, 10, RUBY_BLOCK),
    "fish-end": Seam("functions/fish_prompt.fish", FISH, 8, FISH_BLOCK),
    "pascal-end;": Seam("src/MainForm.pas", PASCAL, 7, PASCAL_BLOCK),
    "c-endif": Seam("include/platform.h", C_HEADER, 8, C_BLOCK),
    "js-brace": Seam("test/cart.test.js", JS, 4, JS_BLOCK),
}


@pytest.mark.parametrize("case", list(SEAMS.values()), ids=list(SEAMS))
def test_a_block_ending_in_a_closing_line_above_an_identical_one_lands(
    daemon: RunningDaemon, client: Client, case: Seam
):
    put(daemon, case.path, case.old)
    new = inserted(case.old, case.after, case.block)
    diff = git_insertion(case.path, case.old, case.after, case.block)
    added = [row[1:] for row in diff.splitlines() if row.startswith("+") and row[1:2] != "+"]
    below = case.old.splitlines()[case.after]
    assert added[-1].strip() == below.strip()  # the seam: the new closer above the old one
    result = client.safe_patch(case.path, diff, client.read_file(case.path).sha256)
    assert (daemon.root / case.path).read_text() == new
    assert result.safety_check == "clean"


@pytest.mark.parametrize("case", list(SEAMS.values()), ids=list(SEAMS))
def test_the_same_seam_made_by_difflib_lands(daemon: RunningDaemon, client: Client, case: Seam):
    """difflib aligns the run as it likes (here and there the other side of the closer):
    whichever way, the diff lands."""
    put(daemon, case.path, case.old)
    new = inserted(case.old, case.after, case.block)
    client.safe_patch(case.path, unified(case.old, new, case.path), sha(case.old))
    assert (daemon.root / case.path).read_text() == new


def test_a_seam_carried_over_another_agents_change_still_lands(daemon: RunningDaemon):
    """With rebase, the hunk is carried over B's change above it; the context line it
    showed is still the line below its closer, so the seam is still what it meant."""
    case = SEAMS["ruby-end"]
    put(daemon, case.path, case.old)
    a, b = daemon.client("agent-a"), daemon.client("agent-b")
    base = a.read_file(case.path).sha256
    b.safe_patch(case.path, unified(case.old, "# frozen_string_literal: true\n" + case.old), base)
    diff = git_insertion(case.path, case.old, case.after, case.block)
    result = a.safe_patch(case.path, diff, base, rebase=True)
    expected = "# frozen_string_literal: true\n" + inserted(case.old, case.after, case.block)
    assert (daemon.root / case.path).read_text() == expected
    assert result.rebased_from_version is not None


def test_a_seam_the_diff_does_not_show_is_still_checked(daemon: RunningDaemon, client: Client):
    """`git diff -U0`: no context below the run, so the diff never showed the old closer:
    the duplicate stays a finding (overridable as ever)."""
    case = SEAMS["pascal-end;"]
    put(daemon, case.path, case.old)
    diff = git_insertion(case.path, case.old, case.after, case.block, context=0)
    diff = diff.replace("@@ -8,0 +8,4 @@", "@@ -7,0 +8,4 @@")  # git's -U0 header
    error = refused(client, case.path, diff, sha(case.old))
    assert error.code == "safety_check_failed" and "end;" in error.message
    client.safe_patch(case.path, diff, sha(case.old), skip_safety_check=True)
    assert (daemon.root / case.path).read_text() == inserted(case.old, case.after, case.block)


def test_a_distinctive_line_pasted_twice_at_a_seam_is_still_refused(
    daemon: RunningDaemon, client: Client
):
    """The agent meant to replace `return lines.sum(&:amount)` and wrote it as an added
    line above the same line shown as context: a real duplicate, still refused."""
    text = RUBY.replace("lines.sum(&:amount)", "lines.sum(&:amount).round(2)")
    diff = (
        "--- a/invoice.rb\n+++ b/invoice.rb\n@@ -7,4 +7,5 @@\n \n   def total\n"
        "+    lines.sum(&:amount).round(2)\n     lines.sum(&:amount).round(2)\n   end\n"
    )
    put(daemon, "invoice.rb", text)
    error = refused(client, "invoice.rb", diff, sha(text))
    assert error.code == "safety_check_failed"
    assert "lines.sum(&:amount).round(2)" in error.message


# --- hunk headers that cannot be trusted ----------------------------------------------------

TESTS_PY = """\
import shutil
import tempfile
import unittest

from app.server import FakeServer


class UploadTests(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.server = FakeServer(self.tmp)
        self.server.start()

    def tearDown(self):
        self.server.stop()
        shutil.rmtree(self.tmp)

    def test_upload_small_file(self):
        self.assertEqual(self.server.upload(b"x"), 201)


class DownloadTests(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.server = FakeServer(self.tmp)
        self.server.start()

    def tearDown(self):
        self.server.stop()
        shutil.rmtree(self.tmp)

    def test_download_missing_file(self):
        self.assertEqual(self.server.download("nope"), 404)
"""
# DownloadTests.setUp waits for the server: lines 23-29 are the same as lines 9-15
WAITS = TESTS_PY.replace(
    "        self.server.start()\n\n    def tearDown(self):\n        self.server.stop()\n"
    "        shutil.rmtree(self.tmp)\n\n    def test_download",
    "        self.server.start(wait=True)\n\n    def tearDown(self):\n        self.server.stop()\n"
    "        shutil.rmtree(self.tmp)\n\n    def test_download",
)
BODY = (
    "     def setUp(self):\n"
    "         self.tmp = tempfile.mkdtemp()\n"
    "         self.server = FakeServer(self.tmp)\n"
    "-        self.server.start()\n"
    "+        self.server.start(wait=True)\n"
    " \n"
    "     def tearDown(self):\n"
    "         self.server.stop()\n"
)
HEADER = (
    "diff --git a/tests/test_server.py b/tests/test_server.py\n"
    "--- a/tests/test_server.py\n+++ b/tests/test_server.py\n"
)


def test_the_honest_diff_of_the_repeated_block_lands_in_the_second_class(
    daemon: RunningDaemon, client: Client
):
    put(daemon, "tests/test_server.py", TESTS_PY)
    assert unified(TESTS_PY, WAITS).endswith("@@ -23,7 +23,7 @@\n" + BODY)  # as git writes it
    result = client.safe_patch(
        "tests/test_server.py", HEADER + "@@ -23,7 +23,7 @@\n" + BODY, sha(TESTS_PY)
    )
    assert (daemon.root / "tests/test_server.py").read_text() == WAITS
    assert [(h.applied_line, h.offset) for h in result.hunks] == [(23, 0)]


@pytest.mark.parametrize(
    "header",
    [
        "@@ -1,7 +1,7 @@",  # every header claims line 1
        "@@ -1 +1 @@",  # claims line 1, and counts 1 line a side
        "@@ -16,6 +16,9 @@",  # counts made up: 6 and 9, the body has 7 and 7
        "@@ -10,8 +10,8 @@",  # near the first class, counts off by one
    ],
    ids=["line-1", "line-1-no-counts", "made-up-counts", "off-by-one-counts"],
)
def test_a_repeated_block_under_an_untrustworthy_header_is_refused_naming_the_candidates(
    daemon: RunningDaemon, client: Client, header: str
):
    put(daemon, "tests/test_server.py", TESTS_PY)
    error = refused(client, "tests/test_server.py", HEADER + header + "\n" + BODY, sha(TESTS_PY))
    assert error.code == "invalid_diff"
    assert error.details["hunk"] == 1 and error.details["candidates"] == [9, 23]
    assert "lines 9 and 23" in error.message
    assert "cannot be trusted" in error.message


def test_an_honest_header_near_the_wrong_class_takes_the_nearest_as_git_does(
    daemon: RunningDaemon, client: Client
):
    """Counts that agree with the body: the header is trusted, and a stated line nearer
    the first class places the hunk there (git's rule; the agent said so)."""
    put(daemon, "tests/test_server.py", TESTS_PY)
    client.safe_patch("tests/test_server.py", HEADER + "@@ -11,7 +11,7 @@\n" + BODY, sha(TESTS_PY))
    first_class = TESTS_PY.replace("self.server.start()\n", "self.server.start(wait=True)\n", 1)
    assert (daemon.root / "tests/test_server.py").read_text() == first_class


def test_line_1_headers_in_file_order_leave_one_place_and_land(
    daemon: RunningDaemon, client: Client
):
    """Every header claims line 1, but hunk 1 only fits the first class (its context
    names test_upload), so hunk 2 (the repeated setUp) has one place left after it:
    hunks are in file order, no guess is needed."""
    put(daemon, "tests/test_server.py", TESTS_PY)
    new = TESTS_PY.replace(
        "shutil.rmtree(self.tmp)\n\n    def test_upload",
        "shutil.rmtree(self.tmp, ignore_errors=True)\n\n    def test_upload",
    ).replace(
        "        self.server.start()\n\n    def tearDown(self):\n        self.server.stop()\n"
        "        shutil.rmtree(self.tmp)\n\n    def test_download",
        "        self.server.start(wait=True)\n\n    def tearDown(self):\n"
        "        self.server.stop()\n        shutil.rmtree(self.tmp)\n\n    def test_download",
    )
    honest = unified(TESTS_PY, new, "tests/test_server.py")
    assert honest.count("\n@@ ") == 2
    every_line_1 = "".join(
        "@@ -1,7 +1,7 @@\n" if row.startswith("@@ ") else row
        for row in honest.splitlines(keepends=True)
    )
    client.safe_patch("tests/test_server.py", every_line_1, sha(TESTS_PY))
    assert (daemon.root / "tests/test_server.py").read_text() == new


LOOKUPS = """\
import logging

log = logging.getLogger(__name__)


def find_user(db, name):
    row = db.execute("SELECT * FROM users WHERE name = ?", (name,)).fetchone()
    if row is None:
        return None
    return User(*row)


def find_group(db, name):
    row = db.execute("SELECT * FROM groups WHERE name = ?", (name,)).fetchone()
    if row is None:
        return None
    return Group(*row)
"""
LOGGED = LOOKUPS.replace(
    'groups WHERE name = ?", (name,)).fetchone()\n    if row is None:\n',
    'groups WHERE name = ?", (name,)).fetchone()\n    if row is None:\n'
    '        log.debug("no group named %s", name)\n',
)
U1_BODY = (
    '     if row is None:\n+        log.debug("no group named %s", name)\n         return None\n'
)


def test_a_return_none_hunk_with_one_line_of_context_under_a_line_1_header_is_refused(
    daemon: RunningDaemon, client: Client
):
    """`git diff -U1` of a debug line in find_group: its two lines (`if row is None:`,
    `return None`) are in every lookup. Under `@@ -1,2 +1,3 @@` it could be any of them;
    under git's own header it is find_group's."""
    put(daemon, "db.py", LOOKUPS)
    head = "--- a/db.py\n+++ b/db.py\n"
    error = refused(client, "db.py", head + "@@ -1,2 +1,3 @@\n" + U1_BODY, sha(LOOKUPS))
    assert error.code == "invalid_diff" and error.details["candidates"] == [8, 15]
    assert "lines 8 and 15" in error.message
    assert unified(LOOKUPS, LOGGED, "db.py", context=1).endswith("@@ -15,2 +15,3 @@\n" + U1_BODY)
    client.safe_patch("db.py", head + "@@ -15,2 +15,3 @@\n" + U1_BODY, sha(LOOKUPS))
    assert (daemon.root / "db.py").read_text() == LOGGED
