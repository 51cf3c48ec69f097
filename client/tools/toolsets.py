"""Which tools a session gets (profiles, or a list), and what they cost in tokens.

Every tool definition is sent with every request a harness makes, and the long
guidance with it as system-prompt text: all 28 tools cost about as much as a
medium source file, on every turn. An agent that edits one way needs a few of
them; a profile names those few (`editjournal mcp --profile anchored`,
`editjournal tools --profile patch`), `--tools a,b,c` any set. `cost` measures
a set as a harness would send it. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import msgspec

from editjournal.client.tools.guidance import instructions
from editjournal.client.tools.tooldefs import agent_methods, export, tool_definitions

# A profile lists the tools it wants; one that `TOOL_PARAMS` does not have (yet) is
# skipped, not an error: `apply_patch` joins `minimal` the day the daemon has it.
# `all` (empty) is every agent method.
PROFILES: dict[str, tuple[str, ...]] = {
    "minimal": ("read_file", "edit_file", "agent_status", "apply_patch"),
    "anchored": ("read_file", "edit", "agent_status"),  # read with hashes: true, then edit
    "patch": ("read_file", "safe_patch", "agent_status"),
    "all": (),
}
DEFAULT_PROFILE = "all"

# No tokenizer is a dependency: tiktoken installs from PyPI but downloads its encodings
# on first use, which an offline machine cannot. So a token is estimated as 4
# characters, the usual rule of thumb; against the o200k_base encoding it is within 10%
# either way on these definitions and instructions.
CHARS_PER_TOKEN = 4
TOKENIZER = "characters / 4"


def select_tools(profile: str = DEFAULT_PROFILE, names: Sequence[str] = ()) -> list[str]:
    """The methods of `names` when given, else of `profile`, in the daemon's order.

    Raises ValueError for an unknown profile or tool name, naming the known ones."""
    known = agent_methods()
    if names:
        unknown = [n for n in names if n not in known]
        if unknown:
            raise ValueError(f"unknown tool {', '.join(unknown)}; the tools are {', '.join(known)}")
        return [m for m in known if m in names]
    if profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r}; one of {', '.join(PROFILES)}")
    wanted = PROFILES[profile]
    return [m for m in known if m in wanted] if wanted else known


def estimate_tokens(chars: int) -> int:
    """Tokens in `chars` characters of text (rounded up)."""
    return -(-chars // CHARS_PER_TOKEN)


@dataclass(frozen=True)
class Cost:
    """What one set of tools costs a harness: its definitions (sent with every request,
    as compact JSON in `fmt`'s shape) and its long guidance (system-prompt text)."""

    name: str
    tools: int
    definitions_chars: int
    instructions_chars: int

    @property
    def definitions_tokens(self) -> int:
        return estimate_tokens(self.definitions_chars)

    @property
    def instructions_tokens(self) -> int:
        return estimate_tokens(self.instructions_chars)


def cost(name: str, fmt: str, methods: list[str]) -> Cost:
    # an outputSchema is for the client to check replies with: no model is sent it
    shown = [replace(t, output_schema=None) for t in tool_definitions(methods)]
    definitions = msgspec.json.encode(export(fmt, shown)).decode()
    return Cost(name, len(methods), len(definitions), len(instructions(methods)))


def costs(fmt: str, chosen: list[str] | None = None) -> list[Cost]:
    """Every profile's cost in `fmt`, and `chosen`'s (a --tools set) last when given."""
    rows = [cost(profile, fmt, select_tools(profile)) for profile in PROFILES]
    return rows if chosen is None else [*rows, cost("--tools", fmt, chosen)]
