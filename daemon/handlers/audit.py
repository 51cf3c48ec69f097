"""`show`, `history`, `blame`, `stats`: the journal read back for people and agents.

Thin: each resolves the path and makes one call into `daemon.audit`, which
also serves the offline commands. They record no events. On a journal of more than
`offthread.INLINE_EVENTS` events, `history`, `blame` and `stats` are computed on a
thread of their own from a read-only connection (daemon/handlers/offthread.py): on
100,000 events they held every agent 0.26-0.56 s.
"""

from __future__ import annotations

from editjournal.daemon.audit import views
from editjournal.daemon.audit.blame import blame as blame_of
from editjournal.daemon.audit.stats import agent_stats
from editjournal.daemon.contract.context import Context
from editjournal.daemon.contract.outcome import Outcome
from editjournal.daemon.handlers import handles
from editjournal.daemon.handlers.offthread import off_thread
from editjournal.schemas.tools import (
    BlameParams,
    HistoryParams,
    ShowParams,
    StatsParams,
    StatsResult,
)


@handles("show")
def show(ctx: Context, params: ShowParams) -> Outcome:
    return Outcome(views.show(ctx.journal, params.seq))


@handles("history")
def history(ctx: Context, params: HistoryParams) -> Outcome:
    path = ctx.workspace.relative(params.path)
    return off_thread(ctx, lambda journal: views.history(journal, path))


@handles("blame")
def blame(ctx: Context, params: BlameParams) -> Outcome:
    path, at = ctx.workspace.relative(params.path), params.at_version
    return off_thread(ctx, lambda journal: blame_of(journal, path, at))


@handles("stats")
def stats(ctx: Context, params: StatsParams) -> Outcome:
    agent, last_seq = params.agent, ctx.state.last_seq
    return off_thread(
        ctx,
        lambda journal: StatsResult(
            agents=agent_stats(journal.records(until_seq=last_seq), agent), last_seq=last_seq
        ),
    )
