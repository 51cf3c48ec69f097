"""Tool definitions: generated from the schemas and the guidance, valid in every export format;
tool profiles and what they cost; MCP annotations; the long guidance as instructions."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import msgspec
import pytest

from editjournal.client.library.recovery import READ_ONLY_METHODS
from editjournal.client.mcp.staleness import StalenessNotices, changed_lines
from editjournal.client.tools.guidance import DESCRIPTIONS, TOOL_USE_RULES, instructions
from editjournal.client.tools.summaries import SUMMARIES
from editjournal.client.tools.tooldefs import (
    ADMIN_METHODS,
    FORMATS,
    GEMINI_KEYS,
    agent_methods,
    export,
    fit,
    gemini_schema,
    summarize,
    tool_definition,
    tool_definitions,
)
from editjournal.client.tools.toolsets import PROFILES, costs, estimate_tokens, select_tools
from editjournal.client.tools.vendor_limits import DESCRIPTION_MAX
from editjournal.schemas.tools import (
    TOOL_PARAMS,
    AgentStatusParams,
    AgentStatusResult,
    FileSeen,
    LogEntry,
)

ANCHOR = "12#a1b2c3"
SHA = "0" * 64

# Arguments an agent might send: (method, arguments, valid?). The input schema and the
# daemon's own decoder (msgspec, from the same Struct) must agree on every one.
CASES: list[tuple[str, dict[str, Any], bool]] = [
    ("read_file", {"path": "a.py"}, True),
    ("read_file", {"path": "a.py", "hashes": True, "range": "2-", "max_lines": 10}, True),
    ("read_file", {"path": "a.py", "since_version": 0}, True),
    ("read_file", {"path": "a.py", "max_lines": 0, "range": ""}, True),  # sentinels: not given
    ("read_file", {"path": "a.py", "max_lines": -1}, False),
    ("read_file", {"path": "a.py", "hashes": "yes"}, False),
    ("read_file", {"path": "a.py", "colour": True}, False),
    ("read_many_files", {"paths": ["a.py", "b.py"]}, True),
    ("read_many_files", {"paths": []}, False),
    ("edit", {"path": "a.py", "operations": [{"op": "delete_line", "hash": ANCHOR}]}, True),
    (
        "edit",
        {
            "path": "a.py",
            "operations": [
                {"op": "replace_range", "start_hash": "a1b2", "end_hash": "c3d4", "content": ""},
                {"op": "insert_after", "hash": "beef01", "content": "x", "occurrence": 2},
            ],
        },
        True,
    ),
    ("edit", {"path": "a.py", "operations": []}, False),
    ("edit", {"path": "a.py", "operations": [{"op": "replace_line", "hash": "zz"}]}, False),
    (
        "edit",
        {"path": "a.py", "operations": [{"op": "delete_line", "start_hash": "a1b2c3"}]},
        False,
    ),
    ("edit", {"path": "a.py", "operations": [{"op": "move_line", "hash": "a1b2c3"}]}, False),
    ("safe_patch", {"path": "a.py", "unified_diff": "", "base_content_sha256": SHA}, True),
    ("safe_patch", {"path": "a.py", "unified_diff": "", "base_content_sha256": "abc"}, False),
    ("apply_patch", {"patch": "*** Begin Patch\n*** End Patch"}, True),
    ("apply_patch", {"operations": [{"type": "delete_file", "path": "a.py"}]}, True),
    ("apply_patch", {"operations": [{"type": "rename_file", "path": "a.py"}]}, False),
    ("apply_patch", {"operations": []}, False),
    ("apply_patch", {"patch": "x", "dry_run": True}, False),
    ("edit_file", {"path": "a.md", "old_string": "a", "new_string": "b"}, True),
    ("edit_file", {"path": "a.md", "old_string": "", "new_string": "b"}, False),
    (
        "edit_file",
        {"path": "a.md", "old_string": "a", "new_string": "", "expected_replacements": 0},
        False,
    ),
    ("append_to_file", {"path": "a.md", "content": "- x\n"}, True),
    ("append_to_file", {"path": "a.md"}, False),
    ("prepend_to_file", {"path": "a.md", "content": "x"}, True),
    ("update_section", {"path": "a.md", "section_header": "## A", "new_content": ""}, True),
    ("update_section", {"path": "a.md", "section_header": "", "new_content": "x"}, False),
    ("write_file", {"path": "a.md", "content": ""}, True),
    ("write_file", {"path": "a.md", "content": "x", "skip_safety_check": True}, False),
    ("agent_status", {}, True),
    ("prepare_file_range_edit", {"path": "a", "range": "1-2", "content": ""}, True),
    ("prepare_file_range_edit", {"path": "a", "range": "", "start_line": 0, "content": ""}, False),
    ("prepare_file_append", {"path": "a", "content": "x", "existing_hunk_id": ""}, True),
    ("prepare_file_append", {"path": "a"}, False),
    (
        "prepare_file_insert_after",
        {"path": "a", "anchor": "x", "content": "y", "match": "", "occurrence": ""},
        True,
    ),
    (
        "prepare_file_insert_after",
        {"path": "a", "anchor": "x", "content": "y", "match": "z"},
        False,
    ),
    (
        "prepare_file_insert_before",
        {"path": "a", "anchor": "x", "content": "y", "occurrence": 0},
        True,
    ),
    ("prepare_file_insert_before", {"path": "a", "anchor": "", "content": "y"}, False),
    ("prepare_file_block_replace", {"path": "a", "old_block": "x", "new_block": "y"}, True),
    (
        "prepare_file_block_replace",
        {"path": "a", "old_block": "x", "new_block": "y", "occurrence": "1"},
        False,
    ),
    ("apply_file_modification", {"hunk_id": "h1"}, True),
    ("apply_file_modification", {"hunk_id": ""}, False),
    ("overwrite_entire_file", {"path": "a", "content": "x", "content_format": ""}, True),
    ("overwrite_entire_file", {"path": "a", "content": "x", "content_format": "yaml"}, False),
    ("list_hunks", {}, True),
    ("list_hunks", {"path": ""}, True),
    ("discard_hunk", {"hunk_id": "h1"}, True),
    ("discard_hunk", {}, False),
    ("checkpoint_create", {}, True),
    ("checkpoint_create", {"name": "", "paths": ["a"]}, False),
    ("checkpoint_list", {}, True),
    ("checkpoint_diff", {"id_or_name": "v1", "paths": ["src"], "patch": False}, True),
    ("checkpoint_diff", {"patch": True}, False),
    ("checkpoint_restore", {"id_or_name": "v1", "paths": ["a"], "remove_new": True}, True),
    ("checkpoint_restore", {"remove_new": True}, False),
    ("undo", {"path": "a", "agent": "b", "seq": 3}, True),
    ("undo", {"path": "a", "seq": 0}, False),
    ("show", {"seq": 3}, True),
    ("show", {"seq": 0}, False),
    ("history", {"path": "a"}, True),
    ("history", {}, False),
    ("blame", {"path": "a", "at_version": 4}, True),
    ("blame", {"path": "a", "at_version": -1}, False),
    ("stats", {}, True),
    ("stats", {"agent": 3}, False),
    ("read_file", {"path": "a.py", "at_version": 7}, True),
    ("agent_status", {"agent": "agent-b"}, True),
]


def schemas() -> dict[str, dict[str, Any]]:
    return {t.name: t.input_schema for t in tool_definitions()}


def test_every_agent_method_is_a_tool_and_admin_methods_are_not():
    assert agent_methods() == [m for m in TOOL_PARAMS if m not in ADMIN_METHODS]
    assert {"read_file", "read_many_files", "edit", "safe_patch", "agent_status"} <= set(
        agent_methods()
    )
    assert not ADMIN_METHODS & set(agent_methods())


def test_every_tool_has_a_short_description_and_its_full_guidance():
    assert set(SUMMARIES) == set(DESCRIPTIONS) == set(agent_methods())
    for tool in tool_definitions():
        assert tool.description == SUMMARIES[tool.name]
        assert len(tool.description) <= DESCRIPTION_MAX
        assert len(tool.description) <= len(DESCRIPTIONS[tool.name])


def test_the_anchored_tools_short_descriptions_keep_what_a_model_cannot_guess():
    read, edit, patch = SUMMARIES["read_file"], SUMMARIES["edit"], SUMMARIES["safe_patch"]
    assert "hashes: true" in read and "LINE#ANCHOR|text" in read and "advisory" in read
    for op in ("replace_line", "insert_after", "insert_before", "delete_line"):
        assert op in edit
    assert "replace_range" in edit and "delete_range" in edit and "start_hash" in edit
    # the delta as the model sees it printed under the error, never a wire field's name
    assert "anchor_stale" in edit and "the delta it shows" in edit
    assert "LINE#ANCHOR whole" in edit  # a ? line: its number picks the twin
    assert not [name for name, text in SUMMARIES.items() if "details." in text]
    assert "base_content_sha256" in patch and "state_mismatch" in patch and "rebase" in patch


def test_a_tool_without_a_summary_gets_its_first_paragraph_cut_to_fit(
    monkeypatch: pytest.MonkeyPatch,
):
    monkeypatch.delitem(SUMMARIES, "agent_status")
    summary = summarize("agent_status", AgentStatusParams)
    assert DESCRIPTIONS["agent_status"].startswith(summary) and summary.endswith(".")
    assert len(summary) <= DESCRIPTION_MAX
    long = "One sentence here. " * 80
    cut = fit(long.strip(), DESCRIPTION_MAX)
    assert len(cut) <= DESCRIPTION_MAX and cut.endswith("here.")
    assert fit("short.", DESCRIPTION_MAX) == "short."
    assert fit("x" * 2000, 100) == "x" * 97 + "..."


@pytest.mark.parametrize("name", agent_methods())
def test_input_schemas_are_valid_self_contained_objects(name: str):
    schema = schemas()[name]
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["type"] == "object"
    dumped = json.dumps(schema)
    assert "$ref" not in dumped and "$defs" not in dumped and "discriminator" not in dumped


def test_deprecated_alias_is_hidden_and_path_required():
    for name in ("read_file", "edit", "safe_patch"):
        schema = schemas()[name]
        assert "file_path" not in schema["properties"]
        assert "path" in schema["required"]


@pytest.mark.parametrize(("method", "arguments", "valid"), CASES)
def test_schema_and_daemon_decoder_agree(method: str, arguments: dict[str, Any], valid: bool):
    by_schema = jsonschema.Draft202012Validator(schemas()[method]).is_valid(arguments)
    try:
        msgspec.json.decode(json.dumps(arguments), type=TOOL_PARAMS[method])
        by_daemon = True
    except msgspec.ValidationError:
        by_daemon = False
    assert (by_schema, by_daemon) == (valid, valid)


def test_every_agent_method_has_a_case():
    assert {method for method, _, _ in CASES} == set(agent_methods())


# --- export formats ----------------------------------------------------------------------------


def test_mcp_format_is_tools_list_entries():
    from mcp import types

    for entry in export("mcp"):
        # outputSchema too: the export is what `editjournal mcp` lists (issue 39)
        assert set(entry) == {"name", "description", "inputSchema", "outputSchema", "annotations"}
        tool = types.Tool.model_validate(entry)  # the SDK's own model of a tools/list entry
        assert tool.annotations is not None and tool.annotations.open_world_hint is False
        assert tool.output_schema == tool_definition(entry["name"]).output_schema
        # what the server sends for that Tool is the entry itself: export and tools/list agree
        assert tool.model_dump(by_alias=True, exclude_none=True, mode="json") == entry


def _hints() -> dict[str, dict[str, bool]]:
    return {t.name: t.annotations for t in tool_definitions()}


def test_read_only_tools_are_annotated_so_and_no_others():
    read_only = {name for name, hints in _hints().items() if hints["readOnlyHint"]}
    assert read_only == READ_ONLY_METHODS & set(agent_methods())
    assert {"read_file", "show", "checkpoint_diff", "list_hunks"} <= read_only
    for name in read_only:  # the other hints mean something only for a writing tool
        assert set(_hints()[name]) == {"readOnlyHint", "openWorldHint"}


def test_writing_tools_say_whether_they_destroy_and_whether_a_repeat_does_more():
    hints = _hints()
    for name in ("edit", "safe_patch", "edit_file", "overwrite_entire_file", "undo"):
        assert hints[name]["destructiveHint"] is True, name
    for name in ("append_to_file", "prepare_file_append", "checkpoint_create"):
        assert hints[name]["destructiveHint"] is False, name
    idempotent = {name for name, h in hints.items() if h.get("idempotentHint")}
    assert idempotent == {
        "write_file",
        "overwrite_entire_file",
        "checkpoint_restore",
        "apply_file_modification",
        "discard_hunk",
    }
    assert "idempotentHint" not in hints["edit"] and "idempotentHint" not in hints["undo"]


def test_openai_format():
    for entry in export("openai"):
        assert entry["type"] == "function" and set(entry) == {"type", "function"}
        function = entry["function"]
        assert set(function) == {"name", "description", "parameters"}
        assert function["parameters"]["type"] == "object"
        assert len(function["name"]) <= 64 and function["name"].replace("_", "").isalnum()


def test_anthropic_format():
    for entry in export("anthropic"):
        assert set(entry) == {"name", "description", "input_schema"}
        assert entry["input_schema"]["type"] == "object"


def _gemini_nodes(node: Any) -> list[dict[str, Any]]:
    if isinstance(node, list):
        return [n for item in node for n in _gemini_nodes(item)]
    if not isinstance(node, dict):
        return []
    found = [node]
    for key, value in node.items():
        if key == "properties":
            found += [n for sub in value.values() for n in _gemini_nodes(sub)]
        elif key in ("items", "anyOf"):
            found += _gemini_nodes(value)
    return found


def test_gemini_format_uses_only_the_openapi_subset_gemini_accepts():
    exported = export("gemini")
    assert set(exported) == {"functionDeclarations"}
    for declaration in exported["functionDeclarations"]:
        assert set(declaration) == {"name", "description", "parameters"}
        for node in _gemini_nodes(declaration["parameters"]):
            assert set(node) <= GEMINI_KEYS, set(node) - GEMINI_KEYS
            assert node.get("type") != "null"
            if "enum" in node:
                assert node["type"] == "string"
            if "anyOf" not in node:
                assert "type" in node


def test_gemini_turns_a_nullable_union_into_nullable():
    schema = {"anyOf": [{"type": "integer", "minimum": 1}, {"type": "null"}], "default": None}
    assert gemini_schema(schema) == {
        "type": "integer",
        "minimum": 1,
        "default": None,
        "nullable": True,
    }


# --- profiles, instructions, cost ----------------------------------------------------------


def test_profiles_name_small_sets_and_all_is_every_tool():
    assert select_tools("minimal") == ["read_file", "apply_patch", "agent_status", "edit_file"]
    assert select_tools("anchored") == ["read_file", "edit", "agent_status"]
    assert select_tools("patch") == ["read_file", "safe_patch", "agent_status"]
    assert select_tools("all") == agent_methods() == select_tools()


def test_a_profile_tool_the_daemon_lacks_is_skipped(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setitem(PROFILES, "future", ("read_file", "not_yet_a_tool"))
    assert "not_yet_a_tool" not in TOOL_PARAMS
    assert select_tools("future") == ["read_file"]


def test_a_tool_list_picks_those_tools_in_the_daemons_order():
    assert select_tools("patch", ["undo", "read_file", "undo"]) == ["read_file", "undo"]
    with pytest.raises(ValueError, match="unknown tool nope; the tools are read_file"):
        select_tools("all", ["read_file", "nope"])
    with pytest.raises(ValueError, match="unknown profile 'tiny'; one of minimal"):
        select_tools("tiny")


def test_instructions_hold_the_rules_and_every_chosen_tools_full_guidance():
    text = instructions(select_tools("anchored"))
    assert text.startswith(TOOL_USE_RULES)  # first: a client that cuts keeps the rules
    for name in ("read_file", "edit", "agent_status"):
        assert f"## {name}\n\n{DESCRIPTIONS[name]}" in text
    assert DESCRIPTIONS["safe_patch"] not in text
    patch = instructions(select_tools("patch"))  # the rules are about edit: not without it
    assert TOOL_USE_RULES not in patch and DESCRIPTIONS["safe_patch"] in patch


def test_instructions_name_what_the_model_sees_not_wire_fields():
    """An error reaches the model as text ("the delta below", "conflicts:"), never as
    `details`: guidance that says `details.delta` points at nothing it was shown."""
    text = instructions(select_tools("all"))
    assert "details." not in text and "error.code" not in text
    assert "the delta shows" in text and "the conflicts it lists" in text


@pytest.mark.parametrize("fmt", FORMATS)
def test_each_profile_costs_less_than_all(fmt: str):
    rows = {row.name: row for row in costs(fmt)}
    assert list(rows) == list(PROFILES)
    for name in ("minimal", "anchored", "patch"):
        assert rows[name].definitions_chars < rows["all"].definitions_chars / 3
        assert rows[name].instructions_chars < rows["all"].instructions_chars / 2
    assert rows["all"].tools == len(agent_methods())
    assert rows["all"].definitions_tokens == estimate_tokens(rows["all"].definitions_chars)
    chosen = costs(fmt, ["read_file"])[-1]
    assert (chosen.name, chosen.tools) == ("--tools", 1)


def test_unknown_format_is_refused():
    with pytest.raises(ValueError, match="one of mcp"):
        export("yaml")
    assert FORMATS == ("mcp", "openai", "anthropic", "gemini")


# --- staleness notices ----------------------------------------------------------------------


def test_changed_lines_are_numbered_in_the_content_after_the_edit():
    assert changed_lines([(4, 5, 1)]) == "line 5"
    assert changed_lines([(0, 0, 2), (9, 10, 3)]) == "lines 1-2, lines 12-14"
    assert changed_lines([(2, 4, 0), (6, 7, 1)]) == "2 lines removed after line 2, line 5"


def _status(changes: list[dict[str, Any]], current: bool = False) -> AgentStatusResult:
    seen = FileSeen(
        path="src/app.py",
        version_seen=7,
        sha256_seen=SHA,
        lines_seen=None,
        current=current,
        current_version=12,
        current_sha256="1" * 64,
        changed_since=changes,
    )
    return AgentStatusResult(agent="a", files=[seen], stale_files=0 if current else 1)


def _edit(seq: int, line_changes: list[list[int]]) -> LogEntry:
    body = {"line_changes": line_changes}
    return LogEntry(seq=seq, ts=0, agent="agent-b", kind="edit_applied", path="src/app.py",
                    summary="", hash="", body=body)  # fmt: skip


def test_each_change_is_told_once_with_its_lines_and_author():
    tracker = StalenessNotices()
    asked: list[tuple[str, int]] = []

    def history(path: str, after: int) -> list[LogEntry]:
        asked.append((path, after))
        return [_edit(10, [[39, 52, 13]])]

    first = [{"seq": 10, "agent": "agent-b", "kind": "edit_applied"}]
    told = tracker.notices(_status(first), history)
    assert told == [
        "src/app.py changed since you read it: lines 40-52 by agent-b, seq 10. Your anchors "
        "for those lines are stale: read_file with since_version 7 shows what changed, with "
        "fresh anchors."
    ]
    assert asked == [("src/app.py", 9)]
    assert tracker.notices(_status(first), history) == []  # told already
    more = [*first, {"seq": 12, "agent": None, "kind": "outside_change"}]
    assert tracker.notices(_status(more), history) == [
        "src/app.py changed since you read it: an outside change, seq 12. Your "
        "anchors for those lines are stale: read_file with since_version 7 shows what "
        "changed, with fresh anchors."
    ]
    assert tracker.notices(_status(more, current=True), history) == []
