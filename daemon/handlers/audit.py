"""`show`, `history`, `blame`, `stats`: the journal read back for people and agents.

Thin: each resolves the path and makes one call into `daemon.audit`, which
also serves the offline commands. They record no events.
"""

from __future__ import annotations

from editjournal.daemon.audit import views
from editjournal.daemon.audit.blame import blame as blame_of
from editjournal.daemon.audit.stats import agent_stats
from editjournal.daemon.contract.context import Context
from editjournal.daemon.contract.outcome import Outcome
from editjournal.daemon.handlers import handles
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
    return Outcome(views.history(ctx.journal, ctx.workspace.relative(params.path)))


@handles("blame")
def blame(ctx: Context, params: BlameParams) -> Outcome:
    path = ctx.workspace.relative(params.path)
    return Outcome(blame_of(ctx.journal, path, params.at_version))


@handles("stats")
def stats(ctx: Context, params: StatsParams) -> Outcome:
    agents = agent_stats(ctx.journal.records(), params.agent)
    return Outcome(StatsResult(agents=agents, last_seq=ctx.state.last_seq))
