"""The pure engine on issue 35's two safe_patch defects: quoted seams and untrusted headers.

- `check_edit` lets a short, low-entropy or closing line repeat at a seam only when
  the writer quoted the neighbour it repeats (`QuotedSplice`, a diff's context line);
  an anchored edit quotes nothing, so its pasted anchor line is still a finding.
- `locate` takes the nearest of several occurrences only under headers it can trust
  (`FilePatch.header_doubt`); otherwise it refuses, naming the candidates.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from editjournal.daemon.text.anchors import anchor_lines
from editjournal.daemon.text.edit import Splice, plan_edit
from editjournal.daemon.text.lines import parse
from editjournal.daemon.text.patch import locate, parse_patch, to_plan
from editjournal.daemon.text.safety import QuotedSplice, SafetyWarning, check_edit
from editjournal.schemas.errors import ErrorCode, ToolError
from editjournal.schemas.tools import InsertAfter, InsertBefore
from tests.patch_support import unified

RUBY = [
    "class Invoice",  # 1
    "  def initialize(lines)",  # 2
    "    @lines = lines",  # 3
    "  end",  # 4
    "end",  # 5
]
EMPTY_P = ["", "  def empty?", "    @lines.empty?", "  end"]


def checked(lines: Sequence[str], diff: str) -> list[SafetyWarning]:
    """The safety findings of `diff` as the writing path makes them (placed, planned)."""
    return check_edit(lines, to_plan(locate(lines, parse_patch(diff))).splices)


def text(lines: Sequence[str]) -> str:
    return "".join(f"{line}\n" for line in lines)


# --- seams --------------------------------------------------------------------------------


def test_a_diffs_new_closer_above_the_quoted_old_one_is_clean():
    new = RUBY[:4] + EMPTY_P + RUBY[4:]
    assert checked(RUBY, unified(text(RUBY), text(new))) == []


def test_the_same_insertion_by_anchor_is_still_a_finding():
    """`insert_before` the class's `end` with content ending in `end`: the agent pasted
    its anchor line, the check's reason to exist. Nothing quoted, still flagged."""
    anchor = anchor_lines(RUBY)[4].anchor
    plan = plan_edit(RUBY, [InsertBefore(hash=anchor, content="\n".join([*EMPTY_P, "end"]))])
    [warning] = check_edit(RUBY, plan.splices)
    assert warning.kind == "duplicate_boundary_line" and "line 5 just below" in warning.message


def test_an_anchored_insert_after_repeating_its_closing_anchor_is_still_a_finding():
    anchor = anchor_lines(RUBY)[3].anchor
    plan = plan_edit(RUBY, [InsertAfter(hash=anchor, content="  end\n  def empty?\n    true")])
    assert [w.kind for w in check_edit(RUBY, plan.splices)] == ["duplicate_boundary_line"]


def test_a_hunk_without_context_below_its_run_quotes_nothing_there():
    diff = "@@ -4,0 +5,4 @@\n" + "".join(f"+{line}\n" for line in EMPTY_P)
    [warning] = checked(RUBY, diff)
    assert "line 5 just below" in warning.message


@pytest.mark.parametrize(
    "closer",
    [
        "#endif /* APP_PLATFORM_H */",
        "}  // namespace detail",
        "end -- of the setup function",
        "\\end{itemize}",
        "</section>",
        "End Function",
    ],
    ids=["c-endif-comment", "cpp-namespace", "lua-end-comment", "latex", "html", "vb"],
)
def test_a_long_closing_line_quoted_at_a_seam_is_clean(closer: str):
    lines = ["first", "  body();", closer, "after"]
    splice = QuotedSplice(0, "hunk", 2, 2, ("  more();", closer), (), "  body();", closer)
    assert check_edit(lines, [splice], check_brackets=False) == []


def test_a_long_distinctive_line_quoted_at_a_seam_is_still_a_finding():
    line = "    total = sum(item.amount for item in self.items)"
    lines = ["def total(self):", line, "    return total"]
    splice = QuotedSplice(0, "hunk", 1, 1, (line,), (), lines[0], line)
    assert [w.kind for w in check_edit(lines, [splice])] == ["duplicate_boundary_line"]


def test_a_line_the_file_repeats_three_times_is_low_entropy_and_clean_when_quoted():
    line = "        self.assertEqual(response.status_code, 200)"
    lines = ["    def test_a(self):", line, "", "    def test_b(self):", line, "", line]
    splice = QuotedSplice(0, "hunk", 6, 6, ("    def test_c(self):", line), (), "", line)
    assert check_edit(lines, [splice]) == []


def test_a_quoted_neighbour_that_is_no_longer_the_neighbour_does_not_count():
    """Carried over another agent's change, the line below the splice may be another
    line than the one the diff quoted: the check runs as for anyone."""
    lines = ["if a then", "  x()", "end"]
    splice = QuotedSplice(0, "hunk", 2, 2, ("  y()", "end"), (), "  x()", "  z()")
    assert [w.kind for w in check_edit(lines, [splice])] == ["duplicate_boundary_line"]


def test_the_first_new_line_repeating_the_quoted_line_above_is_clean():
    lines = ["    fi", "fi"]
    splice = QuotedSplice(0, "hunk", 1, 1, ("    fi", "    echo done"), (), "    fi", "fi")
    assert check_edit(lines, [splice]) == []
    plain = Splice(0, "insert_after", 1, 1, ("    fi", "    echo done"), (1,))
    assert [w.kind for w in check_edit(lines, [plain])] == ["duplicate_boundary_line"]


def test_a_run_at_the_end_of_its_hunk_quotes_the_next_hunks_first_context_line():
    old = [f"line {n}" for n in range(1, 12)]
    diff = (
        "@@ -1,2 +1,3 @@\n line 1\n line 2\n+two and a half\n"
        "@@ -3,2 +4,2 @@\n line 3\n-line 4\n+four\n"
    )
    first, _ = to_plan(locate(old, parse_patch(diff))).splices
    assert isinstance(first, QuotedSplice)
    assert (first.quoted_above, first.quoted_below) == ("line 2", "line 3")


# --- headers that cannot be trusted --------------------------------------------------------

BLOCK = ["    def setUp(self):", "        self.tmp = mkdtemp()", "", "    def tearDown(self):"]
FILE = ["class A:", *BLOCK, "        rmtree(self.tmp)", "", "class B:", *BLOCK, "        pass"]
BODY = (
    "     def setUp(self):\n-        self.tmp = mkdtemp()\n+        self.tmp = mkdtemp('b')\n"
    " \n     def tearDown(self):\n"
)


def test_honest_headers_are_trusted():
    assert (
        parse_patch(unified(text(FILE), text(FILE).replace("class B", "class C"))).header_doubt
        is None
    )


@pytest.mark.parametrize(
    ("header", "doubt"),
    [
        ("@@ -1,4 +1,4 @@", "every hunk header claims line 1"),
        ("@@ -5,3 +5,3 @@", "hunk 1's header counts 3 old and 3 new lines, its body has 4 and 4"),
    ],
    ids=["line-1", "miscounted"],
)
def test_a_repeated_block_under_untrusted_headers_is_refused_naming_its_candidates(
    header: str, doubt: str
):
    patch = parse_patch(header + "\n" + BODY)
    assert patch.header_doubt == doubt
    with pytest.raises(ToolError) as info:
        locate(FILE, patch)
    error = info.value
    assert error.code is ErrorCode.INVALID_DIFF
    assert error.details["candidates"] == [2, 9] and error.details["candidate_count"] == 2
    assert "lines 2 and 9" in error.message and doubt in error.message


def test_the_same_hunk_under_its_honest_header_lands_in_class_b():
    [spot] = locate(FILE, parse_patch("@@ -9,4 +9,4 @@\n" + BODY))
    assert spot.start == 8


def test_a_miscounted_header_naming_the_blocks_exact_line_is_confirmed_by_it():
    [spot] = locate(FILE, parse_patch("@@ -9,3 +9,3 @@\n" + BODY))
    assert spot.start == 8


def test_an_honest_single_hunk_at_line_1_is_found_there():
    """One honest hunk at the top claims line 1 too: its block stands exactly there."""
    lines = ["a", "b", "a", "b"]
    [spot] = locate(lines, parse_patch("@@ -1,2 +1,2 @@\n a\n-b\n+B\n"))
    assert spot.start == 0


def test_many_candidates_are_counted_and_the_message_names_the_first_six():
    lines = ["x = 0"] + ["pass", ""] * 9
    with pytest.raises(ToolError) as info:
        locate(lines, parse_patch("@@ -1,2 +1,2 @@\n-pass\n+return\n \n"))
    error = info.value
    assert error.details["candidates"] == [2, 4, 6, 8, 10, 12, 14, 16, 18]
    assert "lines 2, 4, 6, 8, 10, 12 and 3 more" in error.message


def test_a_recount_warning_names_the_hunk_it_is_about():
    diff = "@@ -1,1 +1,1 @@\n-line 1\n+one\n@@ -5,1 +5,1 @@\n line 5\n-line 6\n+six\n"
    patch = parse_patch(diff)
    assert [w.split(":")[0] for w in patch.warnings] == ["hunk 2"]
    assert patch.header_doubt and patch.header_doubt.startswith("hunk 2's header counts")


def test_every_line_1_header_placed_in_file_order_needs_no_guess():
    lines = parse(text(FILE)).lines
    diff = (
        "@@ -1,2 +1,2 @@\n-class A:\n+class First:\n     def setUp(self):\n@@ -1,4 +1,4 @@\n" + BODY
    )
    first, second = locate(lines, parse_patch(diff))
    assert (first.start, second.start) == (0, 8)  # A's copy starts inside hunk 1's block


def test_every_line_1_header_takes_the_one_place_the_hunks_below_leave():
    """Hunk 1's block is in both classes, but hunk 2 (A's rmtree, found once) comes after
    it: only A's copy leaves room for hunk 2 below, so that is no guess either."""
    lines = parse(text(FILE)).lines
    rmtree = "@@ -1,2 +1,2 @@\n-        rmtree(self.tmp)\n+        rmtree(self.tmp, True)\n \n"
    first, second = locate(lines, parse_patch("@@ -1,4 +1,4 @@\n" + BODY + rmtree))
    assert (first.start, second.start) == (1, 5)
