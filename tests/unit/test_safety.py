"""Tests for daemon.text.safety: the boundary-duplicate and bracket-balance checks."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from editjournal.daemon.text.anchors import anchor_lines
from editjournal.daemon.text.edit import plan_edit
from editjournal.daemon.text.safety import SafetyWarning, brackets_matter, check_edit
from editjournal.schemas.tools import (
    DeleteLine,
    DeleteRange,
    InsertAfter,
    InsertBefore,
    Operation,
    ReplaceLine,
    ReplaceRange,
)

CODE = [
    "def load(path):",  # 1
    "    with open(path) as f:",  # 2
    "        data = f.read()",  # 3
    "    return parse(data)",  # 4
    "",  # 5
    "def save(path, data):",  # 6
    "    write(path, data)",  # 7
]

BLOCK = [
    "function main() {",  # 1
    "    if (ready) {",  # 2
    "        start();",  # 3
    "    }",  # 4
    "    finish();",  # 5
    "}",  # 6
    "main();",  # 7
]


def anchor(lines: Sequence[str], line: int) -> str:
    return anchor_lines(lines)[line - 1].anchor


def warnings_for(
    lines: Sequence[str], operations: Sequence[Operation], check_brackets: bool = True
) -> list[SafetyWarning]:
    plan = plan_edit(lines, operations)
    return check_edit(lines, plan.splices, check_brackets)


def kinds(warnings: Sequence[SafetyWarning]) -> list[str]:
    return [w.kind for w in warnings]


# --- duplicate boundary lines ---------------------------------------------------------


def test_insert_after_whose_content_starts_with_the_anchor_line_is_flagged() -> None:
    content = "    with open(path) as f:\n        text = f.read()"
    warnings = warnings_for(
        CODE,
        [
            ReplaceLine(hash=anchor(CODE, 7), content="    dump(path, data)"),
            InsertAfter(hash=anchor(CODE, 2), content=content),
        ],
    )
    assert kinds(warnings) == ["duplicate_boundary_line"]
    (warning,) = warnings
    assert warning.operation == 2
    assert "line 2 just above" in warning.message
    assert "insert_after" in warning.message


def test_replace_range_whose_last_new_line_repeats_the_line_below_is_flagged() -> None:
    content = "    with open(path, 'rb') as f:\n        data = f.read()\n    return parse(data)"
    warnings = warnings_for(
        CODE, [ReplaceRange(start_hash=anchor(CODE, 2), end_hash=anchor(CODE, 3), content=content)]
    )
    assert kinds(warnings) == ["duplicate_boundary_line"]
    assert "line 4 just below" in warnings[0].message
    assert warnings[0].operation == 1


def test_insert_before_whose_content_ends_with_the_anchor_line_is_flagged() -> None:
    content = "# save the data\ndef save(path, data):"
    warnings = warnings_for(CODE, [InsertBefore(hash=anchor(CODE, 6), content=content)])
    assert kinds(warnings) == ["duplicate_boundary_line"]
    assert "line 6 just below" in warnings[0].message


def test_duplicate_check_ignores_indentation() -> None:
    warnings = warnings_for(
        CODE, [InsertAfter(hash=anchor(CODE, 3), content="data = f.read()\nprint(data)")]
    )
    assert kinds(warnings) == ["duplicate_boundary_line"]


@pytest.mark.parametrize("repeated", ["}", "    }", "", "   "])
def test_repeating_a_brace_or_blank_boundary_line_is_not_flagged(repeated: str) -> None:
    lines = ["function a() {", "    one();", repeated, "function b() {", "    two();", repeated]
    warnings = warnings_for(
        lines,
        [
            InsertBefore(hash=anchor(lines, 4), content=f"{repeated}\n// b"),  # line 3 above
            ReplaceLine(hash=anchor(lines, 5), content=f"    three();\n{repeated}"),  # 6 below
        ],
        check_brackets=False,
    )
    assert warnings == []


def test_new_content_different_from_its_neighbours_is_clean() -> None:
    warnings = warnings_for(
        CODE,
        [
            InsertAfter(hash=anchor(CODE, 3), content="        log(data)"),
            ReplaceLine(hash=anchor(CODE, 7), content="    dump(path, data)"),
            DeleteLine(hash=anchor(CODE, 1)),
        ],
    )
    assert warnings == []


# --- bracket balance ---------------------------------------------------------------------


def test_replace_range_that_drops_a_closing_brace_is_flagged() -> None:
    content = "    if (ready) {\n        start();\n    finish();"
    warnings = warnings_for(
        BLOCK,
        [ReplaceRange(start_hash=anchor(BLOCK, 2), end_hash=anchor(BLOCK, 5), content=content)],
    )
    assert kinds(warnings) == ["bracket_balance_changed"]
    assert warnings[0].operation == 0
    assert "{} net +0 -> +1" in warnings[0].message


def test_deleting_a_block_with_balanced_brackets_is_clean() -> None:
    warnings = warnings_for(
        BLOCK, [DeleteRange(start_hash=anchor(BLOCK, 2), end_hash=anchor(BLOCK, 4))]
    )
    assert warnings == []


def test_rewriting_brackets_in_balance_is_clean() -> None:
    content = "    if (ready && armed(now())) {\n        start([1, 2]);\n    }"
    warnings = warnings_for(
        BLOCK,
        [ReplaceRange(start_hash=anchor(BLOCK, 2), end_hash=anchor(BLOCK, 4), content=content)],
    )
    assert warnings == []


def test_brackets_are_balanced_across_the_whole_batch_not_per_operation() -> None:
    # One operation removes an opening brace, another its closing brace: in balance overall.
    warnings = warnings_for(
        BLOCK,
        [
            ReplaceLine(hash=anchor(BLOCK, 2), content="    start_if_ready();"),
            DeleteRange(start_hash=anchor(BLOCK, 3), end_hash=anchor(BLOCK, 4)),
        ],
    )
    assert warnings == []


def test_brackets_inside_double_quoted_strings_are_ignored() -> None:
    lines = ['print("done")', "x = 1"]
    warnings = warnings_for(
        lines, [ReplaceLine(hash=anchor(lines, 1), content='print("done :) [ok} {")')]
    )
    assert warnings == []


def test_brackets_inside_backtick_strings_are_ignored() -> None:
    lines = ["const a = `x`;", "const b = 2;"]
    warnings = warnings_for(
        lines, [ReplaceLine(hash=anchor(lines, 1), content="const a = `(${x`;")]
    )
    assert warnings == []


def test_escaped_quote_does_not_end_a_string() -> None:
    lines = ['say("hi")', "x = 1"]
    warnings = warnings_for(
        lines, [ReplaceLine(hash=anchor(lines, 1), content=r'say("a \" (quoted) ( paren")')]
    )
    assert warnings == []


def test_bracket_check_can_be_skipped() -> None:
    content = "    if (ready) {\n        start();"
    operations = [
        ReplaceRange(start_hash=anchor(BLOCK, 2), end_hash=anchor(BLOCK, 4), content=content)
    ]
    assert kinds(warnings_for(BLOCK, operations)) == ["bracket_balance_changed"]
    assert warnings_for(BLOCK, operations, check_brackets=False) == []


def test_a_double_quote_inside_single_quotes_does_not_hide_brackets_on_other_lines() -> None:
    lines = ["function f() {", "  const a = '\"';", "}", "const b = '\"';"]
    content = "  const a = '\"';\nconst b = '\"';"
    warnings = warnings_for(
        lines,
        [ReplaceRange(start_hash=anchor(lines, 2), end_hash=anchor(lines, 4), content=content)],
    )
    assert kinds(warnings) == ["bracket_balance_changed"]


# --- which files the bracket check applies to -------------------------------------------


@pytest.mark.parametrize("path", ["README.md", "notes.txt", "docs/Guide.MD", "a.rst", "x.markdown"])
def test_brackets_do_not_matter_in_prose(path: str) -> None:
    assert not brackets_matter(path)


@pytest.mark.parametrize("path", ["main.py", "src/app.ts", "lib.rs", "Makefile", "md.py"])
def test_brackets_matter_in_code(path: str) -> None:
    assert brackets_matter(path)


# --- what the bracket count skips: single-quoted strings and line comments ---------------


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("return s", "return '(' + s"),
        ("c = f'{x}'", "c = f'(' + g(']')"),
        ("x = 1", "x = 1  # see (1"),
        ("x = 1", "# see (1"),
        ("start();", "start(); // closes ] later"),
        ("x = 1", "x = f(a)  # don't (x"),  # the apostrophe is in the comment, not a string
        ("x = 1", "x = 1  # it's a user's (x"),
        ("char c = 'a';", "char c = '{';"),
    ],
)
def test_brackets_in_single_quotes_and_line_comments_are_ignored(old: str, new: str) -> None:
    lines = [old, "y = 2"]
    assert warnings_for(lines, [ReplaceLine(hash=anchor(lines, 1), content=new)]) == []


@pytest.mark.parametrize(
    "new",
    [
        'url = "http://example.com" + (',  # the // is inside a string: not a comment
        "key = '#' + (",  # so is the #
        "x = f(a)  # it's (x\ny = g(",  # the comment ends with its line
        "fn f<'a>(x: &'a str) -> &'a str {",  # Rust lifetimes are not quotes
        "#main {",  # CSS ids, attributes and directives are not comments
        "#[cfg(any(",
        "this.#run(() => {",
    ],
)
def test_an_edit_that_really_opens_a_bracket_is_still_flagged(new: str) -> None:
    lines = ["x = 1", "y = 2"]
    warnings = warnings_for(lines, [ReplaceLine(hash=anchor(lines, 1), content=new)])
    assert kinds(warnings) == ["bracket_balance_changed"]


def test_a_comment_marker_glued_to_code_is_code() -> None:
    lines = ["a = b", "y = 2"]
    warnings = warnings_for(lines, [ReplaceLine(hash=anchor(lines, 1), content="a = b#(")])
    assert kinds(warnings) == ["bracket_balance_changed"]
