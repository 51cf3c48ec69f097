"""The state-verified patch protocol's guidance (seed 002, section 6) reaches the agent."""

from __future__ import annotations

import re

import msgspec

from editjournal.client.tools.guidance import (
    DESCRIPTIONS,
    READ_FILE_DESCRIPTION,
    READ_MANY_FILES_DESCRIPTION,
    SAFE_PATCH_DESCRIPTION,
)
from editjournal.schemas.tools import SafePatchParams

SEED_READ_FILE = (
    "Reads the content of a file and returns it along with a session-unique version number and"
    " a SHA-256 hash. This versioned data is required for safely modifying files with the"
    " `safe_patch` tool."
)
SEED_READ_MANY = (
    "Reads the content of multiple files and returns an array of objects, where each object"
    " contains the file content along with a session-unique version number and a SHA-256 hash."
    " This versioned data is required for safely modifying files."
)
SEED_SAFE_PATCH = [
    "Applies a set of changes to a file using a unified diff patch. This is the preferred tool"
    " for all file modifications.",
    "Identify this by finding the file content with the **highest version number**.",
    "If no versioned content is available, you **MUST** call `read_file` or `read_many_files`"
    " first to get it.",
    "you **MUST** include at least 10 lines of unchanged context around each change hunk"
    " (equivalent to `diff -U 10`)",
    "You **MUST** provide the `sha256` hash that was returned with that version as the"
    " `base_content_sha256` parameter. This hash acts as a lock; the operation will fail if the"
    " file has been modified since you read it.",
]


def flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def test_read_file_and_read_many_files_carry_the_seeds_sentences():
    assert SEED_READ_FILE in flat(READ_FILE_DESCRIPTION)
    assert SEED_READ_MANY in flat(READ_MANY_FILES_DESCRIPTION)
    assert DESCRIPTIONS["read_many_files"] == READ_MANY_FILES_DESCRIPTION


def test_safe_patch_carries_the_usage_protocol_every_parameter_and_every_error():
    text = flat(SAFE_PATCH_DESCRIPTION)
    assert DESCRIPTIONS["safe_patch"] == SAFE_PATCH_DESCRIPTION
    for sentence in SEED_SAFE_PATCH:
        assert sentence in text, sentence
    for field in msgspec.structs.fields(SafePatchParams):
        assert re.search(rf"\b{field.name}\b", text), field.name
    for code in ("state_mismatch", "invalid_diff", "patch_failed", "safety_check_failed"):
        assert code in text
    for message in (
        "State Mismatch: File has changed on disk since it was last read.",
        "Invalid Diff: The provided diff content does not match the file's content.",
        "Internal Error: The corrected patch failed to apply.",
    ):
        assert message in text
