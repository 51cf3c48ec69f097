"""Every export format passes its vendor's published limits, for every tool.

The limits are data (`client/tools/vendor_limits.py`, each with its source); this
checks each exported definition against its own format's entry: the tool name,
the description's length, the schema's root and the keys it uses anywhere.
"""

from __future__ import annotations

import re
from typing import Any

import jsonschema
import pytest

from editjournal.client.tools.guidance import DESCRIPTIONS
from editjournal.client.tools.tooldefs import FORMATS, agent_methods, export
from editjournal.client.tools.vendor_limits import DESCRIPTION_MAX, LIMITS, VendorLimits


def entries(fmt: str) -> list[tuple[str, str, dict[str, Any]]]:
    """(name, description, parameters schema) of every tool as `fmt` exports it."""
    exported = export(fmt)
    if fmt == "mcp":
        return [(e["name"], e["description"], e["inputSchema"]) for e in exported]
    if fmt == "openai":
        return [(e["function"]["name"], e["function"]["description"],
                 e["function"]["parameters"]) for e in exported]  # fmt: skip
    if fmt == "anthropic":
        return [(e["name"], e["description"], e["input_schema"]) for e in exported]
    declarations = exported["functionDeclarations"]
    return [(d["name"], d["description"], d["parameters"]) for d in declarations]


def schema_nodes(node: Any) -> list[dict[str, Any]]:
    """Every schema object below (and including) `node`; property names are not schemas."""
    if isinstance(node, list):
        return [n for item in node for n in schema_nodes(item)]
    if not isinstance(node, dict):
        return []
    found = [node]
    for key, value in node.items():
        if key == "properties":
            found += [n for sub in value.values() for n in schema_nodes(sub)]
        elif key in ("items", "anyOf", "oneOf", "allOf", "not", "additionalProperties"):
            found += schema_nodes(value)
    return found


def problems(limits: VendorLimits, name: str, description: str, schema: dict[str, Any]) -> list:
    found = []
    if not re.fullmatch(limits.name_pattern, name):
        found.append(f"name {name!r} does not match {limits.name_pattern}")
    if limits.description_max is not None and len(description) > limits.description_max:
        found.append(f"description {len(description)} > {limits.description_max} characters")
    if schema.get("type") != "object":
        found.append("the parameters' root is not type: object")
    found += [f"{key} at the root" for key in limits.root_forbidden & set(schema)]
    for node in schema_nodes(schema):
        if limits.schema_keys is not None and set(node) - limits.schema_keys:
            found.append(f"keys {sorted(set(node) - limits.schema_keys)}")
        for prop in node.get("properties", {}):
            pattern = limits.property_name_pattern
            if pattern is not None and not re.fullmatch(pattern, prop):
                found.append(f"property name {prop!r}")
    return found


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_tool_passes_its_vendors_limits(fmt: str):
    limits = LIMITS[fmt]
    listed = entries(fmt)
    assert [name for name, _, _ in listed] == agent_methods()
    for name, description, schema in listed:
        assert problems(limits, name, description, schema) == [], name
        if limits.schema_keys is None:  # any JSON Schema: it must be a valid one
            jsonschema.Draft202012Validator.check_schema(schema)


def test_every_format_has_limits_and_the_shortest_description_limit_is_openais():
    assert set(LIMITS) == set(FORMATS)
    assert DESCRIPTION_MAX == LIMITS["openai"].description_max == 1024


def test_the_check_catches_what_a_vendor_refuses():
    too_long = "x" * 1025
    union = {"type": "object", "anyOf": [{"required": ["a"]}], "properties": {"a-b": {}}}
    assert problems(LIMITS["openai"], "read.file", too_long, union) == [
        "name 'read.file' does not match [a-zA-Z0-9_-]{1,64}",
        "description 1025 > 1024 characters",
        "anyOf at the root",
    ]
    gemini = problems(LIMITS["gemini"], "9tool", "", {**union, "additionalProperties": False})
    assert gemini == [
        "name '9tool' does not match [A-Za-z_][A-Za-z0-9_.:-]{0,62}",
        "keys ['additionalProperties']",
        "property name 'a-b'",
    ]


def test_the_short_descriptions_are_under_a_third_of_the_guidance():
    short = sum(len(description) for _, description, _ in entries("openai"))
    assert short * 3 < sum(len(DESCRIPTIONS[name]) for name in agent_methods())
