"""The atomic tools' guidance: the seed's Tool Selection Guide, verbatim, and every error."""

from __future__ import annotations

import pytest

from editjournal.client.tools.guidance import (
    DESCRIPTIONS,
    EDIT_FILE_DESCRIPTION,
    TOOL_SELECTION_GUIDE,
    UPDATE_SECTION_DESCRIPTION,
    WRITE_FILE_DESCRIPTION,
)

ATOMIC = ["edit_file", "append_to_file", "prepend_to_file", "update_section", "write_file"]

SEED_GUIDE_ROWS = [
    "| Change a specific value | `edit_file` |",
    "| Add new entry/section | `append_to_file` |",
    "| Update markdown section | `update_section` |",
    "| Create new file | `write_file` |",
    "| Full file replacement (rare) | Read first, then `write_file` |",
]


def test_tool_selection_guide_is_the_seeds_table():
    assert TOOL_SELECTION_GUIDE.splitlines() == [
        "| Scenario | Tool |",
        "|----------|------|",
        *SEED_GUIDE_ROWS,
    ]


@pytest.mark.parametrize("tool", ATOMIC)
def test_every_atomic_tool_carries_the_guide(tool: str):
    assert TOOL_SELECTION_GUIDE in DESCRIPTIONS[tool]


def test_edit_file_description_quotes_its_error_messages():
    text = " ".join(EDIT_FILE_DESCRIPTION.split())
    for passage in [
        "old_string not found in PATH. Make sure it matches exactly (including whitespace).",
        "old_string appears N times in PATH. Include more surrounding context to make it unique.",
        "closest similar lines",
        "expected_replacements",
        "anchor_stale",
    ]:
        assert passage in text


def test_update_section_and_write_file_name_their_errors_and_warning():
    for code in ("section_not_found", "section_ambiguous", "anchor_stale"):
        assert code in UPDATE_SECTION_DESCRIPTION
    assert "overwrote_unseen" in WRITE_FILE_DESCRIPTION
    assert "fenced code" in UPDATE_SECTION_DESCRIPTION
