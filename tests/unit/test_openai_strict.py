"""OpenAI's strict mode and the Responses API's flat tools (issue 39).

`tools --format openai --strict` must be taken by the API with `strict: true`: every
object closed and every property required (an optional one nullable, or its default
stated), no `default`, typed enums, only the documented keywords, within the size
limits (`vendor_limits`, each rule with its source). Checked three ways: against the
rules as written, against the openai package (its types, and its own strict pass,
which must find nothing to change) and against the daemon, which must take what a
strict model sends as it is.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
import msgspec

from editjournal.client.library.blocking import Client
from editjournal.client.tools.tooldefs import agent_methods, export, input_schema, strict_schema
from editjournal.client.tools.vendor_limits import (
    EXPORT_LIMITS,
    OPENAI_STRICT_SIZE,
    STRICT_LIMITS,
)
from editjournal.schemas.tools import TOOL_PARAMS
from tests.e2e.cli_support import cli
from tests.unit.test_vendor_limits import problems

JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,), "integer": (int,), "number": (int, float), "boolean": (bool,),
    "null": (type(None),),
}  # fmt: skip


def strict_problems(schema: dict[str, Any]) -> list[str]:
    """What strict mode refuses in `schema` beyond the keywords (`problems` checks those)."""
    found: list[str] = []
    if "anyOf" in schema:
        found.append("anyOf at the root")
    sizes = {"properties": 0, "depth": 0, "string_chars": 0, "enum_values": 0}
    _walk(schema, "$", 0, found, sizes)
    found += [
        f"{name} {sizes[name]} > {getattr(OPENAI_STRICT_SIZE, name)}"
        for name in sizes
        if sizes[name] > getattr(OPENAI_STRICT_SIZE, name)
    ]
    return found


def _walk(node: Any, at: str, depth: int, found: list[str], sizes: dict[str, int]) -> None:
    if not isinstance(node, dict):
        return
    if node.get("type") == "object" or "properties" in node:
        depth += 1
        sizes["depth"] = max(sizes["depth"], depth)
        _check_object(node, at, found, sizes)
    if "enum" in node:
        _check_enum(node, at, found, sizes)
    for name, sub in node.get("properties", {}).items():
        _walk(sub, f"{at}.{name}", depth, found, sizes)
    for i, option in enumerate(node.get("anyOf", ())):
        _walk(option, f"{at}|{i}", depth, found, sizes)
    if "items" in node:
        _walk(node["items"], f"{at}[]", depth, found, sizes)


def _check_object(node: dict[str, Any], at: str, found: list[str], sizes: dict[str, int]) -> None:
    properties = node.get("properties")
    if properties is None:
        found.append(f"{at}: an object without properties")
        return
    sizes["properties"] += len(properties)
    sizes["string_chars"] += sum(len(name) for name in properties)
    if node.get("additionalProperties") is not False:
        found.append(f"{at}: additionalProperties is not false")
    if node.get("required") != list(properties):
        found.append(f"{at}: not every property is required")


def _check_enum(node: dict[str, Any], at: str, found: list[str], sizes: dict[str, int]) -> None:
    values = node["enum"]
    sizes["enum_values"] += len(values)
    sizes["string_chars"] += sum(len(v) for v in values if isinstance(v, str))
    kinds = node.get("type")
    if kinds is None:
        found.append(f"{at}: an enum without a type")
        return
    names = [kinds] if isinstance(kinds, str) else kinds
    allowed = tuple(t for name in names for t in JSON_TYPES[name])
    if not all(isinstance(v, allowed) for v in values):
        found.append(f"{at}: enum values not of type {kinds}")


def strict_tools() -> list[dict[str, Any]]:
    return export("openai", strict=True)


def test_every_strict_schema_follows_the_documented_rules():
    listed = strict_tools()
    assert [t["function"]["name"] for t in listed] == agent_methods()
    for tool in listed:
        function = tool["function"]
        name, schema = function["name"], function["parameters"]
        assert function["strict"] is True
        assert problems(STRICT_LIMITS["openai"], name, function["description"], schema) == []
        assert strict_problems(schema) == [], name
        jsonschema.Draft202012Validator.check_schema(schema)


def test_the_check_catches_what_strict_mode_refuses():
    loose = {
        "type": "object",
        "properties": {"a": {"enum": ["x"]}, "b": {"type": "integer", "default": 3}},
        "required": ["a"],
    }
    assert strict_problems(loose) == [
        "$: additionalProperties is not false",
        "$: not every property is required",
        "$.a: an enum without a type",
    ]
    assert problems(STRICT_LIMITS["openai"], "t", "", loose) == ["keys ['default']"]
    assert strict_problems(strict_schema(loose)) == []


def test_the_openai_packages_own_strict_pass_finds_nothing_to_change():
    """The SDK makes a schema strict before it sends one (`openai.lib._pydantic`, and the
    Agents SDK's `ensure_strict_json_schema`, which also refuses what cannot be made so):
    on ours both must be a no-op. Imported here: the Agents SDK takes seconds to import,
    and every xdist worker collects this module."""
    from agents.strict_schema import ensure_strict_json_schema
    from openai.lib._pydantic import _ensure_strict_json_schema

    for tool in strict_tools():
        schema = tool["function"]["parameters"]
        assert _ensure_strict_json_schema(copy.deepcopy(schema), path=(), root={}) == schema
        assert ensure_strict_json_schema(copy.deepcopy(schema)) == schema


def test_both_shapes_are_the_openai_packages_types():
    """Chat completions' `ChatCompletionFunctionToolParam` and the Responses API's flat
    `FunctionToolParam`, strict or not: every key theirs, every required one there."""
    import pydantic
    from openai.types.chat import ChatCompletionFunctionToolParam
    from openai.types.responses import FunctionToolParam
    from openai.types.shared_params import FunctionDefinition

    for fmt, shape in (
        ("openai", ChatCompletionFunctionToolParam),
        ("openai-responses", FunctionToolParam),
    ):
        for strict in (False, True):
            for entry in export(fmt, strict=strict):
                pydantic.TypeAdapter(shape).validate_python(entry)
                assert_keys_of(entry, shape)
                if fmt == "openai":
                    assert_keys_of(entry["function"], FunctionDefinition)
                else:
                    assert entry["strict"] is strict


def assert_keys_of(entry: dict[str, Any], shape: Any) -> None:
    assert set(entry) <= shape.__required_keys__ | shape.__optional_keys__, entry.keys()
    assert shape.__required_keys__ <= set(entry), entry.keys()


def test_the_responses_shape_is_the_chat_shape_flattened_within_the_same_limits():
    chat = export("openai", strict=True)
    flat = export("openai-responses", strict=True)
    assert flat == [{"type": "function", **c["function"]} for c in chat]
    for entry in export("openai-responses"):
        limits = EXPORT_LIMITS["openai-responses"]
        assert problems(limits, entry["name"], entry["description"], entry["parameters"]) == []


def test_an_optional_field_is_null_when_its_default_is_null_else_states_its_default():
    """Null is "not given" only where the daemon takes null; elsewhere the strict model
    must send a value, and the schema says which one the daemon would have used."""
    for tool in strict_tools():
        name = tool["function"]["name"]
        properties = tool["function"]["parameters"]["properties"]
        required = input_schema(TOOL_PARAMS[name])["required"]  # `path` over its alias
        for field in msgspec.structs.fields(TOOL_PARAMS[name]):
            prop = properties.get(field.encode_name)
            if prop is None or field.encode_name in required:  # the alias is left out
                continue
            if field.default is None:
                assert {"type": "null"} in prop["anyOf"], (name, field.name)
            elif field.default is not msgspec.NODEFAULT:
                assert "anyOf" not in prop, (name, field.name)
                assert prop["description"].endswith(f"Default: {json.dumps(field.default)}.")


def test_a_strict_models_arguments_are_taken_by_the_daemon_as_they_are(
    client: Client, workspace: Path
):
    """Every optional field sent as null (or its stated default), nested ones too."""
    (workspace / "app.py").write_text("a = 1\nb = 2\n", encoding="utf-8")
    schemas = {t["function"]["name"]: t["function"]["parameters"] for t in strict_tools()}
    read = {"path": "app.py", "hashes": True, "range": None, "offset": None, "limit": None,
            "max_lines": 2000, "since_version": None, "at_version": None}  # fmt: skip
    seen = answer(client, schemas, "read_file", read)
    anchor = seen["anchors"][1]  # line 2's
    op = {"op": "replace_line", "hash": anchor, "occurrence": None, "line": None,
          "content": "b = 3"}  # fmt: skip
    edit = {"path": "app.py", "operations": [op], "skip_safety_check": False}
    assert answer(client, schemas, "edit", edit)["version"] > seen["version"]
    assert (workspace / "app.py").read_text(encoding="utf-8") == "a = 1\nb = 3\n"
    plan = {"path": "app.py", "existing_hunk_id": None, "anchor": "a = 1", "content": "c = 4",
            "match": None, "occurrence": None}  # fmt: skip
    assert answer(client, schemas, "prepare_file_insert_after", plan)["hunk_id"]


def answer(client: Client, schemas: dict[str, Any], method: str, args: dict[str, Any]) -> Any:
    """The result of `method` called with `args`, which first must fit its strict schema."""
    jsonschema.validate(args, schemas[method])
    response = client.call(method, args)
    assert response.ok, response.error
    return response.result


def test_the_cli_prints_the_strict_responses_tools_and_refuses_strict_elsewhere():
    done = cli(None, "tools", "--format", "openai-responses", "--strict", "--profile", "minimal")
    assert done.returncode == 0, done.stderr
    printed = json.loads(done.stdout)
    assert sorted(t["name"] for t in printed) == [
        "agent_status", "apply_patch", "edit_file", "read_file"
    ]  # fmt: skip
    assert all(t["strict"] is True and "function" not in t for t in printed)
    refused = cli(None, "tools", "--format", "gemini", "--strict")
    assert refused.returncode == 2
    assert "--format openai or openai-responses" in refused.stderr
