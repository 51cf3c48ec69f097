"""How A writes one of its hunks from memory with each tool, as an agent would call it.

Every request is built from A's view (`memory.Memory`: its read plus its own
earlier edits, never B's change): `edit_file`'s old_string/new_string with two
lines of context each side (widened until unique in the view), `edit`'s
anchors as A holds them (reading the window first for a hunk beyond its first
read), `safe_patch`'s `git diff -U3` hunk locked by the latest sha A was given
with `rebase: true`, `apply_patch`'s envelope made by Codex's own generator
with the 3 lines of context Codex's instructions ask for (`envelopes.focused`;
`apply_patch_whole`, not played by default, sends the generator's whole-file
context as it is).
`prepare_apply` is left out: a prepared hunk is planned against the file as it
is when prepared, so after B wrote it is no longer a stale edit from memory.
"""

from __future__ import annotations

from dataclasses import dataclass

from bench.replay import envelopes, tools
from bench.replay.cases import Hunk
from bench.replay.memory import Memory
from editjournal.client import Client, RequestError
from editjournal.schemas.tools import AnchoredLine

TOOLS = ("edit", "safe_patch", "edit_file", "apply_patch")
EVERY = (*TOOLS, "apply_patch_whole")


@dataclass(frozen=True)
class Reply:
    """What a landed call showed A: the anchor rows of the lines written, the new sha."""

    shown: list[AnchoredLine]
    sha: str | None = None


def write(tool: str, client: Client, path: str, memory: Memory, h: Hunk) -> Reply:
    """A's call for hunk `h` (parent coordinates) with `tool`; raises RequestError when
    refused. A safety finding is reviewed and insisted on, as an agent may."""
    if tool == "edit" and memory.missing(memory.placed(h)):
        memory.read_window(client, path, memory.placed(h))
    try:
        return _write(tool, client, path, memory, h, skip=False)
    except RequestError as e:
        if e.code != "safety_check_failed":
            raise
        return _write(tool, client, path, memory, h, skip=True)


def _write(tool: str, client: Client, path: str, memory: Memory, h: Hunk, skip: bool) -> Reply:
    v = memory.placed(h)
    if tool == "edit":
        ops = tools.anchored_ops(v, memory.anchor_rows())
        return Reply(client.edit(path, ops, skip_safety_check=skip).changed_lines)
    if tool == "safe_patch":
        diff = tools.unified(memory.lines, v, path)
        got = client.safe_patch(
            path, diff, memory.sha, rebase=True, include_content=False, skip_safety_check=skip
        )
        return Reply(got.changed_lines, got.latest_file_state.sha256)
    if tool == "edit_file":
        old, new = tools.replacement_in(memory.lines, v)
        return Reply(client.edit_file(path, old, new, skip_safety_check=skip).changed_lines)
    if tool in ("apply_patch", "apply_patch_whole"):
        make = envelopes.focused if tool == "apply_patch" else envelopes.whole
        client.apply_patch(make(path, memory.text(), memory.after(h)), skip_safety_check=skip)
        return Reply([])
    raise ValueError(tool)
