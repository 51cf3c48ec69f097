"""Tool definitions for agents, generated from `schemas/` and `client/tools/guidance.py`.

One list of definitions feeds every harness: the MCP server's `tools/list` and
`editjournal tools --format mcp|openai|openai-responses|anthropic|gemini`. A definition is a
tool name from `TOOL_PARAMS`, its short description from `summaries.SUMMARIES`
(held to the strictest vendor limit of `vendor_limits`; the long guidance goes
to the system prompt, `guidance.instructions`), MCP annotations (read-only,
destructive, idempotent) and an input schema made by `msgspec.json.schema` from
the params Struct — never written by hand, so a new field or a new tool appears
everywhere at once. Only the daemon's own admin methods (`ADMIN_METHODS`) are
left out.

The generated schema is adjusted for a model, the same way for every format:
`$ref`s are inlined (the params are not recursive; a recursive one fails
loudly), a deprecated alias is dropped and its canonical field required
(`file_path` -> `path`), and an optional field whose default is null is shown
as its plain type (omitting it means null). Gemini's `parameters` take only a
subset of OpenAPI 3.0, so `gemini_schema` rewrites further (see there); OpenAI's
strict mode takes another subset with every property required, so `strict_schema`
rewrites for it (see there).
Pure data in, data out: nothing here does I/O or talks to a daemon.
"""

from __future__ import annotations

import copy
import functools
import json
from dataclasses import dataclass
from typing import Any

import msgspec

from editjournal.client.library.recovery import READ_ONLY_METHODS
from editjournal.client.tools.guidance import DESCRIPTIONS
from editjournal.client.tools.summaries import SUMMARIES
from editjournal.client.tools.vendor_limits import (
    DESCRIPTION_MAX,
    GEMINI_KEYS,
    OPENAI_STRICT_KEYS,
)
from editjournal.schemas.tools import TOOL_PARAMS, TOOL_RESULTS, Params, Result

# The daemon's own methods: liveness, daemon status and the audit log are for people
# and scripts (`editjournal status`, `log`), not for an agent's tool list.
# not agent tools: the daemon's own, and the harness hooks' (client/harness/hook.py)
ADMIN_METHODS = frozenset(
    {"ping", "status", "log", "check_write", "claim_write", "shell_window", "prompt_checkpoint"}
)
# deprecated alias -> the field an agent should use instead
DEPRECATED_ALIASES = {"file_path": "path"}
FORMATS = ("mcp", "openai", "anthropic", "gemini")  # one per vendor (`vendor_limits.LIMITS`)
# Every shape `export` makes: the vendors' own, and OpenAI's Responses API's flat tool.
EXPORT_FORMATS = (*FORMATS, "openai-responses")
# The shapes that take `strict: true` (OpenAI's strict mode: `strict_schema`).
STRICT_FORMATS = ("openai", "openai-responses")

# MCP tool annotations (spec 2025-11-25, ToolAnnotations): hints a client may use to ask
# before a call, never a promise. readOnlyHint for the methods a Client may send twice
# (`recovery.READ_ONLY_METHODS`: they change no file and no plan); for every other tool
# destructiveHint says whether it may change or remove what is there (the spec's
# default, true) or only adds: content added, a plan or a checkpoint recorded.
ADDITIVE = frozenset(
    {
        "append_to_file", "prepend_to_file", "prepare_file_range_edit", "prepare_file_append",
        "prepare_file_insert_after", "prepare_file_insert_before",
        "prepare_file_block_replace", "checkpoint_create",
    }
)  # fmt: skip
# idempotentHint: the same call again changes nothing more, whatever the arguments: the
# same content written again, a checkpoint put back again, a hunk that applies (or is
# discarded) at most once.
IDEMPOTENT = frozenset(
    {
        "write_file", "overwrite_entire_file", "checkpoint_restore", "apply_file_modification",
        "discard_hunk",
    }
)  # fmt: skip

JsonSchema = dict[str, Any]


class SchemaError(Exception):
    """A params Struct whose schema cannot be turned into a tool definition."""


@dataclass(frozen=True)
class ToolDef:
    """One agent-facing tool: what every export format is made from."""

    name: str
    description: str  # the short one; the long guidance is `guidance.instructions`
    input_schema: JsonSchema
    annotations: dict[str, bool]  # MCP ToolAnnotations, camelCase as on the wire
    # MCP outputSchema: what the structured content of a successful call holds
    output_schema: JsonSchema | None = None


def agent_methods() -> list[str]:
    """Every method of `TOOL_PARAMS` an agent may call, in the daemon's order."""
    return [method for method in TOOL_PARAMS if method not in ADMIN_METHODS]


def tool_definitions(methods: list[str] | None = None) -> list[ToolDef]:
    """The definitions of `methods` (default: every agent method), in that order."""
    chosen = agent_methods() if methods is None else methods
    return [tool_definition(method) for method in chosen]


def tool_definition(method: str) -> ToolDef:
    params = TOOL_PARAMS[method]
    return ToolDef(
        method,
        summarize(method, params),
        input_schema(params),
        annotate(method),
        output_schema(TOOL_RESULTS[method]),
    )


def describe(method: str, params: type[Params]) -> str:
    """The guidance text; a tool that has none yet falls back to its params docstring."""
    fallback = (params.__doc__ or "").strip() or f"The daemon's `{method}` method."
    return DESCRIPTIONS.get(method, fallback)


def summarize(method: str, params: type[Params]) -> str:
    """The short description. A tool without a summary yet (a test says it must have one)
    gets its guidance's first paragraph, cut at a sentence to fit every vendor."""
    if method in SUMMARIES:
        return SUMMARIES[method]
    first = describe(method, params).split("\n\n")[0]
    return fit(first, DESCRIPTION_MAX)


def fit(text: str, limit: int) -> str:
    """`text` whole when it fits, else its longest run of whole sentences that does."""
    if len(text) <= limit:
        return text
    cut = text[:limit]
    end = cut.rfind(". ")
    return cut[: end + 1] if end > 0 else cut[: limit - 3].rstrip() + "..."


def annotate(method: str) -> dict[str, bool]:
    """The MCP annotations of `method`: a closed world (the workspace) for every tool."""
    if method in READ_ONLY_METHODS:
        return {"readOnlyHint": True, "openWorldHint": False}
    hints = {"readOnlyHint": False, "destructiveHint": method not in ADDITIVE}
    if method in IDEMPOTENT:
        hints["idempotentHint"] = True
    return {**hints, "openWorldHint": False}


# --- JSON Schema for a model -----------------------------------------------------------------


def input_schema(params: type[Params]) -> JsonSchema:
    """The params Struct's JSON Schema, self-contained (no $ref / $defs), as a model sees it:
    a fresh copy of the one built at the first ask (callers may change theirs)."""
    return msgspec.json.decode(_input_schema_json(params))


@functools.cache
def _input_schema_json(params: type[Params]) -> bytes:
    """Built once per process: msgspec resolves every annotation of the Struct each time
    (~6 ms a tool, paid per tool at every `tools/list` and every export before)."""
    generated = msgspec.json.schema(params)
    root = _inline(generated, generated.get("$defs", {}), ())
    root.pop("title", None)
    root.pop("description", None)  # the Struct's docstring is for us; the tool has its own
    _drop_aliases(root)
    return msgspec.json.encode(_plain_optionals(root))


# What the MCP server adds to every result's structured content (`mcp_text.structured`);
# no result Struct has a field of these names.
SERVER_ADDED: JsonSchema = {
    "warnings": {"type": "array", "items": {"type": "string"}},
    "notices": {"type": "array", "items": {"type": "string"}},
}


def output_schema(result: type[Result]) -> JsonSchema:
    """The result Struct's JSON Schema as an MCP `outputSchema`: self-contained, since
    clients validate it with no registry, plus what the server adds. Never a closed
    object: a daemon newer than this client may send fields the Struct lacks yet, and a
    client that validates must not refuse the reply for them. A fresh copy, as for
    `input_schema`."""
    return msgspec.json.decode(_output_schema_json(result))


@functools.cache
def _output_schema_json(result: type[Result]) -> bytes:
    generated = msgspec.json.schema(result)
    root = _inline(generated, generated.get("$defs", {}), ())
    root.pop("title", None)
    root.pop("description", None)
    root["properties"] = {**root.get("properties", {}), **SERVER_ADDED}
    return msgspec.json.encode(_open(root))


def _open(node: Any) -> Any:
    """`node` with every `additionalProperties: false` left out, recursively."""
    if isinstance(node, list):
        return [_open(item) for item in node]
    if not isinstance(node, dict):
        return node
    return {k: _open(v) for k, v in node.items() if (k, v) != ("additionalProperties", False)}


def _inline(node: Any, defs: dict[str, JsonSchema], seen: tuple[str, ...]) -> Any:
    """`node` with every `#/$defs/X` reference replaced by a copy of X."""
    if isinstance(node, list):
        return [_inline(item, defs, seen) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str):
        name = ref.removeprefix("#/$defs/")
        if name in seen or name not in defs:
            raise SchemaError(f"cannot inline {ref}: recursive or unknown")
        return _inline(copy.deepcopy(defs[name]), defs, (*seen, name))
    # a discriminator's mapping points into $defs, which are gone: the tag enum says it all
    skipped = {"$defs", "discriminator"}
    return {k: _inline(v, defs, seen) for k, v in node.items() if k not in skipped}


def _drop_aliases(schema: JsonSchema) -> None:
    properties = schema.get("properties", {})
    for alias, canonical in DEPRECATED_ALIASES.items():
        if alias in properties and canonical in properties:
            del properties[alias]
            required = schema.setdefault("required", [])
            if canonical not in required:
                required.insert(0, canonical)


def _plain_optionals(node: Any) -> Any:
    """`{anyOf: [X, {type: null}], default: null}` -> X, recursively."""
    if isinstance(node, list):
        return [_plain_optionals(item) for item in node]
    if not isinstance(node, dict):
        return node
    node = {k: _plain_optionals(v) for k, v in node.items()}
    options = node.get("anyOf")
    if "default" in node and node["default"] is None and isinstance(options, list):
        kept = [o for o in options if o != {"type": "null"}]
        if len(kept) == 1 and len(options) == 2:
            rest = {k: v for k, v in node.items() if k not in ("anyOf", "default")}
            return {**kept[0], **rest}
    return node


def gemini_schema(node: Any) -> Any:
    """A schema in the OpenAPI 3.0 subset Gemini's function declarations accept.

    No $ref / $defs (already inlined), no additionalProperties, no `type: null`
    (a nullable union becomes `nullable: true`), an enum only on a string, and
    only the keys of `GEMINI_KEYS`; `anyOf` (the edit operations' union) stays."""
    if isinstance(node, list):
        return [gemini_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    options = node.get("anyOf")
    if isinstance(options, list) and {"type": "null"} in options:
        kept = [o for o in options if o != {"type": "null"}]
        rest = {k: v for k, v in node.items() if k != "anyOf"}
        merged = {**kept[0], **rest} if len(kept) == 1 else {**rest, "anyOf": kept}
        return gemini_schema({**merged, "nullable": True})
    out: JsonSchema = {}
    for key, value in node.items():
        if key not in GEMINI_KEYS:
            continue
        out[key] = (
            {name: gemini_schema(sub) for name, sub in value.items()}
            if key == "properties"
            else gemini_schema(value)
        )
    if "enum" in out and "type" not in out:
        out["type"] = "string"
    return out


# --- OpenAI strict mode ----------------------------------------------------------------------

NULL: JsonSchema = {"type": "null"}
_ENUM_TYPES = ((bool, "boolean"), (int, "integer"), (float, "number"), (str, "string"))


def strict_schema(node: JsonSchema) -> JsonSchema:
    """`input_schema` in the subset OpenAI's strict mode accepts (Structured Outputs,
    "Supported schemas"): only the keys of `OPENAI_STRICT_KEYS`, no `default`, an `enum`
    with its `type`, and every object closed (`additionalProperties: false`) with every
    property required.

    A model in strict mode sends every property, so an optional one must say what its
    "not given" is. A field whose default is null (`offset`, `range`, `occurrence`...)
    becomes nullable: null is "not given", and the daemon takes null for it as it is,
    the same as the sentinels of docs/tools.md (`range: ""`, `occurrence: ""`). A field
    whose default is a value (`hashes: false`, `max_lines: 2000`) keeps its plain type,
    the default said in its description: the daemon refuses null there, and a model can
    always state the value. Nothing is lost: the daemon still checks what was dropped
    (`minLength`)."""
    out: JsonSchema = {}
    redone = ("properties", "required", "additionalProperties") if "properties" in node else ()
    for key, value in node.items():
        if key not in OPENAI_STRICT_KEYS or key in redone:
            continue
        if key == "items":
            value = strict_schema(value)
        elif key == "anyOf":
            value = [strict_schema(option) for option in value]
        out[key] = value
    if "enum" in out and "type" not in out:
        out = {"type": _enum_type(out["enum"]), **out}
    if "properties" in node:
        out.update(_strict_properties(node))
    return out


def _strict_properties(node: JsonSchema) -> JsonSchema:
    """`properties` (each in strict form), all of them `required`, no others allowed."""
    required = set(node.get("required", ()))
    properties = {
        name: strict_schema(sub) if name in required else _strict_optional(sub)
        for name, sub in node["properties"].items()
    }
    return {"properties": properties, "required": list(properties), "additionalProperties": False}


def _strict_optional(node: JsonSchema) -> JsonSchema:
    """An optional property as a strict model must send it (see `strict_schema`)."""
    strict = strict_schema(node)
    default = node.get("default")
    if default is None:
        return _nullable(strict)
    said = f"Default: {json.dumps(default)}."
    known = strict.get("description")
    return {**strict, "description": f"{known} {said}" if known else said}


def _nullable(node: JsonSchema) -> JsonSchema:
    """`node` that also admits null: `anyOf [node, null]`, its description kept outside."""
    if _admits_null(node):
        return node
    if "anyOf" in node:
        return {**node, "anyOf": [*node["anyOf"], NULL]}
    rest = {k: v for k, v in node.items() if k != "description"}
    said = {"description": node["description"]} if "description" in node else {}
    return {"anyOf": [rest, NULL], **said}


def _admits_null(node: JsonSchema) -> bool:
    kind = node.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    return any(_admits_null(option) for option in node.get("anyOf", ()))


def _enum_type(values: list[Any]) -> str | list[str]:
    """The JSON type(s) of an enum's values (bool before int: a bool is an int here)."""
    kinds = []
    for value in values:
        kind = next((name for t, name in _ENUM_TYPES if isinstance(value, t)), "null")
        if kind not in kinds:
            kinds.append(kind)
    return kinds[0] if len(kinds) == 1 else kinds


# --- export formats --------------------------------------------------------------------------


def _mcp_entry(tool: ToolDef) -> dict[str, Any]:
    """One tools/list entry, `outputSchema` included: the export is what the server lists
    (`client.mcp.server.build_server`), so a client configured from it validates the
    structured content the same way."""
    entry: dict[str, Any] = {
        "name": tool.name,
        "description": tool.description,
        "inputSchema": tool.input_schema,
    }
    if tool.output_schema is not None:
        entry["outputSchema"] = tool.output_schema
    entry["annotations"] = tool.annotations
    return entry


def _openai_entry(tool: ToolDef, fmt: str, strict: bool) -> dict[str, Any]:
    """A chat completions tool (`function` nested), or the Responses API's flat one.

    The Responses API's `FunctionTool` requires `strict` (the openai package's
    `FunctionToolParam`), so that shape always says it; chat completions' entry says
    it only when strict, as it did before strict mode was offered."""
    parameters = strict_schema(tool.input_schema) if strict else tool.input_schema
    function = {"name": tool.name, "description": tool.description, "parameters": parameters}
    if fmt == "openai-responses":
        return {"type": "function", **function, "strict": strict}
    return {"type": "function", "function": {**function, "strict": True} if strict else function}


def export(fmt: str, tools: list[ToolDef] | None = None, *, strict: bool = False) -> Any:
    """The definitions as `fmt` expects them (a JSON-ready value); `strict` (only for
    `STRICT_FORMATS`): in OpenAI's strict mode, schemas made by `strict_schema`."""
    if fmt not in EXPORT_FORMATS:
        raise ValueError(f"unknown format {fmt!r}; one of {', '.join(EXPORT_FORMATS)}")
    if strict and fmt not in STRICT_FORMATS:
        raise ValueError(f"strict mode is OpenAI's: {' and '.join(STRICT_FORMATS)}, not {fmt}")
    tools = tool_definitions() if tools is None else tools
    if fmt == "mcp":  # entries of a tools/list result, as `editjournal mcp` lists them
        return [_mcp_entry(t) for t in tools]
    if fmt in STRICT_FORMATS:  # chat completions `tools`, or the Responses API's
        return [_openai_entry(t, fmt, strict) for t in tools]
    if fmt == "anthropic":  # messages API `tools`
        return [
            {"name": t.name, "description": t.description, "input_schema": t.input_schema}
            for t in tools
        ]
    # gemini: one entry of generateContent `tools`
    declarations = [
        {"name": t.name, "description": t.description, "parameters": gemini_schema(t.input_schema)}
        for t in tools
    ]
    return {"functionDeclarations": declarations}
