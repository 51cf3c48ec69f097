"""Live staleness notices: "src/app.py changed since you read it: lines 40-52 by agent-b, seq 812".

An agent behind the MCP server learns that a file it has read changed (another
agent's edit, an outside writer) on its very next tool result, without
polling. The source is the daemon's `agent_status` — the same per-agent
snapshots the stale-anchor checks use, so a notice never disagrees with what
`edit` will do — called once after every tool call; the lines come from the
`edit_applied` events' exact `line_changes` in the journal (`log`), fetched
only for a file with a change not yet told. Each change is told once, and
none the agent made itself: a notice that its own undo "changed" a file it read
would only send it to re-read what it just wrote.

A PUB subscription was the other way: it would cost nothing per call, but a
SUB socket drops what arrives before it connects and when its queue is full,
and it would have to repeat the daemon's snapshot bookkeeping (which reads
count, which of the agent's own writes carried others' changes) here.
Nothing in this module talks to a daemon itself; it is given the two calls.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from editjournal.schemas.tools import AgentStatusResult, FileSeen, LogEntry

MAX_CHANGES_TOLD = 5  # per file and notice; older ones are counted, not described
EDITS_LOOKED_UP = 200  # edit_applied events fetched per stale file, newest first

# (path, after_seq) -> the edit_applied events on path after that seq
History = Callable[[str, int], Sequence[LogEntry]]


class StalenessNotices:
    """What one agent has been told already, and the notices it has not been told yet."""

    def __init__(self) -> None:
        self._told: dict[str, int] = {}  # path -> the newest seq told about

    def notices(self, status: AgentStatusResult, history: History) -> list[str]:
        """One line per file with changes the agent has not been told about."""
        lines = []
        for seen, new in self._untold(status):
            self._told[seen.path] = max(c["seq"] for c in new)
            edits = {e.seq: e for e in history(seen.path, min(c["seq"] for c in new) - 1)}
            lines.append(notice(seen, new, edits))
        return lines

    def wanted(self, status: AgentStatusResult) -> list[tuple[str, int]]:
        """The (path, after_seq) histories `notices` will ask for, so that a caller
        on an event loop can fetch them first."""
        return [(seen.path, min(c["seq"] for c in new) - 1) for seen, new in self._untold(status)]

    def _untold(self, status: AgentStatusResult) -> list[tuple[FileSeen, list[dict[str, Any]]]]:
        """Each stale file and its changes newer than what the agent was told."""
        found = []
        for seen in status.files:
            told = self._told.get(seen.path, 0)
            # the agent's own writes are never news to it (an undo it asked for, say)
            new = [
                c for c in seen.changed_since if c["seq"] > told and c.get("agent") != status.agent
            ]
            if not seen.current and new:
                found.append((seen, new))
        return found


def notice(seen: FileSeen, changes: list[dict[str, Any]], edits: dict[int, LogEntry]) -> str:
    """The one-line notice for a file and its changes not told yet (oldest first)."""
    told = changes[-MAX_CHANGES_TOLD:]
    parts = [_change_words(c, edits.get(c["seq"])) for c in told]
    if len(changes) > len(told):
        parts.insert(0, f"{len(changes) - len(told)} earlier changes")
    gone = " (it no longer exists)" if seen.current_sha256 is None else ""
    return (
        f"{seen.path} changed since you read it{gone}: {'; '.join(parts)}. Your anchors for "
        f"those lines are stale: read_file with since_version {seen.version_seen} shows what "
        "changed, with fresh anchors."
    )


def _change_words(change: dict[str, Any], edit: LogEntry | None) -> str:
    """`lines 40-52 by agent-b, seq 812`; the lines are known only for the daemon's own
    writes (an outside change is a new content hash, with no record of which lines)."""
    if not change.get("agent"):
        return f"an outside change, seq {change['seq']}"
    where = changed_lines(edit.body.get("line_changes") or []) if edit else ""
    return f"{where + ' ' if where else ''}by {change['agent']}, seq {change['seq']}"


def changed_lines(line_changes: Sequence[Sequence[int]]) -> str:
    """Where an edit's `line_changes` ([start, end, inserted]: lines [start, end) of the
    content before, 0-based, became `inserted` lines) landed in the content after it."""
    spots, shift = [], 0
    for start, end, inserted in line_changes:
        first = start + shift + 1
        if inserted == 0:
            n = end - start
            spots.append(f"{n} line{'s' * (n != 1)} removed after line {first - 1}")
        else:
            last = first + inserted - 1
            spots.append(f"line {first}" if first == last else f"lines {first}-{last}")
        shift += inserted - (end - start)
    return ", ".join(spots)
