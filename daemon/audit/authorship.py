"""One commit's authorship log computed from the journal: which agent session last wrote
each line the commit added.

For every file the commit added or changed, the caller (the CLI, which runs git) gives
the committed content (never the working tree's: what was staged is what is attested),
the first parent's, and the lines git's diff says the commit added. The journal's fold
(`blame.owners_of`) gives each line of one journal version its last writer; which
version: the newest whose content IS the committed blob, when the journal has one
(the usual case, and a staged-then-edited file's), else the newest there is, lined up
with the committed lines by a diff, so a line that differs from everything the journal
saw is attested to nobody. A line whose last writer is `outside` (a person, an
unattributed process, content the journal found already there) is not attested; a line
an agent wrote and someone changed before the commit is the changer's (the fold does
that). The log attests only the lines the commit added, as git-ai does: older lines
are their own commits' (git blame finds the commit, its note the author).

The counts per session, over the file's versions after the newest one whose content is
the parent's (the window this commit gathered; the whole history when the journal never
saw the parent's content): `total_additions` / `total_deletions` the lines the
session's writes inserted and removed; `overriden_lines` the lines it wrote in that
window that an outside change replaced or removed afterwards; `accepted_lines` the lines
the log attests to it.

A session's prompts go in its record only when the journal holds them: a harness's
prompt checkpoints keep the prompt's text when the workspace's config.toml says so
(`[prompts] store_text`, issue 37), and `prompts_of` gathers them. The standard removed
the `messages` array from new notes (its erratum E-002) and keeps `messages_url`, "a
pointer to an externally-stored conversation transcript", as the record's one place for
a conversation: there they are, as a `data:` URL (RFC 2397) holding the messages in the
standard's message-object form (`authorlog.messages_url`).

Reads the journal only (`JournalReader`); never git, never the workspace.
"""

from __future__ import annotations

import difflib
import hashlib
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from editjournal.daemon.audit.authorlog import (
    SCHEMA_VERSION,
    AuthorshipLog,
    Prompt,
    agent_id,
    key_of,
    messages_url,
)
from editjournal.daemon.audit.blame import Owner, carry, steps_of
from editjournal.daemon.audit.diffs import lines_of
from editjournal.daemon.audit.timeline import JournalReader, Version, versions
from editjournal.schemas.events import CheckpointCreated, Record


@dataclass(frozen=True)
class CommittedFile:
    """One file a commit added or changed, as git has it."""

    git_path: str  # the repository's path: the note names this
    path: str | None  # the workspace's path the journal knows it by (None: outside it)
    content: bytes  # the committed blob
    parent: bytes | None  # the first parent's blob (None: the commit added the file)
    added: tuple[int, ...]  # 1-based lines of `content` the commit added or changed


@dataclass
class Counts:
    additions: int = 0
    deletions: int = 0
    overridden: int = 0


@dataclass
class Computed:
    """The log, and the files nothing could be said of (with why)."""

    log: AuthorshipLog
    unknown: dict[str, str] = field(default_factory=dict)  # git path -> reason


def prompts_of(records: Iterable[Record]) -> dict[str, list[Prompt]]:
    """Each session's prompts the journal kept (prompt checkpoints with their text),
    oldest first."""
    found: dict[str, list[Prompt]] = defaultdict(list)
    for record in records:
        event = record.event
        if isinstance(event, CheckpointCreated) and event.prompt is not None and record.agent:
            found[record.agent].append(Prompt(record.ts, event.prompt))
    return dict(found)


def prompts_until(prompts: Mapping[str, Sequence[Prompt]], ms: int) -> dict[str, list[Prompt]]:
    """The prompts recorded by `ms` (a commit's time: a later prompt wrote none of it)."""
    return {agent: [p for p in found if p.ts <= ms] for agent, found in prompts.items()}


def authorship(
    journal: JournalReader,
    commit_sha: str,
    files: Sequence[CommittedFile],
    prompts: Mapping[str, Sequence[Prompt]] | None = None,
) -> Computed:
    """The authorship log of commit `commit_sha` (its `base_commit_sha`, as git-ai's
    post-commit writes it) over `files`; `prompts` (`prompts_of`): the sessions' prompts
    to put in their records."""
    lines_by: dict[str, dict[str, list[int]]] = {}
    counts: dict[str, Counts] = defaultdict(Counts)
    unknown: dict[str, str] = {}
    for file in files:
        found = _file_authors(journal, file, counts)
        if isinstance(found, str):
            unknown[file.git_path] = found
            continue
        keys: dict[str, list[int]] = {}
        for line in file.added:
            agent = found[line - 1] if line <= len(found) else None
            if agent is not None:
                keys.setdefault(agent, []).append(line)
        if keys:
            lines_by[file.git_path] = keys
    return Computed(_log(commit_sha, lines_by, counts, prompts or {}), unknown)


def _log(
    sha: str,
    by_agent: dict[str, dict[str, list[int]]],
    counts: dict[str, Counts],
    prompts_by: Mapping[str, Sequence[Prompt]],
) -> AuthorshipLog:
    files = {
        path: {key_of(agent): lines for agent, lines in sorted(agents.items())}
        for path, agents in by_agent.items()
    }
    accepted: dict[str, int] = defaultdict(int)
    for agents in by_agent.values():
        for agent, lines in agents.items():
            accepted[agent] += len(lines)
    sessions = sorted(a for a in {*accepted, *counts} if accepted[a] or _active(counts.get(a)))
    prompts = {
        key_of(agent): {
            "agent_id": agent_id(agent),
            **_transcript(prompts_by.get(agent)),
            "total_additions": counts[agent].additions,
            "total_deletions": counts[agent].deletions,
            "accepted_lines": accepted[agent],
            "overriden_lines": counts[agent].overridden,  # sic: the standard's spelling (E-001)
        }
        for agent in sessions
    }
    metadata = {"schema_version": SCHEMA_VERSION, "base_commit_sha": sha, "prompts": prompts}
    return AuthorshipLog(files, metadata)


def _transcript(prompts: Sequence[Prompt] | None) -> dict[str, str]:
    return {"messages_url": messages_url(prompts)} if prompts else {}


def _active(counts: Counts | None) -> bool:
    return counts is not None and (counts.additions + counts.deletions) > 0


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _file_authors(
    journal: JournalReader, file: CommittedFile, counts: dict[str, Counts]
) -> list[str | None] | str:
    """Per committed line, the agent that last wrote it (None: nobody to attest), the
    session counts added into `counts`; or why nothing can be said of the file."""
    if file.path is None:
        return "outside the workspace"
    history = versions(journal, file.path)
    if not history:
        return "not in the journal"
    chosen = _newest(history, _sha(file.content))
    if chosen is None:  # not that content: the newest there is, lined up by a diff
        chosen = _newest(history)
    if chosen is None:
        return "no stored content in the journal"
    base = _newest(history[:chosen], _sha(file.parent)) if file.parent is not None else None
    lines, owners = _fold(journal, history[: chosen + 1], -1 if base is None else base, counts)
    if lines is None:
        return "the journal has its hash only, not its lines (no agent read it)"
    committed = lines_of(file.content)
    return _aligned(committed, lines, owners)


def _newest(history: Sequence[Version], sha: str | None = None) -> int | None:
    """The index of the newest version whose content is `sha` (any stored content
    when `sha` is None), or None."""
    for i in range(len(history) - 1, -1, -1):
        if history[i].sha256 is not None and sha in (None, history[i].sha256):
            return i
    return None


def _fold(
    journal: JournalReader, history: Sequence[Version], base: int, counts: dict[str, Counts]
) -> tuple[tuple[str, ...] | None, list[Owner | None]]:
    """`blame.owners_of`'s fold, counting the sessions' work after version `base`."""
    lines: tuple[str, ...] = ()
    owners: list[Owner | None] = []
    sha: str | None = None
    for i, version in enumerate(history):
        if version.sha256 is None:
            lines, owners, sha = (), [], None
            continue
        data = journal.blob(version.sha256)
        if data is None or version.sha256 == sha:
            continue
        new = lines_of(data)
        owner = Owner(version.seq, version.author, version.kind, version.ts)
        steps = steps_of(version, lines, sha, new)
        if i > base:
            _count(counts, steps, owners, owner, history[base].seq if base >= 0 else 0)
        moved = carry([o or _NOBODY for o in owners], steps, owner, len(new))
        owners = list(moved) if moved is not None else [None] * len(new)
        lines, sha = new, version.sha256
    if sha != history[-1].sha256:
        return None, []
    return lines, owners


_NOBODY = Owner(0, "outside", "unknown", 0)


def _count(
    counts: dict[str, Counts],
    steps: Sequence[tuple[int, int, int]],
    owners: Sequence[Owner | None],
    owner: Owner,
    since: int,
) -> None:
    agent = _agent(owner)
    for start, end, inserted in steps:
        if agent is not None:
            counts[agent].additions += inserted
            counts[agent].deletions += end - start
            continue
        for replaced in owners[start:end]:  # an outside change: whose lines did it take?
            earlier = _agent(replaced) if replaced is not None else None
            if earlier is not None and replaced is not None and replaced.seq > since:
                counts[earlier].overridden += 1


def _agent(owner: Owner) -> str | None:
    """The agent session an owner is, or None for `outside` (nothing to attest)."""
    return owner.agent if owner.kind == "edit_applied" and owner.agent != "outside" else None


def _aligned(
    committed: Sequence[str], lines: Sequence[str], owners: Sequence[Owner | None]
) -> list[str | None]:
    """Per committed line, the agent of the journal line it is (lines that match)."""
    agents = [_agent(o) if o is not None else None for o in owners]
    if tuple(committed) == tuple(lines):
        return agents
    out: list[str | None] = [None] * len(committed)
    matcher = difflib.SequenceMatcher(None, lines, committed, autojunk=False)
    for a, b, size in matcher.get_matching_blocks():
        out[b : b + size] = agents[a : a + size]
    return out
