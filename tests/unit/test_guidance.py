"""Tests for client.guidance: every passage the spec requires in the tool descriptions.

Each "System prompt SHALL ..." requirement, and the anchor-hash identity
disclaimer, gets one test named after it. Passages are compared after
collapsing whitespace, so re-wrapping the text does not break them; changing
their words does, on purpose.
"""

from __future__ import annotations

import re
import typing

import msgspec
import pytest

from editjournal.client.tools.guidance import (
    DESCRIPTIONS,
    EDIT_DESCRIPTION,
    MULTI_FILE_EDITING_RULE,
    READ_FILE_DESCRIPTION,
    TOOL_USE_RULES,
)
from editjournal.schemas.errors import ErrorCode
from editjournal.schemas.tools import Operation, ReadFileParams


def _norm(text: str) -> str:
    return " ".join(text.split())


def _assert_contains(text: str, passage: str) -> None:
    assert _norm(passage) in _norm(text)


def _matrix(text: str) -> dict[str, str]:
    """The rows of the "| Situation | Recommended Operation |" table, situation -> operation."""
    lines = text.splitlines()
    header = [i for i, line in enumerate(lines) if _norm(line).startswith("| Situation |")]
    assert len(header) == 1, "exactly one operation-selection table"
    cells = [c.strip() for c in lines[header[0]].strip().strip("|").split("|")]
    assert cells == ["Situation", "Recommended Operation"]
    assert re.fullmatch(r"\|\s*-{3,}\s*\|\s*-{3,}\s*\|", lines[header[0] + 1].strip())
    rows: dict[str, str] = {}
    for line in lines[header[0] + 2 :]:
        if not line.strip().startswith("|"):
            break
        situation, operation = (c.strip() for c in line.strip().strip("|").split("|"))
        rows[situation] = operation
    return rows


REQUIRED_MATRIX_ROWS = {
    "Change a single line with unique content": "replace_line",
    "Change a contiguous block of lines": "replace_range",
    "Insert new content between two existing lines": "insert_after / insert_before",
    "Remove a single unique line": "delete_line",
    "Remove a contiguous block of lines": "delete_range",
    "Target line is repetitive (empty line, }, boilerplate)": (
        "replace_range wrapping it with unique neighbor anchors"
    ),
}


def test_anchor_hash_identity_disclaimer_present() -> None:
    _assert_contains(
        EDIT_DESCRIPTION,
        "the line number is advisory (snapshot position) only, and the hash is the "
        "authoritative identity for edit operations",
    )


def test_anchor_freshness_guidance_present() -> None:
    _assert_contains(
        EDIT_DESCRIPTION,
        "After reading a file with read_file(hashes: true), apply edits to that file in the "
        "same response turn or the immediate next turn. Do not read file A, then read file B, "
        "then later edit file A — the anchors from A will be stale and cause cross-version "
        "conflicts. Process one file completely (read → edit) before reading anchors for "
        "another file.",
    )


def test_anchor_selection_guidance_present() -> None:
    _assert_contains(
        EDIT_DESCRIPTION,
        "Anchor selection guidance: Prefer lines with unique, distinctive content as anchors. "
        "Avoid anchoring on empty lines, closing braces (}), or frequently repeated "
        "boilerplate (e.g., position: fixed;, display: flex; in CSS, </div> in HTML). For "
        "files with repetitive content, use replace_range with two unique boundary anchors "
        "instead of replace_line — range operations enforce uniqueness on both endpoints: an "
        "endpoint anchor that identical lines share is resolved by the line number copied "
        "with it (LINE#ANCHOR, the number you read it at) and rejected if that number does "
        "not single one out. When a replace_line anchor matches multiple lines, copy it with "
        "its line number the same way; without a read of the file, use the occurrence field "
        "(1-indexed) and line field (advisory line number) together to disambiguate.",
    )
    assert "rejected if ambiguous" not in EDIT_DESCRIPTION  # twins resolve by line number


@pytest.mark.parametrize("text", [EDIT_DESCRIPTION, TOOL_USE_RULES], ids=["edit", "rules"])
def test_operation_selection_matrix_present(text: str) -> None:
    rows = _matrix(text)
    for situation, operation in REQUIRED_MATRIX_ROWS.items():
        assert rows.get(situation) == operation, situation


@pytest.mark.parametrize("text", [EDIT_DESCRIPTION, TOOL_USE_RULES], ids=["edit", "rules"])
def test_multi_file_editing_order_guidance_present(text: str) -> None:
    passage = (
        "Multi-file editing: When modifying multiple files, complete all operations on one "
        "file before moving to the next. Batch operations targeting the same file into a "
        "single edit call where possible (all operations in one call are atomic against the "
        "same snapshot). Avoid interleaving reads and edits across different files — read A → "
        "edit A → read B → edit B, not read A → read B → edit A → edit B."
    )
    _assert_contains(MULTI_FILE_EDITING_RULE, passage)
    _assert_contains(text, passage)


def test_parameter_constraint_documentation_present() -> None:
    _assert_contains(
        EDIT_DESCRIPTION,
        """Parameter notes:
        - Use path to specify the file; file_path is deprecated (accepted for now with a
          warning) and will be rejected.
        - replace_line / delete_line / insert_after / insert_before use hash (single anchor).
        - replace_range / delete_range use start_hash + end_hash (two anchors).
        - Mixing these (e.g., start_hash on a replace_line) causes validation failure.""",
    )


def test_tool_use_rules_section_combines_freshness_and_selection() -> None:
    assert TOOL_USE_RULES.lstrip().startswith("## Tool Use Rules")
    _assert_contains(TOOL_USE_RULES, "apply edits to that file in the same response turn")
    _assert_contains(TOOL_USE_RULES, "Anchor selection guidance:")


def test_every_operation_and_edit_error_code_is_described() -> None:
    tags = [msgspec.inspect.type_info(op).tag for op in typing.get_args(Operation)]
    assert len(tags) == 6
    edit_codes = [
        c.value
        for c in ErrorCode
        if c.value.startswith("anchor_")
        or c.value in ("invalid_range_order", "overlapping_operations", "safety_check_failed")
    ]
    assert len(edit_codes) == 7
    for name in [*tags, *edit_codes]:
        assert re.search(rf"\b{name}\b", EDIT_DESCRIPTION), name


def test_edit_description_explains_batches_results_and_anchor_forms() -> None:
    for phrase in (
        "atomic against one snapshot",
        "one bad anchor rejects the whole batch",
        "Operations address the initial snapshot, not each other's results",
        "anchors_valid_through",
        "must_refresh_from_line",
        "neighbour anchors",
        "safety warnings",
        "skip_safety_check",
        '"a1b2c3"',
        '"12#a1b2c3"',
    ):
        _assert_contains(EDIT_DESCRIPTION, phrase)


def test_every_read_file_param_is_described() -> None:
    for field in msgspec.structs.fields(ReadFileParams):
        assert re.search(rf"\b{field.name}\b", READ_FILE_DESCRIPTION), field.name


def test_read_file_description_explains_rows_and_marks() -> None:
    for phrase in ("LINE#ANCHOR|text", "A ~ after the anchor", "A ? after the anchor", "version"):
        _assert_contains(READ_FILE_DESCRIPTION, phrase)
    _assert_contains(READ_FILE_DESCRIPTION, "file_path is a deprecated alias of path")


def test_descriptions_map_tool_names() -> None:
    assert DESCRIPTIONS["read_file"] == READ_FILE_DESCRIPTION
    assert DESCRIPTIONS["edit"] == EDIT_DESCRIPTION
