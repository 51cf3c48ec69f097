"""`agent_status`: what an agent has seen, and what changed since — for an agent
whose own context was compacted and must learn which of its knowledge is stale.

A change another agent's shell command made (a shell window's edit) names the
command (`commands`, from `audit.timeline.commands_of`, where every view reads
it): "claude-code:s2 changed it" says less than "claude-code:s2 ran `sed -i ...`"."""

from __future__ import annotations

from editjournal.daemon.audit.timeline import commands_of
from editjournal.daemon.contract.context import Context
from editjournal.daemon.contract.outcome import Outcome
from editjournal.daemon.handlers import handles
from editjournal.daemon.handlers.hunk_tools import now_ms, pending_infos
from editjournal.daemon.writing.history import ContentChange, changes_since
from editjournal.schemas.tools import AgentStatusParams, AgentStatusResult, FileSeen


@handles("agent_status")
def agent_status(ctx: Context, params: AgentStatusParams) -> Outcome:
    agent = params.agent or ctx.agent
    files: list[FileSeen] = []
    for (who, path), seen in sorted(ctx.state.snapshots.items()):
        if who != agent:
            continue
        known = ctx.state.files.get(path)
        current_sha = known.sha256 if known else None
        changes = [] if current_sha == seen.sha256 else changes_since(ctx, path, seen.version)
        files.append(
            FileSeen(
                path=path,
                version_seen=seen.version,
                sha256_seen=seen.sha256,
                lines_seen=seen.lines,
                current=current_sha == seen.sha256,
                current_version=known.version if known else None,
                current_sha256=current_sha,
                changed_since=_described(ctx, path, seen.version, changes),
                unseen_lines=list(seen.unseen),
            )
        )
    stale = sum(not f.current for f in files)
    hunks = pending_infos(ctx, agent, now_ms())
    return Outcome(
        AgentStatusResult(agent=agent, files=files, stale_files=stale, pending_hunks=hunks)
    )


def _described(
    ctx: Context, path: str, version: int, changes: list[ContentChange]
) -> list[dict[str, object]]:
    """Each change as `describe` says it, a shell command's with its `commands` (only
    then: the list goes to agents, whose context pays for every key)."""
    described = [c.describe() for c in changes]
    if not changes:
        return described
    shell = {
        r.seq: found
        for r in ctx.journal.records(path=path, after_seq=version, kind="edit_applied")
        if (found := commands_of(r.event))
    }
    for change in described:
        seq = change["seq"]
        if isinstance(seq, int) and seq in shell:
            change["commands"] = shell[seq]
    return described
