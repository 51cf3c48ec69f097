"""The Git AI Standard v3.0.0 authorship log as text, and its lines carried across a rewrite.

A log attached to one commit under `refs/notes/ai` (git-ai-project/git-ai,
`specs/git_ai_standard_v3.0.0.md`): an attestation section (each file's path at the
start of a line, then per author key two spaces, the key, a space and ascending line
ranges `1-4,9,12-14` in the COMMITTED version of the file), a line `---`, and a JSON
object (`schema_version` "authorship/3.0.0", `base_commit_sha`, `prompts`, optionally
`sessions`, `humans`, ...). editjournal writes the legacy key form (16 hex digits,
`SHA256("<tool>:<id>")[:16]`, resolved in `prompts`) because only prompt records carry
the additions/deletions/accepted/overridden counts; a note another tool wrote (session
`s_...::t_...` or human `h_...` keys) parses, carries and renders back unchanged:
the metadata is kept as the JSON object it was, never narrowed to what we write.

A session's prompts, when the journal kept them, go in its prompt record's
`messages_url` (the standard's erratum E-002 removed the `messages` array from new
notes and left that field for the conversation): a `data:application/json` URL (RFC
2397) whose content is the array in the standard's message-object form, `[{"type":
"user", "text": ..., "timestamp": ISO 8601}]`, the newest `MAX_PROMPTS` prompts, each
clipped to `MAX_PROMPT_TEXT` characters. `prompts_in` reads it back.

Pure: text in, text out; no git, no journal. `render(parse(t))` keeps every
attestation and every metadata field of `t`.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, NamedTuple
from urllib.parse import quote, unquote

from editjournal.schemas.errors import EditJournalError

SCHEMA_VERSION = "authorship/3.0.0"
NOTES_REF = "refs/notes/ai"
DIVIDER = "---"
UNKNOWN_MODEL = "unknown"  # git-ai's own word when a tool does not say (its parser needs one)

# the journal's harness prefixes (`editjournal hook HARNESS` names agents
# `HARNESS:<session>`) as the tools the standard names in `agent_id.tool`
TOOLS = {"claude-code": "claude", "gemini-cli": "gemini", "codex": "codex"}
OWN_TOOL = "editjournal"  # an agent that named itself (a Client, MCP): no harness of its own
MESSAGES_URL_HEAD = "data:application/json;charset=utf-8,"
MAX_PROMPTS = 50  # a session's newest prompts in one note
MAX_PROMPT_TEXT = 8000  # characters of one prompt's text in a note (a prompt may be 1 MiB)
CLIPPED = " [clipped]"


class NoteError(EditJournalError):
    """A note that is not an authorship log this code can read: never carried, never
    overwritten by a carry (the caller says which commit's note it was)."""


@dataclass
class AuthorshipLog:
    """One commit's log: per file (the repository's path) per key the 1-based lines, and
    the metadata object as JSON holds it."""

    files: dict[str, dict[str, list[int]]] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def attested(self) -> int:
        return sum(len(lines) for keys in self.files.values() for lines in keys.values())


def session_key(tool: str, session: str) -> str:
    """The standard's legacy session hash: `SHA256("<tool>:<conversation_id>")[0..16]`."""
    return hashlib.sha256(f"{tool}:{session}".encode()).hexdigest()[:16]


def agent_id(agent: str) -> dict[str, str]:
    """The standard's `agent_id` of a journal agent: a hook session `claude-code:<id>` is
    tool "claude", id `<id>`; any other name is editjournal's own tool with that name.
    The journal records no model: "unknown", as git-ai writes it (its reader requires
    the field)."""
    harness, sep, session = agent.partition(":")
    if sep and harness in TOOLS and session:
        return {"tool": TOOLS[harness], "id": session, "model": UNKNOWN_MODEL}
    return {"tool": OWN_TOOL, "id": agent, "model": UNKNOWN_MODEL}


def key_of(agent: str) -> str:
    found = agent_id(agent)
    return session_key(found["tool"], found["id"])


# --- a session's prompts ------------------------------------------------------------------------


class Prompt(NamedTuple):
    """One prompt the journal kept: when (ms since the epoch) and its text."""

    ts: int
    text: str


def messages_url(prompts: Sequence[Prompt]) -> str:
    """The prompts as the record's `messages_url`: the standard's message objects, in a
    `data:` URL (percent-encoded UTF-8 JSON; nothing but the URL's own characters)."""
    messages = [
        {"type": "user", "text": _clipped(p.text), "timestamp": _iso(p.ts)}
        for p in prompts[-MAX_PROMPTS:]
    ]
    text = json.dumps(messages, ensure_ascii=False, separators=(",", ":"))
    return MESSAGES_URL_HEAD + quote(text, safe="")


def prompts_in(record: Mapping[str, Any]) -> list[dict[str, Any]] | None:
    """The messages a prompt record's `messages_url` holds, when it is one of ours (a
    `data:` URL); None for none, or a URL pointing elsewhere."""
    url = record.get("messages_url")
    if not isinstance(url, str) or not url.startswith(MESSAGES_URL_HEAD):
        return None
    found = json.loads(unquote(url[len(MESSAGES_URL_HEAD) :]))
    return found if isinstance(found, list) else None


def _clipped(text: str) -> str:
    return text if len(text) <= MAX_PROMPT_TEXT else text[:MAX_PROMPT_TEXT] + CLIPPED


def _iso(ms: int) -> str:
    moment = datetime.fromtimestamp(ms / 1000, timezone.utc)
    return moment.isoformat(timespec="milliseconds").removesuffix("+00:00") + "Z"


# --- line ranges ----------------------------------------------------------------------------


def format_ranges(lines: Iterable[int]) -> str:
    """`1-4,9,12-14`: ascending, consecutive lines as one range, no spaces."""
    parts: list[str] = []
    ordered = sorted(set(lines))
    i = 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and ordered[j + 1] == ordered[j] + 1:
            j += 1
        parts.append(str(ordered[i]) if i == j else f"{ordered[i]}-{ordered[j]}")
        i = j + 1
    return ",".join(parts)


def parse_ranges(text: str) -> list[int]:
    lines: list[int] = []
    for part in text.split(","):
        start, _, end = part.partition("-")
        if not start.isdigit() or (end and not end.isdigit()):
            raise NoteError(f"not a line range: {part!r}")
        first, last = int(start), int(end or start)
        if first < 1 or last < first:
            raise NoteError(f"not a line range: {part!r}")
        lines.extend(range(first, last + 1))
    return lines


# --- the text ---------------------------------------------------------------------------------


def quoted(path: str) -> str:
    """A path as its line names it: in double quotes when it holds a space or a tab."""
    return f'"{path}"' if any(c in path for c in " \t") else path


def writable(path: str) -> bool:
    """Whether a note can name `path` at all: a newline would end its line, and the
    standard has no escape for a double quote inside quotes."""
    return "\n" not in path and "\r" not in path and '"' not in path


def render(log: AuthorshipLog) -> str:
    rows: list[str] = []
    for path, keys in log.files.items():
        entries = [(key, lines) for key, lines in keys.items() if lines]
        if not entries:
            continue  # "files with no attestations MUST NOT be included"
        rows.append(quoted(path))
        rows += [f"  {key} {format_ranges(lines)}" for key, lines in entries]
    rows.append(DIVIDER)
    return "\n".join(rows) + "\n" + json.dumps(log.metadata, indent=2) + "\n"


def parse(text: str) -> AuthorshipLog:
    """A note's text as a log; `NoteError` for anything else (no divider, a malformed
    entry, metadata that is not a JSON object, another schema version)."""
    rows = text.splitlines()
    if DIVIDER not in rows:
        raise NoteError("no `---` line divides attestations from metadata")
    at = rows.index(DIVIDER)
    log = AuthorshipLog(files=_attestations(rows[:at]))
    try:
        metadata = json.loads("\n".join(rows[at + 1 :]))
    except ValueError as e:
        raise NoteError(f"the metadata is not JSON: {e}") from e
    if not isinstance(metadata, dict):
        raise NoteError("the metadata is not a JSON object")
    if metadata.get("schema_version") != SCHEMA_VERSION:
        raise NoteError(
            f"schema_version is {metadata.get('schema_version')!r}, not {SCHEMA_VERSION}"
        )
    log.metadata = metadata
    return log


def _attestations(rows: Sequence[str]) -> dict[str, dict[str, list[int]]]:
    files: dict[str, dict[str, list[int]]] = {}
    current: dict[str, list[int]] | None = None
    for row in (r.rstrip() for r in rows):
        if not row:
            continue
        if row.startswith("  "):
            key, sep, ranges = row[2:].partition(" ")
            if current is None or not sep or not key:
                raise NoteError(f"an attestation entry without a file, or malformed: {row!r}")
            current.setdefault(key, []).extend(parse_ranges(ranges))
            continue
        path = row[1:-1] if len(row) > 1 and row[0] == row[-1] == '"' else row
        current = files.setdefault(path, {})
    return {path: keys for path, keys in files.items() if keys}


# --- across a rewrite ---------------------------------------------------------------------------


def line_map(old: Sequence[str], new: Sequence[str]) -> dict[int, int]:
    """1-based old line -> new line, for the lines a diff finds unchanged."""
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    found: dict[int, int] = {}
    for a, b, size in matcher.get_matching_blocks():
        found.update({a + k + 1: b + k + 1 for k in range(size)})
    return found


def carried(
    log: AuthorshipLog, maps: Mapping[str, dict[int, int] | None], new_sha: str
) -> AuthorshipLog:
    """`log` moved onto a rewritten commit: each file's lines through its `maps` entry
    (old line -> new line; None: the file is gone from the new commit), lines that
    changed dropped ("content-based attribution"); every metadata record kept, with
    `base_commit_sha` the new commit."""
    files: dict[str, dict[str, list[int]]] = {}
    for path, keys in log.files.items():
        moved = maps.get(path)
        if moved is None:
            continue
        files[path] = {
            k: sorted(moved[n] for n in lines if n in moved) for k, lines in keys.items()
        }
    return recounted(AuthorshipLog(files, {**log.metadata, "base_commit_sha": new_sha}))


def merged(first: AuthorshipLog, second: AuthorshipLog, sha: str) -> AuthorshipLog:
    """Both logs as one for commit `sha`: a line both attest keeps `first`'s key; every
    record of both is kept (`first`'s where both have one key)."""
    files: dict[str, dict[str, list[int]]] = {}
    for path in dict.fromkeys([*first.files, *second.files]):
        mine = first.files.get(path, {})
        taken = {n for lines in mine.values() for n in lines}
        keys = {k: list(v) for k, v in mine.items()}
        for key, lines in second.files.get(path, {}).items():
            extra = [n for n in lines if n not in taken]
            if extra:
                keys[key] = sorted({*keys.get(key, []), *extra})
        files[path] = keys
    metadata = {**second.metadata, **first.metadata, "base_commit_sha": sha}
    for name in ("prompts", "sessions", "humans"):
        both = {**second.metadata.get(name, {}), **first.metadata.get(name, {})}
        if both or name == "prompts":
            metadata[name] = both
    return recounted(AuthorshipLog(files, metadata))


def recounted(log: AuthorshipLog) -> AuthorshipLog:
    """`accepted_lines` of every prompt record made the lines its key attests now (the
    standard: "lines accepted in the final commit"; a carry or a merge changes them)."""
    counts: dict[str, int] = {}
    for keys in log.files.values():
        for key, lines in keys.items():
            counts[key] = counts.get(key, 0) + len(lines)
    prompts = {
        key: {**record, "accepted_lines": counts.get(key, 0)}
        if isinstance(record, dict)
        else record
        for key, record in log.metadata.get("prompts", {}).items()
    }
    return AuthorshipLog(log.files, {**log.metadata, "prompts": prompts})
