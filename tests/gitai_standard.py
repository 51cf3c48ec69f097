"""The Git AI Standard v3.0.0's grammar as a checker, written from the standard's text
(git-ai-project/git-ai, specs/git_ai_standard_v3.0.0.md, sections 1.2.2-1.2.4 and
E-001/E-002), independently of `daemon.audit.authorlog`: the tests hold our notes to
it, because the reference `git-ai` CLI cannot be installed here (it is on no registry
this machine reaches: not PyPI, npm or Debian; its installer downloads a release
binary). Each MUST the standard states for a note's text is one check; `problems`
returns every breach found, so a test failure names them all.

It also encodes what the reference implementation's reader needs beyond the text of
the standard: `agent_id.model` is a required string there (serde, no default).
"""

from __future__ import annotations

import json
import re
from typing import Any

SCHEMA = "authorship/3.0.0"
LEGACY = re.compile(r"^[0-9a-f]{16}$|^[0-9a-f]{7}$")
SESSION = re.compile(r"^s_[0-9a-f]{14}::t_[0-9a-f]{14}$")
HUMAN = re.compile(r"^h_[0-9a-f]{14}$")
RANGE = re.compile(r"^[1-9][0-9]*(-[1-9][0-9]*)?$")
PROMPT_REQUIRED = {
    "agent_id": dict,
    "total_additions": int,
    "total_deletions": int,
    "accepted_lines": int,
    "overriden_lines": int,  # sic, E-001
}


def problems(note: str) -> list[str]:
    """Every way `note` breaks the standard's grammar (empty: it conforms)."""
    rows = note.split("\n")
    if "---" not in rows:
        return ["no divider line `---`"]
    at = rows.index("---")
    found: list[str] = []
    keys = _attestations(rows[:at], found)
    try:
        metadata = json.loads("\n".join(rows[at + 1 :]))
    except ValueError as e:
        return [*found, f"metadata is not JSON: {e}"]
    if not isinstance(metadata, dict):
        return [*found, "metadata is not a JSON object"]
    found += _metadata(metadata)
    for key in keys:
        found += _resolves(key, metadata)
    return found


def _attestations(rows: list[str], found: list[str]) -> set[str]:
    keys: set[str] = set()
    path: str | None = None
    entries = 0
    for row in rows:
        if row.startswith("  "):
            if path is None:
                found.append(f"entry before any file: {row!r}")
            key, _, ranges = row[2:].partition(" ")
            if row[2:3] == " ":
                found.append(f"entry indented by more than two spaces: {row!r}")
            if not (LEGACY.match(key) or SESSION.match(key) or HUMAN.match(key)):
                found.append(f"key of no format the standard names: {key!r}")
            found += _ranges(ranges)
            keys.add(key)
            entries += 1
            continue
        if path is not None and entries == 0:
            found.append(f"file without attestations: {path!r}")
        if not row or row[0] in " \t":
            found.append(f"file line with leading whitespace or empty: {row!r}")
        bare = row[1:-1] if row.startswith('"') and row.endswith('"') else row
        if any(c in bare for c in " \t") and bare == row:
            found.append(f"path with a space or tab not quoted: {row!r}")
        path, entries = row, 0
    if path is not None and entries == 0:
        found.append(f"file without attestations: {path!r}")
    return keys


def _ranges(text: str) -> list[str]:
    if " " in text or not text:
        return [f"line ranges empty or with spaces: {text!r}"]
    last = 0
    for part in text.split(","):
        if not RANGE.match(part):
            return [f"not a line range: {part!r}"]
        start, _, end = part.partition("-")
        first, stop = int(start), int(end or start)
        if stop < first or first <= last:
            return [f"ranges not ascending: {text!r}"]
        last = stop
    return []


def _metadata(metadata: dict[str, Any]) -> list[str]:
    found = []
    if metadata.get("schema_version") != SCHEMA:
        found.append(f"schema_version is {metadata.get('schema_version')!r}")
    if not isinstance(metadata.get("base_commit_sha"), str):
        found.append("base_commit_sha missing or not a string")
    if not isinstance(metadata.get("prompts"), dict):
        found.append("prompts missing or not an object")
        return found
    for key, record in metadata["prompts"].items():
        found += [f"prompts.{key}: {p}" for p in _prompt(record)]
    for name in ("sessions", "humans"):
        if name in metadata and not isinstance(metadata[name], dict):
            found.append(f"{name} is not an object")
    return found


def _prompt(record: Any) -> list[str]:
    if not isinstance(record, dict):
        return ["not an object"]
    found = [
        f"{field} missing or not {kind.__name__}"
        for field, kind in PROMPT_REQUIRED.items()
        if not isinstance(record.get(field), kind) or isinstance(record.get(field), bool)
    ]
    if "messages" in record:
        found.append("carries `messages` (removed: E-002)")
    if "messages_url" in record and not isinstance(record["messages_url"], str):
        found.append("messages_url is not a string")
    agent = record.get("agent_id")
    if isinstance(agent, dict):
        found += [
            f"agent_id.{f} missing or not a string"
            for f in ("tool", "id", "model")
            if not isinstance(agent.get(f), str)
        ]
    return found


def _resolves(key: str, metadata: dict[str, Any]) -> list[str]:
    if key.startswith("s_"):
        where, name = "sessions", key.split("::")[0]
    elif key.startswith("h_"):
        where, name = "humans", key
    else:
        where, name = "prompts", key
    if name not in (metadata.get(where) or {}):
        return [f"key {key!r} has no record in {where}"]
    return []
