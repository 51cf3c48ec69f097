"""Per-agent statistics over the journal: what each agent read, wrote and got refused.

Definitions (the README's "Audit and replay" repeats them):
- a *rebased edit* is an applied write whose content before differs from the
  content the agent last saw of that file (a read, its own write, or a
  rejection that showed it the file): it was carried over others' changes;
- a *recovery* starts at an agent's rejected write to a file (the first of a
  streak) and ends at its next applied write to that file; its length is
  counted in journal events (seq difference) and milliseconds, and its
  attempts are the rejections in the streak. Rejections never followed by an
  applied write to that file are `unrecovered`.
- a *shell write* is an applied write a shell window journaled (the agent's
  command changed the file: `timeline.commands_of`); `shell_commands` lists the
  newest SHELL_LISTED distinct commands with how many changes each made.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from statistics import fmean

from editjournal.daemon.audit.timeline import commands_of
from editjournal.schemas.events import (
    EditApplied,
    EditRejected,
    FileRead,
    HunkRejected,
    Record,
)
from editjournal.schemas.tools import AgentStats

SHELL_LISTED = 20  # an agent's distinct shell commands its stats name (the newest)


@dataclass
class _Tally:
    reads: int = 0
    applied: int = 0
    rejections: Counter[str] = field(default_factory=Counter)
    rebased: int = 0
    seen: dict[str, str] = field(default_factory=dict)  # path -> sha256 last seen
    open_streaks: dict[str, tuple[int, int, int]] = field(default_factory=dict)  # (seq, ts, n)
    recoveries: list[tuple[int, int, int]] = field(default_factory=list)  # (events, ms, tries)
    shell_writes: int = 0
    commands: Counter[str] = field(default_factory=Counter)  # in order of last use

    def read(self, event: FileRead) -> None:
        self.reads += 1
        self.seen[event.path] = event.sha256

    def applied_write(self, record: Record, event: EditApplied) -> None:
        self.applied += 1
        last_seen = self.seen.get(event.path)
        if last_seen is not None and last_seen != event.before_sha256:
            self.rebased += 1
        self.seen[event.path] = event.after_sha256
        self.shell(commands_of(event))
        streak = self.open_streaks.pop(event.path, None)
        if streak is not None:
            seq, ts, tries = streak
            self.recoveries.append((record.seq - seq, record.ts - ts, tries))

    def shell(self, commands: list[str]) -> None:
        """A shell window's write: each command running then made it, as far as the
        journal can tell; the counter is kept in order of last use (a command moves to
        the end) and bounded, whatever the journal's length."""
        if not commands:
            return
        self.shell_writes += 1
        for command in commands:
            self.commands[command] = self.commands.pop(command, 0) + 1
        while len(self.commands) > SHELL_LISTED:
            del self.commands[next(iter(self.commands))]

    def rejected(self, record: Record, code: str, path: str | None) -> None:
        self.rejections[code] += 1
        if path is None:
            return
        seq, ts, tries = self.open_streaks.get(path, (record.seq, record.ts, 0))
        self.open_streaks[path] = (seq, ts, tries + 1)

    def result(self, agent: str) -> AgentStats:
        recoveries = self.recoveries
        return AgentStats(
            agent=agent,
            reads=self.reads,
            applied_writes=self.applied,
            rejected_writes=sum(self.rejections.values()),
            rejections=dict(sorted(self.rejections.items())),
            rebased_edits=self.rebased,
            recoveries=len(recoveries),
            unrecovered=sum(n for _, _, n in self.open_streaks.values()),
            mean_recovery_events=_mean(r[0] for r in recoveries),
            mean_recovery_ms=_mean(r[1] for r in recoveries),
            mean_recovery_attempts=_mean(r[2] for r in recoveries),
            shell_writes=self.shell_writes,
            shell_commands=dict(self.commands),
        )


def _mean(values: Iterable[int]) -> float | None:
    found = list(values)
    return round(fmean(found), 2) if found else None


def agent_stats(records: Iterable[Record], agent: str | None = None) -> list[AgentStats]:
    """One entry per agent (or only `agent`), by name; outside changes are no agent's."""
    tallies: dict[str, _Tally] = {}
    for record in records:
        if record.agent is None or (agent is not None and record.agent != agent):
            continue
        _count(tallies.setdefault(record.agent, _Tally()), record)
    return [tallies[name].result(name) for name in sorted(tallies)]


def _count(tally: _Tally, record: Record) -> None:
    event = record.event
    if isinstance(event, FileRead):
        tally.read(event)
    elif isinstance(event, EditApplied):
        tally.applied_write(record, event)
    elif isinstance(event, EditRejected):
        tally.rejected(record, event.code, event.path)
        if event.shown_sha256 is not None:
            tally.seen[event.path] = event.shown_sha256
    elif isinstance(event, HunkRejected):
        tally.rejected(record, event.code, event.path)
