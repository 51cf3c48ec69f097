"""The longer help texts: the methods `call` can send, the operations `edit` takes.

Both are derived from the schemas (`TOOL_PARAMS`, the `Operation` union) and
the agents' guidance, so the help cannot drift from what the daemon accepts.
click rewraps epilog paragraphs; `verbatim` marks each one (a `\\b` line) so
tables and examples keep their shape.
"""

from __future__ import annotations

import re
import typing

import msgspec

from editjournal.client.tools.guidance import DESCRIPTIONS
from editjournal.schemas.tools import TOOL_PARAMS, Operation

#: One-line descriptions of the daemon's own methods (the tools' come from guidance).
_METHODS = {
    "ping": "Is the daemon there? Its pid and version.",
    "status": "What the daemon knows: events, files, agents, journal, watcher.",
    "log": "The journal, oldest first (filters: path, agent, kind, after_seq).",
    "read_many_files": "Read several files at once, each journaled as a read.",
    "agent_status": "Every file an agent has seen, and which changed since.",
}


SUMMARY_CHARS = 64


def verbatim(text: str) -> str:
    """Keep every paragraph of `text` as written in click's help output."""
    return "\n\n".join("\b\n" + part for part in text.strip("\n").split("\n\n"))


def first_sentence(text: str) -> str:
    match = re.match(r"(.+?\.)(\s|$)", " ".join(text.split()))
    return match.group(1) if match else text.strip()


def method_summary(method: str) -> str:
    """The guidance's first sentence (up to its first comma when long), else ours."""
    if method not in DESCRIPTIONS:
        return _METHODS.get(method, "")
    sentence = first_sentence(DESCRIPTIONS[method])
    if len(sentence) <= SUMMARY_CHARS:
        return sentence
    return sentence.split(",")[0].rstrip(".") + "."  # one full stop, cut or not


def methods_text() -> str:
    """Every method with its one-line description and its params."""
    width = max(map(len, TOOL_PARAMS))
    rows = []
    for method, params in TOOL_PARAMS.items():
        fields = [f.name for f in msgspec.structs.fields(params)]
        rows.append(f"  {method:<{width}}  {method_summary(method)}".rstrip())
        rows.append(f"  {'':<{width}}  params: {', '.join(fields) or '(none)'}")
    return "Methods:\n" + "\n".join(rows)


def operations_text() -> str:
    """The six operations and their fields (optional ones in brackets)."""
    ops = typing.get_args(Operation)
    width = max(len(op.__struct_config__.tag) for op in ops)  # type: ignore[arg-type]
    rows = []
    for op in ops:
        fields = sorted(msgspec.structs.fields(op), key=lambda f: not f.required)
        names = [f.name if f.required else f"[{f.name}]" for f in fields]
        rows.append(f"  {op.__struct_config__.tag:<{width}}  {', '.join(names)}")
    return "Operations (op names one):\n" + "\n".join(rows)


CALL_EPILOG = verbatim(
    f"""{methods_text()}

Params are a JSON object on stdin (none: {{}}); the reply is the response
envelope {{id, ok, result, error, warnings, seq}} as JSON on stdout. Exit 1
when ok is false.

Examples:
  echo '{{"path": "README.md", "hashes": true}}' | editjournal call read_file
  editjournal call status < /dev/null"""
)

EDIT_EPILOG = verbatim(
    f"""Operations are JSON, from stdin or --ops-file: a list, or
{{"operations": [...]}}. Anchors come from `editjournal read FILE --hashes`,
whose rows read LINE#ANCHOR|text; give "a1b2c3" or the whole "12#a1b2c3".

{operations_text()}

hash / start_hash / end_hash: anchors; content: the new text, lines
separated by \\n; occurrence (1-indexed) and line pick one of several lines
with the same anchor. All operations of one call apply atomically to the
version you read; one bad anchor rejects them all and changes nothing.

Example:
  editjournal read app.py --hashes
  echo '[{{"op": "replace_line", "hash": "a1b2c3", "content": "    return x + 1"}},
         {{"op": "delete_range", "start_hash": "0f1e2d", "end_hash": "9a8b7c"}}]' \\
    | editjournal edit app.py"""
)
