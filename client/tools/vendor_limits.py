"""What each harness's API accepts in a tool definition, as data, with where it is written.

`editjournal tools --format F` must print definitions that F's API takes as they
are: a description over OpenAI's 1,024 characters fails the whole request, not
just that tool. The limits live here, one entry per format, each with its source
in a comment; `tooldefs` fits the descriptions to the shortest limit and
`tests/unit/test_vendor_limits.py` checks every exported tool against its own
format's entry. OpenAI's strict mode (`tools --format openai --strict`) takes a
smaller subset with size limits of its own (`OPENAI_STRICT_KEYS`, `OPENAI_STRICT_SIZE`),
checked by `tests/unit/test_openai_strict.py`. Pure data: nothing here does I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class VendorLimits:
    """What one API accepts in a tool definition."""

    name_pattern: str  # the whole tool name must match (re.fullmatch)
    description_max: int | None  # characters; None: the vendor publishes no limit
    # the JSON Schema keys a parameters schema may use anywhere; None: any JSON Schema
    schema_keys: frozenset[str] | None
    # keys refused at the schema's root (which must be `type: object` for every vendor)
    root_forbidden: frozenset[str]
    property_name_pattern: str | None = None  # every property name must match; None: any


# The keys Gemini's FunctionDeclaration.parameters accepts: its Schema is "a select subset
# of an OpenAPI 3.0 schema object" (Gemini API reference, Schema).
GEMINI_KEYS = frozenset(
    {
        "type", "format", "title", "description", "nullable", "enum", "maxItems", "minItems",
        "properties", "required", "minProperties", "maxProperties", "minLength", "maxLength",
        "pattern", "example", "anyOf", "propertyOrdering", "default", "items", "minimum",
        "maximum",
    }
)  # fmt: skip

LIMITS: dict[str, VendorLimits] = {
    # MCP 2025-11-25, server/tools "Tool names": 1-128 characters of A-Z a-z 0-9 _ - .
    # (a SHOULD); `description` and `inputSchema` (a JSON Schema object, 2020-12 by
    # default) have no length or keyword limit in the spec. Clients impose their own:
    # Claude Code cuts each tool description and the server instructions at 2,048
    # characters (code.claude.com/docs/en/mcp, "For MCP server authors"), and clients
    # that forward MCP tools to the OpenAI API inherit its 1,024 below.
    "mcp": VendorLimits(
        name_pattern=r"[A-Za-z0-9_.-]{1,128}",
        description_max=None,
        schema_keys=None,
        root_forbidden=frozenset(),
    ),
    # OpenAI chat completions `tools[].function` (API reference, FunctionObject): name
    # "a-z, A-Z, 0-9, or contain underscores and dashes, with a maximum length of 64";
    # parameters "described as a JSON Schema object". The description limit is enforced,
    # not printed in the reference: 400 string_above_max_length "Invalid
    # 'tools[0].function.description': string too long. Expected a string with maximum
    # length 1024" (as reported in getsentry/sentry-mcp#106, OpenHands#4838); the root
    # rule too: 400 invalid_function_parameters "schema must have type 'object' and not
    # have 'oneOf'/'anyOf'/'allOf'/'enum'/'not' at the top level". Strict mode (a smaller
    # keyword subset, every field required) is `STRICT_LIMITS` below, with `--strict`.
    "openai": VendorLimits(
        name_pattern=r"[a-zA-Z0-9_-]{1,64}",
        description_max=1024,
        schema_keys=None,
        root_forbidden=frozenset({"oneOf", "anyOf", "allOf", "enum", "not"}),
    ),
    # Anthropic Messages API `tools[]` (docs: tool use, "Define tools"): name "must match
    # the regex ^[a-zA-Z0-9_-]{1,64}$"; description: no published limit; input_schema a
    # JSON Schema object. Enforced, not printed: 400 "input_schema does not support oneOf,
    # allOf, or anyOf at the top level" (anthropics/claude-code#5319).
    "anthropic": VendorLimits(
        name_pattern=r"[a-zA-Z0-9_-]{1,64}",
        description_max=None,
        schema_keys=None,
        root_forbidden=frozenset({"oneOf", "anyOf", "allOf"}),
    ),
    # Gemini FunctionDeclaration (google-genai SDK reference, FunctionDeclaration.name):
    # "Must start with a letter or an underscore. Must be a-z, A-Z, 0-9, or contain
    # underscores, dots, colons and dashes, with a maximum length of 64" (the older
    # google.ai.generativelanguage reference says 63: the stricter is kept); description:
    # no published limit; parameters: a Schema of the keys above. Vertex AI's
    # FunctionDeclaration.parameters: property names "must start with a letter or an
    # underscore and must only contain chars a-z, A-Z, 0-9, or underscores with a maximum
    # length of 64".
    "gemini": VendorLimits(
        name_pattern=r"[A-Za-z_][A-Za-z0-9_.:-]{0,62}",
        description_max=None,
        schema_keys=GEMINI_KEYS,
        root_forbidden=frozenset(),
        property_name_pattern=r"[A-Za-z_][A-Za-z0-9_]{0,63}",
    ),
}

# One short description serves every format, so it is held to the strictest limit.
DESCRIPTION_MAX = min(
    limits.description_max for limits in LIMITS.values() if limits.description_max is not None
)

# The Responses API's flat `FunctionTool` names its function as chat completions does
# (the openai package's `FunctionToolParam`); its reference prints no description limit,
# and the same account's chat completions refuse over 1,024: the stricter is kept.
EXPORT_LIMITS: dict[str, VendorLimits] = {**LIMITS, "openai-responses": LIMITS["openai"]}

# OpenAI strict mode (`strict: true`), Structured Outputs guide, "Supported schemas"
# (developers.openai.com/api/docs/guides/structured-outputs#supported-schemas): the types
# string, number, boolean, integer, object, array, enum, anyOf (never at the root); string
# `pattern`, `format`; number `multipleOf`, `maximum`, `exclusiveMaximum`, `minimum`,
# `exclusiveMinimum`; array `minItems`, `maxItems`; definitions (`$defs`, `$ref`) and
# descriptions. "All fields must be required" (an optional one is a union with null),
# "additionalProperties: false must always be set in objects"; not supported: `allOf`,
# `not`, `dependentRequired`, `dependentSchemas`, `if`/`then`/`else`, and for fine-tuned
# models `minLength`/`maxLength` and more. `default` is in no list: it is left out.
OPENAI_STRICT_KEYS = frozenset(
    {
        "type", "description", "properties", "required", "additionalProperties", "items",
        "anyOf", "enum", "const", "pattern", "format", "multipleOf", "maximum",
        "exclusiveMaximum", "minimum", "exclusiveMinimum", "minItems", "maxItems", "$defs",
        "$ref",
    }
)  # fmt: skip

STRICT_LIMITS: dict[str, VendorLimits] = {
    fmt: replace(EXPORT_LIMITS[fmt], schema_keys=OPENAI_STRICT_KEYS)
    for fmt in ("openai", "openai-responses")
}


@dataclass(frozen=True)
class StrictSize:
    """The size limits of one strict schema (the same guide, "Objects have limitations on
    nesting depth and size")."""

    properties: int = 5000  # object properties in all
    depth: int = 10  # levels of nested objects
    # characters of every property name, definition name, enum value and const value
    string_chars: int = 120_000
    enum_values: int = 1000  # across all enums
    # one string enum of more than this many values ...
    long_enum: int = 250
    long_enum_chars: int = 15_000  # ... may have at most this many characters in all


OPENAI_STRICT_SIZE = StrictSize()
